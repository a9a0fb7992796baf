// Package localsearch looks for a serial order of a list-append history by local
// search over orders, where the greedy replays and the backtracking search got stuck
// deep in a history whose keys hold few distinct values (a wrong choice among writers
// of equal values hundreds of steps before it shows).
//
// The state is a total order of the transactions that must run. A read of key k is
// satisfied when the appends to k before its transaction install exactly the trace's
// first L values (L: its length less the transaction's own earlier appends to k). The
// cost is the weight of the unsatisfied reads; a move takes one transaction of a
// violated read (its reader, or a writer that broke it) to the place that leaves the
// least weight on the keys it touches, or trades its place with a writer of the same
// values (min-conflicts, with a short tabu). Where no move lowers the cost for a while,
// the weights of the reads still unsatisfied grow (the breakout method), which leads
// out of the minimum. Only a transaction's place relative to the other
// transactions on its own keys matters, so the order is kept as one priority per
// transaction and, per key, its transactions sorted by priority.
//
// It only proves: a returned order is for the caller to verify; giving up proves
// nothing.
package localsearch

import (
	"math"
	"math/rand/v2"
	"slices"

	"doppel/encode"
	"doppel/history"
)

// Options bound the search.
type Options struct {
	MaxMoves int         // moves in all (0: no bound)
	MaxWork  int64       // entries of key lists scanned in all, about 30M a second (0: no bound)
	Seed     uint64      // the random choices' seed
	Stop     func() bool // asked every 16 moves; true gives up
	// Best, when not nil, is set where the search gives up: the order with the fewest
	// unsatisfied reads it met, if that is at most BestWithin (for a search of the
	// neighbourhood around it). Keeping an order costs a copy of every priority, so
	// only the few below BestWithin are kept.
	Best       *[]int32
	BestWithin int
	// Progress, when not nil, is told how far the search got: the unsatisfied reads of
	// the first order and the fewest of any order seen.
	Progress *Progress
}

// Progress is how far a search got.
type Progress struct{ Start, Best int }

// entry is one transaction's micro-ops on one key.
type entry struct {
	txn, key int32
	need     int32 // the key's length its reads see (own earlier appends excluded); -1: no read
	weight   int32 // what leaving its reads unsatisfied costs (breakout: raised at local minima)
	vs, ve   int32 // its appended values: vals[vs:ve], in program order
}

// plateau: moves without a lower weighted cost after which the weights of the
// unsatisfied reads are raised (the breakout method).
const plateau = 200

// plateauPerRead lengthens the plateau by the unsatisfied reads: with many, moves that
// fix one and break another are progress, not a minimum.
const plateauPerRead = 20

type search struct {
	trace            [][]int32
	ents             []entry
	vals             []int32
	txnEnt           []int32   // entries of transaction t: ents[txnEnt[t]:txnEnt[t+1]]
	run              []int32   // the transactions that must or may run
	optional         []bool    // per transaction: may run or not (an :info writer)
	out              []bool    // per transaction: an optional one not running now
	optOn            [][]int32 // per key, the entries of optional transactions
	prio             []float64 // per transaction, its place: the order is by (prio, id)
	lists            [][]int32 // per key, its entries by their transactions' priority
	cost             []int32   // per key, the weight of its unsatisfied reads
	count            []int32   // per key, its unsatisfied reads
	total            int       // of cost
	left             int       // of count
	bad              []int32   // keys with unsatisfied reads
	badAt            []int32   // per key, its index in bad, -1
	tabu             []int     // per transaction, the move after which it may move again
	lastTotal        int       // total before the last move
	keysBuf, listBuf []int32
	// Per key, the state before each entry of its list (index i: before lists[k][i];
	// the last: after all): the length installed, where the trace first misfits, and
	// the cost of the entries before (keyCost's terms). stale[k]: to make again, the
	// list or its weights having changed (setCost). They let a swap be weighed on the
	// entries between the two places alone.
	curAt, goodAt [][]int32
	costBefore    [][]int64
	stale         []bool
	curBuf        []int32
	okBuf         []bool
	sumBuf        []int64
	installer     []int32     // violations' scratch: per position of a key, the transaction installing it
	violated      []violation // violations' scratch: the key's unsatisfied reads
	work          int64       // entries of key lists scanned
	rng           *rand.Rand

	// Scratch for a move's evaluation.
	without [][]int32 // per entry of the moving transaction, its key's list without it
	costAt  [][]int64 // per entry, the key's keyCost with the entry inserted at each index
	gaps    []float64
	gapsBuf []float64
}

