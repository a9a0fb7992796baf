package theory

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"doppel/sat"
)

// instance is a small random problem: clauses plus guarded edges.
type instance struct {
	nodes, vars int
	from, to    []int
	guards      [][]sat.Lit
	clauses     [][]sat.Lit
}

func randLit(rng *rand.Rand, vars int) sat.Lit {
	v := sat.Var(rng.IntN(vars))
	if rng.IntN(2) == 0 {
		return sat.PosLit(v)
	}
	return sat.NegLit(v)
}

func randInstance(rng *rand.Rand) *instance {
	in := &instance{nodes: 4 + rng.IntN(5), vars: 3 + rng.IntN(8)}
	edges := 5 + rng.IntN(16)
	for range edges {
		in.from = append(in.from, rng.IntN(in.nodes))
		to := rng.IntN(in.nodes)
		if rng.IntN(8) != 0 {
			for to == in.from[len(in.from)-1] {
				to = rng.IntN(in.nodes)
			}
		}
		in.to = append(in.to, to)
		var guard []sat.Lit
		// Mostly guarded edges: known edges make most instances trivially cyclic.
		n := rng.IntN(4)
		if n == 0 && rng.IntN(3) != 0 {
			n = 1
		}
		for range n {
			guard = append(guard, randLit(rng, in.vars))
		}
		in.guards = append(in.guards, guard)
	}
	// Clauses asking for one of two edges' first guard literals push many
	// edges on, so cycles (conflicts, propagations, UNSAT) are frequent.
	if rng.IntN(2) == 0 {
		for range 2 + rng.IntN(4) {
			a, b := in.guards[rng.IntN(edges)], in.guards[rng.IntN(edges)]
			if len(a) > 0 && len(b) > 0 {
				in.clauses = append(in.clauses, []sat.Lit{a[0], b[0]})
			}
		}
	}
	for range rng.IntN(5) {
		var c []sat.Lit
		for range 1 + rng.IntN(3) {
			c = append(c, randLit(rng, in.vars))
		}
		in.clauses = append(in.clauses, c)
	}
	return in
}

func litTrue(assign uint32, l sat.Lit) bool {
	return (assign>>uint(l.Var()))&1 == 1 != l.IsNeg()
}

// acyclic reports whether the edges for which enabled(e) holds are acyclic (Kahn).
func acyclic(nodes int, from, to []int, enabled func(e int) bool) bool {
	indeg := make([]int, nodes)
	for e := range from {
		if enabled(e) {
			indeg[to[e]]++
		}
	}
	var q []int
	for x := range nodes {
		if indeg[x] == 0 {
			q = append(q, x)
		}
	}
	done := 0
	for len(q) > 0 {
		x := q[len(q)-1]
		q = q[:len(q)-1]
		done++
		for e := range from {
			if enabled(e) && from[e] == x {
				indeg[to[e]]--
				if indeg[to[e]] == 0 {
					q = append(q, to[e])
				}
			}
		}
	}
	return done == nodes
}

// bruteSat reports whether some assignment satisfying the clauses and the
// assumptions leaves the enabled edges acyclic.
func (in *instance) bruteSat(assumptions []sat.Lit) bool {
	for a := uint32(0); a < 1<<in.vars; a++ {
		ok := true
		for _, l := range assumptions {
			ok = ok && litTrue(a, l)
		}
		for _, c := range in.clauses {
			ok = ok && slices.ContainsFunc(c, func(l sat.Lit) bool { return litTrue(a, l) })
		}
		if !ok {
			continue
		}
		if acyclic(in.nodes, in.from, in.to, func(e int) bool {
			for _, l := range in.guards[e] {
				if !litTrue(a, l) {
					return false
				}
			}
			return true
		}) {
			return true
		}
	}
	return false
}

// checkedTheory forwards to a Graph and checks every conflict and every
// implication it produces against the solver's state.
type checkedTheory struct {
	t *testing.T
	g *Graph
}

