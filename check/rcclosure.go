package check

import (
	"fmt"
	"slices"
	"strings"
)

// The closure of the serial search (DESIGN.md, "The serial search's closure"): a test,
// at a state of the search, that some process's next transaction L can run in no
// continuation, so that the state fails without searching the orders of the other
// processes (a lost update's loser waits for its key to reach a position that shows
// its value, and the search tried every interleaving of the others first).
//
// From a state, take the transactions that must run after L, or be L: A. At first L
// and its process successors. A position j of key k at or past the key's length is
// filled, in any continuation, by one unrun writer whose block fits at some start s ≤ j
// < s+len (s at or past the writer's lower bound); when every such writer is in A, j
// is filled no earlier than L runs, so before L the key has at most j values. The
// first such position of each key, j*(k), then puts into A every transaction that
// needs more: a read of k that saw more than j*(k) values, a block on k that fits
// nowhere before j*(k) (its start is the key's length when it runs, and a start at or
// past j*(k) either fills j*(k) itself, which only A's writers can, or needs it
// filled), and with it its process successors. At the fixpoint, L itself needing more
// than j*(k) values of a key (its read, or its block) needs to run after itself: no
// continuation runs it, and the state fails.
//
// Then a pigeonhole over L's window: before L's block starts at s, every position of
// its key from the key's length up to s is filled by writers outside A; when some
// value shows at more of those positions than there are appends of it by writers
// outside A whose lower bound reaches them (Hall's condition fails), L cannot start
// at s.
//
// The writers' lower bounds are static (lowerBound: the reads and blocks of their
// process predecessors) raised to the key's length; each test scans at most
// closureHorizon transactions per process and closureSpan positions per key, so a
// state costs a bounded amount; anything not looked at stays outside A, which only
// weakens the test.

// closureHorizon bounds the transactions per process the closure looks at past the
// process's next one; closureSpan the positions per key past its length.
const (
	closureHorizon = 16
	closureSpan    = 32
)

// closureExplainTests bounds the closure's tests for an explanation.
const closureExplainTests = 8

// closureShown bounds the processes an explanation names.
const closureShown = 8

// unbounded is j*(k) when no blocked position was found within closureSpan.
const unbounded = int32(1<<31 - 1)

type rcClosure struct {
	lo      []int32   // per writer: its block's least start (the trace's length: past it)
	keyW    [][]int32 // per key: its :ok writers by chain, in process order
	keySegs [][]int32 // per key: where each chain's writers start in keyW, and the end
	cut     []int32   // per chain: its transactions from here on are in A
	jstar   []int32   // per key: j*(k), valid when jAt[k] == gen
	jAt     []int32
	gen     int32
	have    []int32 // per value: some writer outside A appends it alone (== gen2), from minLo on
	minLo   []int32
	cover   []int32 // per position: covered by a longer block (== gen2)
	gen2    int32
	count   []int32      // per value: scratch for the pigeonhole
	bounds  *orderBounds // the order count's bounds (nil: none)
	// keyShort's scratch.
	items             []orderItem
	itemVal, vals, ps []int32
	its               []orderItem
	shorts            int  // states keyShort refuted
	deadTests         bool // run the closure of A too
	tests             int  // closure tests run
	refuted           int  // states they refuted
	// The explanation of the last refutation.
	last *closureWhy
}

// closureWhy is why a state failed: transaction Txn cannot run in any continuation.
type closureWhy struct {
	Txn    int32
	Text   string
	Chains []string // why each process's later transactions must follow Txn
}