// SerialOrder returns the transactions that run (every :ok one; no :fail, NotCommitted
// or MayCommit one) in an order in which every known read of a Committed :ok
// transaction sees what it read, or false when it found none within opt.
func SerialOrder(h *history.History, in *encode.Inference, commit []encode.Commit, opt Options) ([]int32, bool) {
	s := newSearch(h, in, commit, opt.Seed)
	if s == nil {
		return nil, false
	}
	since := 0
	if opt.Progress != nil {
		*opt.Progress = Progress{Start: s.left, Best: s.left}
		defer func() { opt.Progress.Best = min(opt.Progress.Best, s.left) }()
	}
	best := s.left + 1
	var bestPrio []float64
	var bestOut []bool
	for move := 0; s.left > 0; move++ {
		if opt.Progress != nil && s.left < opt.Progress.Best {
			opt.Progress.Best = s.left
		}
		if opt.Best != nil && s.left < best && s.left <= opt.BestWithin {
			best = s.left
			bestPrio = append(bestPrio[:0], s.prio...)
			bestOut = append(bestOut[:0], s.out...)
		}
		if s.total < s.lastTotal {
			since = 0
		} else if since++; since >= plateau+plateauPerRead*s.left {
			s.breakout()
			since = 0
		}
		s.lastTotal = s.total
		if opt.MaxMoves > 0 && move >= opt.MaxMoves || opt.MaxWork > 0 && s.work > opt.MaxWork ||
			move%16 == 15 && opt.Stop != nil && opt.Stop() {
			if opt.Best != nil && bestPrio != nil {
				s.prio, s.out = bestPrio, bestOut // the search ends here
				*opt.Best = s.order()
			}
			return nil, false
		}
		s.step(move)
	}
	return s.order(), true
}

// order returns the transactions that run now, in their order.
func (s *search) order() []int32 {
	var order []int32
	for _, t := range s.run {
		if !s.out[t] {
			order = append(order, t)
		}
	}
	slices.SortFunc(order, s.before)
	return order
}

