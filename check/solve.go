package check

import (
	"fmt"
	"strings"
	"time"

	"doppel/encode"
	"doppel/sat"
	"doppel/theory"
)

// maxShownAttributions bounds how many attributions an UNSAT explanation walks through.
const maxShownAttributions = 4

// edgeFilter returns which edges model m's graph has.
func edgeFilter(m string) func(e *encode.Edge) bool {
	spec := models[m]
	return func(e *encode.Edge) bool {
		switch e.Kind {
		case encode.Process:
			return spec.process
		case encode.Realtime:
			return spec.realtime
		}
		return true
	}
}

// newSolver loads the problem's clauses into a fresh solver, with the view's extra
// variables.
func (c *checker) newSolver(v *view) *sat.Solver {
	p := c.p
	s := sat.New()
	for i := int32(0); i < p.NumVars+v.extraVars; i++ {
		s.NewVar()
	}
	lits := make([]sat.Lit, 0, 8)
	for i := range p.ClauseEnd {
		lits = lits[:0]
		for _, l := range p.Clause(i) {
			lits = append(lits, sat.Lit(l))
		}
		s.AddClause(lits...)
	}
	return s
}

// solve decides a model on view v when some keys leave choices: CDCL over the
// segmentation choices with the acyclicity theory over the view's edges.
func (c *checker) solve(m string, v *view) (Validity, string) {
	t0 := time.Now()
	defer func() { c.res.Stats.SolveSeconds += time.Since(t0).Seconds() }()
	guess, ok := c.witness(v)
	if ok {
		c.res.Stats.Witnessed++
		return Valid, ""
	}
	s := c.newSolver(v)
	for i, val := range guess {
		s.SetPhase(sat.Var(i), val)
	}
	g := theory.NewGraph(v.nodes)
	g.Propagation = !c.opts.Solver.NoTheoryPropagation
	guard := make([]sat.Lit, 0, 4)
	for i := range v.edges {
		e := &v.edges[i]
		guard = guard[:0]
		for _, l := range c.guard(e) {
			guard = append(guard, sat.Lit(l))
		}
		g.AddEdge(int(e.From), int(e.To), guard)
	}
	if cyc := g.Init(); cyc != nil {
		// knownCycles has reported it already.
		return Invalid, ""
	}
	s.SetTheory(g)
	if c.opts.MaxConflicts > 0 {
		s.SetConflictLimit(c.opts.MaxConflicts)
	}
	if c.opts.Timeout > 0 {
		s.SetDeadline(c.start.Add(c.opts.Timeout))
	}
	status := s.Solve()
	st := s.Stats()
	c.res.Stats.Decisions += st.Decisions
	c.res.Stats.Conflicts += st.Conflicts
	c.res.Stats.Propagations += st.Propagations
	c.res.Stats.TheoryProps += g.Stats.Propagations
	c.res.Stats.Learned += st.Learned
	switch status {
	case sat.Sat:
		return Valid, ""
	case sat.Unsat:
		c.explainUnsat(m, v)
		return Invalid, ""
	}
	return Unknown, fmt.Sprintf("%s: the solver reached its limit after %d conflicts", m, st.Conflicts)
}

// explainUnsat shows, for a few ways of attributing the duplicated values (solutions of
// the Boolean part alone), the cycle each closes.
func (c *checker) explainUnsat(m string, v *view) {
	p := c.p
	s := c.newSolver(v)
	var parts []string
	var first []int32
	typ := ""
	var scratch bfsScratch
	for n := 0; n < maxShownAttributions; n++ {
		if s.Solve() != sat.Sat {
			break
		}
		holds := func(e *encode.Edge) bool {
			for _, l := range c.guard(e) {
				if !s.ModelValue(sat.Lit(l)) {
					return false
				}
			}
			return true
		}
		g := newGraph(v.nodes, v.edges, holds)
		comps := g.sccs(func(int32) bool { return true }, holds)
		if len(comps) == 0 {
			break // cannot happen when the full problem is UNSAT
		}
		inComp := make([]bool, g.n)
		for _, v := range comps[0] {
			inComp[v] = true
		}
		cycle := g.path(comps[0][0], comps[0][0], func(v int32) bool { return inComp[v] }, holds, &scratch)
		if first == nil {
			first, typ = cycle, c.classify(v, cycle)
		}
		var why []string
		for _, st := range c.steps(v, cycle) {
			why = append(why, c.explain(st))
		}
		parts = append(parts, fmt.Sprintf("Attribution %d (%s): %s.", n+1, c.attribution(s), strings.Join(why, "; ")))
		// Block this attribution.
		var block []sat.Lit
		for k := range p.SegVar {
			for _, v := range p.SegVar[k] {
				if s.ModelValue(sat.PosLit(sat.Var(v))) {
					block = append(block, sat.NegLit(sat.Var(v)))
				}
			}
		}
		for _, v := range p.CommitVar {
			if v >= 0 {
				block = append(block, sat.Lit(encode.Pos(v)^boolBit(s.ModelValue(sat.PosLit(sat.Var(v))))))
			}
		}
		if len(block) == 0 || !s.AddClause(block...) {
			break
		}
	}
	if first == nil {
		return
	}
	a := Anomaly{Type: typ}
	seen := map[int32]bool{}
	for _, st := range c.steps(v, first) {
		if !seen[st.from] {
			seen[st.from] = true
			a.Txns = append(a.Txns, c.txnRef(st.from))
		}
		a.Steps = append(a.Steps, Step{From: int(st.from), To: int(st.to), Kind: st.kind.String(), Why: c.explain(st)})
	}
	a.Explanation = fmt.Sprintf("Duplicate values leave several ways to attribute them to appends, and under %s every one closes a cycle. ", m) +
		strings.Join(parts, " ")
	c.res.Anomalies = append(c.res.Anomalies, a)
	c.found[typ] = true
}

func boolBit(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// attribution describes a solution's blocks on the open keys: "key 1 = [1 2 1]: T1 [1] | T2 [2 1]".
func (c *checker) attribution(s *sat.Solver) string {
	p, h := c.p, c.h
	var keys []string
	for k := range p.SegVar {
		if len(p.SegVar[k]) == 0 {
			continue
		}
		var blocks []string
		for i, v := range p.SegVar[k] {
			if s.ModelValue(sat.PosLit(sat.Var(v))) {
				cand := p.Plans[k].Cands[i]
				blocks = append(blocks, fmt.Sprintf("%s %s", encode.TxnName(h, p.In.Writers[cand.Writer].Txn),
					encode.ListString(h, p.In.Vals(cand.Writer))))
			}
		}
		keys = append(keys, fmt.Sprintf("key %s = %s: %s", h.Keys[k], encode.ListString(h, p.In.Keys[k].Trace), strings.Join(blocks, " | ")))
	}
	return strings.Join(keys, "; ")
}
