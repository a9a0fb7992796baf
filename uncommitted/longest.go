package uncommitted

import (
	"container/heap"
	"math"
	"slices"

	"doppel/history"
)

// The longest-reads witness (DESIGN.md, "Read uncommitted", "The longest-reads
// witness"): one attribution of every open key, built by one greedy serial run
// without search, kept only when an independent check of the definition accepts it
// (verifyAttribution). The search over attributions backtracks position by position
// and, on long lists of few values (a faulty database's 2,000 transactions on 20 keys
// and three values), gets lost among the duplicates long before it would finish, and
// the serial search applies only where no uncommitted transaction appends a value L
// shows. The run takes the :ok transactions in interval-midpoint order (the order a
// database mostly committed them in), each once its predecessors by the fixed keys'
// edges (and process order, for the models with it) have run and the next positions
// of every open key it appends to show its appends in program order (a whole block;
// at L's end it may leave the rest out, and once L is full every append is left out);
// a transaction that cannot run yet waits on the key that stopped it. When every one
// waits, a position is given to an uncommitted append of its value (no edge: a failed
// or aborted writer's append, or a lost update's hole). So every ww edge follows the
// run, and the graph is acyclic unless real-time order disagrees; the check decides.
// It proves valid only; when it fails the search goes on.

// keyAttribution is one open key's attribution: the longest read chosen (li) and, per
// position of it, the transaction whose append it is (-1: an uncommitted append).
type keyAttribution struct {
	li int
	at []int32
}

// LongestReads reports whether the longest-reads witness proves the model (process
// order when process, real-time order too when realtime): true only when
// verifyAttribution accepts the attribution the run built. stop is polled.
func (x *Index) LongestReads(process, realtime bool, stop func() bool) bool {
	for _, hints := range []bool{false, true} {
		attr, ok := x.serialRun(process, hints, stop)
		if ok && x.verifyAttribution(process, realtime, attr) {
			return true
		}
	}
	return false
}

// runBlock is one transaction's appends to one open key, in program order.
type runBlock struct {
	key  int32 // index into x.open
	vals []int32
}

