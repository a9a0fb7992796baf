package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/prune"
)

// An order count: a proof, key by key and without search, that a per-read model with
// process (and real-time) order has no acyclic attribution, for histories whose
// trouble is one transaction whose block fits nowhere: a lost update's loser, whose
// append is in no list, must go after what it read but before every block of its
// process (real-time) successors, and the positions in between hold other values.
// The per-read problem leaves that to the solver as a pigeonhole over duplicate
// values, which at 100K transactions it cannot build (and at 1K cannot refute).
//
// In every acyclic attribution, for a committed writer w of key x (its block starting
// at position pos(w), 1-based, or past the trace):
//   - pos(w) > q for each read of x by w before its own appends that saw q values
//     (else a future read or a ww/wr cycle), and pos(w) = q + 1 for one after them;
//   - pos(w) > q when a transaction a that read q values of x (not counting its own
//     appends) precedes w in process (real-time) order: the writer of the block q
//     ends with →wr a → w, and w's block inside those q values would close a cycle;
//   - pos(w) ≥ pos(a) + len(a) when a committed writer a of x precedes w so (a's block
//     before w's, else w →ww* a → w);
//   - pos(w) is a position where the trace shows w's values, or past the trace.
// Those give a lower bound lo(w) per writer, in one sweep over the invokes and
// completions of the key's transactions (a bound past the trace propagates: a
// successor of an unobserved writer is unobserved too). Each position of the trace
// holds the append of a writer whose block starts at or before it, so for each value
// v with trace positions p_1 < p_2 < …, at least j appends of v by writers with
// lo ≤ p_j are needed (:info writers, which may have committed, counted with no
// bound; :fail ones never). A shortfall holds in every attribution: the model is not
// valid. Nothing is claimed otherwise (the count is only a necessary condition).

// orderShort is an order count's proof that one key's trace cannot be filled: on key
// Key, the positions in Window (1-based, both ends included) that show Value number
// Positions. Over: the appends of Value that must lie inside the window (Txns, whose
// bounds lie inside it) outnumber them. Otherwise the appends that can reach a
// position of the window are fewer than them: Txns are the other writers of Value,
// whose bounds lie outside the window (Lo past it, or Hi before it).
type orderShort struct {
	Key, Value int32
	Window     [2]int32
	Positions  int32
	Over       bool
	// Appends counts Value's appends confined to the window (Over), or those that can
	// reach a position of it (otherwise).
	Appends int32
	Txns    []int32
	// Per transaction of Txns: its block's first possible position and the transaction
	// whose read or block gives that bound (-1 none), its last (past the trace: none),
	// and the transaction whose own read pins the block that bounds it from above (-1
	// none).
	Lo, LoBy, Hi, HiBy []int32
	// Seed: Txns and the transactions their bounds come from, transitively (at most
	// orderSeedMax).
	Seed []int32
}

// orderSeedMax bounds an order count's seed.
const orderSeedMax = 256

// orderItem is one append of a value, for the matching: it may lie at the positions
// lo..hi (normalized to positions that show its value); must: it lies in the trace in
// every acyclic attribution.
type orderItem struct {
	lo, hi, txn int32
	must        bool
}

// orderCount looks for a key whose trace the per-read inference in cannot fill under
// process (and, with realtime, real-time) order; it returns the proof, or nil.
//
// win, when not nil, holds windows narrowed for the same model (prune's per-read
// level): a block starts at or after win.Lo (0-based) and, when win.Hi is inside the
// trace, at or before it; both hold in every acyclic attribution, so they tighten the
// bounds.
func orderCount(h *history.History, in *encode.Inference, realtime bool, win *encode.Windows, stop func() bool) *orderShort {
	return orderCountInto(h, in, realtime, win, stop, nil)
}

// orderBounds are the order count's bounds per :ok writer (1-based, as orderItem):
// its block starts at or after Lo, and, when Hi is inside the trace, at or before Hi
// (then it is in the trace in every acyclic attribution). A writer of a key the count
// did not reach keeps Lo 1 and Hi past any trace.
type orderBounds struct {
	Lo, Hi []int32
}

