package uncommitted

import (
	"container/heap"
	"sort"
)

// initOrder starts the incremental topological order from the fixed edges, taking
// transactions by interval midpoint where the edges leave a choice (a guess at the
// order the search's edges will mostly agree with), and builds the reverse edges.
func (d *decider) initOrder() {
	nn := len(d.adj)
	d.radj = make([][]int32, nn)
	indeg := make([]int32, nn)
	for u := range d.adj {
		for _, e := range d.adj[u] {
			d.radj[e.to] = append(d.radj[e.to], int32(u))
			indeg[e.to]++
		}
	}
	prio := make([]int64, nn)
	for t := 0; t < d.n; t++ {
		prio[t] = d.h.Midpoint(int32(t))
	}
	for i := d.n; i < nn; i++ {
		prio[i] = 2 * int64(d.comps[i-d.n]) // an event node: at its completion
	}
	q := &prioQueue{prio: prio}
	for u := 0; u < nn; u++ {
		if indeg[u] == 0 {
			heap.Push(q, int32(u))
		}
	}
	d.ord = make([]int32, nn)
	next := int32(0)
	for q.Len() > 0 {
		u := heap.Pop(q).(int32)
		d.ord[u] = next
		next++
		for _, e := range d.adj[u] {
			if indeg[e.to]--; indeg[e.to] == 0 {
				heap.Push(q, e.to)
			}
		}
	}
}

type prioQueue struct {
	nodes []int32
	prio  []int64
}

func (q *prioQueue) Len() int           { return len(q.nodes) }
func (q *prioQueue) Less(i, j int) bool { return q.prio[q.nodes[i]] < q.prio[q.nodes[j]] }
func (q *prioQueue) Swap(i, j int)      { q.nodes[i], q.nodes[j] = q.nodes[j], q.nodes[i] }
func (q *prioQueue) Push(x any)         { q.nodes = append(q.nodes, x.(int32)) }
func (q *prioQueue) Pop() any {
	x := q.nodes[len(q.nodes)-1]
	q.nodes = q.nodes[:len(q.nodes)-1]
	return x
}

// closes reports whether adding from → to would close a cycle (Pearce–Kelly: only
// nodes between the two in the order are searched); if not, it reorders so that the
// order stays topological with the edge. On a cycle the path to → … → from is left in
// d.from / d.fromEdge. Removing edges later keeps the order valid.
func (d *decider) closes(from, to int32) bool {
	lb, ub := d.ord[to], d.ord[from]
	if ub < lb {
		return false
	}
	// Forward from to, among nodes at most ub.
	d.epoch++
	if d.epoch == 0 {
		clear(d.stamp)
		d.epoch = 1
	}
	fwd := d.epoch
	var deltaF []int32
	// Breadth first, so that a cycle found is a shortest one through the new edge (the
	// explanation, and a counterexample cut from it, are then as small as they can be).
	d.stack = append(d.stack[:0], to)
	d.stamp[to] = fwd
	for head := 0; head < len(d.stack); head++ {
		u := d.stack[head]
		deltaF = append(deltaF, u)
		if u == from {
			return true
		}
		for _, e := range d.adj[u] {
			if d.stamp[e.to] != fwd && d.ord[e.to] <= ub {
				d.stamp[e.to] = fwd
				d.from[e.to], d.fromEdge[e.to] = u, e
				d.stack = append(d.stack, e.to)
			}
		}
	}
	// Backward from from, among nodes at least lb.
	d.epoch++
	bwd := d.epoch
	var deltaB []int32
	d.stack = append(d.stack[:0], from)
	d.stamp[from] = bwd
	for len(d.stack) > 0 {
		u := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		deltaB = append(deltaB, u)
		for _, w := range d.radj[u] {
			if d.stamp[w] != bwd && d.ord[w] >= lb {
				d.stamp[w] = bwd
				d.stack = append(d.stack, w)
			}
		}
	}
	byOrd := func(xs []int32) {
		sort.Slice(xs, func(i, j int) bool { return d.ord[xs[i]] < d.ord[xs[j]] })
	}
	byOrd(deltaB)
	byOrd(deltaF)
	slots := make([]int32, 0, len(deltaB)+len(deltaF))
	for _, u := range deltaB {
		slots = append(slots, d.ord[u])
	}
	for _, u := range deltaF {
		slots = append(slots, d.ord[u])
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i] < slots[j] })
	for i, u := range deltaB {
		d.ord[u] = slots[i]
	}
	for i, u := range deltaF {
		d.ord[u] = slots[len(deltaB)+i]
	}
	return false
}
