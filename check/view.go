package check

import (
	"cmp"
	"slices"

	"doppel/encode"
)

// view is the graph one model is decided on. The serializable family uses transaction
// nodes and the problem's hubs as they are. Snapshot isolation splits each transaction
// into a start node 2t and a commit node 2t+1 (DESIGN.md section 5): ww and wr edges go
// commit -> start, rw edges start -> commit, and each key has two hubs (one after the
// last writer's commit, one after the full readers' starts).
type view struct {
	nodes   int
	edges   []encode.Edge
	hubFrom int32 // nodes >= hubFrom are hubs
	split   bool
	// Snapshot isolation orders the unobserved writers of a key pairwise with extra
	// variables, numbered from the problem's NumVars on, and extra clauses.
	extraVars int32
	oriented  bool // snapshot isolation's orientation edges are present
	// lazy: the orientation edges are those of the pairs refinement found needed
	// (orientLazy), not all: a solution counts once refineUnobserved accepts it.
	lazy bool
	// merged, when set, marks the transactions whose start and commit are one node
	// (2t; node 2t+1 has no edge): the hybrid view of check/sihybrid.go.
	merged []bool
}

// commitNode returns the commit node of the transaction whose start or commit is node.
func (v *view) commitNode(node int32) int32 {
	if v.merged != nil && v.merged[node/2] {
		return node &^ 1
	}
	return node | 1
}

// txn maps a node to its transaction.
func (v *view) txn(node int32) int32 {
	if v.split {
		return node / 2
	}
	return node
}

func (v *view) isHub(node int32) bool { return node >= v.hubFrom }

// unobservedHub reports whether node is (a split half of) a key's hub for writers
// never observed, rather than a hub of a trace position.
func (v *view) unobservedHub(node int32, keys int) bool {
	if !v.isHub(node) {
		return false
	}
	h := node - v.hubFrom
	if v.split {
		h /= 2
	}
	return h < int32(keys)
}

// serialView is the graph of a serializable-family model: data edges plus the model's
// process and real-time edges. c.edges holds data, then process, then real-time edges,
// so each model's edges are a prefix (no copy).
func (c *checker) serialView(m string) *view {
	spec := models[m]
	n := c.nData
	if spec.process {
		n = c.nDataProcess
	}
	if spec.realtime {
		n = len(c.edges)
	}
	if spec.perRead && !spec.single {
		// Read committed's graph: no anti-dependencies (hub edges keep the ww paths).
		edges := make([]encode.Edge, 0, n)
		for _, e := range c.edges[:n] {
			if e.Kind != encode.RW {
				edges = append(edges, e)
			}
		}
		return &view{nodes: c.p.Nodes, edges: edges, hubFrom: c.p.HubBase}
	}
	return &view{nodes: c.p.Nodes, edges: c.edges[:n:n], hubFrom: c.p.HubBase}
}

// strictView is the strict-serializable graph even when no requested model needs
// process and real-time edges (c.edges then lacks them): data edges plus both orders,
// built once.
func (c *checker) strictView() *view {
	if len(c.edges) > c.nDataProcess && c.nDataProcess > c.nData {
		return c.serialView("strict-serializable")
	}
	if c.strictEdges == nil {
		data := c.edges[:c.nData:c.nData]
		process, realtime := c.p.ProcessEdges(), c.p.RealtimeEdges()
		// One allocation of the exact size: growing a copy of millions of edges costs
		// more than computing the order edges.
		c.strictEdges = make([]encode.Edge, 0, len(data)+len(process)+len(realtime))
		c.strictEdges = append(append(append(c.strictEdges, data...), process...), realtime...)
	}
	return &view{nodes: c.p.Nodes, edges: c.strictEdges, hubFrom: c.p.HubBase}
}

// siView is the split graph of snapshot isolation; with orient, also the chosen
// orders of unobserved writers (only the solver needs those: they are many). nil when
// the limits ran out meanwhile (it copies every edge, some twice).
func (c *checker) siView(m string, orient bool) *view {
	return c.siViewMerged(m, orient, nil)
}