func (c *checkedTheory) Propagate(s *sat.Solver) []sat.Lit {
	before := len(s.Trail())
	conflict := c.g.Propagate(s)
	trail := s.Trail()
	if err := c.g.checkCounts(); err != nil {
		c.t.Fatal(err)
	}
	if conflict != nil {
		for _, l := range conflict {
			if s.Value(l) != sat.LFalse {
				c.t.Errorf("conflict %v: literal %v is not false", conflict, l)
			}
		}
		cyc := c.g.LastCycle()
		for i, e := range cyc {
			_, to, guard := c.g.Edge(e)
			from, _, _ := c.g.Edge(cyc[(i+1)%len(cyc)])
			if to != from {
				c.t.Errorf("LastCycle %v not a cycle", cyc)
			}
			for _, l := range guard {
				if !slices.Contains(conflict, l.Not()) {
					c.t.Errorf("conflict %v misses guard literal %v of cycle edge %d", conflict, l, e)
				}
			}
		}
		if !c.forcesCycle(conflict) {
			c.t.Errorf("conflict %v: its negation enables no cycle", conflict)
		}
		return conflict
	}
	// New trail literals are the theory's implications: explain them now.
	for i := before; i < len(trail); i++ {
		l := trail[i]
		r := c.g.Explain(l)
		if len(r) == 0 || r[0] != l {
			c.t.Errorf("explanation %v of %v does not start with it", r, l)
			continue
		}
		for _, q := range r[1:] {
			if s.Value(q) != sat.LFalse || slices.Index(trail, q.Not()) >= i {
				c.t.Errorf("explanation %v of %v: %v not false before it", r, l, q)
			}
		}
		if !c.forcesCycle(r) {
			c.t.Errorf("explanation %v: its negation enables no cycle", r)
		}
	}
	return nil
}

// forcesCycle reports whether making every literal of clause false enables a
// cycle by itself (so the clause is a consequence of acyclicity).
func (c *checkedTheory) forcesCycle(clause []sat.Lit) bool {
	var from, to []int
	var guards [][]sat.Lit
	for e := range c.g.Edges() {
		f, t, guard := c.g.Edge(e)
		from, to, guards = append(from, f), append(to, t), append(guards, guard)
	}
	return !acyclic(c.g.Nodes(), from, to, func(e int) bool {
		for _, l := range guards[e] {
			if !slices.Contains(clause, l.Not()) {
				return false
			}
		}
		return true
	})
}

func (c *checkedTheory) Explain(l sat.Lit) []sat.Lit { return c.g.Explain(l) }

func (c *checkedTheory) Backtrack(n int) {
	c.g.Backtrack(n)
	if err := c.g.checkCounts(); err != nil {
		c.t.Fatal(err)
	}
}

// checkCounts recomputes, from the trail literals the graph has seen, what its
// incremental bookkeeping must hold: remaining, falseLits, the live edges of
// each node and their positions, and the enabled edges.
func (g *Graph) checkCounts() error {
	seen := make(map[sat.Lit]bool)
	for _, l := range g.seenLits {
		seen[l] = true
	}
	for e := range g.Edges() {
		var rem, fls int32
		for _, l := range g.guard(int32(e)) {
			if !seen[l] {
				rem++
			}
			if seen[l.Not()] {
				fls++
			}
		}
		if g.remaining[e] != rem {
			return fmt.Errorf("edge %d: remaining %d, want %d", e, g.remaining[e], rem)
		}
		if g.enabled[e] != (rem == 0) {
			return fmt.Errorf("edge %d: enabled %v with %d guard literals left", e, g.enabled[e], rem)
		}
		if !g.tracking {
			continue
		}
		if g.falseLits[e] != fls {
			return fmt.Errorf("edge %d: falseLits %d, want %d", e, g.falseLits[e], fls)
		}
		if len(g.guard(int32(e))) == 0 {
			continue
		}
		x := g.from[e]
		live := rem == 1 && fls == 0
		pos := g.livePos[e]
		if g.liveEdges[pos] != int32(e) {
			return fmt.Errorf("edge %d: livePos %d holds edge %d", e, pos, g.liveEdges[pos])
		}
		if g.liveTo[pos] != g.to[e] {
			return fmt.Errorf("edge %d: liveTo %d, want its head %d", e, g.liveTo[pos], g.to[e])
		}
		start := g.guardedOutStart[x]
		if pos < start || pos >= g.guardedOutStart[x+1] {
			return fmt.Errorf("edge %d: livePos %d outside node %d's edges", e, pos, x)
		}
		if inLive := pos < start+g.liveOut[x]; inLive != live {
			return fmt.Errorf("edge %d: among live edges %v, live %v", e, inLive, live)
		}
	}
	return nil
}