// serialRun builds the attribution of the run (each open key's first longest read).
func (x *Index) serialRun(process, hints bool, stop func() bool) ([]keyAttribution, bool) {
	h := x.h
	n := len(h.Txns)
	openAt := make(map[int32]int32, len(x.open))
	for i, o := range x.open {
		openAt[o.key] = int32(i)
	}
	blocks := make([][]runBlock, n)
	for t := 0; t < n; t++ {
		if h.Txns[t].Status != history.OK {
			continue
		}
		for _, op := range h.TxnOps(t) {
			i, open := openAt[op.Key]
			if op.Kind != history.Append || !open {
				continue
			}
			bs := blocks[t]
			j := slices.IndexFunc(bs, func(b runBlock) bool { return b.key == i })
			if j < 0 {
				bs = append(bs, runBlock{key: i})
				j = len(bs) - 1
			}
			bs[j].vals = append(bs[j].vals, op.Value)
			blocks[t] = bs
		}
	}
	// Precedence: the fixed keys' edges, and process order.
	d := &decider{h: h, n: n}
	d.orderEdges(process, false)
	for i, from := range x.fixFrom {
		d.push(from, x.fixEdge[i])
	}
	indeg := make([]int32, n)
	for u := 0; u < n; u++ {
		for _, e := range d.adj[u] {
			indeg[e.to]++
		}
	}
	// The uncommitted appends left, per open key and value.
	unc := make([]map[int32]int32, len(x.open))
	attr := make([]keyAttribution, len(x.open))
	pos := make([]int32, len(x.open))
	for i, o := range x.open {
		unc[i] = map[int32]int32{}
		l := o.ls[0]
		attr[i] = keyAttribution{li: 0, at: make([]int32, len(l))}
		seen := map[int32]bool{}
		for p, v := range l {
			if seen[v] {
				continue
			}
			seen[v] = true
			if c := o.classes[0][p][0]; o.classTxn[c] < 0 {
				unc[i][v] = o.classLeft[c]
			}
		}
	}
	q := &prioQueue{prio: make([]int64, n)}
	for t := 0; t < n; t++ {
		q.prio[t] = h.Midpoint(int32(t))
		if h.Txns[t].Status == history.OK && indeg[t] == 0 {
			heap.Push(q, int32(t))
		}
	}
	waiting := make([][]int32, len(x.open))
	wake := func(i int32) {
		for _, t := range waiting[i] {
			heap.Push(q, t)
		}
		waiting[i] = waiting[i][:0]
	}
	// What the reads say about each position of L: the transaction whose read pins it
	// (pinsOf), and the earliest completion of a reader that shows it (its writer was
	// invoked before).
	pins := make([][]int32, len(x.open))
	his := make([][]int32, len(x.open))
	for i, o := range x.open {
		l := o.ls[0]
		pins[i] = pinsOf(h, o, l)
		hi := make([]int32, len(l)+1)
		for p := range hi {
			hi[p] = math.MaxInt32
		}
		for _, r := range o.reads {
			if m := len(r.list); m > 0 && m <= len(l) && slices.Equal(r.list, l[:m]) {
				if c := h.Txns[r.txn].Complete; c >= 0 {
					hi[m-1] = min(hi[m-1], c)
				}
			}
		}
		for p := len(l) - 1; p >= 0; p-- {
			hi[p] = min(hi[p], hi[p+1])
		}
		his[i] = hi
	}
	// blocked returns the open key whose positions stop t (-1: t can run): they do not
	// show its appends, or a read pins them to another transaction or shows them
	// before t was invoked.
	blocked := func(t int32, strict bool) int32 {
		for _, b := range blocks[t] {
			l, p := x.open[b.key].ls[0], int(pos[b.key])
			m := min(len(b.vals), len(l)-p)
			if !slices.Equal(l[p:p+m], b.vals[:m]) {
				return b.key
			}
			for j := p; j < p+m && strict && hints; j++ {
				if pt := pins[b.key][j]; pt >= 0 && pt != t || h.Txns[t].Invoke >= his[b.key][j] {
					return b.key
				}
			}
		}
		return -1
	}
	ran := 0
	// run runs t: its appends take the next positions of each key (at L's end some
	// are left out), except, when it is forced, on a key whose positions do not show
	// them: there every append is left out.
	type leftover struct {
		txn  int32
		vals []int32
	}
	leftovers := make([][]leftover, len(x.open)) // per key, in run order
	run := func(t int32) {
		for _, b := range blocks[t] {
			l, p := x.open[b.key].ls[0], int(pos[b.key])
			m := min(len(b.vals), len(l)-p)
			if !slices.Equal(l[p:p+m], b.vals[:m]) {
				leftovers[b.key] = append(leftovers[b.key], leftover{t, slices.Clone(b.vals)})
				continue
			}
			if m < len(b.vals) {
				leftovers[b.key] = append(leftovers[b.key], leftover{t, slices.Clone(b.vals[m:])})
			}
			for range b.vals[:m] {
				attr[b.key].at[pos[b.key]] = t
				pos[b.key]++
			}
			wake(b.key)
		}
		ran++
		for _, e := range d.adj[t] {
			if indeg[e.to]--; indeg[e.to] == 0 && int(e.to) < n {
				heap.Push(q, e.to)
			}
		}
	}
	oks := 0
	for t := 0; t < n; t++ {
		if h.Txns[t].Status == history.OK {
			oks++
		}
	}
	for steps := 0; ran < oks; steps++ {
		if steps&63 == 0 && stop != nil && stop() {
			return nil, false
		}
		if q.Len() == 0 {
			// Every transaction left waits. An uncommitted append takes the position
			// that stops the earliest one whose position has one of its value left
			// (no edge; only the earliest waiting one's was 15 of 30 faulty
			// histories, this is 30);
			// else the earliest one whose appends the positions show runs against
			// what the reads say; else the earliest one runs, its appends to the
			// keys whose positions do not show them left out (a lost update's loser,
			// or one whose place another took: the check decides).
			best, bestKey, forced := int32(-1), int32(-1), int32(-1)
			bestFillable := false
			for i := range waiting {
				l, p := x.open[i].ls[0], pos[i]
				fillable := int(p) < len(l) && unc[i][l[p]] > 0
				for _, t := range waiting[i] {
					if best < 0 || fillable && !bestFillable || fillable == bestFillable && q.prio[t] < q.prio[best] {
						best, bestKey, bestFillable = t, int32(i), fillable
					}
					if (forced < 0 || q.prio[t] < q.prio[forced]) && blocked(t, false) < 0 {
						forced = t
					}
				}
			}
			if best < 0 {
				return nil, false // a precedence cycle: the fixed edges' cycle search would have said
			}
			if l, p := x.open[bestKey].ls[0], pos[bestKey]; int(p) < len(l) && unc[bestKey][l[p]] > 0 {
				unc[bestKey][l[p]]--
				attr[bestKey].at[p] = -1
				pos[bestKey]++
				wake(bestKey)
				continue
			}
			if forced < 0 {
				forced = best
			}
			for i := range waiting {
				if j := slices.Index(waiting[i], forced); j >= 0 {
					waiting[i] = slices.Delete(waiting[i], j, j+1)
				}
			}
			run(forced)
			continue
		}
		t := heap.Pop(q).(int32)
		if i := blocked(t, true); i >= 0 {
			waiting[i] = append(waiting[i], t)
			continue
		}
		run(t)
	}
	// Positions after the last transaction: uncommitted appends, then appends forced
	// transactions left out (the check decides), or none fits.
	for i, o := range x.open {
		l := o.ls[0]
		for ; int(pos[i]) < len(l); pos[i]++ {
			v := l[pos[i]]
			if unc[i][v] > 0 {
				unc[i][v]--
				attr[i].at[pos[i]] = -1
				continue
			}
			// A forced transaction's append left out, the latest run first.
			taken := false
			for j := len(leftovers[i]) - 1; j >= 0 && !taken; j-- {
				lo := &leftovers[i][j]
				if k := slices.Index(lo.vals, v); k >= 0 {
					lo.vals = slices.Delete(lo.vals, k, k+1)
					attr[i].at[pos[i]] = lo.txn
					taken = true
				}
			}
			if !taken {
				return nil, false
			}
		}
	}
	return attr, true
}