func (s *rcSerial) newClosure() {
	cl := &rcClosure{lo: make([]int32, len(s.in.Writers)), keyW: make([][]int32, len(s.in.Keys)),
		cut: make([]int32, len(s.chains)), jstar: make([]int32, len(s.in.Keys)), jAt: make([]int32, len(s.in.Keys)),
		have: make([]int32, len(s.h.Values)), minLo: make([]int32, len(s.h.Values)), count: make([]int32, len(s.h.Values))}
	maxTrace := 0
	for k := range s.in.Keys {
		maxTrace = max(maxTrace, len(s.in.Keys[k].Trace))
	}
	cl.cover = make([]int32, maxTrace+1)
	// Lower bounds along each chain: a process predecessor's read of k that saw q
	// values (or the transaction's own) puts the block at q or later; a predecessor's
	// block at s puts it at s+len or later; and a block starts where it fits.
	bound := make([]int32, len(s.in.Keys))
	var touched []int32
	for c, ch := range s.chains {
		for _, t := range ch {
			for _, r := range s.reads[t] {
				if bound[r.key] == 0 {
					touched = append(touched, r.key)
				}
				bound[r.key] = max(bound[r.key], r.base)
			}
			for _, wi := range s.writers[t] {
				w := &s.in.Writers[wi]
				n := int32(len(s.in.Keys[w.Key].Trace))
				if bound[w.Key] == 0 {
					touched = append(touched, w.Key)
				}
				l := s.firstFit(wi, bound[w.Key])
				cl.lo[wi] = l
				bound[w.Key] = max(bound[w.Key], min(n, l+w.End-w.Start))
				cl.keyW[w.Key] = append(cl.keyW[w.Key], wi)
			}
		}
		for _, k := range touched {
			bound[k] = 0
		}
		touched = touched[:0]
		_ = c
	}
	cl.keySegs = make([][]int32, len(s.in.Keys))
	for k, ws := range cl.keyW {
		for i, wi := range ws {
			if i == 0 || s.place[s.in.Writers[wi].Txn] != s.place[s.in.Writers[ws[i-1]].Txn] {
				cl.keySegs[k] = append(cl.keySegs[k], int32(i))
			}
		}
		cl.keySegs[k] = append(cl.keySegs[k], int32(len(ws)))
	}
	s.cl = cl
}

// blockAt reports whether writer wi's block can start at p (0-based, inside the
// trace): the trace shows it there and no read ends strictly inside it (fits's test).
func (s *rcSerial) blockAt(wi, p int32) bool {
	w := &s.in.Writers[wi]
	if !s.blockFits(wi, p) {
		return false
	}
	n := int32(len(s.in.Keys[w.Key].Trace))
	for c := p + 1; c < p+w.End-w.Start && c <= n; c++ {
		if s.cut[w.Key][c] == -2 {
			return false
		}
	}
	return true
}

// firstFit is the first start at or after from where writer wi's block can go; the
// trace's length when none inside it (past the trace).
func (s *rcSerial) firstFit(wi, from int32) int32 {
	w := &s.in.Writers[wi]
	tr := s.in.Keys[w.Key].Trace
	first := s.in.WriterVals[w.Start]
	for p := from; int(p) < len(tr); p++ {
		if tr[p] == first && s.blockAt(wi, p) {
			return p
		}
	}
	return int32(len(tr))
}

// eligible reports whether transaction t has not run and is not in A (the current
// cuts): it may run before L.
func (s *rcSerial) eligible(t int32) bool {
	c := s.place[t]
	i := s.step[t]
	return i >= s.head[c] && i < s.cl.cut[c]
}