// siViewMerged is siView with the transactions marked in merged (when not nil) kept
// whole: their start and commit are one node, 2t (check/sihybrid.go).
func (c *checker) siViewMerged(m string, orient bool, merged []bool) *view {
	p := c.p
	n := int32(len(c.h.Txns))
	start := func(t int32) int32 { return 2 * t }
	commit := func(t int32) int32 { return 2*t + 1 }
	if merged != nil {
		commit = func(t int32) int32 {
			if merged[t] {
				return 2 * t
			}
			return 2*t + 1
		}
	}
	hubs := int32(p.Nodes) - p.HubBase
	// Each hub h of the problem becomes two: hubW(h) after commits, on the way to the
	// starts of later writers and readers; hubR(h) after readers' starts, on the way
	// to the commits of later writers.
	hubW := func(h int32) int32 { return 2*n + 2*(h-p.HubBase) }
	hubR := func(h int32) int32 { return 2*n + 2*(h-p.HubBase) + 1 }
	v := &view{nodes: int(2*n + 2*hubs), hubFrom: 2 * n, split: true, oriented: orient, merged: merged}
	// The exact size, counted first: growing a copy of millions of edges cost more
	// (memmove) than the count.
	size := int(n) + len(p.Edges)
	for i := range p.Edges {
		e := &p.Edges[i]
		if fromHub := p.IsHub(e.From); fromHub && (p.IsHub(e.To) && e.Chain || !p.IsHub(e.To) && e.Kind == encode.Hub) {
			size++
		}
	}
	spec := models[m]
	orders := c.edges[c.nData:c.nData]
	switch {
	case spec.realtime:
		orders = c.edges[c.nData:]
	case spec.process:
		orders = c.edges[c.nData:c.nDataProcess]
	}
	size += len(orders)
	v.edges = make([]encode.Edge, 0, size)
	add := func(e encode.Edge, from, to int32) {
		e.From, e.To = from, to
		v.edges = append(v.edges, e)
	}
	for t := int32(0); t < n; t++ {
		if p.Commit[t] != encode.NotCommitted && (merged == nil || !merged[t]) {
			add(encode.Edge{Kind: encode.StartCommit, Key: -1, Read: -1}, start(t), commit(t))
		}
	}
	for i, e := range p.Edges {
		if i&(1<<16-1) == 0 && c.budget.out() {
			return nil
		}
		fromHub, toHub := p.IsHub(e.From), p.IsHub(e.To)
		switch {
		case fromHub && toHub:
			add(e, hubW(e.From), hubW(e.To))
			if e.Chain {
				// The chain of before-hubs carries readers' starts too (the after-hubs'
				// read halves have no edge in: harmless).
				add(e, hubR(e.From), hubR(e.To))
			}
		case fromHub && e.Kind == encode.Hub:
			add(e, hubW(e.From), start(e.To))
			add(e, hubR(e.From), commit(e.To))
		case fromHub: // wr from the writer before a position to a reader
			add(e, hubW(e.From), start(e.To))
		case toHub && e.Kind == encode.RW:
			add(e, start(e.From), hubR(e.To))
		case toHub:
			add(e, commit(e.From), hubW(e.To))
		case e.Kind == encode.RW:
			add(e, start(e.From), commit(e.To))
		default: // ww, wr
			add(e, commit(e.From), start(e.To))
		}
	}
	// The model's process and real-time edges: the commit of the earlier before the
	// start of the later.
	for _, e := range orders {
		add(e, commit(e.From), start(e.To))
	}
	if !orient {
		return v
	}
	// First-committer-wins orders every two writers of a key, so writers left
	// unobserved are ordered too: a chosen orientation per pair, lazily.
	c.orientLazy(v)
	return v
}

