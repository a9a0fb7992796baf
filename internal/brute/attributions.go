package brute

import (
	"fmt"

	"doppel/history"
)

// Attribution is one way the history could have happened under a model's reading of
// reads: which transactions committed, and per key the order of the committed writers'
// blocks (each the transaction's appends to the key, in its own order). It is what a
// step of an explanation is checked against: "T1 < T2 because T2 read x with T1's
// append" must hold in every attribution the step claims it for.
type Attribution struct {
	Committed uint64
	// Writers[x] are key x's committed writers in list order, Starts[x] where each block
	// starts (0-based) and Len[x] the length of the whole list.
	Writers [][]int
	Starts  [][]int
	Len     []int
	// Valid: the graph of this attribution has no cycle the model forbids (and, for the
	// models that forbid it, the history has no lost update).
	Valid bool
}

// Start returns where t's block on key x starts (0-based), or -1 when t has no
// committed block on x in a.
func (a *Attribution) Start(x, t int) int {
	if x >= len(a.Writers) {
		return -1
	}
	for i, w := range a.Writers[x] {
		if w == t {
			return a.Starts[x][i]
		}
	}
	return -1
}

// Before reports whether t's block on key x precedes u's (both committed on x).
func (a *Attribution) Before(x, t, u int) bool {
	st, su := a.Start(x, t), a.Start(x, u)
	return st >= 0 && su >= 0 && st < su
}

// Attributions calls fn with every attribution of h that the model's reading of reads
// allows (every read a prefix of its key's list ending at a block boundary, one base
// per transaction and key where the model has one), until fn returns false or limit
// attributions have been visited; it reports how many it visited. Read uncommitted's
// models, which read versions, are not enumerated (an error).
func Attributions(h *history.History, model string, limit int, fn func(a *Attribution) bool) (int, error) {
	spec, ok := graphModels[model]
	if !ok {
		return 0, fmt.Errorf("brute: no attributions for model %q", model)
	}
	if err := validate(h); err != nil {
		return 0, err
	}
	g := &graphSearch{h: h, spec: spec, n: len(h.Txns)}
	if !g.collect() {
		return 0, nil // no attribution: every one is internal
	}
	lost := spec.lostUpdate && lostUpdate(h)
	visited := 0
	stop := false
	for sub := uint64(0); !stop; sub = (sub - g.optional) & g.optional {
		committed := g.ok | sub
		g.orders = g.orders[:0]
		empty := false
		for x := 0; x < g.keys && !empty; x++ {
			orders := g.keyOrders(x, g.blocksOf(x, committed))
			empty = len(orders) == 0
			g.orders = append(g.orders, orders)
		}
		if !empty {
			g.edges = g.edges[:0]
			g.orderEdges(committed)
			a := &Attribution{Committed: committed, Writers: make([][]int, g.keys), Starts: make([][]int, g.keys), Len: make([]int, g.keys)}
			var rec func(x int) bool
			rec = func(x int) bool {
				if x == len(g.orders) {
					a.Valid = !lost && g.acyclic(committed) && (!g.spec.single || !g.closesSingle())
					visited++
					return fn(a) && visited < limit
				}
				mark, rwMark := len(g.edges), len(g.rw)
				for _, ko := range g.orders[x] {
					g.edges, g.rw = g.edges[:mark], g.rw[:rwMark]
					g.addOrder(ko)
					a.Writers[x], a.Starts[x], a.Len[x] = ko.txns, ko.starts, ko.total
					if !rec(x + 1) {
						return false
					}
				}
				g.edges, g.rw = g.edges[:mark], g.rw[:rwMark]
				return true
			}
			stop = !rec(0)
		}
		if sub == g.optional {
			break
		}
	}
	return visited, nil
}

// ProcessBefore and RealTimeBefore are the oracle's own process and real-time orders
// between transactions a and b of h.
func ProcessBefore(h *history.History, a, b int) bool  { return processBefore(h, a, b) }
func RealTimeBefore(h *history.History, a, b int) bool { return realTimeBefore(h, a, b) }
