package theory

import (
	"flag"
	"math/rand/v2"
	"testing"

	"doppel/sat"
)

// checkedMatching wraps the matching theory and fails the test on any conflict that
// some tiling violates (every clause it gives must hold in all tilings) or whose
// literals are not all false.
type checkedMatching struct {
	*Matching
	t      *testing.T
	all    []uint32
	confls int
}

func (c *checkedMatching) Propagate(s *sat.Solver) []sat.Lit {
	confl := c.Matching.Propagate(s)
	if confl != nil {
		c.confls++
		mustHoldInAll(c.t, "conflict", confl, c.all)
		for _, l := range confl {
			if s.Value(l) != sat.LFalse {
				c.t.Fatalf("conflict %v: %v is not false", confl, l)
			}
		}
	}
	return confl
}

var matchingSeeds = flag.Int("matching-seeds", 30000, "random tilings TestMatchingAgainstBruteForce checks")

// TestMatchingAgainstBruteForce: every conflict of the matching theory holds in all
// tilings, and the solver with it (beside the tiling, with and without counting) finds
// a tiling exactly when one exists. The corpus must make it conflict.
func TestMatchingAgainstBruteForce(t *testing.T) {
	var found, none, confls int
	for seed := range *matchingSeeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		til, vars := countingTiling(rng)
		if vars > 14 || vars == 0 || !coversEveryCell(til) {
			continue
		}
		all := tilings(til, vars)
		s := sat.New()
		for range vars {
			s.NewVar()
		}
		// Random unit and binary clauses, mostly negative: many partial assignments,
		// and cells whose candidates are cut down to a few writers.
		all = addRandomClauses(s, rng, vars, 4, 3, all)
		mt := NewMatching(til, vars)
		ck := &checkedMatching{Matching: mt, t: t, all: tilings(til, vars)}
		var th sat.Theory = NewSegments(til, vars, nil)
		if seed%3 == 0 {
			th = NewBoth(th, NewCounting(til, vars), vars)
		}
		s.SetTheory(NewBoth(th, ck, vars))
		if solveAgainstBruteForce(t, s, seed, til, all) {
			found++
		} else {
			none++
		}
		confls += ck.confls
	}
	if found == 0 || none == 0 || confls == 0 {
		t.Fatalf("degenerate corpus: %d with a tiling, %d without, %d matching conflicts", found, none, confls)
	}
	t.Logf("%d instances with a tiling, %d without; matching: %d conflicts", found, none, confls)
}

// TestMatchingHallWindow: trace [1 1 1 2 1], one-append writers A, B, C, E of 1 and D
// of 2, where C and E cannot start before position 3 (their candidates there are
// false). Value 1 has four positions and four writers, so counting is satisfied, and
// each of positions 0-2 has two candidates left, so the tiling implies nothing; but
// those three positions have only A and B: the matching refutes it before any
// decision, where the tiling and counting must search.
func TestMatchingHallWindow(t *testing.T) {
	trace := []int32{1, 1, 1, 2, 1}
	til := &Tiling{Groups: 5, CellVal: trace, KeyStart: []int32{0}}
	for w, v := range []int32{1, 1, 1, 1, 2} {
		addCandidates(til, trace, []int32{v}, int32(w))
	}
	til.Cells = int32(len(trace))
	vars := len(til.Var)
	var early []sat.Lit // C's and E's candidates at positions 0-2
	for i := range til.Var {
		if g := til.Group[i]; (g == 2 || g == 3) && til.Cell0[i] < 3 {
			early = append(early, sat.PosLit(sat.Var(til.Var[i])).Not())
		}
	}
	solve := func(matching bool) (sat.Status, sat.Stats, *Matching) {
		s := sat.New()
		for range vars {
			s.NewVar()
		}
		for _, l := range early {
			s.AddClause(l)
		}
		var th sat.Theory = NewBoth(NewSegments(til, vars, nil), NewCounting(til, vars), vars)
		var m *Matching
		if matching {
			m = NewMatching(til, vars)
			th = NewBoth(th, m, vars)
		}
		s.SetTheory(th)
		s.SetOptions(sat.Options{Heuristic: "static", Restarts: "none", PhaseSaving: true})
		st := s.Solve()
		return st, s.Stats(), m
	}
	st, stats, m := solve(true)
	if st != sat.Unsat || stats.Decisions != 0 || m.Stats.Conflicts == 0 {
		t.Fatalf("with matching: %v after %d decisions (%d matching conflicts), want UNSAT by the matching before any decision", st, stats.Decisions, m.Stats.Conflicts)
	}
	if st, stats, _ = solve(false); st != sat.Unsat || stats.Decisions == 0 {
		t.Fatalf("without matching: %v after %d decisions, want UNSAT after some search", st, stats.Decisions)
	}
}