func newSearch(h *history.History, in *encode.Inference, commit []encode.Commit, seed uint64) *search {
	n := len(h.Txns)
	s := &search{
		trace:      make([][]int32, len(in.Keys)),
		txnEnt:     make([]int32, n+1),
		prio:       make([]float64, n),
		lists:      make([][]int32, len(in.Keys)),
		cost:       make([]int32, len(in.Keys)),
		count:      make([]int32, len(in.Keys)),
		badAt:      make([]int32, len(in.Keys)),
		curAt:      make([][]int32, len(in.Keys)),
		goodAt:     make([][]int32, len(in.Keys)),
		costBefore: make([][]int64, len(in.Keys)),
		stale:      make([]bool, len(in.Keys)),
		tabu:       make([]int, n),
		optional:   make([]bool, n),
		out:        make([]bool, n),
		optOn:      make([][]int32, len(in.Keys)),
		rng:        rand.New(rand.NewPCG(seed, 0x6c73)),
	}
	for k := range in.Keys {
		s.trace[k] = in.Keys[k].Trace
		s.badAt[k] = -1
	}
	at := map[int32]int32{} // key -> its entry of the current transaction
	for t := 0; t < n; t++ {
		s.txnEnt[t] = int32(len(s.ents))
		tx := &h.Txns[t]
		if tx.Status != history.OK || commit[t] != encode.Committed {
			if tx.Status == history.Fail || commit[t] == encode.NotCommitted || !writesInside(h, in, t) {
				continue // never runs, or never needs to (it fills no trace position)
			}
			// An :info writer that may fill a position: it starts out of the order and
			// comes in where a read needs its values. Its reads are not known.
			s.optional[t], s.out[t] = true, true
		}
		s.run = append(s.run, int32(t))
		s.prio[t] = float64(h.Midpoint(int32(t)))
		clear(at)
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			e, ok := at[op.Key]
			if !ok {
				e = int32(len(s.ents))
				at[op.Key] = e
				s.ents = append(s.ents, entry{txn: int32(t), key: op.Key, need: -1, weight: 1})
			}
		}
		// Read lengths, then appended values, per entry.
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			en := &s.ents[at[op.Key]]
			if op.Kind == history.Append {
				continue
			}
			if !op.Known || s.optional[t] {
				continue
			}
			L := op.End - op.Start - int32(countAppends(h, tx.OpStart, i, op.Key))
			if en.need >= 0 && en.need != L {
				return nil // two states of one key in one transaction: not serial
			}
			if L < 0 || int(L) > len(s.trace[op.Key]) {
				return nil
			}
			en.need = L
		}
		for e := s.txnEnt[t]; e < int32(len(s.ents)); e++ {
			en := &s.ents[e]
			en.vs = int32(len(s.vals))
			for i := tx.OpStart; i < tx.OpEnd; i++ {
				if op := &h.Ops[i]; op.Kind == history.Append && op.Key == en.key {
					s.vals = append(s.vals, op.Value)
				}
			}
			en.ve = int32(len(s.vals))
		}
	}
	s.txnEnt[n] = int32(len(s.ents))
	for e := range s.ents {
		k := s.ents[e].key
		if s.optional[s.ents[e].txn] {
			s.optOn[k] = append(s.optOn[k], int32(e))
		} else {
			s.lists[k] = append(s.lists[k], int32(e))
		}
	}
	s.renumber() // distinct priorities: a swap then trades exact places
	for k := range s.lists {
		slices.SortFunc(s.lists[k], func(a, b int32) int { return s.before(s.ents[a].txn, s.ents[b].txn) })
		s.setCost(int32(k), s.keyCost(int32(k), s.lists[k], -1, 0))
	}
	return s
}

// writesInside reports whether t appends a value some trace holds on its key.
func writesInside(h *history.History, in *encode.Inference, t int) bool {
	for _, op := range h.TxnOps(t) {
		if op.Kind == history.Append && int(op.Key) < len(in.Keys) && slices.Contains(in.Keys[op.Key].Trace, op.Value) {
			return true
		}
	}
	return false
}

// countAppends counts the appends to key k among micro-ops [from, to).
func countAppends(h *history.History, from, to, k int32) int {
	n := 0
	for i := from; i < to; i++ {
		if op := &h.Ops[i]; op.Kind == history.Append && op.Key == k {
			n++
		}
	}
	return n
}

// before orders transactions by priority, then by id.
func (s *search) before(a, b int32) int { return byPlace(s.prio[a], a, s.prio[b], b) }

// byPlace orders transaction a at priority pa and b at pb: by priority, then by id.
func byPlace(pa float64, a int32, pb float64, b int32) int {
	switch {
	case pa < pb:
		return -1
	case pa > pb:
		return 1
	}
	return int(a - b)
}

// keyCost weighs the unsatisfied reads of key k when its entries run in the order of
// list with entry ins (when ≥ 0) inserted before list[at]: the weight in the low 32
// bits, the count above.
func (s *search) keyCost(k int32, list []int32, ins int32, at int) int64 {
	trace := s.trace[k]
	s.work += int64(len(list)) + 1
	cur, good := int32(0), int32(math.MaxInt32) // installed length; the trace matches below good
	cost := int64(0)
	visit := func(e int32) {
		var c int64
		cur, good, c = s.visit(trace, e, cur, good)
		cost += c
	}
	for i, e := range list {
		if i == at && ins >= 0 {
			visit(ins)
		}
		visit(e)
	}
	if at == len(list) && ins >= 0 {
		visit(ins)
	}
	return cost
}