// checkModel verifies a Sat answer: clauses, assumptions, acyclicity and Order.
func checkModel(in *instance, s *sat.Solver, g *Graph, assumptions []sat.Lit) error {
	for _, c := range in.clauses {
		if !slices.ContainsFunc(c, s.ModelValue) {
			return fmt.Errorf("clause %v false in model", c)
		}
	}
	for _, l := range assumptions {
		if !s.ModelValue(l) {
			return fmt.Errorf("assumption %v false in model", l)
		}
	}
	enabled := func(e int) bool {
		for _, l := range in.guards[e] {
			if !s.ModelValue(l) {
				return false
			}
		}
		return true
	}
	order := g.Order()
	pos := make([]int, in.nodes)
	for i := range pos {
		pos[i] = -1
	}
	for i, x := range order {
		if x < 0 || x >= in.nodes || pos[x] >= 0 {
			return fmt.Errorf("Order %v is not a permutation", order)
		}
		pos[x] = i
	}
	for e := range in.from {
		if enabled(e) && pos[in.from[e]] >= pos[in.to[e]] {
			return fmt.Errorf("enabled edge %d->%d against Order %v", in.from[e], in.to[e], order)
		}
	}
	return nil
}

func solveInstance(t *testing.T, in *instance, propagation bool, rng *rand.Rand, total *Stats) {
	t.Helper()
	s := sat.New()
	opts := sat.DefaultOptions()
	opts.Heuristic = []string{"vsids", "static"}[rng.IntN(2)]
	opts.Restarts = []string{"glucose", "luby", "none"}[rng.IntN(3)]
	opts.LubyUnit = 2
	opts.ReduceFirst = 1 + int64(rng.IntN(20))
	opts.ReduceInc = 5
	opts.PhaseSaving = rng.IntN(2) == 0
	s.SetOptions(opts)
	for range in.vars {
		s.NewVar()
	}
	g := NewGraph(in.nodes)
	for e := range in.from {
		if id := g.AddEdge(in.from[e], in.to[e], in.guards[e]); id != e {
			t.Fatalf("AddEdge returned %d, want %d", id, e)
		}
	}
	g.Propagation = propagation
	// Exercise the search limits too (giving up must stay sound).
	g.NeighbourLimit = []int{0, 1, 2, 128}[rng.IntN(4)]
	g.ForwardLimit = []int{0, 1, 2, 16}[rng.IntN(4)]
	g.SearchLimit = []int{1, 2, 4096}[rng.IntN(3)]
	// Every first propagation through the bulk closure, or none.
	bulkPendingMin = []int{1, 4096}[rng.IntN(2)]
	defer func() { bulkPendingMin = 4096 }()
	want := in.bruteSat(nil)
	if cyc := g.Init(); cyc != nil {
		if want {
			t.Fatalf("Init found known cycle %v but brute force says SAT: %+v", cyc, in)
		}
		return
	}
	ok := true
	for _, c := range in.clauses {
		ok = s.AddClause(c...) && ok
	}
	s.SetTheory(&checkedTheory{t: t, g: g})
	defer func() {
		total.Conflicts += g.Stats.Conflicts
		total.Propagations += g.Stats.Propagations
		total.Reorders += g.Stats.Reorders
	}()
	// A first solve, then a few more under random assumptions (incremental use).
	for round := range 4 {
		var assumptions []sat.Lit
		if round > 0 {
			// Repeated and contradictory assumptions are allowed (they once crashed
			// the solver's LBD counting).
			for range 1 + rng.IntN(3) {
				assumptions = append(assumptions, randLit(rng, in.vars))
			}
		}
		want := in.bruteSat(assumptions)
		st := sat.Unsat
		if ok {
			st = s.Solve(assumptions...)
		}
		if (st == sat.Sat) != want || st == sat.Unknown {
			t.Fatalf("propagation=%v assumptions %v: solver %v, brute force SAT=%v: %+v", propagation, assumptions, st, want, in)
		}
		if st == sat.Sat {
			if err := checkModel(in, s, g, assumptions); err != nil {
				t.Fatalf("propagation=%v: bad model: %v: %+v", propagation, err, in)
			}
		}
	}
}