// siViewFull is snapshot isolation's split graph with an orientation variable for
// every pair of possibly-unobserved writers of a key: the exact instance, for
// --export; nil when the limits ran out.
func (c *checker) siViewFull(m string) *view {
	v := c.siView(m, false)
	if v == nil || !c.orientUnobserved(v, v.commitOf, v.startOf) {
		return nil
	}
	v.oriented = true
	return v
}

// orientUnobserved adds to v, per key, an orientation variable for each pair of
// writers that may both be unobserved (the key's hub leaves their order open) and a
// ww edge each way, from(earlier) → to(later), guarded by both being unobserved and by
// the orientation: every pair (quadratic), the exact instance --export writes. The
// solver's views orient lazily instead (orientLazy). c.siGuards is reset. It reports
// false when the budget ran out.
func (c *checker) orientUnobserved(v *view, from, to func(int32) int32) bool {
	p := c.p
	c.siGuards = c.siGuards[:0]
	for k := range p.Plans {
		us := p.Plans[k].Unobserved
		if len(us) > 1 && c.budget.out() {
			return false
		}
		for i := 0; i < len(us); i++ {
			for j := i + 1; j < len(us); j++ {
				c.orientPair(v, unobsPair{int32(k), us[i], us[j]}, from, to)
			}
		}
	}
	return true
}

// unobsPair is two writers of key k (writer ids, a < b in Plans[k].Unobserved's order)
// that may both be unobserved.
type unobsPair struct{ k, a, b int32 }

// orientPair adds the orientation variable of pair q and its two guarded ww edges,
// unless both writers' transactions are whole (then any topological order puts one
// entirely before the other, which is the orientation).
func (c *checker) orientPair(v *view, q unobsPair, from, to func(int32) int32) {
	p := c.p
	ti, tj := p.In.Writers[q.a].Txn, p.In.Writers[q.b].Txn
	if v.merged != nil && v.merged[ti] && v.merged[tj] {
		return
	}
	o := p.NumVars + v.extraVars
	v.extraVars++
	both := append(append([]encode.Lit{}, p.UnobservedGuard(q.k, q.a)...), p.UnobservedGuard(q.k, q.b)...)
	c.addGuarded(v, encode.Edge{Kind: encode.WW, Key: q.k, Read: -1, Pos: -1}, from(ti), to(tj), append(both, encode.Pos(o)))
	c.addGuarded(v, encode.Edge{Kind: encode.WW, Key: q.k, Read: -1, Pos: -1}, from(tj), to(ti), append(both, encode.Neg(o)))
}

// The lazy orientation of unobserved writers. Ordering every two writers of a key that
// may both be unobserved takes a variable per pair: on long lists of two values
// (~500 such writers per key) that is over a million variables for 2,000 transactions.
// A view oriented lazily starts with the pairs of c.pairs only (none at first): a
// relaxation, so an UNSAT answer on it is one for the whole problem. A solution of it
// counts only once unobservedOrder finds a topological order of its graph in which each
// key's unobserved writers follow one another (the commit of one before the start of
// the next: first-committer-wins), which orients every pair; otherwise the pairs that
// overlapped get their variables (refineUnobserved) and the search runs again. A pair
// never overlaps once it has its variable, so the pairs grow at each round and the loop
// ends.

// startOf and commitOf are transaction t's start and commit nodes in v (the same node
// when v is not split or t is whole).
func (v *view) startOf(t int32) int32 {
	if v.split {
		return 2 * t
	}
	return t
}

func (v *view) commitOf(t int32) int32 {
	if v.split {
		return v.commitNode(2 * t)
	}
	return t
}

// eagerUnobserved is the most possibly-unobserved writers a key may have for all its
// pairs to be oriented at once, as before the lazy orientation: at most 32 pairs per
// writer, so linear. On hot keys of few such writers the orientation edges help the
// search (the acyclicity theory's propagation, and the hybrid witness's splits, which
// follow the cycles it meets): a hot 200-transaction write skew the hybrid witness
// proved in 8,167 conflicts took 12,736 without them, and the refinement then cost the
// rest of its bound.
var eagerUnobserved = 64 // a variable for tests