// blocked is j*(k): the first position at or past key k's length that only writers
// in A can fill (the trace's length when none: the key can be filled, or go past;
// unbounded when none within closureSpan). A cached value may be stale only by being
// too large (computed with fewer transactions in A), which weakens the test only.
func (s *rcSerial) blocked(k int32) int32 {
	cl := s.cl
	if cl.jAt[k] == cl.gen {
		return cl.jstar[k]
	}
	tr := s.in.Keys[k].Trace
	n := int32(len(tr))
	p0 := s.pos[k]
	j := n
	if p0 < n {
		cl.gen2++
		limit := min(n, p0+closureSpan)
		s.eachOutside(k, limit, func(wi int32) {
			w := &s.in.Writers[wi]
			lo := max(cl.lo[wi], p0)
			if w.End-w.Start == 1 {
				v := s.in.WriterVals[w.Start]
				if cl.have[v] != cl.gen2 || lo < cl.minLo[v] {
					cl.have[v], cl.minLo[v] = cl.gen2, lo
				}
				return
			}
			for q := lo; q < limit; q++ {
				if s.blockAt(wi, q) {
					for e := q; e < min(q+w.End-w.Start, n); e++ {
						cl.cover[e] = cl.gen2
					}
				}
			}
		})
		j = unbounded
		if limit == n {
			j = n
		}
		for p := p0; p < limit; p++ {
			if v := tr[p]; (cl.have[v] != cl.gen2 || cl.minLo[v] > p) && cl.cover[p] != cl.gen2 {
				j = p
				break
			}
		}
	}
	cl.jstar[k], cl.jAt[k] = j, cl.gen
	return j
}

// needsAfter says why transaction t cannot run before positions j*(k) are filled
// ("" when it can, as far as the closure sees): a read that saw more values, or a
// block that fits nowhere before.
//
// For L itself (self), a block starting at j*(k) is allowed: L fills that position.
func (s *rcSerial) needsAfter(t int32, self, explain bool) string {
	for _, r := range s.reads[t] {
		if j := s.blocked(r.key); j != unbounded && r.base > j {
			if !explain {
				return "read"
			}
			return fmt.Sprintf("it read %d values of key %s, whose position %d only transactions that must follow can fill", r.base, s.h.Keys[r.key], j+1)
		}
	}
	for _, wi := range s.writers[t] {
		w := &s.in.Writers[wi]
		n := int32(len(s.in.Keys[w.Key].Trace))
		j := s.blocked(w.Key)
		if j >= n {
			continue
		}
		if f := s.firstFit(wi, max(s.cl.lo[wi], s.pos[w.Key])); f > j || f == j && !self {
			if !explain {
				return "block"
			}
			where := fmt.Sprintf("before position %d", j+1)
			if self {
				where = fmt.Sprintf("up to position %d", j+1)
			}
			return fmt.Sprintf("its block %s on key %s fits nowhere %s", valuesText(s.h, s.in.WriterVals[w.Start:w.End]), s.h.Keys[w.Key], where)
		}
	}
	return ""
}

// dead reports whether process c's transaction at index at (its next one, or one
// after) can run in no continuation of the current state (with why, when explain):
// it needs something only A can give, or one of its process predecessors, which run
// before it, is in A.
func (s *rcSerial) dead(c, at int32, explain bool) bool {
	cl := s.cl
	cl.tests++
	L := s.chains[c][at]
	for i, ch := range s.chains {
		cl.cut[i] = int32(len(ch))
	}
	cl.cut[c] = at
	cl.gen++
	var chainWhy []string
	for changed := true; changed; {
		changed = false
		for i, ch := range s.chains {
			end := min(cl.cut[i], s.head[i]+closureHorizon)
			for x := s.head[i]; x < end; x++ {
				if why := s.needsAfter(ch[x], false, explain); why != "" {
					// The keys of the writers leaving (the near ones: farther ones
					// seldom reach closureSpan) may have blocked positions earlier.
					for _, t := range ch[x:min(cl.cut[i], x+2*closureHorizon)] {
						for _, wi := range s.writers[t] {
							cl.jAt[s.in.Writers[wi].Key] = -1
						}
					}
					cl.cut[i] = x
					changed = true
					if explain {
						chainWhy = append(chainWhy, fmt.Sprintf("%s and its process successors: %s", s.txnText(ch[x]), why))
					}
					break
				}
			}
		}
	}
	var why string
	if cl.cut[c] < at {
		why = "its process predecessor " + s.txnText(s.chains[c][cl.cut[c]]) + " would have to run after it"
	}
	if why == "" {
		why = s.needsAfter(L, true, explain)
	}
	if why == "" {
		why = s.pigeonhole(L, explain)
	}
	if why == "" {
		return false
	}
	cl.refuted++
	if explain {
		cl.last = &closureWhy{Txn: L, Text: why, Chains: chainWhy}
	}
	return true
}

