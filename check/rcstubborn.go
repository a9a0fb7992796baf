package check

import (
	"math/bits"
	"sort"
)

// Stubborn sets for the serial search (DESIGN.md, "The serial search", partial-order
// reduction). The failed states of a lost update at 100,000 transactions are the
// product of how far each of ten processes got near the loser, most of them touching
// keys no other process touches there; running one process's next transaction before
// or after another's leads to the same verdict. At each state the search runs only
// the candidates of a stubborn set Q of processes (Valmari), which keeps every
// reachable deadlock, the complete order among them (the state graph is acyclic):
//
//   - Q holds a candidate (the one it is grown from).
//   - A candidate t of Q commutes with every sequence of transactions of processes
//     outside Q and stays a candidate through it: each key t appends to (short of its
//     trace) and each key a read of t that shows its own appends reads keeps its
//     length until t runs, because every process that could be the first to change
//     that key at its length is in Q.
//   - A next transaction of Q that cannot run stays so through every such sequence:
//     one reason it cannot run (a key too short, a block the trace does not show at
//     the key's length, a transaction completed before it was invoked that has not
//     run) can be lifted only by processes in Q.
//
// Who could be the first to change key k at its length p (competitor): the first
// transaction of process j from its next one on that appends to k, when every read
// of k before it (and its own) can hold at length p and its block fits at p. A read
// needing more than p values, or a block that does not fit at p, can run only after
// k changed, so nothing of j after it comes first.
//
// The same test prunes states: a next transaction waiting for key k to change, when
// no other process could be the first to change it, never runs (nor its process's
// later transactions), so the state fails.

// rcTouch is one transaction of a process that reads or appends to a key: its index
// in the process's chain, the most values a read of the key needs (-1 none), the base
// its reads that show its own appends need exactly (-1 none, -2 two different ones),
// and its writer of the key (-1 none).
type rcTouch struct {
	idx, maxBase, pinBase, writer int32
}

// rcOp is one operation of a process's transaction, as reachCompetitors follows it:
// a read (wi rcOpRead, or rcOpPin when it shows its own appends) of key that needs
// arg values, or writer wi's block of arg values on key.
type rcOp struct {
	key, arg, wi int32
}

const (
	rcOpRead = -1
	rcOpPin  = -2
)

// stubbornMaxCells bounds processes × keys, the touch lists' index.
const stubbornMaxCells = 1 << 22

// stubbornMaxProcesses: with more processes the reduction is off. Its sets cost
// O(processes) each, about 20 a state: on 1,000-2,000 transactions with 70-130
// processes the search with it took 2.3K-40K operations followed a failed state
// (reachCompetitors) against a failed state's 3 µs without. It refuted two of eight
// lost updates of 70 clients on 50 zipf keys in 2.0-3.4 s where the search without it
// did not in 300K failed states (whole checks of the eight: 52 → 44 s in all, 12.9 →
// 4.2 s at best, 18.2 → 24.9 s at worst), but on 100 clients or on 200 hotspot keys
// with 5% :info (each :info a process) it decided nothing more, and the time it took
// kept the solver from deciding in 30 s what it had decided in 19 s.
// Tests lift the bound (rcPadChains) to check the sets of more than 64 processes.
const stubbornMaxProcesses = 64