// TestRandomAgainstBruteForce cross-checks the solver with the theory against
// brute force on thousands of small random instances, with and without
// theory propagation (and with the look-ahead off).
func TestRandomAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var sats, unsats int
	var withProp, withoutProp Stats
	for range 10000 {
		in := randInstance(rng)
		solveInstance(t, in, true, rng, &withProp)
		solveInstance(t, in, false, rng, &withoutProp)
		if in.bruteSat(nil) {
			sats++
		} else {
			unsats++
		}
	}
	if sats < 400 || unsats < 400 {
		t.Fatalf("unbalanced instances: %d SAT, %d UNSAT", sats, unsats)
	}
	if withProp.Propagations == 0 || withProp.Conflicts == 0 || withoutProp.Conflicts == 0 || withProp.Reorders == 0 {
		t.Fatalf("theory barely exercised: with propagation %+v, without %+v", withProp, withoutProp)
	}
	t.Logf("%d SAT, %d UNSAT; theory with propagation %+v, without %+v", sats, unsats, withProp, withoutProp)
}

// TestTriangle checks a propagation and a conflict on a 3-cycle a: 0->1,
// b: 1->2, c: 2->0 by hand.
func TestTriangle(t *testing.T) {
	build := func(units ...sat.Lit) (*sat.Solver, *Graph) {
		s := sat.New()
		a, b, c := sat.PosLit(s.NewVar()), sat.PosLit(s.NewVar()), sat.PosLit(s.NewVar())
		g := NewGraph(3)
		g.AddEdge(0, 1, []sat.Lit{a})
		g.AddEdge(1, 2, []sat.Lit{b, b})
		g.AddEdge(2, 0, []sat.Lit{c})
		if _, _, guard := g.Edge(1); len(guard) != 1 {
			t.Fatalf("guard not deduplicated: %v", guard)
		}
		if g.Init() != nil {
			t.Fatal("Init found a cycle")
		}
		for _, u := range units {
			s.AddClause(u)
		}
		s.SetTheory(&checkedTheory{t: t, g: g})
		return s, g
	}
	a, b, c := sat.PosLit(0), sat.PosLit(1), sat.PosLit(2)

	s, g := build(a, b)
	if st := s.Solve(); st != sat.Sat || s.ModelValue(c) {
		t.Fatalf("a, b: got %v with c=%v, want SAT with c false", st, s.ModelValue(c))
	}
	if g.Stats.Propagations != 1 || g.Stats.Conflicts != 0 {
		t.Fatalf("a, b: stats %+v, want one propagation and no conflict", g.Stats)
	}
	if r := g.Explain(c.Not()); len(r) != 3 || r[0] != c.Not() || !slices.Contains(r, a.Not()) || !slices.Contains(r, b.Not()) {
		t.Fatalf("reason of -c: %v, want [-c -a -b]", r)
	}
	if st := s.Solve(c); st != sat.Unsat {
		t.Fatalf("a, b, assuming c: got %v, want UNSAT", st)
	}

	s, g = build(a, b, c)
	if st := s.Solve(); st != sat.Unsat {
		t.Fatalf("a, b, c: got %v, want UNSAT", st)
	}
	if cyc := g.LastCycle(); len(cyc) != 3 {
		t.Fatalf("LastCycle %v, want the 3 edges", cyc)
	}
}

// TestGuardOutsideSolver checks that guards over variables the solver does
// not have are treated as never true instead of crashing.
func TestGuardOutsideSolver(t *testing.T) {
	s := sat.New()
	a := sat.PosLit(s.NewVar())
	g := NewGraph(2)
	g.AddEdge(0, 1, []sat.Lit{a})
	g.AddEdge(1, 0, []sat.Lit{sat.PosLit(7)})
	if g.Init() != nil {
		t.Fatal("Init found a cycle")
	}
	s.AddClause(a)
	s.SetTheory(g)
	if st := s.Solve(); st != sat.Sat {
		t.Fatalf("got %v, want SAT", st)
	}
}