// orderCountInto is orderCount, recording the bounds of each key it counted into out
// (when not nil).
func orderCountInto(h *history.History, in *encode.Inference, realtime bool, win *encode.Windows, stop func() bool, out *orderBounds) *orderShort {
	n := len(h.Txns)
	lo := make([]int32, n)    // per writer txn of the current key: lower bound on its block start
	hi := make([]int32, n)    // per writer txn: upper bound (past the trace: none)
	hiBy := make([]int32, n)  // per txn: the pinned transaction its upper bound comes from
	pin := make([]int32, n)   // per writer txn: its block's start when its own read shows it (0 none)
	mustIn := make([]bool, n) // per writer txn: its block is in the trace (see findMustIn)
	gone := make([]int32, n)  // findMustIn's scratch
	var goneStamp int32
	pub := make([]int32, n)      // per txn: the bound its predecessors' blocks must end before
	readQ := make([]int32, n)    // per txn: the longest prefix of the key it read (own appends left out)
	base := make([]int32, n)     // per writer txn: the bound its own reads give
	writerOf := make([]int32, n) // per txn: its :ok writer id on the key, -1 none
	for i := range writerOf {
		writerOf[i] = -1
	}
	procMax := make([]int32, len(h.Processes))
	procMaxBy := make([]int32, len(h.Processes)) // the transaction procMax comes from
	loBy := make([]int32, n)                     // per writer txn: the transaction its lower bound comes from, -1 none
	procMin := make([]int32, len(h.Processes))
	procMinBy := make([]int32, len(h.Processes))
	var touched []int32
	var events []int64 // event position<<32 | txn<<1 | 1 for a completion
	var procs []int32
	nv := len(h.Values)
	cnt, vStart := make([]int32, nv), make([]int32, nv)
	var at, vals []int32
	appended := make([]int32, nv) // per value: k+1 when key k has an append of it
	var items, its []orderItem
	var itemVal, byVal []int32
	for k := range in.Keys {
		if k%64 == 0 && stop != nil && stop() {
			return nil
		}
		key := &in.Keys[k]
		L := key.Trace
		if key.Bad || len(L) == 0 {
			continue
		}
		tn := int32(len(L))
		// at[vStart[v]:vStart[v]+cnt[v]]: the positions (1-based, increasing) showing v,
		// so that a writer's fit is a binary search, not a scan of the trace.
		for _, v := range L {
			cnt[v]++
		}
		vals = vals[:0]
		var sum int32
		for _, v := range L {
			if cnt[v] > 0 {
				vStart[v], sum, cnt[v] = sum, sum+cnt[v], 0
				vals = append(vals, v)
			}
		}
		at = slices.Grow(at[:0], len(L))[:len(L)]
		for i, v := range L {
			at[vStart[v]+cnt[v]] = int32(i + 1)
			cnt[v]++
		}
		posOf := func(v int32) []int32 {
			if int(v) >= nv || cnt[v] == 0 || L[at[vStart[v]]-1] != v {
				return nil
			}
			return at[vStart[v] : vStart[v]+cnt[v]]
		}
		fits := func(wv []int32, p int32) bool {
			m := min(len(wv), len(L)-int(p)+1)
			return slices.Equal(L[p-1:int(p)-1+m], wv[:m])
		}
		// fit is the first position from on where the trace shows w's block (past the
		// trace: none), fitBack the last one up to upTo (0: none).
		fit := func(wi, from int32) int32 {
			w := &in.Writers[wi]
			wv := in.WriterVals[w.Start:w.End]
			ps := posOf(wv[0])
			i, _ := slices.BinarySearch(ps, from)
			for _, p := range ps[i:] {
				if fits(wv, p) {
					return p
				}
			}
			return tn + 1
		}
		fitBack := func(wi, upTo int32) int32 {
			w := &in.Writers[wi]
			wv := in.WriterVals[w.Start:w.End]
			ps := posOf(wv[0])
			i, _ := slices.BinarySearch(ps, upTo+1)
			for j := i - 1; j >= 0; j-- {
				if fits(wv, ps[j]) {
					return ps[j]
				}
			}
			return 0
		}
		touched = touched[:0]
		touch := func(t int32) {
			if readQ[t] == 0 && base[t] == 0 && writerOf[t] < 0 && lo[t] == 0 {
				touched = append(touched, t)
				lo[t] = -1 // marks touched
			}
		}
		for _, ri := range key.Reads {
			r := &in.Reads[ri]
			if h.Txns[r.Txn].Status != history.OK || r.Version {
				continue // a version read gives no edge and places no block
			}
			touch(r.Txn)
			q := r.Len - r.Own
			readQ[r.Txn] = max(readQ[r.Txn], q)
			if r.Writes {
				base[r.Txn] = max(base[r.Txn], q+1)
			}
			if r.Own > 0 && (pin[r.Txn] == 0 || q+1 < pin[r.Txn]) {
				pin[r.Txn] = q + 1
			}
		}
		items, itemVal = items[:0], itemVal[:0]
		for _, wi := range key.Writers {
			w := &in.Writers[wi]
			switch w.Status {
			case history.OK:
				touch(w.Txn)
				writerOf[w.Txn] = wi
			case history.Info:
				// It may have committed, anywhere: counted with no bound.
				for _, v := range in.WriterVals[w.Start:w.End] {
					items = append(items, orderItem{lo: 1, hi: tn + 1, txn: w.Txn})
					itemVal = append(itemVal, v)
				}
			}
		}
		// Invokes and completions in event order: an invoke takes the bound of what
		// completed before it (real time) and of its process's earlier transactions.
		events = events[:0]
		for _, t := range touched {
			tx := &h.Txns[t]
			events = append(events, int64(tx.Invoke)<<32|int64(t)<<1)
			if tx.Complete >= 0 {
				events = append(events, int64(tx.Complete)<<32|int64(t)<<1|1)
			}
		}
		slices.Sort(events)
		var rtMax int32
		rtMaxBy := int32(-1)
		procs = procs[:0]
		for _, e := range events {
			t := int32(e>>1) & (1<<31 - 1)
			p := h.Txns[t].Process
			if e&1 == 0 {
				if wi := writerOf[t]; wi >= 0 {
					from, by := max(base[t], 1), int32(-1)
					if base[t] > 0 {
						by = t
					}
					if win != nil {
						if wl := min(win.Lo[wi], tn) + 1; wl > from {
							from, by = wl, loByNarrowing
						}
					}
					if realtime && rtMax > from {
						from, by = rtMax, rtMaxBy
					}
					if p >= 0 && procMax[p] > from {
						from, by = procMax[p], procMaxBy[p]
					}
					lo[t], loBy[t] = fit(wi, from), by
				}
				continue
			}
			c := readQ[t] + 1
			if wi := writerOf[t]; wi >= 0 {
				w := &in.Writers[wi]
				c = max(c, min(lo[t], tn+1)+w.End-w.Start)
			}
			if c > rtMax {
				rtMax, rtMaxBy = c, t
			}
			if p >= 0 {
				if procMax[p] == 0 {
					procs = append(procs, p)
					procMin[p], procMinBy[p] = tn+1, -1
				}
				if c > procMax[p] {
					procMax[p], procMaxBy[p] = c, t
				}
			}
		}
		// A writer whose block is past the trace takes its successors' with it (theirs
		// come after it). When the trace cannot be filled without them (counted with the
		// lower bounds alone), the writer's block is in the trace: mustIn.
		// The appends of each value, where each may lie from (hi: past the trace, for
		// now): the append at offset o of w's block from lo(w)+o.
		for _, t := range touched {
			if wi := writerOf[t]; wi >= 0 {
				w := &in.Writers[wi]
				for o, v := range in.WriterVals[w.Start:w.End] {
					items = append(items, orderItem{lo: min(lo[t], tn+1) + int32(o), hi: tn + 1, txn: t})
					itemVal = append(itemVal, v)
				}
			}
		}
		findMustIn(h, touched, writerOf, gone, &goneStamp, mustIn, realtime, items, itemVal, posOf)
		// The same sweep backwards: a writer whose block is pinned (its own read shows
		// it) must be in the trace, and so must the block of every writer before it in
		// process (real-time) order, ending before it starts: hi(w) is the last
		// position meeting that, past the trace when nothing pins a successor.
		rtMin, rtMinBy := tn+1, int32(-1)
		for i := len(events) - 1; i >= 0; i-- {
			e := events[i]
			t := int32(e>>1) & (1<<31 - 1)
			p := h.Txns[t].Process
			if e&1 == 0 {
				if pub[t] <= tn {
					if realtime && pub[t] < rtMin {
						rtMin, rtMinBy = pub[t], hiBy[t]
					}
					if p >= 0 && pub[t] < procMin[p] {
						procMin[p], procMinBy[p] = pub[t], hiBy[t]
					}
				}
				continue
			}
			end, by := tn+1, int32(-1)
			if realtime && rtMin < end {
				end, by = rtMin, rtMinBy
			}
			if p >= 0 && procMin[p] < end {
				end, by = procMin[p], procMinBy[p]
			}
			hi[t], pub[t], hiBy[t] = tn+1, end, by
			wi := writerOf[t]
			if wi < 0 {
				continue
			}
			w := &in.Writers[wi]
			bound := tn + 1
			if end <= tn {
				bound = end - (w.End - w.Start)
			}
			if pin[t] > 0 && pin[t] <= bound {
				bound, by = pin[t], t
			}
			if win != nil && win.Hi[wi] < tn && win.Hi[wi]+1 < bound {
				bound, by = win.Hi[wi]+1, mustByNarrowing
			}
			if mustIn[t] && bound > tn {
				bound, by = tn, mustByCount
			}
			if bound <= tn {
				hi[t] = fitBack(wi, bound) // 0: it fits nowhere it must be
				pub[t], hiBy[t] = hi[t], by
			}
		}
		// ... and to: the append at offset o of a writer in the trace up to hi(w)+o.
		for i := range items {
			it := &items[i]
			if t := it.txn; writerOf[t] >= 0 && hi[t] <= tn {
				it.hi = hi[t] + it.lo - min(lo[t], tn+1)
				it.must = it.hi <= tn
			}
		}
		if out != nil {
			for _, t := range touched {
				if wi := writerOf[t]; wi >= 0 {
					out.Lo[wi] = min(lo[t], tn+1)
					if hi[t] <= tn {
						out.Hi[wi] = hi[t]
					}
				}
			}
		}
		// Per value (items grouped by sorting, not a scan of them per value): the
		// matching where the trace shows the value, else any append that must be in it.
		byVal = byVal[:0]
		for i := range items {
			byVal = append(byVal, int32(i))
		}
		slices.SortFunc(byVal, func(a, b int32) int { return int(itemVal[a] - itemVal[b]) })
		var short *orderShort
		for g := 0; g < len(byVal) && short == nil; {
			v := itemVal[byVal[g]]
			end := g
			its = its[:0]
			for ; end < len(byVal) && itemVal[byVal[end]] == v; end++ {
				its = append(its, items[byVal[end]])
			}
			g = end
			if ps := posOf(v); ps != nil {
				if short = matchValue(ps, its); short != nil {
					short.Key, short.Value = int32(k), v
				}
				continue
			}
			for _, it := range its {
				if it.must {
					short = &orderShort{Key: int32(k), Value: v, Window: [2]int32{it.lo, it.hi}, Over: true, Appends: 1, Txns: []int32{it.txn}}
					break
				}
			}
		}
		// Values the trace shows that no append can give: a shortfall at their first
		// position.
		for _, i := range byVal {
			appended[itemVal[i]] = int32(k) + 1
		}
		for _, v := range vals {
			if short != nil {
				break
			}
			if appended[v] != int32(k)+1 {
				if short = matchValue(posOf(v), nil); short != nil {
					short.Key, short.Value = int32(k), v
				}
			}
		}
		if short != nil {
			for _, t := range short.Txns {
				short.Lo = append(short.Lo, min(lo[t], tn+1))
				short.LoBy = append(short.LoBy, loBy[t])
				short.Hi = append(short.Hi, hi[t])
				short.HiBy = append(short.HiBy, hiBy[t])
			}
			// The transactions the bounds come from, transitively (a bound from a
			// transaction's read or block rests on that transaction's own bounds):
			// where a counterexample search starts.
			inSeed := map[int32]bool{}
			var add func(t int32)
			add = func(t int32) {
				if t < 0 || inSeed[t] || len(short.Seed) >= orderSeedMax {
					return
				}
				inSeed[t] = true
				short.Seed = append(short.Seed, t)
				if writerOf[t] >= 0 {
					add(loBy[t])
				}
				add(hiBy[t])
			}
			for _, t := range short.Txns {
				add(t)
			}
		}
		for _, t := range touched {
			lo[t], hi[t], hiBy[t], pin[t], pub[t], readQ[t], base[t], writerOf[t], loBy[t] = 0, 0, 0, 0, 0, 0, 0, -1, 0
			mustIn[t] = false
		}
		for _, p := range procs {
			procMax[p], procMin[p], procMinBy[p], procMaxBy[p] = 0, 0, 0, 0
		}
		for _, v := range vals {
			cnt[v] = 0
		}
		if short != nil {
			return short
		}
	}
	return nil
}