// orientLazy makes v oriented lazily: every pair of the keys with at most
// eagerUnobserved possibly-unobserved writers, and on the others the pairs
// refinement found so far for the current problem. c.siGuards is reset.
func (c *checker) orientLazy(v *view) {
	if c.pairsOf != c.p {
		c.pairs, c.pairSet, c.pairsOf = nil, map[unobsPair]bool{}, c.p
	}
	c.siGuards = c.siGuards[:0]
	v.oriented, v.lazy = true, true
	for k := range c.p.Plans {
		if us := c.p.Plans[k].Unobserved; len(us) <= eagerUnobserved {
			for i := 0; i < len(us); i++ {
				for j := i + 1; j < len(us); j++ {
					c.orientPair(v, unobsPair{int32(k), us[i], us[j]}, v.commitOf, v.startOf)
				}
			}
		}
	}
	for _, q := range c.pairs {
		c.orientPair(v, q, v.commitOf, v.startOf)
	}
}

// refinement is what refineUnobserved found.
type refinement uint8

const (
	ordered refinement = iota // the solution's unobserved writers can be ordered
	refined                   // they overlapped: their pairs now have variables
	stuck                     // neither (cannot happen on an acyclic solution)
)

// refineUnobserved checks a solution vals of the lazily oriented view v: ordered when
// its unobserved writers can be ordered (unobservedOrder). Otherwise it gives the pairs
// that overlapped their variables, in v and for the views built later (refined).
func (c *checker) refineUnobserved(v *view, vals []bool) refinement {
	pos, over := c.unobservedOrder(v, vals, c.holdsUnder(vals))
	switch {
	case pos != nil:
		return ordered
	case len(over) == 0:
		return stuck
	}
	for _, q := range over {
		c.pairs = append(c.pairs, q)
		c.pairSet[q] = true
		c.orientPair(v, q, v.commitOf, v.startOf)
	}
	c.res.Stats.OrientedPairs += int64(len(over))
	return refined
}