// verifyAttribution checks attr against the definition, from the history itself and
// apart from the bookkeeping that built it: each open key's positions show L's values,
// each taken by an append of that key and value (by an :ok transaction, or -1: by a
// transaction that is not :ok), no append used twice; and the graph of the fixed keys'
// edges, the open keys' ww edges under attr (consecutive positions of two :ok
// writers; L's last writer to every other :ok writer with an append to the key no
// position took) and the model's orders is acyclic.
func (x *Index) verifyAttribution(process, realtime bool, attr []keyAttribution) bool {
	d, ok := x.attributionGraph(process, realtime, attr)
	return ok && d.findCycle() == nil
}

// attributionGraph builds the graph of attr for verifyAttribution (ok false when attr
// is not an attribution of the open keys).
func (x *Index) attributionGraph(process, realtime bool, attr []keyAttribution) (*decider, bool) {
	return x.attributionGraphSkip(process, realtime, attr, nil)
}

// attributionGraphSkip is attributionGraph without the edges of the open keys skip
// marks (their attributions are not looked at).
func (x *Index) attributionGraphSkip(process, realtime bool, attr []keyAttribution, skip []bool) (*decider, bool) {
	h := x.h
	if len(attr) != len(x.open) {
		return nil, false
	}
	d := &decider{h: h, n: len(h.Txns)}
	d.orderEdges(process, realtime)
	for i, from := range x.fixFrom {
		d.push(from, x.fixEdge[i])
	}
	type kv struct{ txn, val int32 } // txn -1: the appends of transactions not :ok
	openAt := map[int32]int{}
	for i, o := range x.open {
		openAt[o.key] = i
	}
	avail := make([]map[kv]int32, len(x.open))
	total := make([]map[int32]int32, len(x.open)) // :ok transaction → its appends to the key
	for i := range x.open {
		avail[i], total[i] = map[kv]int32{}, map[int32]int32{}
	}
	for t := range h.Txns {
		ok := h.Txns[t].Status == history.OK
		for _, op := range h.TxnOps(t) {
			i, open := openAt[op.Key]
			if op.Kind != history.Append || !open {
				continue
			}
			if ok {
				avail[i][kv{int32(t), op.Value}]++
				total[i][int32(t)]++
			} else {
				avail[i][kv{-1, op.Value}]++
			}
		}
	}
	for i, o := range x.open {
		if skip != nil && skip[i] {
			continue
		}
		a, avail, total := attr[i], avail[i], total[i]
		if a.li < 0 || a.li >= len(o.ls) {
			return nil, false
		}
		l := o.ls[a.li]
		if len(a.at) != len(l) {
			return nil, false
		}
		used := map[int32]int32{}
		for p, t := range a.at {
			if t >= 0 && h.Txns[t].Status != history.OK {
				return nil, false
			}
			k := kv{t, l[p]}
			if avail[k] == 0 {
				return nil, false // no such append left
			}
			avail[k]--
			if t >= 0 {
				used[t]++
			}
			if p > 0 && t >= 0 && a.at[p-1] >= 0 && a.at[p-1] != t {
				d.push(a.at[p-1], edge{to: t, kind: WW, key: o.key, prev: l[p-1], val: l[p]})
			}
		}
		if last := a.at[len(l)-1]; last >= 0 {
			for t, n := range total {
				if t != last && used[t] < n {
					d.push(last, edge{to: t, kind: WW, key: o.key, prev: l[len(l)-1], val: -1})
				}
			}
		}
	}
	return d, true
}