// mustInTests bounds the counts findMustIn runs per key.
const mustInTests = 64

// mustByCount, as an upper bound's source: the block is in the trace because the
// trace cannot be filled without it and its successors' (findMustIn).
const mustByCount = -2

// mustByNarrowing, as an upper bound's source: the narrowed windows put the block in
// the trace, starting at the latest there.
const mustByNarrowing = -3

// loByNarrowing, as a lower bound's source: the narrowed windows start the block
// there at the earliest.
const loByNarrowing = -3

// findMustIn marks in mustIn the :ok writers of one key whose block must be in the
// trace: taking the block past it takes every successor's (process order, and with
// realtime real-time order) past it too, and then some value's j-th position (posOf)
// has fewer than j appends of it (items, of value itemVal; an :info writer's are never
// taken) whose lower bound reaches it. Under process order alone, the writers of one
// process form a chain whose blocks past the trace are a suffix: the longest suffix
// that can go is found by bisection; under real-time order, a bisection over
// completions, then writers one by one (at most mustInTests counts). gone is scratch
// (per transaction: gone[t] == *stamp marks t past the trace; *stamp only grows).
func findMustIn(h *history.History, touched, writerOf, gone []int32, stamp *int32, mustIn []bool, realtime bool,
	items []orderItem, itemVal []int32, posOf func(int32) []int32) {
	var writers []int32
	for _, t := range touched {
		if writerOf[t] >= 0 {
			writers = append(writers, t)
		}
	}
	// The appends by value, then bound.
	sups := make([]int32, len(items))
	for i := range sups {
		sups[i] = int32(i)
	}
	slices.SortFunc(sups, func(a, b int32) int {
		if itemVal[a] != itemVal[b] {
			return int(itemVal[a] - itemVal[b])
		}
		return int(items[a].lo - items[b].lo)
	})
	var vals []int32
	var from []int
	for i, s := range sups {
		if i == 0 || itemVal[s] != itemVal[sups[i-1]] {
			vals, from = append(vals, itemVal[s]), append(from, i)
		}
	}
	from = append(from, len(sups))
	isGone := func(t int32) bool { return gone[t] == *stamp }
	// fills reports whether every position still gets an append whose bound reaches it
	// with the writers in gone past the trace.
	fills := func() bool {
		for i, v := range vals {
			have, j := 0, from[i]
			for need, p := range posOf(v) {
				for j < from[i+1] && items[sups[j]].lo <= p {
					if t := items[sups[j]].txn; writerOf[t] < 0 || !isGone(t) {
						have++
					}
					j++
				}
				if have < need+1 {
					return false
				}
			}
		}
		return true
	}
	*stamp++ // nobody gone
	if !fills() {
		return // the plain count fails already: nothing to add
	}
	// Each process's writers in process order (as the problem's process edges): a
	// writer's successors are those after it in its chain and, with realtime, those
	// invoked after it completed.
	encode.SortProcessOrder(h, writers)
	chainOf := make(map[int32]int, len(writers)) // writer -> its index in writers
	for i, t := range writers {
		chainOf[t] = i
	}
	succ := func(t int32) {
		*stamp++
		gone[t] = *stamp
		tx := &h.Txns[t]
		if tx.Process >= 0 {
			for _, u := range writers[chainOf[t]+1:] {
				if h.Txns[u].Process != tx.Process {
					break
				}
				gone[u] = *stamp
			}
		}
		if realtime && tx.Complete >= 0 {
			for _, u := range writers {
				if ux := &h.Txns[u]; ux.Invoke >= 0 && ux.Invoke > tx.Complete {
					gone[u] = *stamp
				}
			}
		}
	}
	// At most mustInTests counts per key (each a pass over the key's appends and
	// trace), so that the key costs linear time: a writer not tested is simply not
	// known to be in the trace (the count is weaker, never wrong).
	tests := 0
	fillsWithout := func() bool { tests++; return fills() }
	if realtime {
		// The writers invoked after c completed go past the trace with any writer that
		// completed at c: fewer the later c is, so the first completion whose such set
		// can go (bisection) leaves every writer completed before it in the trace.
		// Then each writer after it, while tests remain.
		var byComplete, uncompleted []int32
		for _, t := range writers {
			if h.Txns[t].Complete >= 0 {
				byComplete = append(byComplete, t)
			} else {
				uncompleted = append(uncompleted, t)
			}
		}
		slices.SortFunc(byComplete, func(a, b int32) int { return int(h.Txns[a].Complete - h.Txns[b].Complete) })
		invokedAfter := func(c int32) {
			*stamp++
			for _, u := range writers {
				if ux := &h.Txns[u]; ux.Invoke >= 0 && ux.Invoke > c {
					gone[u] = *stamp
				}
			}
		}
		j := sort.Search(len(byComplete), func(i int) bool {
			invokedAfter(h.Txns[byComplete[i]].Complete)
			return fillsWithout()
		})
		for _, t := range byComplete[:j] {
			mustIn[t] = true
		}
		for _, t := range append(byComplete[j:], uncompleted...) {
			if tests >= mustInTests {
				break
			}
			succ(t)
			mustIn[t] = !fillsWithout()
		}
		return
	}
	for i := 0; i < len(writers) && tests < mustInTests; {
		end := i + 1
		if p := h.Txns[writers[i]].Process; p >= 0 {
			for end < len(writers) && h.Txns[writers[end]].Process == p {
				end++
			}
		}
		// The first writer of the chain whose suffix can go past the trace (the
		// suffixes are nested): every one before it must stay.
		chain := writers[i:end]
		j := sort.Search(len(chain), func(c int) bool { succ(chain[c]); return fillsWithout() })
		for _, t := range chain[:j] {
			mustIn[t] = true
		}
		i = end
	}
}