// initStubborn builds the touch lists and turns the reduction on, when the processes
// are at most stubbornMaxProcesses and the index fits stubbornMaxCells.
func (s *rcSerial) initStubborn() {
	nk := len(s.in.Keys)
	if len(s.chains) > stubbornMaxProcesses+rcPadChains || len(s.chains)*nk > stubbornMaxCells {
		return
	}
	s.touches = make([][]rcTouch, len(s.chains)*nk)
	for c, ch := range s.chains {
		for i, t := range ch {
			add := func(k int32) *rcTouch {
				l := &s.touches[c*nk+int(k)]
				if n := len(*l); n > 0 && (*l)[n-1].idx == int32(i) {
					return &(*l)[n-1]
				}
				*l = append(*l, rcTouch{idx: int32(i), maxBase: -1, pinBase: -1, writer: -1})
				return &(*l)[len(*l)-1]
			}
			for _, r := range s.reads[t] {
				e := add(r.key)
				e.maxBase = max(e.maxBase, r.base)
				if r.pin {
					if e.pinBase == -1 {
						e.pinBase = r.base
					} else if e.pinBase != r.base {
						e.pinBase = -2
					}
				}
			}
			for _, wi := range s.writers[t] {
				if e := add(s.in.Writers[wi].Key); e.writer < 0 {
					e.writer = wi // the first block: it goes at the key's length
				}
			}
		}
	}
	s.nw = (len(s.chains) + 63) / 64
	s.need = make([]uint64, len(s.chains)*s.nw)
	sets := make([]uint64, 6*s.nw)
	s.enabled, s.known, s.setQ, s.setTodo, s.setBest, s.setTmp = sets[:s.nw], sets[s.nw:2*s.nw], sets[2*s.nw:3*s.nw], sets[3*s.nw:4*s.nw], sets[4*s.nw:5*s.nw], sets[5*s.nw:]
	s.tlen = make([]int32, nk)
	for k := range s.in.Keys {
		s.tlen[k] = int32(len(s.in.Keys[k].Trace))
	}
	s.ops, s.opOff = make([][]rcOp, len(s.chains)), make([][]int32, len(s.chains))
	for c, ch := range s.chains {
		off := make([]int32, 0, len(ch)+1)
		var ops []rcOp
		for _, t := range ch {
			off = append(off, int32(len(ops)))
			for _, r := range s.reads[t] {
				o := rcOp{key: r.key, arg: r.base, wi: rcOpRead}
				if r.pin {
					o.wi = rcOpPin
				}
				ops = append(ops, o)
			}
			for _, wi := range s.writers[t] {
				w := &s.in.Writers[wi]
				ops = append(ops, rcOp{key: w.Key, arg: w.End - w.Start, wi: wi})
			}
		}
		s.ops[c], s.opOff[c] = ops, append(off, int32(len(ops)))
	}
	s.wkeys = make([]uint64, len(s.h.Txns))
	for t, ws := range s.writers {
		for _, wi := range ws {
			s.wkeys[t] |= 1 << uint(s.in.Writers[wi].Key&63)
		}
	}
	s.rcache = make([][rcCacheWays]rcReach, len(s.chains))
	s.rmask = make([]uint64, len(s.chains)*rcCacheWays*s.nw)
	s.rcacheNext = make([]uint8, len(s.chains))
	s.visit, s.visitN = []uint64{1}, 1
	s.por = true
}

// The competitors reachCompetitors finds, kept from one state for its descendants
// (the following made incremental): for process c held and the keys fixed F, the set
// at a state S stays a superset of the set at any state S' the current path reaches
// from S by steps of processes other than c none of which appends to a key of F. Each
// such step (transaction u) fits at the state it ran from, so that state's following
// passed u (its reads hold, it appends to no fixed key), and by induction S's did too;
// at S' every key's length plus what the following adds is at most what it was at S
// (the steps' blocks moved from the following into the lengths), the fixed keys kept
// their lengths, and a read that shows its own appends can only fail more. So by
// induction along the following at S', each transaction it passes the following at S
// passed too (the fixpoint at S is closed under its final bounds), and a process it
// stops at a competitor stopped there at S with the same test passing. A larger set keeps the stubborn sets valid (they only
// grow), and an empty one stays empty only when the exact one is.

// rcCacheWays is how many sets reachCached keeps per held process; rcCacheKeys the
// most keys fixed in one; rcCacheSpan the most steps between the state a set was
// worked out at and one it is used at (each step on the path is checked).
const (
	rcCacheWays = 4
	rcCacheKeys = 8
	rcCacheSpan = 256
)

// rcReach is one kept competitor set: worked out at the state with id visit at depth
// depth of the current path, for the held process and the keys fixed (the set itself
// is in rcSerial.rmask).
type rcReach struct {
	visit uint64 // 0: empty
	depth int32
	nk    int32
	keys  [rcCacheKeys]int32
	fmask uint64 // the fixed keys mod 64
}

