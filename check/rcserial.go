package check

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/ordersearch"
	"doppel/prune"
)

// The serial search for strong-session and strong read committed (DESIGN.md, "The
// serial search"): an exact decision, when no :info transaction appends, by a
// depth-first search over the order in which the processes' transactions run. In an
// attribution whose ww ∪ wr ∪ process (∪ real-time) graph is acyclic, a topological
// order runs each key's blocks in its version order; a transaction runs after the
// writer of the block its read's base ends with (wr), so the key has at least that
// many values then, and a read that shows its own appends has its block right after
// its base, so the key has exactly that many; the block a transaction installs shows
// its values in the trace (or lies past it, once the trace is full), and no read's
// base (nor a version read, but within its own reader's block) ends strictly inside
// it. Conversely an order that runs every transaction so installs an attribution whose
// ww and wr edges and the model's orders it follows. So the model holds iff some order
// of the :ok transactions that keeps process (real-time) order runs each of them so.
// How far each process got fixes every key's length, so a state that failed once
// fails again: remembered, each is visited once. An order found counts only when
// verifyPerRead re-executes it and the model's orders hold (proveOrdered).

// rcSerialMaxStates bounds the failed states the search visits (the lost update at
// 10,000 transactions needs 2.2M, 6.6 CPU-s); past it, or past half the time left,
// the search gives up and the other phases go on.
const rcSerialMaxStates = 1 << 23

// rcSerialMemoBytes bounds the memory of the failed states remembered (about 35 bytes
// each with 10 processes: the key, its end in the arena and two hash slots).
const rcSerialMemoBytes = 768 << 20

// rcRead is a read's constraint on the key's length when its transaction runs: at
// least Base values, exactly when Pin (it shows the transaction's own appends).
type rcRead struct {
	key, base int32
	pin       bool
}

type rcSerial struct {
	counted *int64 // the checker's SearchStates, when set: failed states are added
	// memo, when set, keeps the failed states from one run to the next of searches of
	// the same history, inference and orders (searchProcessOrders's two turns).
	memo     *ordersearch.Memo
	h        *history.History
	in       *encode.Inference
	realtime bool
	chains   [][]int32 // :ok transactions per process, in process order
	head     []int32
	reads    [][]rcRead // per transaction
	writers  [][]int32  // per transaction: its writer ids
	pos      []int32    // per key: values installed (at most the trace's length)
	cut      [][]int32  // per key, per position 0..n: a read's base ends there (-2), none (-1)
	// straddle: writers whose block may run past the trace: their own read, which
	// shows part of their appends, is the trace.
	straddle map[int32]bool
	place    []int32 // per transaction: its chain
	total    int     // :ok transactions
	order    []int32
	saved    []int32 // the lengths of the keys of the transactions in order, before each ran
	states   int
	stop     func() bool
	deepest  int
	deepHead []int32
	deepPos  []int32
	cl       *rcClosure // nil: no closure (tests of the search alone)
	failed   int        // states with no candidate so far: the closure waits for the first
	// por: the candidates are reduced to a stubborn set (stubborn.go); touches holds,
	// per process and key (index chain*len(in.Keys)+key), its transactions that read
	// or append to the key, in process order.
	por     bool
	touches [][]rcTouch
	// reachCompetitors' scratch: per key, the most values it may have (valid when its
	// rstamp is stampN) and whether it is fixed (fstamp); per process, how far it got.
	// reachOps counts the operations it followed (runLimited bounds them).
	rlen, rcur     []int32
	rstamp, fstamp []uint32
	reachOps       int64
	stampN         uint32
	deadChecks     bool // every next transaction's reasons are worked out, also with one candidate (tests)
	// Sets of processes are nw words, one bit per process (setAdd). At the current
	// state: the candidates (enabled), the processes whose need is worked out (known),
	// and per process (need[c*nw:(c+1)*nw]) the processes its next transaction waits on
	// (stubbornCandidates); set* are stubbornCandidates' and waitsOn's scratch sets.
	nw                             int
	enabled, known, need           []uint64
	setQ, setTodo, setBest, setTmp []uint64
	stuckNext                      bool // at the current state: a next transaction can never run
	fixedBuf                       []int32
	// reachCached's: per depth of the current path, the id of the state there; per
	// transaction, the keys it appends to (mod 64); per process, its kept sets (their
	// processes in rmask, nw words from (c*rcCacheWays+way)*nw).
	visit       []uint64
	visitN      uint64
	wkeys       []uint64
	rcache      [][rcCacheWays]rcReach
	rmask       []uint64
	rcacheNext  []uint8
	reachCapped bool // the last reachCompetitors handed over to the chain-only scan
	reachHits   int
	// reachCompetitors' operations, per process: flat, with each transaction's from
	// opOff (in chain order); per key, its trace's length.
	ops        [][]rcOp
	opOff      [][]int32
	tlen       []int32
	reachCalls int
	// Windows (setWindows; nil: none): per key and position, the :ok writers not run
	// whose windows end there.
	win       *encode.Windows
	lastStart [][]int32
	// hall checks Hall's condition on the positions each step takes; ran is its view
	// of which transactions ran.
	hall *hallCheck
	ran  []bool
	// infoHorizon (limitInfo, under real-time order; 0: none): an :info transaction
	// may run inside a trace only while the real-time frontier (the last completion
	// before the earliest one not run) lies at most this many client events past its
	// invoke; completions holds the :ok transactions' completions, ascending.
	infoHorizon int32
	completions []int32
	// pinned holds, per key, the :ok reads that show their own transaction's appends
	// (rcRead.pin), by base ascending; step is each transaction's index in its chain.
	// Such a read holds only while its key has exactly base values, and keys only
	// grow: once a step takes a key past the base of a read whose transaction has not
	// run, that transaction never can (pinPassedLast).
	pinned [][]rcPin
	step   []int32
}