// matchValue decides whether the positions ps (increasing) of one value can each get
// one of its appends its, every must append getting one: a matching of points to
// intervals, found (when one exists) by giving each position, in order, the append
// that can reach it whose interval ends first. When there is none it returns a window
// of positions that proves it (Hall's condition fails there): more must appends whose
// intervals lie inside than positions, or more positions than appends whose intervals
// meet it. Intervals are first shrunk to the positions they contain.
func matchValue(ps []int32, its []orderItem) *orderShort {
	for i := range its {
		a, _ := slices.BinarySearch(ps, its[i].lo)
		b, _ := slices.BinarySearch(ps, its[i].hi+1)
		if a < b {
			its[i].lo, its[i].hi = ps[a], ps[b-1]
		} else {
			its[i].lo, its[i].hi = 1, 0 // reaches no position
		}
	}
	slices.SortFunc(its, func(a, b orderItem) int { return int(a.lo - b.lo) })
	var open txnHeap // open appends by the end of their interval
	next, ok := 0, true
	for _, p := range ps {
		for next < len(its) && its[next].lo <= p {
			if its[next].lo <= its[next].hi {
				open.push(txnPrio{t: int32(next), prio: int64(its[next].hi)})
			}
			next++
		}
		for open.Len() > 0 && open[0].prio < int64(p) {
			if its[open.pop().t].must {
				ok = false
			}
		}
		if !ok || open.Len() == 0 {
			ok = false
			break
		}
		open.pop()
	}
	for ok && open.Len() > 0 {
		if its[open.pop().t].must {
			ok = false
		}
	}
	for i := range its {
		if its[i].must && its[i].lo > its[i].hi {
			ok = false
		}
	}
	if ok {
		return nil
	}
	return hallWindow(ps, its)
}

