package theory

import (
	"math/rand/v2"
	"testing"

	"doppel/sat"
)

// largeInstance is a DAG-ish random problem: nodes have a hidden rank (a
// random permutation, so Pearce–Kelly must reorder); edges mostly go a short
// way forward in rank. Each variable guards a few edges (sometimes with a
// second literal); "bad" variables also guard one short backward edge. Every
// clause is a disjunction of three variables, at least one good, so setting
// the good ones true and the bad ones false is a model.
type largeInstance struct {
	nodes, vars int
	from, to    []int
	guards      [][]sat.Lit
	clauses     [][]sat.Lit
}

func newLargeInstance(nodes, guarded, known int, seed uint64) *largeInstance {
	rng := rand.New(rand.NewPCG(seed, 3))
	in := &largeInstance{nodes: nodes, vars: guarded / 3}
	byRank := rng.Perm(nodes)
	forward := func(span int) (int, int) {
		r := rng.IntN(nodes - span - 1)
		return byRank[r], byRank[r+1+rng.IntN(span)]
	}
	for range known {
		u, v := forward(100)
		in.from, in.to = append(in.from, u), append(in.to, v)
		in.guards = append(in.guards, nil)
	}
	bad := make([]bool, in.vars)
	for v := range in.vars {
		bad[v] = rng.IntN(3) == 0
		for k := range 3 {
			u, w := forward(20)
			if k == 0 && bad[v] {
				w, u = forward(60) // backward
			}
			guard := []sat.Lit{sat.PosLit(sat.Var(v))}
			if rng.IntN(4) == 0 {
				guard = append(guard, sat.PosLit(sat.Var(rng.IntN(in.vars))))
			}
			in.from, in.to = append(in.from, u), append(in.to, w)
			in.guards = append(in.guards, guard)
		}
	}
	vars := rng.Perm(in.vars)
	var good, badVars []int
	for _, v := range vars {
		if bad[v] {
			badVars = append(badVars, v)
		} else {
			good = append(good, v)
		}
	}
	for i, v := range good {
		c := []sat.Lit{sat.PosLit(sat.Var(v))}
		for range 2 {
			w := good[rng.IntN(len(good))]
			if len(badVars) > 0 && rng.IntN(2) == 0 {
				w = badVars[(i+rng.IntN(len(badVars)))%len(badVars)]
			}
			c = append(c, sat.PosLit(sat.Var(w)))
		}
		rng.Shuffle(len(c), func(a, b int) { c[a], c[b] = c[b], c[a] })
		in.clauses = append(in.clauses, c)
	}
	return in
}

// solve builds the solver and graph (not timed) and solves (timed).
func (in *largeInstance) solve(b *testing.B, propagation bool, lookAhead int) (*sat.Solver, *Graph) {
	b.StopTimer()
	s := sat.New()
	for range in.vars {
		s.NewVar()
	}
	for _, c := range in.clauses {
		s.AddClause(c...)
	}
	g := NewGraph(in.nodes)
	for e := range in.from {
		g.AddEdge(in.from[e], in.to[e], in.guards[e])
	}
	g.Propagation = propagation
	g.NeighbourLimit = lookAhead
	if cyc := g.Init(); cyc != nil {
		b.Fatalf("known cycle %v", cyc)
	}
	s.SetTheory(g)
	b.StartTimer()
	if st := s.Solve(); st != sat.Sat {
		b.Fatalf("large instance: %v, want SAT", st)
	}
	return s, g
}

// BenchmarkLarge solves a 100K-node instance with 300K guarded edges (and 50K
// known ones), with and without theory propagation.
func BenchmarkLarge(b *testing.B) {
	in := newLargeInstance(100_000, 300_000, 50_000, 1)
	for _, c := range []struct {
		name        string
		propagation bool
		lookAhead   int
	}{
		{"propagation=on", true, NewGraph(0).NeighbourLimit},
		{"propagation=on,lookahead=off", true, 0},
		{"propagation=off", false, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			var s *sat.Solver
			var g *Graph
			for b.Loop() {
				s, g = in.solve(b, c.propagation, c.lookAhead)
			}
			st := s.Stats()
			b.ReportMetric(float64(st.Decisions), "decisions")
			b.ReportMetric(float64(st.Conflicts), "conflicts")
			b.ReportMetric(float64(g.Stats.Conflicts), "cycles")
			b.ReportMetric(float64(g.Stats.Propagations), "theoryprops")
			b.ReportMetric(float64(g.Stats.Enabled), "enablings")
			b.ReportMetric(float64(g.Stats.Reorders), "reordered")
			b.ReportMetric(float64(g.Stats.Searches), "searches")
		})
	}
}

// BenchmarkInitKnown measures Pearce–Kelly alone: 300K known DAG edges over
// 100K nodes in random order, inserted by Init.
func BenchmarkInitKnown(b *testing.B) {
	in := newLargeInstance(100_000, 0, 300_000, 2)
	var g *Graph
	for b.Loop() {
		g = NewGraph(in.nodes)
		for e := range in.from {
			g.AddEdge(in.from[e], in.to[e], nil)
		}
		if cyc := g.Init(); cyc != nil {
			b.Fatalf("known cycle %v", cyc)
		}
	}
	b.ReportMetric(float64(g.Stats.Reorders), "reordered")
}

// BenchmarkPearceKelly measures incremental insertion alone: 30K DAG edges
// over 10K nodes in random order, from an order that ignores them (the worst
// start; Init starts from a DFS order of all edges instead, see
// BenchmarkInitKnown).
func BenchmarkPearceKelly(b *testing.B) {
	in := newLargeInstance(10_000, 0, 30_000, 2)
	var g *Graph
	for b.Loop() {
		g = NewGraph(in.nodes)
		for e := range in.from {
			g.AddEdge(in.from[e], in.to[e], nil)
		}
		for e := range int32(len(in.from)) {
			if !g.insert(e) {
				b.Fatal("cycle in a DAG")
			}
		}
	}
	b.ReportMetric(float64(g.Stats.Reorders), "reordered")
}