// rcPin is a read that shows its own transaction's appends: at base values of its key.
type rcPin struct{ base, txn int32 }

// limitInfo confines the :info transactions to their horizon (as serialSearch.limitInfo:
// the longest :ok duration past their invoke) under real-time order. The search is then
// no longer exact: it only proves (witnessSearch), and Invalid means nothing.
func (s *rcSerial) limitInfo() bool {
	if !s.realtime || !infoAppends(s.in) {
		return false
	}
	for t := range s.h.Txns {
		if tx := &s.h.Txns[t]; tx.Status == history.OK && tx.Complete >= 0 {
			s.completions = append(s.completions, tx.Complete)
		}
	}
	slices.Sort(s.completions)
	s.infoHorizon = infoHorizonOf(s.h)
	return s.infoHorizon > 0
}

// pastHorizon reports whether :info transaction t may no longer run inside a trace,
// minComp being the earliest completion of a transaction not run (-1: none).
func (s *rcSerial) pastHorizon(t, minComp int32) bool {
	tx := &s.h.Txns[t]
	if s.infoHorizon == 0 || tx.Status != history.Info || tx.Invoke < 0 || len(s.completions) == 0 {
		return false
	}
	now := s.completions[len(s.completions)-1]
	if minComp >= 0 {
		i, _ := slices.BinarySearch(s.completions, minComp)
		if i == 0 {
			return false
		}
		now = s.completions[i-1]
	}
	return now-tx.Invoke > s.infoHorizon
}

// setWindows keeps every block within win, windows of a narrowing sound for the
// search's model (prune.Level PerRead with its orders): a candidate runs only where
// each of its blocks may start, and a state where a key moved past the last start of
// an :ok writer not run is a dead end. The search stays exact: every order that runs
// all transactions keeps its blocks within the windows, so the filter (applied after
// the stubborn set, which keeps a first step of some such order) and the dead ends
// remove none.
func (s *rcSerial) setWindows(win *encode.Windows) {
	s.win = win
	s.lastStart = make([][]int32, len(s.in.Keys))
	for k := range s.in.Keys {
		s.lastStart[k] = make([]int32, len(s.in.Keys[k].Trace))
	}
	for _, ch := range s.chains {
		for _, t := range ch {
			s.unstrand(t, 1)
		}
	}
	s.ran = make([]bool, len(s.h.Txns))
	// Without a matching before the search its sweeps' early stops may miss a dead
	// end, never make one: the search stays exact either way.
	s.hall = newHallCheck(s.in, win, s.ran, s.mustStart)
}

// mustStart reports whether writer wi is an :ok one whose window ends inside its
// trace (it must be observed).
func (s *rcSerial) mustStart(wi int32) bool {
	w := &s.in.Writers[wi]
	return w.Status == history.OK && int(s.win.Hi[wi]) < len(s.in.Keys[w.Key].Trace)
}

// unstrand counts t's writers that mustStart in lastStart (d = 1), or takes them out
// (d = -1, when t runs).
func (s *rcSerial) unstrand(t, d int32) {
	for _, wi := range s.writers[t] {
		if s.mustStart(wi) {
			s.lastStart[s.in.Writers[wi].Key][s.win.Hi[wi]] += d
		}
	}
}

// inWindows reports whether each of t's blocks may start at its key's length.
func (s *rcSerial) inWindows(t int32) bool {
	for _, wi := range s.writers[t] {
		k := s.in.Writers[wi].Key
		if p := s.pos[k]; int(p) < len(s.lastStart[k]) {
			if !s.win.Allowed(wi, p) {
				return false
			}
		} else if s.mustStart(wi) {
			return false // it must be observed
		}
	}
	return true
}

// strandedLast reports whether the last step moved a key past the last start of an
// :ok writer that has not run, or took positions that leave the :ok writers of a
// value without a matching (hallCheck).
func (s *rcSerial) strandedLast() bool {
	return s.lastTook(func(k, from, to int32) bool {
		for q := from; q < to; q++ {
			if s.lastStart[k][q] > 0 || !s.hall.matchable(k, q, to) {
				return true
			}
		}
		return false
	})
}

// lastTook calls took for each key the last step appended to, with the positions it
// took (from up to the key's length now, to), and reports whether one call did.
func (s *rcSerial) lastTook(took func(k, from, to int32) bool) bool {
	if len(s.order) == 0 {
		return false
	}
	ws := s.writers[s.order[len(s.order)-1]]
	saved := s.saved[len(s.saved)-len(ws):]
	for i, wi := range ws {
		if k := s.in.Writers[wi].Key; took(k, saved[i], s.pos[k]) {
			return true
		}
	}
	return false
}

// pinPassedLast reports whether the last step took a key past the base of a read
// (pinned) whose transaction has not run: it never can, so no order from here runs
// every transaction. Without it the search went on for hundreds of steps with that
// transaction's process stuck: a valid 7-key cut of a hot lost update (606 operations)
// was unknown after 1M failed states, its deepest state 943 of 966 transactions with
// a process held since its 112th by such a read.
func (s *rcSerial) pinPassedLast() bool {
	return s.lastTook(func(k, from, to int32) bool {
		ps := s.pinned[k]
		j, _ := slices.BinarySearchFunc(ps, from, func(p rcPin, b int32) int { return int(p.base - b) })
		for ; j < len(ps) && ps[j].base < to; j++ {
			if t := ps[j].txn; s.step[t] >= s.head[s.place[t]] {
				return true
			}
		}
		return false
	})
}