// hallWindow finds the narrowest window matchValue's failure shows (nil if none, or if
// finding it would cost more than hallWork: the count then claims nothing). Too many must appends: some window of positions holds fewer
// positions than must appends confined to it (an append that reaches no position is
// confined to any window). Too few appends: some run of positions outnumbers the
// appends whose intervals meet it.
func hallWindow(ps []int32, its []orderItem) *orderShort {
	for i := range its {
		if its[i].must && its[i].lo > its[i].hi {
			return &orderShort{Over: true, Window: [2]int32{1, 0}, Appends: 1, Txns: []int32{its[i].txn}}
		}
	}
	work := 0
	// Narrowest windows first: the explanation then names the few appends that
	// collide, not every append of the value before them.
	for d := range ps {
		for x := 0; x+d < len(ps); x++ {
			y := x + d
			if work += len(its) + 1; work > hallWork {
				return nil // a window too costly to find: the count claims nothing
			}
			a, b := ps[x], ps[y]
			var inside, meet []int32
			for _, it := range its {
				if it.lo > it.hi {
					continue
				}
				if it.must && it.lo >= a && it.hi <= b {
					inside = append(inside, it.txn)
				}
				if it.lo <= b && it.hi >= a {
					meet = append(meet, it.txn)
				}
			}
			np := int32(y - x + 1)
			if int32(len(inside)) > np {
				return &orderShort{Over: true, Window: [2]int32{a, b}, Positions: np, Appends: int32(len(inside)), Txns: dedupTxns(inside)}
			}
			if int32(len(meet)) < np {
				var out []int32
				for _, it := range its {
					if it.lo > it.hi || it.lo > b || it.hi < a {
						out = append(out, it.txn)
					}
				}
				return &orderShort{Window: [2]int32{a, b}, Positions: np, Appends: int32(len(meet)), Txns: dedupTxns(out)}
			}
		}
	}
	return nil
}

