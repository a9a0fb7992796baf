package check

import (
	"fmt"
	"strings"

	"doppel/encode"
	"doppel/sat"
	"doppel/theory"
)

// Consistent view and the models above it that allow G2 (DESIGN.md, "No cycle with
// exactly one anti-dependency") forbid cycles of ww and wr edges and cycles with exactly
// one rw edge, which is not the acyclicity of an edge set. The solver keeps ww ∪ wr
// acyclic (read committed's problem); each attribution it proposes is searched for a
// G-single, and one found is ruled out with its guards ("not all of these choices") before
// the solver resumes. There are finitely many cycles, so the loop ends.

// maxSingleRounds bounds how many G-single cycles one decision rules out before it gives
// up (unknown): each round is a solver call and a search of the attribution's graph.
const maxSingleRounds = 100000

// noRW keeps every edge but the anti-dependencies.
func noRW(e *encode.Edge) bool { return e.Kind != encode.RW }

// singleCycle returns a cycle with exactly one rw edge among the edges where holds, as
// edge ids of v (the rw edge first), or nil.
func singleCycle(v *view, holds func(e *encode.Edge) bool, scratch *bfsScratch) []int32 {
	g := newGraph(v.nodes, v.edges, holds)
	comps := g.sccs(func(int32) bool { return true }, holds)
	inComp := make([]bool, g.n)
	back := func(e *encode.Edge) bool { return noRW(e) && holds(e) }
	for _, comp := range comps {
		for _, x := range comp {
			inComp[x] = true
		}
		in := func(x int32) bool { return inComp[x] }
		for _, x := range comp {
			for _, id := range g.ids[g.start[x]:g.start[x+1]] {
				e := &g.edges[id]
				if e.Kind != encode.RW || !inComp[e.To] {
					continue
				}
				if p := g.path(e.To, e.From, in, back, scratch); p != nil {
					return append([]int32{id}, p...)
				}
			}
		}
		for _, x := range comp {
			inComp[x] = false
		}
	}
	return nil
}

// solveSingle decides a G-single model on v, the per-read graph with its
// anti-dependencies.
func (c *checker) solveSingle(m string) (Validity, string) {
	v := c.singleView(m)
	if v == nil {
		return Unknown, c.budget.message(m)
	}
	s := c.newSolver(v, false)
	if s == nil {
		return Unknown, c.budget.message(m)
	}
	defer c.bound(s)()
	g := theory.NewGraph(v.nodes)
	o := c.opts.Solver
	g.Propagation = !o.NoTheoryPropagation
	// The user's solver choices hold here as in the other models' searches.
	so := sat.DefaultOptions()
	if o.Heuristic != "" {
		so.Heuristic = o.Heuristic
	}
	if o.Restarts != "" {
		so.Restarts = o.Restarts
	}
	so.ChronoLevels = o.ChronoLevels
	s.SetOptions(so)
	if so.Heuristic == "static" {
		s.SetStaticOrder(c.timeOrder(v))
	}
	defer func() { c.res.Stats.TheoryProps += g.Stats.Propagations }()
	guard := make([]sat.Lit, 0, 4)
	for i := range v.edges {
		e := &v.edges[i]
		if !noRW(e) {
			continue
		}
		guard = guard[:0]
		for _, l := range c.guard(e) {
			guard = append(guard, sat.Lit(l))
		}
		g.AddEdge(int(e.From), int(e.To), guard)
	}
	g.Stop = c.budget.stop
	if g.Init() != nil {
		// ww ∪ wr is cyclic in every attribution: the known-cycle search reported it.
		return Invalid, ""
	}
	if g.Stopped {
		return Unknown, c.budget.message(m)
	}
	setTheory(s, g)
	var cases []Case
	var parts []string
	var first []int32
	var firstChoices string
	var scratch bfsScratch
	met := 0 // cycles ruled out
	for round := 0; ; round++ {
		if round == maxSingleRounds {
			return Unknown, fmt.Sprintf("%s: more than %d cycles with one anti-dependency were ruled out one by one without a verdict", m, maxSingleRounds)
		}
		n, ok := c.budget.limit(0)
		if !ok {
			return Unknown, c.budget.message(m)
		}
		status := c.solveCounted(s, n)
		switch status {
		case sat.Unknown:
			return Unknown, c.budget.message(m)
		case sat.Unsat:
			if first == nil {
				// No attribution keeps ww ∪ wr acyclic: read committed's proof by cases.
				return Invalid, c.explainUnsat(m, c.dataView(v), nil)
			}
			c.addSingleCases(m, v, first, firstChoices, cases, parts, met)
			return Invalid, ""
		}
		holds := func(e *encode.Edge) bool {
			if e.Chain {
				return false // shortcuts only (encode.Edge.Chain)
			}
			for _, l := range c.guard(e) {
				if !s.ModelValue(sat.Lit(l)) {
					return false
				}
			}
			return true
		}
		cycle := singleCycle(v, holds, &scratch)
		if cycle == nil {
			return Valid, ""
		}
		var block []sat.Lit
		var choices []string
		cs := Case{N: len(cases) + 1}
		seen := map[encode.Lit]bool{}
		ss := c.steps(v, cycle)
		for _, st := range ss {
			cs.Steps = append(cs.Steps, c.stepOf(st, ""))
		}
		// The guards of every edge of the cycle, hub edges included (a step shows
		// only some of them): the clause must rule out only attributions with the cycle.
		for _, id := range cycle {
			for _, l := range c.guard(&v.edges[id]) {
				if !seen[l] {
					seen[l] = true
					block = append(block, sat.Lit(l^1))
					if len(cases) < maxShownAttributions {
						choices = append(choices, c.describeLit(v, l))
						cs.Choices = append(cs.Choices, c.choiceOf(v, l))
					}
				}
			}
		}
		c.withImplied(&cs, ss)
		if first == nil {
			first, firstChoices = cycle, strings.Join(choices, " and ")
		}
		met++
		if len(cases) < maxShownAttributions {
			cases = append(cases, cs)
			parts = append(parts, caseText(cs))
		}
		if len(block) == 0 || !s.AddClause(block...) {
			// A cycle in every attribution (the known-cycle search bounds its G-single
			// tries), or none left: not valid.
			c.addSingleCases(m, v, first, firstChoices, cases, parts, met)
			return Invalid, ""
		}
	}
}