// TestLookAheadForwardBounded: enabling u->v, where v has a huge fan-out and a
// guarded edge v->y whose head y reaches u by a 40-edge chain, implies the
// guard false (the backward part finds y far away), while the forward part
// stops at ForwardLimit nodes and the backward one as soon as y is found.
func TestLookAheadForwardBounded(t *testing.T) {
	const fan, chain = 1000, 40
	s := sat.New()
	a, b := sat.PosLit(s.NewVar()), sat.PosLit(s.NewVar())
	u, v := 0, 1
	g := NewGraph(2 + fan + chain)
	g.AddEdge(u, v, []sat.Lit{a})
	for i := range fan {
		g.AddEdge(v, 2+i, nil)
	}
	// Chain y = c[chain-1] -> ... -> c[0] -> u.
	c := func(i int) int { return 2 + fan + i }
	g.AddEdge(c(0), u, nil)
	for i := 1; i < chain; i++ {
		g.AddEdge(c(i), c(i-1), nil)
	}
	y := c(chain - 1)
	g.AddEdge(v, y, []sat.Lit{b})
	if g.Init() != nil {
		t.Fatal("Init found a cycle")
	}
	s.AddClause(a)
	s.SetTheory(&checkedTheory{t: t, g: g})
	if st := s.Solve(); st != sat.Sat || s.ModelValue(b) {
		t.Fatalf("got %v with b=%v, want SAT with b false", st, s.ModelValue(b))
	}
	if g.Stats.LookAhead != 1 {
		t.Fatalf("look-ahead implied %d literals, want 1 (stats %+v)", g.Stats.LookAhead, g.Stats)
	}
	if r := g.Explain(b.Not()); len(r) != 2 || r[0] != b.Not() || r[1] != a.Not() {
		t.Fatalf("reason of -b: %v, want [-b -a]", r)
	}
	// Forward: at most ForwardLimit nodes of the fan; backward: u and the chain.
	if max := int64(g.ForwardLimit + 1 + chain); g.Stats.LookAheadNodes > max {
		t.Fatalf("look-ahead visited %d nodes, want at most %d", g.Stats.LookAheadNodes, max)
	}
}

// TestBulkFilterMatchesReachability: the closure that answers a first propagation's
// pending edges at once keeps exactly the edges whose head reaches their tail over
// the enabled edges, with the columns split over several blocks too.
func TestBulkFilterMatchesReachability(t *testing.T) {
	defer func(words int) { bulkMaxWords = words }(bulkMaxWords)
	rng := rand.New(rand.NewPCG(3, 5))
	var kept, dropped, skipped int
	for round := range 200 {
		nodes := 2 + rng.IntN(300)
		g := NewGraph(nodes)
		// Known edges from a random permutation's order (so no cycle), then
		// single-literal guarded edges in any direction.
		perm := rng.Perm(nodes)
		for range rng.IntN(3 * nodes) {
			a, b := rng.IntN(nodes), rng.IntN(nodes)
			if perm[a] < perm[b] {
				g.AddEdge(a, b, nil)
			}
		}
		var guarded []int32
		for i := range 1 + rng.IntN(4*nodes) {
			e := g.AddEdge(rng.IntN(nodes), rng.IntN(nodes), []sat.Lit{sat.PosLit(sat.Var(i))})
			guarded = append(guarded, int32(e))
		}
		if g.Init() != nil {
			t.Fatal("known edges of a permutation's order closed a cycle")
		}
		g.pending = append(g.pending[:0], guarded...)
		bulkMaxWords = []int{1 << 22, nodes, 2 * nodes}[round%3] // one block, or one or two words per block
		if !g.filterPendingBulk() {
			skipped++
			continue
		}
		got := make(map[int32]bool)
		for _, e := range g.pending {
			got[e] = true
		}
		for _, e := range guarded {
			u, v := g.from[e], g.to[e]
			want := u == v || bfsReaches(g, v, u)
			if got[e] != want {
				t.Fatalf("round %d: edge %d (%d->%d) kept=%v, head reaches tail=%v", round, e, u, v, got[e], want)
			}
			if want {
				kept++
			} else {
				dropped++
			}
		}
	}
	if kept == 0 || dropped == 0 || skipped > 20 {
		t.Fatalf("one-sided instances: %d kept, %d dropped, closure skipped in %d of 200", kept, dropped, skipped)
	}
}

