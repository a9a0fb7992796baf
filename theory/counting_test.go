package theory

import (
	"math/rand/v2"
	"testing"

	"doppel/sat"
)

// countingTiling draws one or two keys' traces over few values and writers appending
// one or two of them (often the same, as on hot keys), with a candidate wherever a
// writer's values match the trace (overruns included), the values per cell and the
// keys' first cells for the counting theory. A writer with one candidate has no group
// half the time, as the encoding leaves it.
func countingTiling(rng *rand.Rand) (*Tiling, int) {
	t := &Tiling{}
	for range 1 + rng.IntN(2) {
		n := int32(1 + rng.IntN(6))
		values := 1 + rng.IntN(3)
		trace := make([]int32, n)
		for i := range trace {
			trace[i] = int32(rng.IntN(values))
		}
		t.KeyStart = append(t.KeyStart, t.Cells)
		t.CellVal = append(t.CellVal, trace...)
		writers := 1 + rng.IntN(6)
		for w := range writers {
			seq := make([]int32, 1+rng.IntN(2))
			for i := range seq {
				seq[i] = int32(rng.IntN(values))
			}
			first := len(t.Var)
			addCandidates(t, trace, seq, t.Groups+int32(w))
			if len(t.Var) == first+1 && rng.IntN(2) == 0 {
				t.Group[first] = -1
			}
		}
		t.Cells += n
		t.Groups += int32(writers)
	}
	return t, len(t.Var)
}

// tilings lists every choice of candidates that tiles (as bit sets).
func tilings(t *Tiling, vars int) []uint32 {
	var out []uint32
	vals := make([]bool, vars)
	for m := uint32(0); m < 1<<vars; m++ {
		for v := range vals {
			vals[v] = m&(1<<v) != 0
		}
		if t.Satisfied(vals) {
			out = append(out, m)
		}
	}
	return out
}

// checkedCounting wraps the counting theory and fails the test on any conflict or
// reason that some tiling violates (every clause it gives must hold in all tilings).
type checkedCounting struct {
	*Counting
	t                *testing.T
	all              []uint32
	confls, explains int
}

func (c *checkedCounting) valid(what string, clause []sat.Lit) {
	mustHoldInAll(c.t, what, clause, c.all)
}

// satisfies reports whether the assignment m (bit v: variable v) satisfies clause.
func satisfies(m uint32, clause []sat.Lit) bool {
	for _, l := range clause {
		if (m&(1<<l.Var()) != 0) != l.IsNeg() {
			return true
		}
	}
	return false
}

// mustHoldInAll fails the test unless clause holds in every tiling of all: what a
// theory says (a conflict, a reason) must hold whatever the search decided.
func mustHoldInAll(t *testing.T, what string, clause []sat.Lit, all []uint32) {
	t.Helper()
	for _, m := range all {
		if !satisfies(m, clause) {
			t.Fatalf("%s %v is violated by the tiling %b", what, clause, m)
		}
	}
}

func (c *checkedCounting) Propagate(s *sat.Solver) []sat.Lit {
	before := len(s.Trail())
	confl := c.Counting.Propagate(s)
	// Every literal it implied: its reason, at once (the solver asks only for some).
	for _, l := range s.Trail()[before:] {
		r := c.Counting.Explain(l)
		c.explains++
		c.valid("reason", r)
		for _, q := range r {
			if q != l && s.Value(q) != sat.LFalse {
				c.t.Fatalf("reason %v of %v: %v is not false", r, l, q)
			}
		}
	}
	if confl != nil {
		c.confls++
		c.valid("conflict", confl)
	}
	return confl
}

func (c *checkedCounting) Explain(l sat.Lit) []sat.Lit {
	r := c.Counting.Explain(l)
	c.explains++
	c.valid("reason", r)
	return r
}

// TestCountingAgainstBruteForce: every conflict and every reason of the counting
// theory holds in all tilings (so its implications are sound), and the solver with it
// finds a tiling exactly when one exists. The corpus must make it conflict and imply.
func TestCountingAgainstBruteForce(t *testing.T) {
	var found, none, confls, explains, props int
	for seed := range 30000 {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		til, vars := countingTiling(rng)
		if vars > 14 || vars == 0 {
			continue
		}
		// A cell no candidate covers has no tiling: the encoding rules such keys out
		// before the theories see them (they are not open).
		if !coversEveryCell(til) {
			continue
		}
		all := tilings(til, vars)
		s := sat.New()
		for range vars {
			s.NewVar()
		}
		// A few random unit and binary clauses, so that the search meets the counters
		// in many partial assignments; the theory's clauses must hold in every tiling,
		// the solver's answer in those that satisfy them.
		all = addRandomClauses(s, rng, vars, 3, 2, all)
		cnt := NewCounting(til, vars)
		ck := &checkedCounting{Counting: cnt, t: t, all: tilings(til, vars)}
		s.SetTheory(NewBoth(NewSegments(til, vars, nil), ck, vars))
		if solveAgainstBruteForce(t, s, seed, til, all) {
			found++
		} else {
			none++
		}
		confls += ck.confls
		explains += ck.explains
		props += int(cnt.Stats.Propagations)
	}
	if found == 0 || none == 0 || confls == 0 || explains == 0 || props == 0 {
		t.Fatalf("degenerate corpus: %d with a tiling, %d without, %d counting conflicts, %d reasons, %d implications", found, none, confls, explains, props)
	}
	t.Logf("%d instances with a tiling, %d without; counting: %d conflicts, %d implications, %d reasons asked", found, none, confls, props, explains)
}

