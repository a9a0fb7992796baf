package check

import (
	"doppel/encode"
)

// witness guesses a solution before any search (the serial replay already failed for
// this model): on each open key, at each block boundary, the unused viable writer that
// completed first (real systems mostly commit in about that order). If the guess's
// graph is acyclic the model holds and no solver is needed; otherwise the guess seeds
// the solver's phases. Returns the assignment and whether it is a verified solution.
func (c *checker) witness(v *view) ([]bool, bool) {
	p, in := c.p, c.p.In
	vals := make([]bool, p.NumVars+v.extraVars)
	if v.split && !v.oriented {
		return vals, false // the caller builds the oriented view and asks again
	}
	complete := func(t int32) int64 {
		tx := &c.h.Txns[t]
		switch {
		case tx.Complete >= 0:
			return int64(tx.Complete)
		case tx.Invoke >= 0:
			return int64(tx.Invoke) + 1<<40 // unknown completion: after every known one
		}
		return 1 << 41
	}
	ok := true
	chosen := make([]bool, len(in.Writers)) // writers given a block
	for k := range p.Plans {
		pl := &p.Plans[k]
		if pl.State != encode.KeyOpen {
			continue
		}
		n := int32(len(in.Keys[k].Trace))
		for pos, i := int32(0), 0; pos < n; {
			for i < len(pl.Cands) && pl.Cands[i].Pos < pos {
				i++
			}
			best := -1
			for j := i; j < len(pl.Cands) && pl.Cands[j].Pos == pos; j++ {
				w := pl.Cands[j].Writer
				if chosen[w] {
					continue
				}
				if best < 0 {
					best = j
					continue
				}
				bw := pl.Cands[best].Writer
				// Within windows, the writer first in the order that narrowed them.
				if p.Win != nil && p.Win.Rank != nil {
					if p.Win.Rank[in.Writers[w].Txn] < p.Win.Rank[in.Writers[bw].Txn] {
						best = j
					}
					continue
				}
				if complete(in.Writers[w].Txn) < complete(in.Writers[bw].Txn) {
					best = j
				}
			}
			if best < 0 {
				ok = false
				break
			}
			w := pl.Cands[best].Writer
			chosen[w] = true
			vals[p.SegVar[k][best]] = true
			vals[p.BoundaryVar(int32(k), pos)] = true
			pos += in.Writers[w].End - in.Writers[w].Start
			if pos == n {
				vals[p.BoundaryVar(int32(k), n)] = true
			}
		}
	}
	for t, cv := range p.CommitVar {
		if cv < 0 {
			continue
		}
		for _, w := range in.TxnWriters(int32(t)) {
			if chosen[w] {
				vals[cv] = true
			}
		}
	}
	for k := range p.Plans {
		for _, w := range p.Plans[k].Unobserved {
			if u, has := p.UnobservedVar(int32(k), w); has {
				t := in.Writers[w].Txn
				committed := p.Commit[t] == encode.Committed || p.CommitVar[t] >= 0 && vals[p.CommitVar[t]]
				vals[u] = committed && !chosen[w]
			}
		}
	}
	if !ok || !c.satisfies(vals) {
		return vals, false
	}
	holds := c.holdsUnder(vals)
	isOrientation := func(e *encode.Edge) bool { return e.G0 < 0 }
	base := func(e *encode.Edge) bool { return !isOrientation(e) && holds(e) }
	g := newGraph(v.nodes, v.edges, base)
	if len(g.sccs(func(int32) bool { return true }, base)) > 0 {
		return vals, false
	}
	if v.extraVars == 0 && !v.lazy {
		return vals, true
	}
	// Snapshot isolation: orient each pair of unobserved writers by the order of their
	// commits in a topological order of the rest (one where each key's unobserved
	// writers follow one another, for a lazily oriented view), then check again.
	var pos []int32
	if v.lazy {
		if pos, _ = c.unobservedOrder(v, vals, base); pos == nil {
			return vals, false
		}
	} else {
		pos = g.topoPositions(base)
	}
	for i := range v.edges {
		e := &v.edges[i]
		if !isOrientation(e) {
			continue
		}
		gd := c.guard(e)
		o := gd[len(gd)-1]
		if o&1 == 0 { // the edge for "o true": commit(from) before start(to)
			vals[o>>1] = pos[e.From] < pos[v.commitNode(e.To)]
		}
	}
	g = newGraph(v.nodes, v.edges, holds)
	return vals, len(g.sccs(func(int32) bool { return true }, holds)) == 0 && (!v.lazy || c.orderedUnder(v, vals))
}

// orderedUnder reports whether the solution vals of the lazily oriented view v orders
// its unobserved writers (refineUnobserved without refining).
func (c *checker) orderedUnder(v *view, vals []bool) bool {
	pos, _ := c.unobservedOrder(v, vals, c.holdsUnder(vals))
	return pos != nil
}

// topoPositions returns each node's position in a topological order of the edges
// where ok holds (which must be acyclic): Kahn's algorithm.
func (g *graph) topoPositions(ok func(e *encode.Edge) bool) []int32 {
	indeg := make([]int32, g.n)
	for _, id := range g.ids {
		if ok(&g.edges[id]) {
			indeg[g.edges[id].To]++
		}
	}
	var queue []int32
	for v := int32(0); v < int32(g.n); v++ {
		if indeg[v] == 0 {
			queue = append(queue, v)
		}
	}
	pos := make([]int32, g.n)
	for qi := 0; qi < len(queue); qi++ {
		v := queue[qi]
		pos[v] = int32(qi)
		for _, id := range g.ids[g.start[v]:g.start[v+1]] {
			e := &g.edges[id]
			if ok(e) {
				indeg[e.To]--
				if indeg[e.To] == 0 {
					queue = append(queue, e.To)
				}
			}
		}
	}
	return pos
}

// holdsUnder returns "edge e holds": all its guard literals are true under vals.
func (c *checker) holdsUnder(vals []bool) func(e *encode.Edge) bool {
	return func(e *encode.Edge) bool {
		for _, l := range c.guard(e) {
			if vals[l>>1] == (l&1 == 1) {
				return false
			}
		}
		return true
	}
}

// satisfies reports whether vals satisfies every clause of the problem (the guess is
// built to, but windows add clauses of their own: a writer that must be observed).
func (c *checker) satisfies(vals []bool) bool {
	p := c.p
	if p.Tiling != nil && !p.Tiling.Satisfied(vals) {
		return false
	}
	for i := range p.ClauseEnd {
		sat := false
		for _, l := range p.Clause(i) {
			if vals[l>>1] == (l&1 == 0) {
				sat = true
				break
			}
		}
		if !sat {
			return false
		}
	}
	return true
}