// newRCSerial returns nil when the search does not apply: an :info transaction that
// appends is followed by another transaction of its process, or a read misses its own
// transaction's appends (a version read, which may end inside its reader's block,
// the trace's end included).
//
// An :info transaction that appends, the last of its process (as Jepsen's are: the
// client takes a fresh process after one), runs as if it had committed: whether it
// did or not, an attribution without cycles has one where it did, run last, its
// blocks past every trace (nothing reads them; its reads are unknown, so it has no
// edge out), so the search stays exact with it a transaction that must run.
func newRCSerial(h *history.History, in *encode.Inference, realtime bool, stop func() bool) *rcSerial {
	n := len(h.Txns)
	infoWrites := make([]bool, n)
	for i := range in.Writers {
		if in.Writers[i].Status == history.Info {
			infoWrites[in.Writers[i].Txn] = true
		}
	}
	s := &rcSerial{h: h, in: in, realtime: realtime, stop: stop,
		reads: make([][]rcRead, n), writers: make([][]int32, n), pos: make([]int32, len(in.Keys)), cut: make([][]int32, len(in.Keys))}
	var ownEnds [][2]int32 // (transaction, key): its read shows the whole trace, its own appends last
	for k := range in.Keys {
		key := &in.Keys[k]
		if key.Bad {
			return nil
		}
		cut := make([]int32, len(key.Trace)+1)
		for i := range cut {
			cut[i] = -1
		}
		for _, ri := range key.Reads {
			r := &in.Reads[ri]
			if h.Txns[r.Txn].Status != history.OK {
				continue
			}
			if r.Version {
				return nil
			}
			q := r.Len - r.Own
			cut[q] = -2
			if r.Own > 0 && int(r.Len) == len(key.Trace) {
				ownEnds = append(ownEnds, [2]int32{r.Txn, int32(k)})
			}
			s.reads[r.Txn] = append(s.reads[r.Txn], rcRead{key: int32(k), base: q, pin: r.Own > 0})
		}
		s.cut[k] = cut
	}
	s.straddle = map[int32]bool{}
	for wi := range in.Writers {
		if w := &in.Writers[wi]; w.Status == history.OK || w.Status == history.Info {
			s.writers[w.Txn] = append(s.writers[w.Txn], int32(wi))
			for _, e := range ownEnds {
				if e[0] == w.Txn && e[1] == w.Key {
					s.straddle[int32(wi)] = true
				}
			}
		}
	}
	var oks []int32 // and the :info ones that append
	for t := range h.Txns {
		if h.Txns[t].Status == history.OK || infoWrites[t] {
			oks = append(oks, int32(t))
		}
	}
	h.SortByProcess(oks)
	for i, t := range oks {
		p := h.Txns[t].Process
		if i == 0 || p < 0 || p != h.Txns[oks[i-1]].Process {
			s.chains = append(s.chains, nil)
		} else if infoWrites[oks[i-1]] {
			return nil // an :info transaction that appends, then another of its process
		}
		s.chains[len(s.chains)-1] = append(s.chains[len(s.chains)-1], t)
	}
	if rcPadChains > 0 {
		s.chains = append(make([][]int32, rcPadChains), s.chains...)
	}
	if len(s.chains) > serialMaxChainsRC {
		return nil
	}
	s.head = make([]int32, len(s.chains))
	s.place = make([]int32, n)
	s.step = make([]int32, n)
	s.pinned = make([][]rcPin, len(in.Keys))
	for c, ch := range s.chains {
		for i, t := range ch {
			s.place[t], s.step[t] = int32(c), int32(i)
			for _, r := range s.reads[t] {
				if r.pin {
					s.pinned[r.key] = append(s.pinned[r.key], rcPin{r.base, t})
				}
			}
		}
		s.total += len(ch)
	}
	for _, ps := range s.pinned {
		slices.SortFunc(ps, func(a, b rcPin) int { return int(a.base - b.base) })
	}
	s.initStubborn()
	return s
}

// serialMaxChainsRC: with more processes the states are too large to remember.
const serialMaxChainsRC = 4096

// rcPadChains (tests) puts that many empty processes before the real ones, so that
// tiny histories' process sets span two words.
var rcPadChains int

// why says why transaction t cannot run now ("" when it can).
func (s *rcSerial) why(t int32) string {
	for _, r := range s.reads[t] {
		switch p := s.pos[r.key]; {
		case r.pin && p != r.base:
			return fmt.Sprintf("its read of key %s shows its own appends after %d values, and the key has %d", s.h.Keys[r.key], r.base, p)
		case p < r.base:
			return fmt.Sprintf("it read %d values of key %s, which has %d", r.base, s.h.Keys[r.key], p)
		}
	}
	for _, wi := range s.writers[t] {
		w := &s.in.Writers[wi]
		tr := s.in.Keys[w.Key].Trace
		p, m := s.pos[w.Key], w.End-w.Start
		if int(p) == len(tr) {
			continue // past the trace
		}
		if !s.blockFits(wi, p) {
			return fmt.Sprintf("it appends %s to key %s, whose longest read shows %s at positions %d-", valuesText(s.h, s.in.WriterVals[w.Start:w.End]), s.h.Keys[w.Key], valuesText(s.h, tr[p:min(int(p+m), len(tr))]), p+1)
		}
		for c := p + 1; c < p+m && int(c) <= len(tr); c++ {
			if s.cut[w.Key][c] == -2 {
				return fmt.Sprintf("its block on key %s would end after position %d, where a read ends", s.h.Keys[w.Key], c)
			}
		}
	}
	return ""
}