// visit is keyCost's step: entry e after cur values are installed, the trace matching
// below good. It returns the installed length and good after e, and e's cost (its
// count in the high 32 bits, its weight in the low).
func (s *search) visit(trace []int32, e int32, cur, good int32) (int32, int32, int64) {
	en := &s.ents[e]
	var c int64
	if en.need >= 0 && (en.need != cur || en.need > good) {
		c = 1<<32 | int64(en.weight)
	}
	for _, v := range s.vals[en.vs:en.ve] {
		if int(cur) < len(trace) && trace[cur] != v && good > cur {
			good = cur
		}
		cur++
	}
	return cur, good, c
}

// states makes key k's curAt, goodAt and costBefore again where stale.
func (s *search) states(k int32) {
	if !s.stale[k] {
		return
	}
	s.stale[k] = false
	list, trace := s.lists[k], s.trace[k]
	s.work += int64(len(list))
	cur, good, cost := int32(0), int32(math.MaxInt32), int64(0)
	s.curAt[k], s.goodAt[k], s.costBefore[k] = s.curAt[k][:0], s.goodAt[k][:0], s.costBefore[k][:0]
	for _, e := range list {
		s.curAt[k] = append(s.curAt[k], cur)
		s.goodAt[k] = append(s.goodAt[k], good)
		s.costBefore[k] = append(s.costBefore[k], cost)
		var c int64
		cur, good, c = s.visit(trace, e, cur, good)
		cost += c
	}
	s.curAt[k] = append(s.curAt[k], cur)
	s.goodAt[k] = append(s.goodAt[k], good)
	s.costBefore[k] = append(s.costBefore[k], cost)
}

// costsAt sets c[i] to keyCost(k, list, e, i) for every i in [0, len(list)], in time
// linear in the list and its appends. With e inserted before list[i], the entries
// before i see what they saw without it; e's reads see the state there; the entries
// from i on install their appends a = len(e's values) positions further. A read j ≥ i
// is then satisfied when its length is its old one plus a, nothing before i is wrong,
// e's values fit the trace where they land, and no entry in [i, j) has a value that
// does not fit where it now lands.
func (s *search) costsAt(k int32, list []int32, e int32, c []int64) []int64 {
	trace := s.trace[k]
	s.work += 2 * int64(len(list)+1)
	en := &s.ents[e]
	a := en.ve - en.vs
	m := len(list)
	fits := func(v, p int32) bool { return int(p) >= len(trace) || trace[p] == v }
	// Forward: the state before each entry, and the violations before it.
	s.curBuf = s.curBuf[:0]
	s.okBuf = s.okBuf[:0]
	s.sumBuf = s.sumBuf[:0]
	cur, wrong, before := int32(0), false, int64(0)
	for _, x := range list {
		ex := &s.ents[x]
		s.curBuf = append(s.curBuf, cur)
		s.okBuf = append(s.okBuf, !wrong)
		s.sumBuf = append(s.sumBuf, before)
		if ex.need >= 0 && (ex.need != cur || wrong) {
			before += 1<<32 | int64(ex.weight)
		}
		for _, v := range s.vals[ex.vs:ex.ve] {
			wrong = wrong || !fits(v, cur)
			cur++
		}
	}
	s.curBuf = append(s.curBuf, cur)
	s.okBuf = append(s.okBuf, !wrong)
	s.sumBuf = append(s.sumBuf, before)
	// Backward: all reads from j on, the ones that would hold shifted by a (up to the
	// first shifted misfit), and where that first misfit is.
	var all, match int64
	for j := m; j >= 0; j-- {
		if j < m {
			ex := &s.ents[list[j]]
			bad := false
			p := s.curBuf[j] + a
			for _, v := range s.vals[ex.vs:ex.ve] {
				bad = bad || !fits(v, p)
				p++
			}
			if bad {
				// Reads past j can no longer hold: forget them; j's own read comes
				// before its appends.
				match = 0
			}
			if ex.need >= 0 {
				w := 1<<32 | int64(ex.weight)
				all += w
				if ex.need == s.curBuf[j]+a {
					match += w
				}
			}
		}
		i := j
		cost := s.sumBuf[i] + all
		ok := s.okBuf[i]
		if en.need >= 0 && (en.need != s.curBuf[i] || !ok) {
			cost += 1<<32 | int64(en.weight)
		}
		for q, v := range s.vals[en.vs:en.ve] {
			ok = ok && fits(v, s.curBuf[i]+int32(q))
		}
		if ok {
			cost -= match
		}
		c[i] = cost
	}
	return c
}

