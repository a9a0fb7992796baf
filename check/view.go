package check

import (
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
	v.edges = make([]encode.Edge, 0, int(n)+len(p.Edges)+len(p.Edges)/8)
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
	spec := models[m]
	orders := c.edges[c.nData:c.nData]
	switch {
	case spec.realtime:
		orders = c.edges[c.nData:]
	case spec.process:
		orders = c.edges[c.nData:c.nDataProcess]
	}
	for _, e := range orders {
		add(e, commit(e.From), start(e.To))
	}
	if !orient {
		return v
	}
	// First-committer-wins orders every two writers of a key, so writers left
	// unobserved are ordered too: a chosen orientation per pair.
	if !c.orientUnobserved(v, commit, start) {
		return nil
	}
	return v
}

// orientUnobserved adds to v, per key, an orientation variable for each pair of
// writers that may both be unobserved (the key's hub leaves their order open) and a
// ww edge each way, from(earlier) → to(later), guarded by both being unobserved and by
// the orientation. c.siGuards is reset. It reports false when the budget ran out.
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
				ti, tj := p.In.Writers[us[i]].Txn, p.In.Writers[us[j]].Txn
				if v.merged != nil && v.merged[ti] && v.merged[tj] {
					// Both whole: any topological order puts one entirely before the
					// other, which is the orientation.
					continue
				}
				o := p.NumVars + v.extraVars
				v.extraVars++
				both := append(append([]encode.Lit{}, p.UnobservedGuard(int32(k), us[i])...), p.UnobservedGuard(int32(k), us[j])...)
				c.addGuarded(v, encode.Edge{Kind: encode.WW, Key: int32(k), Read: -1, Pos: -1}, from(ti), to(tj), append(both, encode.Pos(o)))
				c.addGuarded(v, encode.Edge{Kind: encode.WW, Key: int32(k), Read: -1, Pos: -1}, from(tj), to(ti), append(both, encode.Neg(o)))
			}
		}
	}
	return true
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