func valuesText(h *history.History, vs []int32) string {
	var out []string
	for _, v := range vs {
		out = append(out, h.Values[v])
	}
	return "[" + strings.Join(out, " ") + "]"
}

// shortAfterLast reports whether the keys the last step appended to (every key, at
// the first state) can no longer be filled (keyShort).
func (s *rcSerial) shortAfterLast() bool {
	if len(s.order) == 0 {
		for k := range s.in.Keys {
			if s.keyShort(int32(k)) != nil {
				s.cl.shorts++
				return true
			}
		}
		return false
	}
	for _, wi := range s.writers[s.order[len(s.order)-1]] {
		if s.keyShort(s.in.Writers[wi].Key) != nil {
			s.cl.shorts++
			return true
		}
	}
	return false
}

// deadAfterLast runs the closure's test (dead) on the transactions the last step may
// have shut out: at the first state every process's next one, then each writer near
// its process's next transaction (within closureHorizon/4) of a key the last step
// appended to whose block does not fit at the key's new length, and the next
// transaction of the last step's process.
func (s *rcSerial) deadAfterLast() bool {
	if len(s.order) == 0 {
		for c, ch := range s.chains {
			if int(s.head[c]) < len(ch) && s.dead(int32(c), s.head[c], false) {
				return true
			}
		}
		return false
	}
	for c, ch := range s.chains {
		if int(s.head[c]) >= len(ch) {
			continue
		}
		if t := ch[s.head[c]]; !s.fits(t) && s.readsHold(t) && s.touchedSince(t) && s.dead(int32(c), s.head[c], false) {
			return true
		}
	}
	return false
}

// touchedSince reports whether t is the first state of the search, t became its
// process's next transaction with the last step, or the last step appended to a key
// t appends to: the closure's test of t is repeated only then (between, the
// positions t waits for seldom change).
func (s *rcSerial) touchedSince(t int32) bool {
	if len(s.order) == 0 {
		return true
	}
	last := s.order[len(s.order)-1]
	if s.place[last] == s.place[t] {
		return true
	}
	for _, wi := range s.writers[last] {
		k := s.in.Writers[wi].Key
		for _, wj := range s.writers[t] {
			if s.in.Writers[wj].Key == k {
				return true
			}
		}
	}
	return false
}

// readsHold reports whether t's reads hold now (it fits but for its blocks).
func (s *rcSerial) readsHold(t int32) bool {
	for _, r := range s.reads[t] {
		if p := s.pos[r.key]; p < r.base || r.pin && p != r.base {
			return false
		}
	}
	return true
}

// fits reports whether t can run now.
func (s *rcSerial) fits(t int32) bool {
	for _, r := range s.reads[t] {
		if p := s.pos[r.key]; p < r.base || r.pin && p != r.base {
			return false
		}
	}
	for _, wi := range s.writers[t] {
		if !s.writerFits(wi, s.pos[s.in.Writers[wi].Key]) {
			return false
		}
	}
	return true
}

// writerFits reports whether writer wi's block can go at position p of its key: past
// the trace, or where the trace shows it and no read ends strictly inside it.
func (s *rcSerial) writerFits(wi, p int32) bool {
	w := &s.in.Writers[wi]
	tr := s.in.Keys[w.Key].Trace
	m := w.End - w.Start
	if int(p) == len(tr) {
		return true
	}
	if !s.blockFits(wi, p) {
		return false
	}
	cut := s.cut[w.Key]
	for c := p + 1; c < p+m && int(c) <= len(tr); c++ {
		if cut[c] == -2 {
			return false
		}
	}
	return true
}

// blockFits reports whether writer wi's block can start at position p (0-based) of its
// key's trace: the trace shows its values there, or, when its own read is the trace,
// the first of them up to the trace's end.
func (s *rcSerial) blockFits(wi, p int32) bool {
	w := &s.in.Writers[wi]
	tr := s.in.Keys[w.Key].Trace
	vals := s.in.WriterVals[w.Start:w.End]
	if int(p)+len(vals) <= len(tr) {
		return slices.Equal(tr[p:int(p)+len(vals)], vals)
	}
	return s.straddle[wi] && slices.Equal(tr[p:], vals[:len(tr)-int(p)])
}

// free reports whether running t changes no key's list: it appends nothing, or only
// past full traces.
func (s *rcSerial) free(t int32) bool {
	for _, wi := range s.writers[t] {
		w := &s.in.Writers[wi]
		if int(s.pos[w.Key]) < len(s.in.Keys[w.Key].Trace) {
			return false
		}
	}
	return true
}

// The search (internal/ordersearch) moves through these: a process's next transaction
// runs when it fits, and is undone from the lengths saved before it ran.