func (s *search) setCost(k int32, both int64) {
	s.stale[k] = true
	c, n := int32(both&(1<<32-1)), int32(both>>32)
	s.total += int(c - s.cost[k])
	s.left += int(n - s.count[k])
	s.cost[k], s.count[k] = c, n
	switch {
	case n > 0 && s.badAt[k] < 0:
		s.badAt[k] = int32(len(s.bad))
		s.bad = append(s.bad, k)
	case n == 0 && s.badAt[k] >= 0:
		i := s.badAt[k]
		last := s.bad[len(s.bad)-1]
		s.bad[i], s.badAt[last] = last, i
		s.bad = s.bad[:len(s.bad)-1]
		s.badAt[k] = -1
	}
}

// violation is an unsatisfied read: its index in its key's list, the length installed
// before it and the first position whose value misfits the trace (MaxInt32: none).
type violation struct{ at, cur, good int32 }

// violations lists key k's unsatisfied reads into s.violated and who installed each
// position into s.installer; it returns the length installed in all.
func (s *search) violations(k int32) int32 {
	list := s.lists[k]
	trace := s.trace[k]
	s.work += int64(len(list))
	s.violated, s.installer = s.violated[:0], s.installer[:0]
	cur, good := int32(0), int32(math.MaxInt32)
	for i, e := range list {
		en := &s.ents[e]
		if en.need >= 0 && (en.need != cur || en.need > good) {
			s.violated = append(s.violated, violation{int32(i), cur, good})
		}
		for _, v := range s.vals[en.vs:en.ve] {
			if int(cur) < len(trace) && trace[cur] != v && good > cur {
				good = cur
			}
			s.installer = append(s.installer, en.txn)
			cur++
		}
	}
	return cur
}

// step makes one move.
func (s *search) step(move int) {
	k := s.bad[s.rng.IntN(len(s.bad))]
	// A violated read of k, at random.
	list := s.lists[k]
	trace := s.trace[k]
	cur := s.violations(k)
	vi := s.violated[s.rng.IntN(len(s.violated))]
	r := &s.ents[list[vi.at]]
	mover := r.txn
	if s.rng.IntN(2) == 0 || s.tabu[mover] > move {
		// A writer that broke the read: one installing a position in [need, cur) when
		// too much is installed before it, or the first wrong value; one installing
		// [cur, need) after it when too little.
		var from, to int32
		switch {
		case vi.cur > r.need:
			from, to = r.need, vi.cur
		case vi.good < r.need:
			from, to = vi.good, vi.good+1
		default:
			from, to = vi.cur, min(r.need, cur)
		}
		var side []int32
		for p := from; p < to; p++ {
			if t := s.installer[p]; s.tabu[t] <= move && t != r.txn {
				side = append(side, t)
			}
		}
		if len(side) > 0 {
			mover = side[s.rng.IntN(len(side))]
		}
		// Too little installed, or a wrong value: an optional writer out of the order
		// with the value the trace wants there may come in.
		if p := min(vi.cur, vi.good); p < r.need && int(p) < len(trace) && len(s.optOn[k]) > 0 {
			var opts []int32
			for _, e := range s.optOn[k] {
				if en := &s.ents[e]; s.out[en.txn] && s.tabu[en.txn] <= move && en.ve > en.vs && s.vals[en.vs] == trace[p] {
					opts = append(opts, en.txn)
				}
			}
			if len(opts) > 0 && (len(side) == 0 || s.rng.IntN(2) == 0) {
				mover = opts[s.rng.IntN(len(opts))]
			}
		}
	}
	s.moveBest(mover, move)
}