// pigeonhole says why L's block fits at no start before j*(k) ("" when one is left):
// at each start s where it fits, some value shows at more positions from the key's
// length up to s than writers outside A have appends of it that can reach them.
func (s *rcSerial) pigeonhole(L int32, explain bool) string {
	cl := s.cl
	for _, wi := range s.writers[L] {
		w := &s.in.Writers[wi]
		k := w.Key
		tr := s.in.Keys[k].Trace
		n := int32(len(tr))
		p0 := s.pos[k]
		j := s.blocked(k)
		if j == unbounded || p0 >= n {
			continue
		}
		var short string
		ok := false
		// Appends of each value by writers outside A that may lie before s: a writer
		// reaches the window when its bound is below s.
		for st := s.firstFit(wi, max(cl.lo[wi], p0)); st <= j; st = s.firstFit(wi, st+1) {
			for _, v := range tr[p0:st] {
				cl.count[v]++
			}
			s.eachOutside(k, st, func(u int32) {
				uw := &s.in.Writers[u]
				for _, v := range s.in.WriterVals[uw.Start:uw.End] {
					cl.count[v]--
				}
			})
			fail := int32(-1)
			for _, v := range tr[p0:st] {
				if cl.count[v] > 0 && fail < 0 {
					fail = v
				}
			}
			if fail >= 0 && short == "" && explain {
				pos, apps := int32(0), int32(0)
				for _, v := range tr[p0:st] {
					if v == fail {
						pos++
					}
				}
				apps = pos - cl.count[fail]
				short = fmt.Sprintf("its block %s on key %s would start at position %d at the earliest, and positions %d-%d show %s %d times, which the %d appends of it by transactions that may run before it cannot fill",
					valuesText(s.h, s.in.WriterVals[w.Start:w.End]), s.h.Keys[k], st+1, p0+1, st, s.h.Values[fail], pos, apps)
			}
			// Reset the counts.
			for _, v := range tr[p0:st] {
				cl.count[v] = 0
			}
			s.eachOutside(k, st, func(u int32) {
				uw := &s.in.Writers[u]
				for _, v := range s.in.WriterVals[uw.Start:uw.End] {
					cl.count[v] = 0
				}
			})
			if fail < 0 {
				ok = true
				break
			}
			if st == n {
				break
			}
		}
		if !ok {
			if short == "" && !explain {
				return "pigeonhole"
			}
			if short == "" {
				short = fmt.Sprintf("its block %s on key %s fits nowhere up to position %d", valuesText(s.h, s.in.WriterVals[w.Start:w.End]), s.h.Keys[k], j+1)
			}
			return short
		}
	}
	return ""
}

// eachOutside calls f for each writer of key k outside A that has not run and whose
// lower bound is below limit: chain by chain, those of key k from the chain's next
// transaction up to its cut, whose bounds only grow along it.
func (s *rcSerial) eachOutside(k, limit int32, f func(wi int32)) {
	cl := s.cl
	segs := cl.keySegs[k]
	for g := 0; g+1 < len(segs); g++ {
		ws := cl.keyW[k][segs[g]:segs[g+1]]
		c := s.place[s.in.Writers[ws[0]].Txn]
		from, _ := slices.BinarySearchFunc(ws, s.head[c], func(wi, hd int32) int { return int(s.step[s.in.Writers[wi].Txn] - hd) })
		for _, wi := range ws[from:] {
			if s.step[s.in.Writers[wi].Txn] >= cl.cut[c] || cl.lo[wi] >= limit {
				break
			}
			f(wi)
		}
	}
}