// Candidates appends the processes whose next transaction can run now, earliest
// invocation first; only one when a transaction that changes no list can run.
func (s *rcSerial) Candidates(buf []int32) []int32 {
	from := len(buf)
	if s.win != nil && s.strandedLast() || s.pinPassedLast() {
		s.failed++
		return buf
	}
	inv := func(c int32) int32 { return s.h.Txns[s.chains[c][s.head[c]]].Invoke }
	minComp := int32(-1)
	if s.realtime {
		for c, ch := range s.chains {
			if int(s.head[c]) < len(ch) {
				if cp := s.h.Txns[ch[s.head[c]]].Complete; cp >= 0 && (minComp < 0 || cp < minComp) {
					minComp = cp
				}
			}
		}
	}
	for c, ch := range s.chains {
		if int(s.head[c]) >= len(ch) {
			continue
		}
		if iv := inv(int32(c)); minComp >= 0 && iv >= 0 && minComp < iv {
			continue // a transaction that completed before it was invoked has not run
		}
		if t := ch[s.head[c]]; s.fits(t) {
			free := s.free(t)
			if !free && s.pastHorizon(t, minComp) {
				continue // it may still run once its keys' traces are full
			}
			if free {
				// Changing no list, it is best run at once: any order that runs it
				// later still works with it moved here (its reads hold now and only
				// grow; its process and real-time successors come later anyway).
				if s.win != nil && !s.inWindows(t) {
					return buf[:from] // a writer that must be observed never can be
				}
				return append(buf[:from], int32(c))
			}
			buf = append(buf, int32(c))
		}
	}
	if s.por && len(buf) > from {
		buf = s.stubbornCandidates(buf, from)
	}
	if s.cl != nil && s.cl.bounds != nil && len(buf) > from && s.shortAfterLast() {
		return buf[:from]
	}
	if s.cl != nil && s.cl.deadTests && s.failed > 0 && len(buf) > from && s.deadAfterLast() {
		return buf[:from]
	}
	if s.win != nil {
		kept := buf[:from]
		for _, c := range buf[from:] {
			if s.inWindows(s.chains[c][s.head[c]]) {
				kept = append(kept, c)
			}
		}
		buf = kept
	}
	cands := buf[from:]
	if len(cands) == 0 {
		s.failed++
	}
	sort.Slice(cands, func(i, j int) bool { return inv(cands[i]) < inv(cands[j]) })
	return buf
}

// Run runs process c's next transaction (Candidates found that it fits).
func (s *rcSerial) Run(c int32) bool {
	t := s.chains[c][s.head[c]]
	for _, wi := range s.writers[t] {
		w := &s.in.Writers[wi]
		s.saved = append(s.saved, s.pos[w.Key])
		if n := int32(len(s.in.Keys[w.Key].Trace)); s.pos[w.Key] < n {
			s.pos[w.Key] = min(n, s.pos[w.Key]+w.End-w.Start)
		}
	}
	s.head[c]++
	s.order = append(s.order, t)
	if s.win != nil {
		s.unstrand(t, -1)
		s.ran[t] = true
	}
	if s.visit != nil {
		s.visitN++
		s.visit = append(s.visit[:len(s.order)], s.visitN)
	}
	if len(s.order) > s.deepest {
		s.deepest = len(s.order)
		s.deepHead = append(s.deepHead[:0], s.head...)
		s.deepPos = append(s.deepPos[:0], s.pos...)
	}
	return true
}

// Undo reverts the last transaction run.
func (s *rcSerial) Undo() {
	t := s.order[len(s.order)-1]
	s.order = s.order[:len(s.order)-1]
	c := s.place[t]
	s.head[c]--
	if s.win != nil {
		s.unstrand(t, 1)
		s.ran[t] = false
	}
	ws := s.writers[t]
	for i := len(ws) - 1; i >= 0; i-- {
		s.pos[s.in.Writers[ws[i]].Key] = s.saved[len(s.saved)-1]
		s.saved = s.saved[:len(s.saved)-1]
	}
}

// Done reports whether every :ok transaction (and :info one that appends) has run.
func (s *rcSerial) Done() bool { return len(s.order) == s.total }

// State is how far each process got (it fixes every key's length).
func (s *rcSerial) State(buf []byte) []byte {
	for _, hd := range s.head {
		buf = binary.AppendUvarint(buf, uint64(hd))
	}
	return buf
}

// run reports Valid (s.order runs every transaction), Invalid (no order does) or
// Unknown (stopped, or too many states: rcSerialStates).
func (s *rcSerial) run() Validity {
	return s.runLimited(rcSerialStates(len(s.h.Txns)))
}

// rcSerialStates bounds the failed states of the exact search over n transactions:
// rcSerialStatesPerTxn each, at least 1<<16, at most rcSerialMaxStates. The searches
// that decide need fewer (the lost updates below: 10-220 a transaction), and where
// the search does not decide the solver after it often does at once: a
// 165-transaction cut of a lost update under strong-session read committed took 7.6M
// failed states (28 s) where the solver then needed 5 conflicts (shrinking, which
// checks hundreds of such cuts, spent 10 of its 17 s there); on hot keys of two values
// with a lost update and 5% :info the solver refuted 2,000 transactions in 0.1 s after
// the search failed 2M states in 10 s (1,000 a transaction; now 300: the whole check
// 15.4 → 6.9 s; at 300 transactions, valid, 4.8-8.7 → 2.5-6.3 s).
func rcSerialStates(n int) int {
	return min(max(rcSerialStatesPerTxn*n, 1<<16), rcSerialMaxStates)
}

// rcSerialStatesPerTxn: see rcSerialStates.
const rcSerialStatesPerTxn = 300

// rcFollowPerState bounds the operations the stubborn sets' following
// (reachCompetitors) may take per failed state the search may visit: a failed state
// costs about 3 µs, an operation followed 3-4 ns. With 30 processes the following
// took 1.6K operations a failed state; with 70-130 processes 2.3K-40K
// (stubbornMaxProcesses).
const rcFollowPerState = 4000