// reachCached is reachCompetitors (into m), taken from a set kept at a state up the
// current path when the steps since then keep it a superset (above).
func (s *rcSerial) reachCached(c int32, fixed []int32, m []uint64) {
	if len(fixed) == 0 || len(fixed) > rcCacheKeys {
		s.reachCompetitors(c, fixed, m)
		return
	}
	var fmask uint64
	for _, k := range fixed {
		fmask |= 1 << uint(k&63)
	}
	d := int32(len(s.order))
	ways := &s.rcache[c]
next:
	for i := range ways {
		e := &ways[i]
		if e.visit == 0 || e.fmask != fmask || e.depth > d || d-e.depth > rcCacheSpan || s.visit[e.depth] != e.visit || int(e.nk) != len(fixed) {
			continue
		}
		for j, k := range fixed {
			if e.keys[j] != k {
				continue next
			}
		}
		for _, t := range s.order[e.depth:d] {
			if s.place[t] == c || s.wkeys[t]&fmask != 0 {
				continue next
			}
		}
		s.reachHits++
		copy(m, s.rmask[(int(c)*rcCacheWays+i)*s.nw:])
		return
	}
	s.reachCompetitors(c, fixed, m)
	if !s.reachCapped {
		i := int(s.rcacheNext[c] % rcCacheWays)
		s.rcacheNext[c]++
		e := &ways[i]
		e.visit, e.depth, e.nk, e.fmask = s.visit[d], d, int32(len(fixed)), fmask
		copy(e.keys[:], fixed)
		copy(s.rmask[(int(c)*rcCacheWays+i)*s.nw:], m)
	}
}

// competes reports whether process j could be the first to change key k, now at
// length p (short of its trace).
func (s *rcSerial) competes(j, k, p int32) bool {
	l := s.touches[int(j)*len(s.in.Keys)+int(k)]
	hd := s.head[j]
	for e := l[sort.Search(len(l), func(i int) bool { return l[i].idx >= hd }):]; len(e) > 0; e = e[1:] {
		x := &e[0]
		if x.maxBase > p || x.pinBase != -1 && x.pinBase != p {
			return false
		}
		if x.writer >= 0 {
			return s.writerFits(x.writer, p)
		}
	}
	return false
}

// competitors adds to m the processes other than c that could be the first to change
// key k at its length.
func (s *rcSerial) competitors(k, c int32, m []uint64) {
	p := s.pos[k]
	if int(p) == len(s.in.Keys[k].Trace) {
		return
	}
	for j := range s.chains {
		if int32(j) != c && int(s.head[j]) < len(s.chains[j]) && s.competes(int32(j), k, p) {
			setAdd(m, int32(j))
		}
	}
}

// waitsOn sets s.need[c] for process c's next transaction t, which cannot run: the
// processes that could lift one reason it cannot (the one with the fewest). It
// reports false when a reason can never be lifted: then t never runs.
func (s *rcSerial) waitsOn(c, t int32) bool {
	best := s.need[int(c)*s.nw : int(c+1)*s.nw]
	bestN := -1
	// take keeps the competitors of key k, when fewer; it reports false when there
	// are none.
	take := func(k int32) bool {
		m := s.setTmp
		s.reachCached(c, []int32{k}, m)
		n := setCount(m)
		if n == 0 {
			return false
		}
		if bestN < 0 || n < bestN {
			copy(best, m)
			bestN = n
		}
		return true
	}
	for _, r := range s.reads[t] {
		switch p := s.pos[r.key]; {
		case r.pin && p > r.base:
			return false // the key only grows
		case p < r.base || r.pin && p != r.base:
			if !take(r.key) {
				return false
			}
		}
	}
	for _, wi := range s.writers[t] {
		k := s.in.Writers[wi].Key
		if !s.writerFits(wi, s.pos[k]) && !take(k) {
			return false
		}
	}
	if bestN < 0 {
		// Only real-time order holds it back: the processes whose next transaction
		// completed before it was invoked.
		clear(best)
		inv := s.h.Txns[t].Invoke
		for j, ch := range s.chains {
			if int(s.head[j]) < len(ch) {
				if cp := s.h.Txns[ch[s.head[j]]].Complete; cp >= 0 && cp < inv {
					setAdd(best, int32(j))
				}
			}
		}
	}
	return true
}