// bfsReaches: does from reach to over g's enabled edges (no bounds)?
func bfsReaches(g *Graph, from, to int32) bool {
	seen := map[int32]bool{from: true}
	q := []int32{from}
	for len(q) > 0 {
		x := q[0]
		q = q[1:]
		for _, y := range g.outTo[x] {
			if y == to {
				return true
			}
			if !seen[y] {
				seen[y] = true
				q = append(q, y)
			}
		}
	}
	return false
}

// TestFirstPropagationHonoursDeadline: a first propagation over many pending edges
// stops at the solver's deadline (here already past) instead of searching them all,
// and Solve says Unknown rather than finishing the search.
func TestFirstPropagationHonoursDeadline(t *testing.T) {
	const nodes = 1000
	s := sat.New()
	g := NewGraph(nodes)
	for i := range nodes - 1 {
		g.AddEdge(i, i+1, nil)
	}
	for i := range nodes - 1 {
		// i+1 -> i closes a cycle with the chain: each implies its guard false.
		g.AddEdge(i+1, i, []sat.Lit{sat.PosLit(s.NewVar())})
	}
	if g.Init() != nil {
		t.Fatal("a chain has no cycle")
	}
	s.SetTheory(g)
	s.SetDeadline(time.Now().Add(-time.Second))
	if st := s.Solve(); st != sat.Unknown {
		t.Fatalf("Solve past its deadline: %v, want Unknown", st)
	}
	if g.Stats.Searches >= nodes/2 {
		t.Fatalf("%d of %d pending edges searched past the deadline", g.Stats.Searches, nodes-1)
	}
}

// TestTrailProcessingHonoursDeadline: a first propagation whose trail enables
// thousands of edges (here unit clauses make every guard true) checks the solver's
// deadline as it goes, and stops with Unknown, not after enabling them all.
func TestTrailProcessingHonoursDeadline(t *testing.T) {
	const nodes = 4000
	s := sat.New()
	g := NewGraph(nodes)
	g.Propagation = false
	for i := range nodes - 1 {
		v := s.NewVar()
		// Reversed against the initial order's direction half the time: inserts reorder.
		if i%2 == 0 {
			g.AddEdge(i, i+1, []sat.Lit{sat.PosLit(v)})
		} else {
			g.AddEdge(i+1, i, []sat.Lit{sat.PosLit(v)})
		}
		s.AddClause(sat.PosLit(v))
	}
	if g.Init() != nil {
		t.Fatal("no edge is enabled yet")
	}
	s.SetTheory(g)
	s.SetDeadline(time.Now().Add(-time.Second))
	if st := s.Solve(); st != sat.Unknown {
		t.Fatalf("Solve past its deadline: %v, want Unknown", st)
	}
	if g.Stats.Enabled >= nodes/2 {
		t.Fatalf("%d of %d edges enabled past the deadline", g.Stats.Enabled, nodes-1)
	}
}

// TestInitHonoursStop: Init asks Stop as it inserts the known edges and stops there,
// marking the graph Stopped.
func TestInitHonoursStop(t *testing.T) {
	const nodes = 3 * stopEvery
	g := NewGraph(nodes)
	for i := range nodes - 1 {
		g.AddEdge(i+1, i, nil)
	}
	asked := 0
	g.Stop = func() bool { asked++; return asked == 2 }
	if g.Init() != nil {
		t.Fatal("a chain has no cycle")
	}
	if !g.Stopped || asked != 2 || g.Stats.Enabled >= nodes-1 {
		t.Fatalf("stopped %v after %d asks, %d of %d edges enabled; want stopped at the second ask", g.Stopped, asked, g.Stats.Enabled, nodes-1)
	}
}