// runLimited is run with at most maxStates failed states.
func (s *rcSerial) runLimited(maxStates int) Validity {
	before := 0
	if s.memo != nil {
		before = s.memo.States()
	}
	stop := s.stop
	if s.por {
		// The stubborn sets' following is bounded with the states (rcFollowPerState).
		limit := s.reachOps + int64(maxStates)*rcFollowPerState
		stop = func() bool { return s.reachOps > limit || s.stop != nil && s.stop() }
	}
	r := ordersearch.Search(s, ordersearch.Limits{MaxStates: maxStates, MaxBytes: rcSerialMemoBytes, Stop: stop, Memo: s.memo})
	s.states = r.States
	if s.counted != nil {
		*s.counted += int64(r.States - before)
	}
	switch r.Outcome {
	case ordersearch.Found:
		return Valid
	case ordersearch.Exhausted:
		return Invalid
	}
	return Unknown
}

// proveBySerialSearch decides the per-read models of names with process order that
// nothing has decided yet by the serial search: valid when its order passes
// verifyPerRead with the model's orders, not valid (an anomaly counting for the
// model and those whose graph contains its graph) when no order exists.
// This first turn of the search gets a share of its states (rcSerialFirstShare): the
// narrowing read by read decides many histories it does not (a lost update among 5K
// transactions on 10 zipf keys of values 1..4, 5% :info: 5M failed states in 14 s, then
// the narrowing refuted strong-session read committed in 0.5 s), and the rest of its
// states come after that narrowing (searchProcessOrders).
func (c *checker) proveBySerialSearch(in *encode.Inference, names []string) {
	defer c.proveBySessionWitness(in, names)
	c.strongWitnessFirst(in, names)
	c.searchProcessOrders(in, names, rcSerialStates(len(c.h.Txns))/rcSerialFirstShare)
}

// rcMemoKey names the failed states of a model's search on an inference.
type rcMemoKey struct {
	in *encode.Inference
	m  string
}

// rcSerialFirstShare divides the states of proveBySerialSearch's first turn.
const rcSerialFirstShare = 16

// searchProcessOrders is proveBySerialSearch's search, each model's with at most
// maxStates failed states in all its turns: a turn after one that ran out keeps the
// failed states it remembered (c.rcMemos), and skips them.
func (c *checker) searchProcessOrders(in *encode.Inference, names []string, maxStates int) {
	for _, m := range names {
		spec := models[m]
		if !spec.perRead || spec.single || !spec.process || c.proven[m] || c.budget.out() || len(c.forbiddenFound(m)) > 0 || c.opts.Solver.NoWitness {
			continue
		}
		c.progress("searching the orders of the processes for " + m)
		t0 := time.Now()
		// At most half the time left: the phases after it decide other histories.
		s := newRCSerial(c.h, in, spec.realtime, c.halfTimeLeft())
		if s == nil {
			return
		}
		s.counted = &c.res.Stats.SearchStates
		key := rcMemoKey{in, m}
		if c.rcMemos == nil {
			c.rcMemos = map[rcMemoKey]*ordersearch.Memo{}
		}
		if c.rcMemos[key] == nil {
			c.rcMemos[key] = &ordersearch.Memo{}
		}
		s.memo = c.rcMemos[key]
		v := s.runLimited(maxStates)
		if v != Unknown {
			delete(c.rcMemos, key)
		}
		c.res.Stats.SolveSeconds += time.Since(t0).Seconds()
		switch v {
		case Valid:
			if at, err := verifyPerReadLists(c.h, in, s.order); err == nil {
				c.proveOrdered(at, []string{m})
			}
		case Invalid:
			c.addSerialSearchAnomaly(m, s)
		}
	}
}

// halfTimeLeft is the limits' stop, and true too once half the time left now has
// passed (no deadline: the limits' stop alone).
func (c *checker) halfTimeLeft() func() bool {
	if c.budget.deadline.IsZero() {
		return c.budget.stop
	}
	half := time.Now().Add(time.Until(c.budget.deadline) / 2)
	return func() bool { return c.budget.stop() || time.Now().After(half) }
}

// rcWitnessStates bounds the failed states of the serial search run as a witness for
// the per-read models without process order (proveBySessionWitness): where it finds
// nothing it decides nothing, so it gets a fraction of rcSerialMaxStates (about 3 µs
// a state at 10,000 transactions).
const rcWitnessStates = 1 << 18

// proveBySessionWitness proves the per-read models of names without process order
// that nothing has proved yet, and that a read-by-read order proves (replayable), by
// the serial search with process order: its order keeps their graph acyclic too.
// They have no exact search of their own, and a read-committed store's history keeps
// process order: on the independent generator's read-committed engine (10 keys,
// values 1..2, 4K-10K transactions) the read-by-read replay got stuck and the solver
// found nothing in 30 s, while this search found an order after 11-971 failed states
// (the whole check: 0.1 CPU-s). Bounded by rcWitnessStates and half the time left;
// found nothing, it decides nothing.
func (c *checker) proveBySessionWitness(in *encode.Inference, names []string) {
	if c.opts.Solver.NoWitness || c.opts.Solver.NoSerialSearch || c.budget.out() {
		return
	}
	c.strongWitnessFirst(in, names)
	plain := c.witnessable(names, false)
	if len(plain) == 0 || c.sessionWitnessTried {
		return
	}
	c.sessionWitnessTried = true
	c.progress("searching the orders of the processes for a witness")
	c.witnessSearch(in, false, nil, rcWitnessStates, plain, false)
}

