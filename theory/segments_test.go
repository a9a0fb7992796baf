package theory

import (
	"math/rand/v2"
	"slices"
	"testing"

	"doppel/sat"
)

// randomTiling draws one or two keys' traces over two values and writers appending
// one or two values, with a candidate wherever a writer's values match the trace (a
// block may run past the end, as an overrun); plus a few random clauses over the
// candidates, so that the theory's implications meet the solver's.
func randomTiling(rng *rand.Rand) (*Tiling, int, [][]sat.Lit) {
	t := &Tiling{}
	for range 1 + rng.IntN(2) {
		n := int32(1 + rng.IntN(7))
		trace := make([]int32, n)
		for i := range trace {
			trace[i] = int32(rng.IntN(2))
		}
		writers := 1 + rng.IntN(6)
		for w := range writers {
			seq := make([]int32, 1+rng.IntN(2))
			for i := range seq {
				seq[i] = int32(rng.IntN(2))
			}
			addCandidates(t, trace, seq, t.Groups+int32(w))
		}
		t.Cells += n
		t.Groups += int32(writers)
	}
	vars := len(t.Var)
	var clauses [][]sat.Lit
	for range rng.IntN(3) {
		if vars == 0 {
			break
		}
		var c []sat.Lit
		for range 1 + rng.IntN(2) {
			l := sat.PosLit(sat.Var(rng.IntN(vars)))
			if rng.IntN(2) == 0 {
				l = l.Not()
			}
			c = append(c, l)
		}
		clauses = append(clauses, c)
	}
	return t, vars, clauses
}

// bruteTiling reports whether some choice of candidates tiles every cell once, uses
// each group at most once and satisfies the clauses.
func bruteTiling(t *Tiling, vars int, clauses [][]sat.Lit) bool {
	vals := make([]bool, vars)
	for m := 0; m < 1<<vars; m++ {
		for v := range vals {
			vals[v] = m&(1<<v) != 0
		}
		if !t.Satisfied(vals) {
			continue
		}
		ok := true
		for _, c := range clauses {
			sat := false
			for _, l := range c {
				sat = sat || vals[l.Var()] != l.IsNeg()
			}
			ok = ok && sat
		}
		if ok {
			return true
		}
	}
	return false
}

// TestSegmentsAgainstBruteForce: the solver with the append-adjacency theory alone
// finds a tiling exactly when one exists, and its models are tilings.
func TestSegmentsAgainstBruteForce(t *testing.T) {
	var found, none int
	for seed := range 20000 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		til, vars, clauses := randomTiling(rng)
		if vars > 12 {
			continue
		}
		// A cell no candidate covers has no tiling: the encoding rules such keys out
		// before the theory sees them (they are not open).
		if !coversEveryCell(til) {
			continue
		}
		s := sat.New()
		for range vars {
			s.NewVar()
		}
		for _, c := range clauses {
			s.AddClause(c...)
		}
		s.SetTheory(NewSegments(til, vars, nil))
		so := sat.DefaultOptions()
		if seed%2 == 1 {
			so.Heuristic = "static"
		}
		s.SetOptions(so)
		status := s.Solve()
		want := bruteTiling(til, vars, clauses)
		if (status == sat.Sat) != want {
			t.Fatalf("seed %d: solver %v, brute force %v; tiling %+v clauses %v", seed, status, want, til, clauses)
		}
		if status == sat.Sat {
			found++
			if !til.Satisfied(s.Model()) {
				t.Fatalf("seed %d: the model %v is no tiling of %+v", seed, s.Model(), til)
			}
		} else {
			none++
		}
	}
	if found == 0 || none == 0 {
		t.Fatalf("degenerate corpus: %d with a tiling, %d without", found, none)
	}
	t.Logf("%d instances with a tiling, %d without", found, none)
}

// TestBothExplainsByOwner: a literal implied by either theory is explained by it.
func TestBothExplainsByOwner(t *testing.T) {
	// Key: one cell, two candidates (0 and 1) of different writers. Graph: edge
	// 0 -> 1 guarded by candidate 1 and edge 1 -> 0 guarded by variable 2.
	til := &Tiling{Var: []int32{0, 1}, Cell0: []int32{0, 0}, Cell1: []int32{1, 1}, Group: []int32{-1, -1}, Cells: 1}
	s := sat.New()
	for range 3 {
		s.NewVar()
	}
	g := NewGraph(2)
	g.AddEdge(0, 1, []sat.Lit{sat.PosLit(1)})
	g.AddEdge(1, 0, []sat.Lit{sat.PosLit(2)})
	if g.Init() != nil {
		t.Fatal("no known cycle expected")
	}
	s.SetTheory(NewBoth(NewSegments(til, 3, nil), g, 3))
	// Candidate 0 false forces candidate 1 (the segments), which with variable 2
	// would close the cycle: the graph implies variable 2 false.
	s.AddClause(sat.NegLit(0))
	if s.Solve() != sat.Sat {
		t.Fatal("want a solution")
	}
	m := s.Model()
	if m[0] || !m[1] || m[2] {
		t.Fatalf("model %v, want [false true false]", m)
	}
	s.AddClause(sat.PosLit(2))
	if s.Solve() != sat.Unsat {
		t.Fatal("want no solution once variable 2 must hold")
	}
}

// BenchmarkSegmentsTiling: the theory alone finds a tiling of a 300-position trace of
// two values by 300 one-append writers, each of which may start at every position
// holding its value (about 45K candidates: the quadratic case of keys with few values).
func BenchmarkSegmentsTiling(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 300
	trace := make([]int, n)
	for i := range trace {
		trace[i] = rng.IntN(2)
	}
	t := &Tiling{Cells: n, Groups: n}
	for w := range n { // writer w appends trace[w]: the counts match the trace's
		for p := range int32(n) {
			if trace[p] == trace[w] {
				t.Var = append(t.Var, int32(len(t.Var)))
				t.Cell0 = append(t.Cell0, p)
				t.Cell1 = append(t.Cell1, p+1)
				t.Group = append(t.Group, int32(w))
			}
		}
	}
	for b.Loop() {
		s := sat.New()
		for range t.Var {
			s.NewVar()
		}
		s.SetTheory(NewSegments(t, len(t.Var), nil))
		if s.Solve() != sat.Sat {
			b.Fatal("want a tiling")
		}
	}
	b.ReportMetric(float64(len(t.Var)), "candidates")
}

// addCandidates adds a candidate of the writer in group wherever its values seq match
// the key's trace (the key's cells start at t.Cells; a block may run past the end, as
// an overrun).
func addCandidates(t *Tiling, trace, seq []int32, group int32) {
	n := int32(len(trace))
	for p := int32(0); p < n; p++ {
		match := true
		for i, v := range seq {
			if q := p + int32(i); q < n && trace[q] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		t.Var = append(t.Var, int32(len(t.Var)))
		t.Cell0 = append(t.Cell0, t.Cells+p)
		t.Cell1 = append(t.Cell1, t.Cells+min(p+int32(len(seq)), n))
		t.Group = append(t.Group, group)
	}
}

// coversEveryCell reports whether every cell of til is covered by some candidate.
func coversEveryCell(til *Tiling) bool {
	covered := make([]bool, til.Cells)
	for i := range til.Var {
		for x := til.Cell0[i]; x < til.Cell1[i]; x++ {
			covered[x] = true
		}
	}
	return !slices.Contains(covered, false)
}