// hallWork bounds hallWindow's search (item visits): a failed matching on a key with
// thousands of positions of one value is left to the solver rather than searched
// quadratically.
const hallWork = 1 << 25

// dedupTxns sorts ts and drops repeats (a transaction appending a value twice).
func dedupTxns(ts []int32) []int32 {
	slices.Sort(ts)
	return slices.Compact(ts)
}

// proveByOrderCount runs the order count for each per-read model of names with
// process order that nothing found so far refutes, and reports an anomaly for each it
// refutes (counting for that model and those whose graph contains its graph). With
// narrow, where the count alone finds nothing, the thresholds of every key narrow its
// bounds first (prune's per-read level): a contradiction there is a proof too. The
// count alone is a linear pass per key; the narrowing can take most of the time at
// 100,000 transactions, so the serial search runs between the two (decideWeak).
func (c *checker) proveByOrderCount(in *encode.Inference, names []string, narrow bool) {
	for _, m := range names {
		spec := models[m]
		if !spec.perRead || spec.single || !spec.process || c.budget.out() || len(c.forbiddenFound(m)) > 0 {
			continue
		}
		typ := "G1c-process"
		if spec.realtime {
			typ = "G1c-realtime"
		}
		var short *orderShort
		if !narrow {
			c.progress("counting positions under process order")
			short = orderCount(c.h, in, spec.realtime, nil, c.budget.stop)
		} else if !c.budget.out() && !c.opts.Solver.NoPrune {
			// The count's bounds come from one key's reads and process (real-time)
			// order; the thresholds of every key narrow them through the other keys'
			// reads and appends. A contradiction there is a proof, and the windows it
			// leaves are sound bounds for the count.
			c.progress("narrowing read by read for " + m)
			t0 := time.Now()
			pr := prune.Run(in, prune.Options{Level: prune.Level{Process: true, Realtime: spec.realtime, PerRead: true},
				Deadline: c.budget.deadline, Stop: c.budget.mem.exceeded}) // Stop is asked from two goroutines
			c.res.Stats.PruneSeconds += time.Since(t0).Seconds()
			if pr.Contradiction == nil && !pr.KeyUnsat {
				if c.perReadWin == nil {
					c.perReadWin = map[string]*encode.Windows{}
				}
				c.perReadWin[m] = pr.Win
			}
			if !pr.KeyUnsat && !c.budget.out() {
				// Also where the thresholds found a key that cannot be tiled within the
				// windows: the count names the few blocks that collide, where the
				// tiling's explanation lists every writer of the key.
				short = orderCount(c.h, in, spec.realtime, pr.Win, c.budget.stop)
			}
			if short == nil && pr.Contradiction != nil {
				pc := *pr.Contradiction
				pc.Type = typ // its cycle has ww, wr and order edges only
				if len(pc.Txns) == 0 && pc.Key >= 0 {
					// A key whose only writers are :info ones: they are what cannot be placed.
					for _, w := range in.Keys[pc.Key].Writers {
						if in.Writers[w].Status != history.Fail {
							pc.Txns = append(pc.Txns, in.Writers[w].Txn)
						}
					}
				}
				if len(pc.Txns) > 8 && len(pc.Steps) == 0 {
					pc.Txns = pc.Txns[:8] // a tiling's: its text gives every writer's window
				}
				if len(pc.Txns) > 0 {
					c.addContradiction(m, &pc)
					continue
				}
			}
		}
		if short != nil {
			c.addOrderCount(in, m, short)
		}
	}
}

// addOrderCount reports the order count's proof that model m does not hold.
func (c *checker) addOrderCount(in *encode.Inference, m string, short *orderShort) {
	typ, order := "G1c-process", "process"
	if models[m].realtime {
		typ, order = "G1c-realtime", "process or real-time"
	}
	a := Anomaly{Type: typ, Model: m, Key: c.h.Keys[short.Key]}
	for i, t := range short.Txns {
		if i < 8 {
			a.Txns = append(a.Txns, c.txnRef(t))
		}
	}
	key := &in.Keys[short.Key]
	a.OrderCount = newOrderCount(c.h, short, key.Trace, in.Reads[key.TraceBy].Txn, order)
	a.Explanation = a.OrderCount.text(c.h, key.Trace, order)
	a.seed = short.Seed
	c.addAnomaly(a)
}