// moveBest moves t to the place among its keys' other transactions that leaves the
// least weight of unsatisfied reads on those keys (ties at random), or trades places
// with a writer of the same values (bestSwap) when that is better.
func (s *search) moveBest(t int32, move int) {
	es := s.ents[s.txnEnt[t]:s.txnEnt[t+1]]
	s.without = s.without[:0]
	s.costAt = s.costAt[:0]
	s.gaps = s.gaps[:0]
	for i := range es {
		e := s.txnEnt[t] + int32(i)
		k := es[i].key
		w := make([]int32, 0, len(s.lists[k]))
		run := len(s.gaps)
		for _, x := range s.lists[k] {
			if x != e {
				w = append(w, x)
				s.gaps = append(s.gaps, s.prio[s.ents[x].txn])
			}
		}
		// Each key's priorities come in order: merge them with the keys' before.
		s.gapsBuf = mergeSorted(s.gapsBuf[:0], s.gaps[:run], s.gaps[run:])
		s.gaps, s.gapsBuf = s.gapsBuf, s.gaps
		c := s.costsAt(k, w, e, make([]int64, len(w)+1))
		s.without = append(s.without, w)
		s.costAt = append(s.costAt, c)
	}
	s.gaps = slices.Compact(s.gaps)
	// Place g: after gaps[g-1] and before gaps[g].
	place := newLeast()
	idx := make([]int, len(es))
	for g := 0; g <= len(s.gaps); g++ {
		c := int32(0)
		for i := range es {
			w := s.without[i]
			for idx[i] < len(w) && g > 0 && s.prio[s.ents[w[idx[i]]].txn] <= s.gaps[g-1] {
				idx[i]++
			}
			c += int32(s.costAt[i][idx[i]] & (1<<32 - 1))
		}
		place.offer(s.rng, int32(g), c)
	}
	best, bestCost := int(place.best), place.cost
	if s.optional[t] {
		// Out of the order is a place too.
		outCost := int32(0)
		for i := range es {
			outCost += int32(s.keyCost(es[i].key, s.without[i], -1, 0) & (1<<32 - 1))
		}
		if outCost < bestCost || outCost == bestCost && s.out[t] {
			if !s.out[t] {
				for i := range es {
					k := es[i].key
					s.lists[k] = s.without[i]
					s.setCost(k, s.keyCost(k, s.lists[k], -1, 0))
				}
				s.out[t] = true
			}
			s.tabu[t] = move + tabuTenure
			return
		}
	}
	now := int32(0)
	for i := range es {
		now += s.cost[es[i].key]
	}
	if x, delta, ok := s.bestSwap(t, move); !s.out[t] && ok && (delta < bestCost-now || delta == bestCost-now && s.rng.IntN(2) == 0) {
		s.swap(t, x)
		s.tabu[t], s.tabu[x] = move+tabuTenure, move+tabuTenure
		return
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if best > 0 {
		lo = s.gaps[best-1]
	}
	if best < len(s.gaps) {
		hi = s.gaps[best]
	}
	var p float64
	switch {
	case math.IsInf(lo, -1) && math.IsInf(hi, 1):
		p = s.prio[t]
	case math.IsInf(lo, -1):
		p = hi - 1
	case math.IsInf(hi, 1):
		p = lo + 1
	default:
		p = lo + (hi-lo)/2
	}
	if !(p > lo && p < hi) {
		s.renumber()
		s.moveBest(t, move)
		return
	}
	s.prio[t] = p
	s.out[t] = false
	for i := range es {
		e := s.txnEnt[t] + int32(i)
		k := es[i].key
		w := s.without[i]
		at, _ := slices.BinarySearchFunc(w, t, func(x, t int32) int { return s.before(s.ents[x].txn, t) })
		s.lists[k] = slices.Insert(w, at, e)
		s.setCost(k, s.costAt[i][at])
	}
	s.tabu[t] = move + tabuTenure
}

// mergeSorted appends to dst the merge of a and b, each in ascending order.
func mergeSorted(dst, a, b []float64) []float64 {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] <= b[j] {
			dst = append(dst, a[i])
			i++
		} else {
			dst = append(dst, b[j])
			j++
		}
	}
	return append(append(dst, a[i:]...), b[j:]...)
}