func (s *rcSerial) txnText(t int32) string {
	return fmt.Sprintf("T%d (process %d)", t, s.h.Txns[t].Process)
}

// closureText is the explanation of the closure's last refutation.
func (s *rcSerial) closureText() string {
	w := s.cl.last
	if w == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s can run in no continuation: %s", s.txnText(w.Txn), w.Text)
	if len(w.Chains) > 0 {
		fmt.Fprintf(&b, ", since these must run after it (what each needs, only it or transactions after it can give): ")
		for i, c := range w.Chains {
			if i == closureShown {
				fmt.Fprintf(&b, "; and %d more", len(w.Chains)-i)
				break
			}
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(c)
		}
	}
	return b.String()
}

// keyShort is the pigeonhole over key k's next positions at the current state (nil
// when it finds none): the positions from the key's length on, up to closureSpan of
// them, each hold one append of a writer that has not run, whose block starts at or
// after the key's length, its lower bound and the order count's, and, when the order
// count puts it in the trace, at or before its upper bound; a writer whose upper bound
// lies inside the window must get a position there. Per value, when no matching of
// positions and appends exists, Hall's condition fails on a window (matchValue): more
// positions than appends that reach them, or more appends that must lie there than
// positions. Only keys the last step appended to change, so the search asks it of
// those alone.
func (s *rcSerial) keyShort(k int32) *orderShort {
	cl := s.cl
	tr := s.in.Keys[k].Trace
	n := int32(len(tr))
	p0 := s.pos[k]
	if p0 >= n {
		return nil
	}
	end := min(n, p0+closureSpan) // the window: 1-based positions p0+1..end
	cl.items, cl.itemVal = cl.items[:0], cl.itemVal[:0]
	segs := cl.keySegs[k]
	for g := 0; g+1 < len(segs); g++ {
		ws := cl.keyW[k][segs[g]:segs[g+1]]
		c := s.place[s.in.Writers[ws[0]].Txn]
		from, _ := slices.BinarySearchFunc(ws, s.head[c], func(wi, hd int32) int { return int(s.step[s.in.Writers[wi].Txn] - hd) })
		for _, wi := range ws[from:] {
			lo := max(cl.lo[wi]+1, p0+1)
			if cl.bounds != nil {
				lo = max(lo, cl.bounds.Lo[wi])
			}
			if lo > end {
				break // the bounds only grow along the chain
			}
			hi := n + 1
			if cl.bounds != nil && cl.bounds.Hi[wi] <= n {
				hi = cl.bounds.Hi[wi]
			}
			w := &s.in.Writers[wi]
			for o, v := range s.in.WriterVals[w.Start:w.End] {
				it := orderItem{lo: lo + int32(o), hi: hi + int32(o), txn: w.Txn}
				it.must = hi <= n && it.hi <= end
				if hi > n {
					it.hi = n + 1
				}
				cl.items = append(cl.items, it)
				cl.itemVal = append(cl.itemVal, v)
			}
		}
	}
	// Per value: its positions in the window and its appends.
	cl.vals = cl.vals[:0]
	for _, v := range tr[p0:end] {
		cl.vals = append(cl.vals, v)
	}
	cl.vals = append(cl.vals, cl.itemVal...)
	slices.Sort(cl.vals)
	cl.vals = slices.Compact(cl.vals)
	for _, v := range cl.vals {
		cl.ps = cl.ps[:0]
		for p := p0; p < end; p++ {
			if tr[p] == v {
				cl.ps = append(cl.ps, p+1)
			}
		}
		cl.its = cl.its[:0]
		for i, it := range cl.items {
			if cl.itemVal[i] == v {
				cl.its = append(cl.its, it)
			}
		}
		if short := matchValue(cl.ps, cl.its); short != nil {
			short.Key, short.Value = k, v
			return short
		}
	}
	return nil
}