// addRandomClauses adds fewer than most random unit and binary clauses over
// variables 0..vars-1 to s, each literal negative with probability 1-1/odds, and
// returns the tilings of all that satisfy them.
func addRandomClauses(s *sat.Solver, rng *rand.Rand, vars, most, odds int, all []uint32) []uint32 {
	for range rng.IntN(most) {
		var c []sat.Lit
		for range 1 + rng.IntN(2) {
			l := sat.PosLit(sat.Var(rng.IntN(vars)))
			if rng.IntN(odds) != 0 {
				l = l.Not()
			}
			c = append(c, l)
		}
		s.AddClause(c...)
		kept := all[:0:0]
		for _, m := range all {
			if satisfies(m, c) {
				kept = append(kept, m)
			}
		}
		all = kept
	}
	return all
}

// solveAgainstBruteForce solves s (VSIDS, or the static order on odd seeds), fails the
// test unless it finds a tiling exactly when solutions holds one and its model is a
// tiling of til, and reports whether it found one.
func solveAgainstBruteForce(t *testing.T, s *sat.Solver, seed int, til *Tiling, solutions []uint32) bool {
	t.Helper()
	so := sat.DefaultOptions()
	if seed%2 == 1 {
		so.Heuristic = "static"
	}
	s.SetOptions(so)
	status := s.Solve()
	if want := len(solutions) > 0; (status == sat.Sat) != want {
		t.Fatalf("seed %d: solver %v, brute force %v; tiling %+v", seed, status, want, til)
	}
	if status == sat.Sat && !til.Satisfied(s.Model()) {
		t.Fatalf("seed %d: the model %v is no tiling of %+v", seed, s.Model(), til)
	}
	return status == sat.Sat
}

// TestCountingPigeonhole: four positions of one value and three one-append writers of
// it, each able to start anywhere: the counting theory refutes it before any decision,
// where the tiling alone must search.
func TestCountingPigeonhole(t *testing.T) {
	til := &Tiling{Cells: 4, Groups: 3, CellVal: []int32{7, 7, 7, 7}, KeyStart: []int32{0}}
	for w := range int32(3) {
		for p := range int32(4) {
			til.Var = append(til.Var, int32(len(til.Var)))
			til.Cell0 = append(til.Cell0, p)
			til.Cell1 = append(til.Cell1, p+1)
			til.Group = append(til.Group, w)
		}
	}
	vars := len(til.Var)
	solve := func(counting bool) (sat.Status, sat.Stats) {
		s := sat.New()
		for range vars {
			s.NewVar()
		}
		if counting {
			s.SetTheory(NewBoth(NewSegments(til, vars, nil), NewCounting(til, vars), vars))
		} else {
			s.SetTheory(NewSegments(til, vars, nil))
		}
		st := s.Solve()
		return st, s.Stats()
	}
	st, stats := solve(true)
	if st != sat.Unsat || stats.Decisions != 0 {
		t.Fatalf("with counting: %v after %d decisions, want UNSAT before any", st, stats.Decisions)
	}
	if st, stats = solve(false); st != sat.Unsat || stats.Decisions == 0 {
		t.Fatalf("tiling alone: %v after %d decisions, want UNSAT after some search", st, stats.Decisions)
	}
}

// TestCountingForcesFullSupply: cells [1 1 1], writer A appending [1 1] (at 0, at 1,
// or at 2 cut off by the end, supplying one 1) and writer B appending [1] (at 0, 1 or
// 2). The demand 3 equals the supply 2+1, so A must supply both its 1s: its cut-off
// candidate is forced out before any decision.
func TestCountingForcesFullSupply(t *testing.T) {
	til := &Tiling{Cells: 3, Groups: 2, CellVal: []int32{1, 1, 1}, KeyStart: []int32{0},
		Var: []int32{0, 1, 2, 3, 4, 5}, Cell0: []int32{0, 1, 2, 0, 1, 2}, Cell1: []int32{2, 3, 3, 1, 2, 3}, Group: []int32{0, 0, 0, 1, 1, 1}}
	c := NewCounting(til, 6)
	s := sat.New()
	for range 6 {
		s.NewVar()
	}
	s.SetTheory(NewBoth(NewSegments(til, 6, nil), c, 6))
	s.SetConflictLimit(1)
	if s.Solve() != sat.Sat {
		t.Fatal("want a tiling")
	}
	if c.Stats.Propagations == 0 {
		t.Fatal("the cut-off candidate of A was not forced out")
	}
	if s.ModelValue(sat.PosLit(2)) {
		t.Fatal("the model uses A's cut-off block")
	}
}