// strongWitnessFirst runs the strong witness (proveByStrongWitness, once) for the
// models of names a verified order may prove, where :info transactions append. There
// the session search and the exact one mostly wander among the :info transactions that
// never committed, which the strong search's windows and the :info horizon settle; its
// order keeps process and real-time order, so it proves the models with those orders
// too (the independent generator's read-committed store with 2% :info, 10K, --model
// all: strong and strong-session read committed were unknown at 30 s after the exact
// search's half). Without :info appenders the same search runs once without windows,
// bounded (strongPlainStates): on the store's histories without :info (5K-10K, 10-100
// keys, 3-30 clients) it proves read committed and the strong forms in 0.05-0.15
// CPU-s, where the session search and the exact one took 1-19 CPU-s or found nothing
// in 20 s (30 clients on 20 zipf keys: strong-session read committed unknown); the
// narrowing would cost where it finds nothing (a 10K history with a lost update,
// which the read-by-read repairs prove after: 0.6-1.2 s more).
//
// The read-uncommitted models asked (decided later, on their own) go with them: the
// same order proves them (their graph lies within read committed's, as for
// replayUncommitted's use of it), and the search runs once. Asked with read committed
// and strong-session read committed, strong read uncommitted was left unknown at 30 s
// on othergen's read-committed store (5K, 5% :info), which alone this search proves
// in 0.1 CPU-s.
func (c *checker) strongWitnessFirst(in *encode.Inference, names []string) {
	models := c.witnessable(names, true)
	if len(models) > 0 {
		for _, m := range c.uncommittedNames {
			if !c.proven[m] && len(c.forbiddenFound(m)) == 0 {
				models = append(models, m)
			}
		}
	}
	c.strongWitness(in, models)
}

// strongWitness is strongWitnessFirst for the models strong, which a verified order
// that keeps process and real-time order proves (per-read ones, or read uncommitted's,
// whose graph lies within read committed's).
func (c *checker) strongWitness(in *encode.Inference, strong []string) {
	if c.opts.Solver.NoWitness || c.opts.Solver.NoSerialSearch || len(strong) == 0 {
		return
	}
	if infoAppends(in) {
		c.proveByStrongWitness(in, strong)
		return
	}
	if c.strongPlainTried {
		return
	}
	c.strongPlainTried = true
	c.progress("searching the orders of the processes under real time for a witness, without windows")
	c.witnessSearch(in, true, nil, strongPlainStates, strong, false)
}

// strongPlainStates bounds strongWitnessFirst's search without windows (no :info
// appenders): the independent generator's read-committed stores at 5K-10K needed
// none to a few hundred failed states where the session search took up to 256K and
// found nothing (~14 µs a state on 30 clients), and the narrowing under real-time
// order the windowed search needs cost 0.6 s on a 10K history with a lost update.
const strongPlainStates = 1 << 15

// witnessable returns the models of names not proved yet that a verified order of the
// serial search may prove: per-read ones a read-by-read order proves (replayable) with
// none of their anomalies found; only those without process order unless withOrders.
func (c *checker) witnessable(names []string, withOrders bool) []string {
	var out []string
	for _, m := range names {
		spec := models[m]
		if spec.perRead && !spec.single && (withOrders || !spec.process) && !c.proven[m] && c.replayable(m) && len(c.forbiddenFound(m)) == 0 {
			out = append(out, m)
		}
	}
	return out
}

// witnessSearch runs the serial search (under real-time order too when realtime,
// within win when set) as a witness for plain, bounded by maxStates and half the time
// left: an order found proves them once verifyPerReadLists accepts it.
func (c *checker) witnessSearch(in *encode.Inference, realtime bool, win *encode.Windows, maxStates int, plain []string, horizon bool) bool {
	t0 := time.Now()
	s := newRCSerial(c.h, in, realtime, c.halfTimeLeft())
	if s == nil || horizon && !s.limitInfo() {
		return false
	}
	s.counted = &c.res.Stats.SearchStates
	if win != nil {
		s.setWindows(win)
	}
	v := s.runLimited(maxStates)
	c.res.Stats.SolveSeconds += time.Since(t0).Seconds()
	if v != Valid {
		return false
	}
	at, err := verifyPerReadLists(c.h, in, s.order)
	if err != nil {
		c.res.Stats.ReplayRejected++
		return false
	}
	c.res.Stats.Searched++
	c.proveOrdered(at, plain)
	return true
}

// infoAppends reports whether an :info transaction appends.
func infoAppends(in *encode.Inference) bool {
	for i := range in.Writers {
		if in.Writers[i].Status == history.Info {
			return true
		}
	}
	return false
}

// strongWitnessStates bounds proveByStrongWitness's failed states over n
// transactions: strongWitnessStatesPerTxn each, at least 1<<16, at most 1<<20. Within
// windows a state costs ~6 µs at 2K transactions, and the rc store needed up to 300K
// there (150 a transaction). A constant 1<<20 let a search that finds nothing take
// the time the solver needs: on 300 transactions of hot keys of two values with a
// lost update and 5% :info (strong-session read committed, valid), 11 s of a 22 s
// check, 10.7 s in all with the bound scaled (the solver alone: 6.6 s).
func strongWitnessStates(n int) int {
	return min(max(strongWitnessStatesPerTxn*n, 1<<16), 1<<20)
}

// strongWitnessStatesPerTxn: see strongWitnessStates.
const strongWitnessStatesPerTxn = 256