// tabuTenure: a transaction just moved stays put for this many moves.
const tabuTenure = 8

// bestSwap finds the transaction x whose place t best takes, and x t's: one appending
// the same values as t to a key of t's (so that key's values stay as they are), with
// the change of weighted cost on the keys of both.
func (s *search) bestSwap(t int32, move int) (int32, int32, bool) {
	swap := newLeast()
	if s.out[t] {
		return -1, swap.cost, false
	}
	try := func(et *entry, e int32) {
		x := s.ents[e].txn
		if x == t || s.tabu[x] > move || !slices.Equal(s.vals[s.ents[e].vs:s.ents[e].ve], s.vals[et.vs:et.ve]) {
			return
		}
		swap.offer(s.rng, x, s.swapDelta(t, x))
	}
	for i := s.txnEnt[t]; i < s.txnEnt[t+1]; i++ {
		et := &s.ents[i]
		if et.ve == et.vs {
			continue
		}
		// The nearest writers of the same values on each side, and a few anywhere:
		// evaluating every one costs a pass over each key per candidate.
		list := s.lists[et.key]
		if len(list) <= swapAll {
			// Short keys: every writer of the same values.
			for _, e := range list {
				try(et, e)
			}
			continue
		}
		at := slices.Index(list, i)
		for dir := -1; dir <= 1; dir += 2 {
			found := 0
			for j := at + dir; j >= 0 && j < len(list) && found < swapNear; j += dir {
				if en := &s.ents[list[j]]; slices.Equal(s.vals[en.vs:en.ve], s.vals[et.vs:et.ve]) {
					try(et, list[j])
					found++
				}
			}
		}
		for range swapFar {
			if j := s.rng.IntN(len(list)); j < at-swapNear || j > at+swapNear {
				try(et, list[j])
			}
		}
	}
	return swap.best, swap.cost, swap.best >= 0
}

// least keeps the candidate of least cost offered, ties broken uniformly at random
// (each of k tied candidates replaces the kept one with probability 1/k).
type least struct {
	best, cost int32
	ties       int
}

func newLeast() least { return least{best: -1, cost: math.MaxInt32} }

func (l *least) offer(rng *rand.Rand, x, cost int32) {
	switch {
	case cost < l.cost:
		l.best, l.cost, l.ties = x, cost, 1
	case cost == l.cost:
		l.ties++
		if rng.IntN(l.ties) == 0 {
			l.best = x
		}
	}
}

// swapNear and swapFar: bestSwap tries the swapNear nearest writers of the same values
// on each side and swapFar places of the key at random.
const (
	swapAll  = 256 // keys of at most this many entries: every writer of the same values
	swapNear = 8
	swapFar  = 8
)

// swapKeys lists the keys of t and x, once each.
func (s *search) swapKeys(t, x int32) []int32 {
	s.keysBuf = s.keysBuf[:0]
	for _, u := range [2]int32{t, x} {
		for _, e := range s.ents[s.txnEnt[u]:s.txnEnt[u+1]] {
			if !slices.Contains(s.keysBuf, e.key) {
				s.keysBuf = append(s.keysBuf, e.key)
			}
		}
	}
	return s.keysBuf
}

// swapDelta is the change of weighted cost if t and x traded places. A key where both
// only append the same values keeps its values and reads: it is skipped.
func (s *search) swapDelta(t, x int32) int32 {
	d := int32(0)
	for _, k := range s.swapKeys(t, x) {
		et, ex := s.entryOn(t, k), s.entryOn(x, k)
		if et >= 0 && ex >= 0 && s.ents[et].need < 0 && s.ents[ex].need < 0 &&
			slices.Equal(s.vals[s.ents[et].vs:s.ents[et].ve], s.vals[s.ents[ex].vs:s.ents[ex].ve]) {
			continue
		}
		d += int32(s.swappedCost(k, t, x, et, ex)&(1<<32-1)) - s.cost[k]
	}
	return d
}