// unobservedOrder returns the positions of a topological order of v's edges where
// holds (acyclic) in which the writers of each key that are unobserved under vals
// follow one another: the commit of each before the start of the next. nil and the
// pairs (without a variable yet) that overlapped in the order found, when it found
// none; nil and no pair when holds is cyclic. The order is Kahn's, taking every ready
// node before the start of a split unobserved writer, and of those one whose keys have
// no unobserved writer started and not committed, when there is one: intervals kept
// short and apart. A heuristic: when it fails, the overlapping pairs are oriented by
// the solver.
func (c *checker) unobservedOrder(v *view, vals []bool, holds func(e *encode.Edge) bool) ([]int32, []unobsPair) {
	p, in := c.p, c.p.In
	type uw struct{ k, w int32 }
	var unobs []uw
	txnKeys := map[int32][]int32{} // split transactions unobserved on some key: those keys
	isUnobs := func(k, w int32) bool {
		for _, l := range p.UnobservedGuard(k, w) {
			if vals[l>>1] == (l&1 == 1) {
				return false
			}
		}
		return true
	}
	for k := range p.Plans {
		us := p.Plans[k].Unobserved
		if len(us) < 2 {
			continue
		}
		for _, w := range us {
			if isUnobs(int32(k), w) {
				unobs = append(unobs, uw{int32(k), w})
				if t := in.Writers[w].Txn; v.startOf(t) != v.commitOf(t) {
					txnKeys[t] = append(txnKeys[t], int32(k))
				}
			}
		}
	}
	g := newGraph(v.nodes, v.edges, holds)
	indeg := make([]int32, g.n)
	for _, id := range g.ids {
		indeg[g.edges[id].To]++
	}
	delayed := func(x int32) bool {
		if !v.split || v.isHub(x) || x&1 == 1 {
			return false
		}
		_, ok := txnKeys[x/2]
		return ok
	}
	open := map[int32]int32{} // key -> its unobserved writers started, not committed
	var ready, waiting []int32
	push := func(x int32) {
		if delayed(x) {
			waiting = append(waiting, x)
		} else {
			ready = append(ready, x)
		}
	}
	for x := int32(0); x < int32(g.n); x++ {
		if indeg[x] == 0 {
			push(x)
		}
	}
	pos := make([]int32, g.n)
	at := int32(0)
	for len(ready) > 0 || len(waiting) > 0 {
		var x int32
		if len(ready) > 0 {
			x, ready = ready[len(ready)-1], ready[:len(ready)-1]
		} else {
			pick := 0
		scan:
			for i, y := range waiting {
				for _, k := range txnKeys[y/2] {
					if open[k] > 0 {
						continue scan
					}
				}
				pick = i
				break
			}
			x = waiting[pick]
			waiting[pick] = waiting[len(waiting)-1]
			waiting = waiting[:len(waiting)-1]
			for _, k := range txnKeys[x/2] {
				open[k]++
			}
		}
		if v.split && !v.isHub(x) && x&1 == 1 {
			for _, k := range txnKeys[x/2] {
				open[k]--
			}
		}
		pos[x] = at
		at++
		for _, id := range g.ids[g.start[x]:g.start[x+1]] {
			y := g.edges[id].To
			if indeg[y]--; indeg[y] == 0 {
				push(y)
			}
		}
	}
	if int(at) != g.n {
		return nil, nil
	}
	// Per key, its unobserved writers by start: each must commit before the next starts.
	// (A pair with a variable cannot overlap: one of its edges holds. Failing without
	// a new pair would be a bug: reported as no order and no pair.)
	var over []unobsPair
	failed := false
	for i := 0; i < len(unobs); {
		j := i
		for j < len(unobs) && unobs[j].k == unobs[i].k {
			j++
		}
		ws := unobs[i:j]
		slices.SortFunc(ws, func(a, b uw) int {
			return cmp.Compare(pos[v.startOf(in.Writers[a.w].Txn)], pos[v.startOf(in.Writers[b.w].Txn)])
		})
		for a := range ws {
			end := pos[v.commitOf(in.Writers[ws[a].w].Txn)]
			for b := a + 1; b < len(ws) && pos[v.startOf(in.Writers[ws[b].w].Txn)] < end; b++ {
				failed = true
				if q := c.pairOf(ws[a].k, ws[a].w, ws[b].w); !c.pairSet[q] {
					over = append(over, q)
				}
			}
		}
		i = j
	}
	if failed {
		return nil, over
	}
	return pos, nil
}

// pairOf returns the pair of writers x and y of key k in c.pairs's form: the one first
// in Plans[k].Unobserved as a.
func (c *checker) pairOf(k, x, y int32) unobsPair {
	for _, w := range c.p.Plans[k].Unobserved {
		if w == x {
			return unobsPair{k, x, y}
		}
		if w == y {
			return unobsPair{k, y, x}
		}
	}
	return unobsPair{k, x, y}
}

// addGuarded adds an edge whose guard is not in the problem's guard table: it goes to
// the checker's own table, referenced by negative offsets.
func (c *checker) addGuarded(v *view, e encode.Edge, from, to int32, guard []encode.Lit) {
	e.From, e.To = from, to
	e.G0 = -int32(len(c.siGuards)) - 1
	c.siGuards = append(c.siGuards, guard...)
	e.G1 = -int32(len(c.siGuards)) - 1
	v.edges = append(v.edges, e)
}

// guard returns an edge's guard from the problem's table or the checker's.
func (c *checker) guard(e *encode.Edge) []encode.Lit {
	if e.G0 >= 0 {
		return c.p.Guards[e.G0:e.G1]
	}
	return c.siGuards[-e.G0-1 : -e.G1-1]
}

// siPairs reports whether some key has two writers that may both be unobserved, which
// snapshot isolation must order (so the problem has choices even with all keys fixed).
func (c *checker) siPairs() bool {
	for k := range c.p.Plans {
		if len(c.p.Plans[k].Unobserved) > 1 {
			return true
		}
	}
	return false
}