// stubbornCandidates reduces the candidates buf[from:] (processes whose next
// transaction can run) to those of the smallest stubborn set grown from one of them,
// or to none when a next transaction met on the way can never run. What a process's
// next transaction waits on is worked out only when a set grows to it (needOf).
func (s *rcSerial) stubbornCandidates(buf []int32, from int) []int32 {
	if len(buf)-from < 2 && !s.deadChecks {
		return buf
	}
	clear(s.enabled)
	clear(s.known)
	s.stuckNext = false
	for _, c := range buf[from:] {
		setAdd(s.enabled, c)
	}
	if s.deadChecks {
		for c := range s.chains {
			if s.needOf(int32(c)); s.stuckNext {
				return buf[:from]
			}
		}
	}
	if len(buf)-from < 2 {
		return buf
	}
	// Each candidate's set is grown until it holds as many candidates as the smallest
	// so far: past that it cannot be chosen, and what its processes wait on need not
	// be worked out.
	q, todo, best, bestN := s.setQ, s.setTodo, s.setBest, len(s.chains)+1
seeds:
	for _, c := range buf[from:] {
		clear(q)
		clear(todo)
		setAdd(q, c)
		setAdd(todo, c)
		n := 1 // candidates in q
		for w := 0; w < len(todo); {
			if todo[w] == 0 {
				w++
				continue
			}
			x := int32(w*64 + bits.TrailingZeros64(todo[w]))
			todo[w] &= todo[w] - 1
			need := s.needOf(x)
			if s.stuckNext {
				return buf[:from]
			}
			for v, m := range need {
				if add := m &^ q[v]; add != 0 {
					q[v] |= add
					todo[v] |= add
					w = min(w, v)
					n += bits.OnesCount64(add & s.enabled[v])
				}
			}
			if n >= bestN {
				continue seeds
			}
		}
		copy(best, q)
		bestN = n
		if n == 1 {
			break
		}
	}
	out := buf[:from]
	for _, c := range buf[from:] {
		if setHas(best, c) {
			out = append(out, c)
		}
	}
	return out
}

// setAdd puts process j in the set m; setHas tells whether it is there; setCount
// counts m's processes.
func setAdd(m []uint64, j int32)      { m[j>>6] |= 1 << uint(j&63) }
func setHas(m []uint64, j int32) bool { return m[j>>6]&(1<<uint(j&63)) != 0 }
func setCount(m []uint64) int {
	n := 0
	for _, w := range m {
		n += bits.OnesCount64(w)
	}
	return n
}

// needOf returns, at the current state, the processes process c's next transaction
// waits on (stubbornCandidates), computed once per state (s.known); it sets s.stuckNext
// when that transaction can never run.
func (s *rcSerial) needOf(c int32) []uint64 {
	need := s.need[int(c)*s.nw : int(c+1)*s.nw]
	if setHas(s.known, c) {
		return need
	}
	setAdd(s.known, c)
	clear(need)
	ch := s.chains[c]
	if int(s.head[c]) >= len(ch) {
		return need
	}
	t := ch[s.head[c]]
	if setHas(s.enabled, c) {
		fixed := s.fixedBuf[:0]
		for _, wi := range s.writers[t] {
			if k := s.in.Writers[wi].Key; int(s.pos[k]) < len(s.in.Keys[k].Trace) {
				fixed = append(fixed, k)
			}
		}
		for _, r := range s.reads[t] {
			if r.pin && int(s.pos[r.key]) < len(s.in.Keys[r.key].Trace) {
				fixed = append(fixed, r.key)
			}
		}
		s.fixedBuf = fixed
		s.reachCached(c, fixed, need)
		return need
	}
	if !s.waitsOn(c, t) {
		s.stuckNext = true
	}
	return need
}