// swappedCost is keyCost of key k's list once t and x (entries et and ex on k, -1
// where none) trade places. Only the entries between the two places change places or
// see another state before them; past them the list sees what it saw, unless the
// trace's first misfit moved: so the cost is the kept states' up to the first place,
// the window weighed anew, and the kept cost after it (states, swapWindow).
func (s *search) swappedCost(k, t, x, et, ex int32) int64 {
	s.states(k)
	list, trace := s.lists[k], s.trace[k]
	lo, hi := s.swapWindow(list, t, x, et, ex) // s.listBuf: the window's entries after the trade
	cur, good, cost := s.curAt[k][lo], s.goodAt[k][lo], s.costBefore[k][lo]
	s.work += int64(len(s.listBuf))
	for _, e := range s.listBuf {
		var c int64
		cur, good, c = s.visit(trace, e, cur, good)
		cost += c
	}
	if cur == s.curAt[k][hi] && good == s.goodAt[k][hi] {
		return cost + s.costBefore[k][len(list)] - s.costBefore[k][hi]
	}
	s.work += int64(len(list) - hi)
	for _, e := range list[hi:] {
		var c int64
		cur, good, c = s.visit(trace, e, cur, good)
		cost += c
	}
	return cost
}

// swapWindow returns the places [lo, hi) of list (a key's, in order) between which
// entries change places when t and x (entries et and ex on the key, -1 where none)
// trade priorities, and puts the entries there after the trade in s.listBuf. The
// window spans each one's place now and where its new priority falls; the rest keep
// their order. (Priorities are distinct on a key, but a trade can tie one with another
// transaction's: the order then goes by transaction, as before does.)
func (s *search) swapWindow(list []int32, t, x, et, ex int32) (lo, hi int) {
	at := func(u int32, prio float64) int { // where (prio, u) falls in list
		i, _ := slices.BinarySearchFunc(list, u, func(y, u int32) int {
			ty := s.ents[y].txn
			return byPlace(s.prio[ty], ty, prio, u)
		})
		return i
	}
	lo, hi = len(list), 0
	for _, m := range [2][3]int32{{t, et, x}, {x, ex, t}} {
		if m[1] < 0 {
			continue
		}
		for _, p := range [2]int{at(m[0], s.prio[m[0]]), at(m[0], s.prio[m[2]])} {
			lo, hi = min(lo, p), max(hi, p+1)
		}
	}
	hi = min(hi, len(list))
	s.listBuf = append(s.listBuf[:0], list[lo:hi]...)
	s.prio[t], s.prio[x] = s.prio[x], s.prio[t]
	slices.SortFunc(s.listBuf, func(a, b int32) int { return s.before(s.ents[a].txn, s.ents[b].txn) })
	s.prio[t], s.prio[x] = s.prio[x], s.prio[t]
	return lo, hi
}

// entryOn is t's entry on key k, -1 if none.
func (s *search) entryOn(t, k int32) int32 {
	for e := s.txnEnt[t]; e < s.txnEnt[t+1]; e++ {
		if s.ents[e].key == k {
			return e
		}
	}
	return -1
}

// swap makes t and x trade places.
func (s *search) swap(t, x int32) {
	s.prio[t], s.prio[x] = s.prio[x], s.prio[t]
	for _, k := range s.swapKeys(t, x) {
		slices.SortFunc(s.lists[k], func(a, b int32) int { return s.before(s.ents[a].txn, s.ents[b].txn) })
		s.setCost(k, s.keyCost(k, s.lists[k], -1, 0))
	}
}

// breakout raises the weight of every unsatisfied read (the breakout method: a local
// minimum of the weighted cost is no longer one).
func (s *search) breakout() {
	for _, k := range slices.Clone(s.bad) {
		s.violations(k)
		for _, v := range s.violated {
			s.ents[s.lists[k][v.at]].weight++
		}
		s.setCost(k, s.keyCost(k, s.lists[k], -1, 0))
	}
	s.lastTotal = s.total
}

// renumber spreads the priorities out again (rank order) when a gap got too narrow.
func (s *search) renumber() {
	order := slices.Clone(s.run)
	slices.SortFunc(order, s.before)
	for i, t := range order {
		s.prio[t] = float64(i) * 1024
	}
}