// OrderCount is an order count's proof (G1c-process, G1c-realtime), structured: key
// Key's longest read (by transaction TraceBy, Length values) shows Value at Positions
// positions From..To (counted from 1); Over: Appends appends of Value must lie there,
// more than that; otherwise only Appends appends of Value can reach them, fewer. Blocks
// are the writers the count rests on, each with where its block (its appends to the
// key, in order) may start and why; Reasons says once what each kind of bound means.
type OrderCount struct {
	Key       string        `json:"key"`
	Value     string        `json:"value"`
	TraceBy   int64         `json:"trace_by"`
	Length    int           `json:"length"`
	From      int           `json:"from"`
	To        int           `json:"to"`
	Positions int           `json:"positions"`
	Over      bool          `json:"over"`
	Appends   int           `json:"appends"`
	Reasons   []OrderReason `json:"reasons"`
	Blocks    []OrderBlock  `json:"blocks"`
}

// OrderReason says what one kind of bound of an order count means.
type OrderReason struct {
	Bound string `json:"bound"`
	Text  string `json:"text"`
}

// OrderBlock is one writer of an order count: where its block may start, From..To
// (counted from 1; From 0: only past the trace; To 0: no upper bound, past the trace
// allowed), and why (Bound, one of the Reasons; Before names the transaction whose
// block bounds it).
type OrderBlock struct {
	Txn    int64    `json:"txn"`
	Values []string `json:"values"`
	Bound  string   `json:"bound"`
	From   int      `json:"from"`
	To     int      `json:"to,omitempty"`
	Before int64    `json:"before,omitempty"`
	// After: the transaction whose read (of From-1 values or more) or block (ending at
	// From-1 or later) gives From, itself when its own read does (omitted: none).
	After *int64 `json:"after,omitempty"`
	// FromNarrowed: From comes from the thresholds of every key (the narrowed windows),
	// not from one transaction.
	FromNarrowed bool `json:"from_narrowed,omitempty"`
	// Window is the key's longest read around the positions the block takes when it
	// starts at From (marked).
	Window *Window `json:"window,omitempty"`
}

// The kinds of an order count's bounds, in the order the explanation lists them.
const (
	boundPinned    = "pinned"
	boundBefore    = "before"
	boundMust      = "must"
	boundNarrowed  = "narrowed"
	boundNowhere   = "nowhere"
	boundUnbounded = "unbounded"
)

var boundOrder = []string{boundPinned, boundBefore, boundMust, boundNarrowed, boundNowhere, boundUnbounded}

// boundText says what each kind of bound means, for order ("process" or "process or
// real-time").
func boundText(bound, order string) string {
	switch bound {
	case boundPinned:
		return "its writer's own read shows the block, which puts it there"
	case boundBefore:
		return fmt.Sprintf("it ends before the block of the transaction named after it, which comes after it in %s order and whose own read puts that block in the trace", order)
	case boundMust:
		return fmt.Sprintf("it must be in the trace, before the blocks after it in %s order that must be too: without it and the blocks after it, some value of the key shows at more positions than appends of it can reach", order)
	case boundNarrowed:
		return fmt.Sprintf("it must start there at the latest, by the thresholds of every key (each block after the blocks before it and before its successors' in %s order, each read after the block it ends with)", order)
	case boundNowhere:
		return "it must be in the trace, and the trace shows its values at no position it may start at"
	}
	return "nothing bounds it from above: it may lie past the trace (in no read)"
}

// newOrderCount structures proof s on key trace (read by transaction traceBy).
func newOrderCount(h *history.History, s *orderShort, trace []int32, traceBy int32, order string) *OrderCount {
	oc := &OrderCount{Key: h.Keys[s.Key], Value: h.Values[s.Value], TraceBy: h.Txns[traceBy].Index, Length: len(trace),
		From: int(s.Window[0]), To: int(s.Window[1]), Positions: int(s.Positions), Over: s.Over, Appends: int(s.Appends)}
	n := int32(len(trace))
	used := map[string]bool{}
	for i, t := range s.Txns {
		b := OrderBlock{Txn: h.Txns[t].Index}
		for _, op := range h.TxnOps(int(t)) {
			if op.Kind == history.Append && op.Key == s.Key {
				b.Values = append(b.Values, h.Values[op.Value])
			}
		}
		if s.Lo[i] <= n {
			b.From = int(s.Lo[i])
		}
		if by := s.LoBy[i]; by >= 0 {
			index := h.Txns[by].Index
			b.After = &index
		}
		b.FromNarrowed = s.LoBy[i] == loByNarrowing
		if b.From > 0 {
			b.Window = newWindow(h, trace, b.From, b.From+len(b.Values)-1)
		}
		switch {
		case s.Hi[i] > n:
			b.Bound = boundUnbounded
		case s.Hi[i] == 0:
			b.Bound = boundNowhere
		case s.HiBy[i] == mustByCount:
			b.Bound, b.To = boundMust, int(s.Hi[i])
		case s.HiBy[i] == mustByNarrowing:
			b.Bound, b.To = boundNarrowed, int(s.Hi[i])
		case s.HiBy[i] == t:
			b.Bound, b.To = boundPinned, int(s.Hi[i])
		default:
			b.Bound, b.To, b.Before = boundBefore, int(s.Hi[i]), h.Txns[s.HiBy[i]].Index
		}
		used[b.Bound] = true
		oc.Blocks = append(oc.Blocks, b)
	}
	for _, bound := range boundOrder {
		if used[bound] {
			oc.Reasons = append(oc.Reasons, OrderReason{Bound: bound, Text: boundText(bound, order)})
		}
	}
	return oc
}