// proveByStrongWitness is proveBySessionWitness's first try: the serial search under
// real-time order too (strong read committed), within the windows of its narrowing
// read by read. Real time orders the blocks of writers that did not overlap, so those
// windows pin most committed blocks where process order alone leaves them loose (the
// independent generator's read-committed store with 2% :info, 2K transactions: 1,212
// of 1,354 :ok writers bounded, mean width 0.5 positions, against 812 of width 15-19),
// and the :info transactions that never committed can no longer take their places.
// There the search found an order after 10K-300K failed states, where the session
// search found none in 4M. It proves what the session search would (a strong order
// keeps process order), so it only goes first; bounded by strongWitnessStates and half
// the time left, it decides nothing when it finds nothing.
func (c *checker) proveByStrongWitness(in *encode.Inference, plain []string) bool {
	if c.opts.Solver.NoPrune || c.budget.out() || c.strongWitnessTried {
		return false
	}
	c.strongWitnessTried = true
	// First without windows, bounded as strongWitness's plain search: where the
	// replays got stuck only on a write skew's or a G-single's reads, the search finds
	// the order at once, and the narrowing costs seconds (a write skew among 10K
	// transactions with 1% :info: 2.2 s of a 2.7 s check, 0.43 s without it).
	if !noInfoHorizon {
		c.progress("searching the orders of the processes under real time for a witness, :info transactions near their invokes, without windows")
		if c.witnessSearch(in, true, nil, strongPlainStates, plain, true) {
			return true
		}
	}
	c.progress("narrowing read by read under real-time order for a witness")
	t0 := time.Now()
	// Two rounds: the windows are about as tight (the store: mean width 1.0-1.9
	// against 0.4-0.5, the same failed states within 10%) at half the cost.
	pr := prune.Run(in, prune.Options{Level: prune.Level{PerRead: true, Process: true, Realtime: true},
		Deadline: c.budget.deadline, Stop: c.budget.mem.exceeded, MaxRounds: 2})
	c.res.Stats.PruneSeconds += time.Since(t0).Seconds()
	if pr.Contradiction != nil || pr.KeyUnsat || c.budget.out() {
		return false
	}
	// First with the :info transactions near their invokes (serialSearch.limitInfo),
	// within a quarter of the states, then without. The store's histories with 2%
	// :info needed 36-769 failed states at 1K-2K (1.7K-491K without the horizon); its
	// hot variant (100 zipf keys, values 1..3) at 10K more than a sixteenth (seed 1:
	// unknown at 30 s with a sixteenth, 0.9 CPU-s with a quarter). Bounded, since on
	// hot keys with :info, where neither finds an order, the first took half the
	// time left with the whole bound.
	if !noInfoHorizon {
		c.progress("searching the orders of the processes under real time for a witness, :info transactions near their invokes")
		if c.witnessSearch(in, true, pr.Win, strongWitnessStates(len(c.h.Txns))/4, plain, true) {
			return true
		}
	}
	c.progress("searching the orders of the processes under real time for a witness")
	return c.witnessSearch(in, true, pr.Win, strongWitnessStates(len(c.h.Txns)), plain, false)
}

// addSerialSearchAnomaly reports the serial search's proof for model m: no order of
// the :ok transactions that keeps its orders runs them all, so every attribution has
// a cycle of ww, wr and order edges (G1c-process, G1c-realtime).
func (c *checker) addSerialSearchAnomaly(m string, s *rcSerial) {
	spec := models[m]
	typ, order := "G1c-process", "process"
	if spec.realtime {
		typ, order = "G1c-realtime", "process or real-time"
	}
	a := Anomaly{Type: typ, Model: m}
	total := 0
	for _, ch := range s.chains {
		total += len(ch)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "every attribution of the duplicated values has a cycle of ww, wr and %s order edges: an acyclic one is an order of the %d :ok transactions (and :info ones that append, which may run last) that keeps %s order "+
		"in which each key's blocks follow one another as its longest read shows them (past it once it is full), each transaction runs once its key has at least the values each of its reads saw "+
		"(exactly, for a read that shows its own appends), and no read ends inside another transaction's block; a search of every such order (%d dead ends) runs at most %d transactions, and there the next transaction of each process cannot run",
		order, total, order, s.states, s.deepest)
	// Restore the deepest state to say why each next transaction cannot run there.
	if s.deepHead != nil {
		copy(s.head, s.deepHead)
		copy(s.pos, s.deepPos)
	}
	var seed []int32
	shown := 0
	for ci, ch := range s.chains {
		if int(s.head[ci]) >= len(ch) {
			continue
		}
		t := ch[s.head[ci]]
		seed = append(seed, t)
		why := s.why(t)
		if why == "" {
			why = "a transaction that completed before it was invoked has not run"
		}
		if shown < 16 {
			fmt.Fprintf(&b, "; %s: %s", c.ruName(t), why)
			a.Txns = append(a.Txns, c.txnRef(t))
		}
		shown++
	}
	if shown > 16 {
		fmt.Fprintf(&b, "; and %d more", shown-16)
	}
	// Why waiting does not help the transaction stuck on its block: the closure
	// (rcclosure.go) shows it can run in no continuation of that state.
	if s.cl == nil {
		s.newClosure()
	}
	// At most closureExplainTests tests (each bounded), within the time limit.
	tests := 0
	for ci, ch := range s.chains {
		if tests >= closureExplainTests || c.budget.out() {
			break
		}
		if int(s.head[ci]) >= len(ch) {
			continue
		}
		if t := ch[s.head[ci]]; s.readsHold(t) && !s.fits(t) {
			tests++
			if s.dead(int32(ci), s.head[ci], true) {
				fmt.Fprintf(&b, "; waiting does not help: %s", s.closureText())
				break
			}
		}
	}
	if len(a.Txns) > 8 {
		a.Txns = a.Txns[:8]
	}
	a.seed = seed
	a.searched = true
	a.Explanation = b.String()
	c.addAnomaly(a)
}