// reachCap bounds how far reachCompetitors follows a process past its next
// transaction; past it, the chain-only scan (competitors) answers.
const reachCap = 128

// reachCompetitors is the set of processes other than c that could be the first to
// change one of the keys fixed (each short of its trace) while process c waits at its
// next transaction. The processes' progress is followed to a fixpoint, with the keys
// fixed at their lengths, c held at its next transaction and every other key allowed
// the most values the transactions run so far append to it (rlen; a block is assumed
// to fit wherever it lands): a transaction whose read needs more than that, or more of
// a fixed key than it has, stops its process; one that appends to a fixed key stops it
// too, and is a competitor when its blocks fit there and its reads hold. By induction
// over any sequence of other processes' transactions before a fixed key changes, each
// process stays short of where it stopped and each key within rlen, so the first
// change of a fixed key is by one of the competitors. A process that gets reachCap
// transactions on sends the question to the chain-only scan.
func (s *rcSerial) reachCompetitors(c int32, fixed []int32, m []uint64) {
	clear(m)
	s.reachCapped = false
	s.reachCalls++
	if len(fixed) == 0 {
		return
	}
	nk := len(s.in.Keys)
	if s.rstamp == nil {
		s.rstamp = make([]uint32, nk)
		s.rlen = make([]int32, nk)
		s.fstamp = make([]uint32, nk)
		s.rcur = make([]int32, len(s.chains))
	}
	if s.stampN++; s.stampN == 0 { // wrapped: old stamps would match again
		clear(s.rstamp)
		clear(s.fstamp)
		s.stampN = 1
	}
	st := s.stampN
	for _, k := range fixed {
		s.fstamp[k] = st
	}
	R := func(k int32) int32 {
		if s.rstamp[k] == st {
			return s.rlen[k]
		}
		return s.pos[k]
	}
	for j := range s.chains {
		s.rcur[j] = s.head[j]
	}
	capped := false
	for changed := true; changed && !capped; {
		changed = false
		for j, ch := range s.chains {
			if int32(j) == c {
				continue
			}
			ops, off := s.ops[j], s.opOff[j]
		follow:
			for int(s.rcur[j]) < len(ch) {
				i := s.rcur[j]
				if i-s.head[j] >= reachCap {
					capped = true
					break
				}
				seg := ops[off[i]:off[i+1]]
				s.reachOps += int64(len(seg))
				for x := range seg {
					o := &seg[x]
					if s.fstamp[o.key] == st {
						if o.wi >= 0 {
							break follow
						}
						if p := s.pos[o.key]; o.arg > p || o.wi == rcOpPin && o.arg != p {
							break follow
						}
					} else if o.wi < 0 && (o.arg > R(o.key) || o.wi == rcOpPin && o.arg < s.pos[o.key]) {
						break follow
					}
				}
				for x := range seg {
					if o := &seg[x]; o.wi >= 0 {
						s.rlen[o.key], s.rstamp[o.key] = min(R(o.key)+o.arg, s.tlen[o.key]), st
					}
				}
				s.rcur[j]++
				changed = true
			}
			if capped {
				break
			}
		}
	}
	s.reachCapped = capped
	if capped {
		for _, k := range fixed {
			s.competitors(k, c, m)
		}
		return
	}
	for j, ch := range s.chains {
		if int32(j) == c || int(s.rcur[j]) >= len(ch) {
			continue
		}
		i := s.rcur[j]
		ok, writes := true, false
		for _, o := range s.ops[j][s.opOff[j][i]:s.opOff[j][i+1]] {
			switch {
			case o.wi >= 0:
				if s.fstamp[o.key] == st {
					writes = true
					ok = ok && s.writerFits(o.wi, s.pos[o.key])
				}
			case s.fstamp[o.key] == st:
				if p := s.pos[o.key]; o.arg > p || o.wi == rcOpPin && o.arg != p {
					ok = false
				}
			case o.arg > R(o.key) || o.wi == rcOpPin && o.arg < s.pos[o.key]:
				ok = false
			}
		}
		if ok && writes {
			setAdd(m, int32(j))
		}
	}
}