// orderBlocksShown bounds the writers the text lists per kind of bound (the JSON has
// them all).
const orderBlocksShown = 64

// text says what the proof is, for a person to check: the claim, the key's list around
// the positions it counts, what bounds a block from below, then each kind of upper
// bound once, with the writers it applies to and where their blocks may start.
func (oc *OrderCount) text(h *history.History, trace []int32, order string) string {
	var b strings.Builder
	name := func(index int64) string { return "T" + fmt.Sprint(index) }
	switch {
	case oc.Over && oc.To < oc.From:
		fmt.Fprintf(&b, "on key %s, %s's block must be in the trace and fits nowhere it may start (below), so every attribution has a cycle of ww, wr and %s edges.",
			oc.Key, name(oc.Blocks[0].Txn), order)
	case oc.Over:
		fmt.Fprintf(&b, "key %s shows %s at %d positions from %d to %d, and %d appends of %s must lie there, by the transactions below: "+
			"each one's block must start where given, which puts its %s in those positions. So every attribution has a cycle of ww, wr and %s edges.",
			oc.Key, oc.Value, oc.Positions, oc.From, oc.To, oc.Appends, oc.Value, oc.Value, order)
	default:
		fmt.Fprintf(&b, "key %s shows %s at %d positions from %d to %d, and only %d appends of %s can reach them: those of the transactions below cannot "+
			"(each one's block must start where given, outside them). So every attribution has a cycle of ww, wr and %s edges.",
			oc.Key, oc.Value, oc.Positions, oc.From, oc.To, oc.Appends, oc.Value, order)
	}
	var focus []int
	if oc.From <= oc.To {
		focus = []int{oc.From - 1, oc.To - 1}
	}
	fmt.Fprintf(&b, "\nPositions are counted from 1 in key %s's longest read, by %s: %s.", oc.Key, name(oc.TraceBy), encode.ListAround(h, trace, focus...))
	fmt.Fprintf(&b, "\nA block is a transaction's appends to the key, in order. Each starts after what its writer, or a transaction before it in %s order, "+
		"read (past that read's values) or appended (past that block), at the first position from there where the trace shows its values "+
		"(\"after\" names that transaction when it is another), or, where marked, where the thresholds of every key put it; and", order)
	for _, r := range oc.Reasons {
		fmt.Fprintf(&b, "\n  %s (%s):", r.Text, r.Bound)
		n := 0
		for _, bl := range oc.Blocks {
			if bl.Bound != r.Bound {
				continue
			}
			if n++; n > orderBlocksShown {
				continue
			}
			fmt.Fprintf(&b, "\n    %s %s %s", name(bl.Txn), "["+strings.Join(bl.Values, " ")+"]", bl.where())
			if bl.After != nil && *bl.After != bl.Txn {
				fmt.Fprintf(&b, ", after %s", name(*bl.After))
			}
			if bl.FromNarrowed {
				b.WriteString(", from the thresholds of every key")
			}
			if bl.Window != nil && bl.From == bl.To {
				fmt.Fprintf(&b, ": %s", bl.Window)
			}
			if bl.Bound == boundBefore {
				fmt.Fprintf(&b, ", before %s", name(bl.Before))
			}
		}
		if n > orderBlocksShown {
			fmt.Fprintf(&b, "\n    and %d more (the JSON lists them all)", n-orderBlocksShown)
		}
	}
	return b.String()
}

// where says where the block may start.
func (bl *OrderBlock) where() string {
	switch {
	case bl.Bound == boundNowhere && bl.From == 0:
		return "past the trace, and must be in it: nowhere"
	case bl.Bound == boundNowhere:
		return fmt.Sprintf("from %d, and must be in the trace: nowhere", bl.From)
	case bl.From == 0 && bl.To == 0:
		return "past the trace"
	case bl.From == 0:
		return fmt.Sprintf("past the trace, and at %d at the latest: nowhere", bl.To)
	case bl.To == 0:
		return fmt.Sprintf("from %d", bl.From)
	case bl.From > bl.To:
		return fmt.Sprintf("from %d, and at %d at the latest: nowhere", bl.From, bl.To)
	case bl.From == bl.To:
		return fmt.Sprintf("at %d", bl.From)
	}
	return fmt.Sprintf("at %d to %d", bl.From, bl.To)
}