// singleView is model m's graph on the per-read problem: every data edge, anti-dependencies
// included, and an orientation variable per pair of writers of a key that may both be
// unobserved. The problem's hub puts them all after the trace but leaves their order
// open, which acyclicity may leave to a topological sort; a cycle with exactly one rw
// edge may go through that order, so it is chosen (acyclicity of ww keeps it a total
// order).
func (c *checker) singleView(m string) *view {
	v := c.serialView(m)
	v.edges = v.edges[:len(v.edges):len(v.edges)] // appending copies: c.edges stays
	txn := func(t int32) int32 { return t }
	if !c.orientUnobserved(v, txn, txn) {
		return nil
	}
	return v
}

// dataView is v without its anti-dependencies: read committed's graph.
func (c *checker) dataView(v *view) *view {
	edges := make([]encode.Edge, 0, len(v.edges))
	for _, e := range v.edges {
		if noRW(&e) {
			edges = append(edges, e)
		}
	}
	return &view{nodes: v.nodes, edges: edges, hubFrom: v.hubFrom, extraVars: v.extraVars}
}

// addSingleCases reports the G-single cycles the search ruled out as a proof by cases:
// every attribution closes one of them, or a cycle of ww and wr edges (which the
// solver's acyclicity theory excluded).
func (c *checker) addSingleCases(m string, v *view, first []int32, firstChoices string, cases []Case, parts []string, met int) {
	a := Anomaly{Type: c.classify(v, first), Model: m}
	cond := ""
	if firstChoices != "" {
		cond = fmt.Sprintf("In case 1 (if %s): ", firstChoices)
	}
	seen := map[int32]bool{}
	for _, st := range c.steps(v, first) {
		a.Steps = append(a.Steps, c.stepOf(st, cond))
		if !seen[st.from] {
			seen[st.from] = true
			a.Txns = append(a.Txns, c.txnRef(st.from))
		}
	}
	end := fmt.Sprintf("Why the cases cover every attribution: after each case its choices were forbidden together, and then no attribution was left whose ww and wr edges are acyclic (the solver proved it); %d cases met in all, the first %d shown. Choices marked \"fixed\" were never forbidden: %s", met, len(cases), impliedWhy)
	if met == 1 && firstChoices == "" {
		end = "This cycle needs no choice: it is in every attribution."
	}
	a.Cases, a.CasesCover = cases, end
	a.Explanation = fmt.Sprintf("Duplicate values leave several ways to attribute them to appends; under %s each has a cycle with exactly one anti-dependency, or one of ww and wr edges. Positions count from 1.\n", m) +
		strings.Join(parts, "\n") + "\n" + end
	c.addAnomaly(a)
}