// pinsOf returns, for L (one longest read of open key o), the transaction each
// position is pinned to by the reads of its writers (-1: none). Writer T's first
// known read of the key that is a prefix of L with T's own appends so far at its end
// pins T's appends, in program order, from where its base ends, as long as L shows
// them there; a position pinned twice keeps the first pin.
func pinsOf(h *history.History, o *openKey, l []int32) []int32 {
	pins := make([]int32, len(l))
	for i := range pins {
		pins[i] = -1
	}
	var own []int32
	for _, t := range o.writers {
		ops := h.TxnOps(int(t))
		own = own[:0]
		start := -1
		for i := range ops {
			op := &ops[i]
			if op.Key != o.key {
				continue
			}
			if op.Kind == history.Append {
				own = append(own, op.Value)
				continue
			}
			if !op.Known || start >= 0 {
				continue
			}
			r := h.ReadList(op)
			j := len(own)
			if len(r) < j || len(r) > len(l) || !slices.Equal(r[len(r)-j:], own) || !slices.Equal(r, l[:len(r)]) {
				continue
			}
			start = len(r) - j
		}
		if start < 0 {
			continue
		}
		for i, v := range own {
			p := start + i
			if p >= len(l) || l[p] != v {
				break
			}
			if pins[p] < 0 {
				pins[p] = t
			}
		}
	}
	return pins
}

// ProveByOrder reports whether the serial order order (transactions of the history,
// each running its appends in program order, as a serial replay ran them) gives an
// attribution the definition accepts under the model (process order when process,
// real-time order too when realtime): each open key's positions go to the appends in
// order, the first ones that show one of its longest reads (an :ok transaction's, or
// -1 for any other's), and verifyAttribution decides. The order may come from another
// history with the same transactions (the relaxed one of the check package's witness):
// nothing about it is taken on trust.
func (x *Index) ProveByOrder(order []int32, process, realtime bool) bool {
	if len(x.Findings) > 0 {
		return false // a read shows more than was appended: no attribution at all
	}
	attr, _, ok := x.orderAttribution(order)
	if !ok {
		return false
	}
	for _, a := range attr {
		if a.li < 0 {
			return false
		}
	}
	return x.verifyAttribution(process, realtime, attr)
}

// orderAttribution gives each open key's positions to the appends in order's sequence,
// the first ones that show one of its longest reads (an :ok transaction's, or -1 for
// any other's); a key whose appends there show none gets li -1. rank is each
// transaction's place in order (-1: not in it). ok is false when order names no
// transaction of the history.
func (x *Index) orderAttribution(order []int32) (attr []keyAttribution, rank []int32, ok bool) {
	h := x.h
	openAt := make(map[int32]int32, len(x.open))
	for i, o := range x.open {
		openAt[o.key] = int32(i)
	}
	rank = make([]int32, len(h.Txns))
	for i := range rank {
		rank[i] = -1
	}
	lists := make([][]int32, len(x.open)) // per open key, the values in order
	owner := make([][]int32, len(x.open))
	for r, t := range order {
		if t < 0 || int(t) >= len(h.Txns) {
			return nil, nil, false
		}
		rank[t] = int32(r)
		ok := h.Txns[t].Status == history.OK
		for _, op := range h.TxnOps(int(t)) {
			i, open := openAt[op.Key]
			if op.Kind != history.Append || !open {
				continue
			}
			lists[i] = append(lists[i], op.Value)
			w := int32(-1)
			if ok {
				w = t
			}
			owner[i] = append(owner[i], w)
		}
	}
	attr = make([]keyAttribution, len(x.open))
	for i, o := range x.open {
		attr[i].li = -1
		for li, l := range o.ls {
			if len(lists[i]) >= len(l) && slices.Equal(lists[i][:len(l)], l) {
				attr[i] = keyAttribution{li: li, at: owner[i][:len(l)]}
				break
			}
		}
	}
	return attr, rank, true
}
