package sat

import (
	"bytes"
	"flag"
	"math/rand"
	"slices"
	"testing"
	"time"
)

// lit converts a DIMACS integer to a literal.
func lit(n int) Lit {
	if n > 0 {
		return PosLit(Var(n - 1))
	}
	return NegLit(Var(-n - 1))
}

// randomCNF returns m random clauses of k distinct variables over n variables.
func randomCNF(rng *rand.Rand, n, m, k int) [][]Lit {
	cnf := make([][]Lit, m)
	for i := range cnf {
		vars := rng.Perm(n)[:k]
		for _, v := range vars {
			l := PosLit(Var(v))
			if rng.Intn(2) == 0 {
				l = l.Not()
			}
			cnf[i] = append(cnf[i], l)
		}
	}
	return cnf
}

func litTrue(l Lit, assign uint32) bool {
	return (assign>>uint(l.Var()))&1 == 1 != l.IsNeg()
}

// bruteForce returns whether some assignment over n <= 24 variables satisfies cnf and ok.
func bruteForce(n int, cnf [][]Lit, ok func(uint32) bool) bool {
	for a := uint32(0); a < 1<<uint(n); a++ {
		if satisfies(cnf, a) && (ok == nil || ok(a)) {
			return true
		}
	}
	return false
}

func satisfies(cnf [][]Lit, a uint32) bool {
	for _, c := range cnf {
		sat := false
		for _, l := range c {
			if litTrue(l, a) {
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

func modelOf(s *Solver, n int) uint32 {
	var a uint32
	for v := 0; v < n; v++ {
		if s.ModelValue(PosLit(Var(v))) {
			a |= 1 << uint(v)
		}
	}
	return a
}

func newSolverWith(n int, cnf [][]Lit) *Solver {
	s := New()
	for s.NumVars() < n {
		s.NewVar()
	}
	for _, c := range cnf {
		s.AddClause(c...)
	}
	return s
}

func TestLit(t *testing.T) {
	v := Var(2)
	if PosLit(v).String() != "3" || NegLit(v).String() != "-3" {
		t.Fatalf("String: %s %s", PosLit(v), NegLit(v))
	}
	if PosLit(v).Not() != NegLit(v) || !NegLit(v).IsNeg() || PosLit(v).IsNeg() || NegLit(v).Var() != v {
		t.Fatal("literal encoding")
	}
}

func TestTrivial(t *testing.T) {
	s := New()
	if s.Solve() != Sat {
		t.Fatal("empty formula should be SAT")
	}
	a, b := s.NewVar(), s.NewVar()
	s.AddClause(PosLit(a), PosLit(b))
	s.AddClause(NegLit(a))
	if s.Solve() != Sat || !s.ModelValue(PosLit(b)) || s.ModelValue(PosLit(a)) {
		t.Fatal("want a=false b=true")
	}
	if s.AddClause(NegLit(b)) {
		t.Fatal("AddClause should report trivial UNSAT")
	}
	if s.Solve() != Unsat {
		t.Fatal("want UNSAT")
	}
	s2 := New()
	if s2.AddClause() || s2.Solve() != Unsat {
		t.Fatal("empty clause is UNSAT")
	}
	s3 := New()
	x := s3.NewVar()
	if !s3.AddClause(PosLit(x), NegLit(x)) || s3.Solve() != Sat {
		t.Fatal("tautology is SAT")
	}
}

func TestRandom3SATAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	counts := [3]int{}
	optsList := []Options{
		DefaultOptions(),
		{Heuristic: "static", Restarts: "luby", PhaseSaving: false, LubyUnit: 2, ReduceFirst: 5, ReduceInc: 1},
		{Restarts: "glucose", PhaseSaving: true, ReduceFirst: 3, ReduceInc: 1, NoMinimize: true},
		// Chronological backtracking whenever a conflict would jump over two levels or more.
		{Heuristic: "static", Restarts: "luby", PhaseSaving: true, LubyUnit: 4, ReduceFirst: 5, ReduceInc: 1, ChronoLevels: 1},
		{Restarts: "glucose", PhaseSaving: true, ReduceFirst: 3, ReduceInc: 1, ChronoLevels: 1},
		{Restarts: "none", PhaseSaving: true, ChronoLevels: -1},
	}
	var chrono int64
	for iter := 0; iter < 600; iter++ {
		n := 10 + rng.Intn(11)
		m := int(float64(n) * 4.26)
		cnf := randomCNF(rng, n, m, 3)
		want := bruteForce(n, cnf, nil)
		s := newSolverWith(n, cnf)
		s.SetOptions(optsList[iter%len(optsList)])
		got := s.Solve()
		counts[got]++
		if (got == Sat) != want || got == Unknown {
			t.Fatalf("iter %d: got %v, brute force SAT=%v", iter, got, want)
		}
		if got == Sat && !satisfies(cnf, modelOf(s, n)) {
			t.Fatalf("iter %d: model does not satisfy the clauses", iter)
		}
		chrono += s.Stats().Chrono
	}
	if counts[Sat] < 50 || counts[Unsat] < 50 {
		t.Fatalf("unbalanced test: %v", counts)
	}
	if chrono < 100 {
		t.Fatalf("weak test: %d chronological backtracks", chrono)
	}
	t.Logf("%d chronological backtracks", chrono)
}

// pigeonhole returns PHP(holes+1, holes): pigeon p in hole h is variable p*holes+h.
func pigeonhole(holes int) (int, [][]Lit) {
	pigeons := holes + 1
	x := func(p, h int) Lit { return PosLit(Var(p*holes + h)) }
	var cnf [][]Lit
	for p := 0; p < pigeons; p++ {
		var c []Lit
		for h := 0; h < holes; h++ {
			c = append(c, x(p, h))
		}
		cnf = append(cnf, c)
	}
	for h := 0; h < holes; h++ {
		for p := 0; p < pigeons; p++ {
			for q := p + 1; q < pigeons; q++ {
				cnf = append(cnf, []Lit{x(p, h).Not(), x(q, h).Not()})
			}
		}
	}
	return pigeons * holes, cnf
}

func TestPigeonhole(t *testing.T) {
	for holes := 1; holes <= 8; holes++ {
		n, cnf := pigeonhole(holes)
		s := newSolverWith(n, cnf)
		if got := s.Solve(); got != Unsat {
			t.Fatalf("PHP(%d,%d): got %v", holes+1, holes, got)
		}
		// With one pigeon fewer it is SAT.
		n2, cnf2 := pigeonhole(holes)
		var keep [][]Lit
		for _, c := range cnf2 {
			uses := false
			for _, l := range c {
				if int(l.Var())/holes == holes {
					uses = true
				}
			}
			if !uses {
				keep = append(keep, c)
			}
		}
		s2 := newSolverWith(n2, keep)
		if s2.Solve() != Sat {
			t.Fatalf("PHP(%d,%d) should be SAT", holes, holes)
		}
	}
}

// incrementalIters: TestIncrementalAssumptions' solvers (more with -incremental-iters,
// another seed with -incremental-seed).
var (
	incrementalIters = flag.Int("incremental-iters", 600, "TestIncrementalAssumptions: random formulas")
	incrementalSeed  = flag.Int64("incremental-seed", 2, "TestIncrementalAssumptions: the random seed")
)

func TestIncrementalAssumptions(t *testing.T) {
	rng := rand.New(rand.NewSource(*incrementalSeed))
	var chrono int64
	reused := 0 // SolveLevels calls that took over the last one's first level
	for iter := 0; iter < *incrementalIters; iter++ {
		n := 8 + rng.Intn(8)
		cnf := randomCNF(rng, n, int(float64(n)*3.5), 3)
		s := newSolverWith(n, cnf)
		switch iter % 4 {
		case 1:
			s.SetOptions(Options{Restarts: "luby", PhaseSaving: true, LubyUnit: 1, ReduceFirst: 2, ReduceInc: 1})
		case 3: // chronological backtracking on every jump of two levels, learned units included
			s.SetOptions(Options{Heuristic: "static", Restarts: "luby", PhaseSaving: true, LubyUnit: 2, ReduceFirst: 2, ReduceInc: 1, ChronoLevels: 1})
		}
		var kept [][]Lit // the groups of the last SolveLevels call
		for round := 0; round < 8; round++ {
			if round == 4 { // clauses added between calls
				extra := randomCNF(rng, n, 2, 3)
				for _, c := range extra {
					s.AddClause(c...)
				}
				cnf = append(cnf, extra...)
			}
			// Up to half the variables: the assumption level itself then often
			// conflicts, and a restart must keep it.
			k := rng.Intn(n/2 + 1)
			var assumps []Lit
			for _, v := range rng.Perm(n)[:k] {
				l := PosLit(Var(v))
				if rng.Intn(2) == 0 {
					l = l.Not()
				}
				assumps = append(assumps, l)
			}
			// Three calls in four put them in levels of their own (SolveLevels): the
			// first groups mostly those of the last such call, whose levels then stand,
			// the rest split into up to three more groups.
			keeping := round%4 != 0
			var groups [][]Lit
			if keeping {
				if rng.Intn(4) > 0 {
					groups = append(groups, kept[:rng.Intn(len(kept)+1)]...)
				}
				rest := assumps
				assumps = nil
				for _, g := range groups {
					assumps = append(assumps, g...)
				}
				for more := rng.Intn(4); more > 0 || len(groups) == 0; more-- {
					cut := rng.Intn(len(rest) + 1)
					if more <= 1 {
						cut = len(rest)
					}
					groups = append(groups, slices.Clone(rest[:cut]))
					assumps, rest = append(assumps, rest[:cut]...), rest[cut:]
				}
				kept = groups
			}
			holds := func(as []Lit) func(uint32) bool {
				return func(a uint32) bool {
					for _, l := range as {
						if !litTrue(l, a) {
							return false
						}
					}
					return true
				}
			}
			want := bruteForce(n, cnf, holds(assumps))
			var got Status
			if keeping {
				if len(s.kept) > 0 && len(groups[0]) > 0 && slices.Equal(s.kept[0], groups[0]) {
					reused++
				}
				got = s.SolveLevels(groups)
			} else {
				got = s.Solve(assumps...)
			}
			if (got == Sat) != want || got == Unknown {
				t.Fatalf("iter %d round %d: got %v, want SAT=%v", iter, round, got, want)
			}
			if got == Sat {
				m := modelOf(s, n)
				if !satisfies(cnf, m) || !holds(assumps)(m) {
					t.Fatalf("iter %d round %d: bad model", iter, round)
				}
				continue
			}
			// The final conflict is a clause of negated assumptions implied by the formula.
			fc := s.FinalConflict()
			var sub []Lit
			for _, l := range fc {
				found := false
				for _, a := range assumps {
					if a == l.Not() {
						found = true
					}
				}
				if !found {
					t.Fatalf("iter %d round %d: final conflict %v not negated assumptions %v", iter, round, fc, assumps)
				}
				sub = append(sub, l.Not())
			}
			if bruteForce(n, cnf, holds(sub)) {
				t.Fatalf("iter %d round %d: formula with assumptions %v (from %v) is SAT", iter, round, sub, fc)
			}
		}
		chrono += s.Stats().Chrono
	}
	if chrono < 20 || reused < 100 {
		t.Fatalf("weak test: %d chronological backtracks, %d kept levels taken over", chrono, reused)
	}
	t.Logf("%d chronological backtracks, %d kept levels taken over", chrono, reused)
}

func TestConflictLimit(t *testing.T) {
	n, cnf := pigeonhole(9)
	s := newSolverWith(n, cnf)
	s.SetConflictLimit(100)
	if got := s.Solve(); got != Unknown {
		t.Fatalf("got %v, want Unknown", got)
	}
	if c := s.Stats().Conflicts; c < 100 || c > 101 {
		t.Fatalf("conflicts %d", c)
	}
	s.SetConflictLimit(0)
	n2, cnf2 := pigeonhole(5)
	s2 := newSolverWith(n2, cnf2)
	s2.SetConflictLimit(1)
	if s2.Solve() != Unknown {
		t.Fatal("want Unknown with limit 1")
	}
	s2.SetConflictLimit(0)
	if s2.Solve() != Unsat {
		t.Fatal("solving resumes after a limit")
	}
	s3 := newSolverWith(n, cnf)
	s3.Interrupt()
	if s3.Solve() != Unknown {
		t.Fatal("interrupt before Solve")
	}
	// PHP(11,10) takes far longer than any test; the interrupt must stop it.
	n4, cnf4 := pigeonhole(10)
	s4 := newSolverWith(n4, cnf4)
	go s4.Interrupt()
	if s4.Solve() != Unknown {
		t.Fatal("interrupt from another goroutine")
	}
	s5 := newSolverWith(n4, cnf4)
	s5.SetDeadline(time.Now().Add(-time.Second))
	if s5.Solve() != Unknown {
		t.Fatal("deadline in the past")
	}
}

func TestWriteDIMACSRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	cnf := randomCNF(rng, 12, 40, 3)
	s := newSolverWith(12, cnf)
	var buf bytes.Buffer
	if err := s.WriteDIMACS(&buf); err != nil {
		t.Fatal(err)
	}
	s2, err := ParseDIMACS(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var buf2 bytes.Buffer
	s.WriteDIMACS(&buf2)
	var buf3 bytes.Buffer
	s2.WriteDIMACS(&buf3)
	if buf2.String() != buf3.String() {
		t.Fatalf("round trip differs:\n%s\n%s", buf2.String(), buf3.String())
	}
	if s.Solve() != s2.Solve() {
		t.Fatal("different answers after round trip")
	}
}

func TestLuby(t *testing.T) {
	want := []int64{1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, 1}
	for i, w := range want {
		if got := luby(i); got != w {
			t.Fatalf("luby(%d) = %d, want %d", i, got, w)
		}
	}
}

// TestModelEnumeration counts models by adding a blocking clause after each one (clauses
// added between Solve calls) and compares with brute force.
func TestModelEnumeration(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for iter := 0; iter < 40; iter++ {
		n := 6 + rng.Intn(5)
		cnf := randomCNF(rng, n, 2*n, 3)
		want := 0
		for a := uint32(0); a < 1<<uint(n); a++ {
			if satisfies(cnf, a) {
				want++
			}
		}
		s := newSolverWith(n, cnf)
		got := 0
		for s.Solve() == Sat {
			got++
			if got > want {
				break
			}
			block := make([]Lit, n)
			for v := 0; v < n; v++ {
				block[v] = PosLit(Var(v))
				if s.ModelValue(block[v]) {
					block[v] = block[v].Not()
				}
			}
			s.AddClause(block...)
		}
		if got != want {
			t.Fatalf("iter %d: enumerated %d models, brute force %d", iter, got, want)
		}
	}
}

func TestSetPhase(t *testing.T) {
	s := New()
	for i := 0; i < 10; i++ {
		s.SetPhase(s.NewVar(), i%3 == 0)
	}
	if s.Solve() != Sat {
		t.Fatal("want SAT")
	}
	for i := 0; i < 10; i++ {
		if s.ModelValue(PosLit(Var(i))) != (i%3 == 0) {
			t.Fatalf("variable %d does not follow its phase", i)
		}
	}
}

// TestRecycleSolvesAsNew: a solver built on a recycled one's storage (after a search
// that learned clauses, set phases and left watch lists behind, on a problem bigger or
// smaller than the next) decides each random formula as the brute force does, with a
// model that satisfies it.
func TestRecycleSolvesAsNew(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	s := New()
	counts := [3]int{}
	for iter := 0; iter < 600; iter++ {
		n := 6 + rng.Intn(15)
		cnf := randomCNF(rng, n, int(float64(n)*4.26), 3)
		want := bruteForce(n, cnf, nil)
		s = s.Recycle()
		if iter%2 == 0 {
			s.Reserve(n, len(cnf), 3*len(cnf))
		}
		for s.NumVars() < n {
			s.NewVar()
		}
		for _, c := range cnf {
			s.AddClause(c...)
		}
		if s.NumVars() != n || s.NumClauses() > len(cnf) {
			t.Fatalf("iter %d: %d variables, %d clauses after recycling (want %d, at most %d)", iter, s.NumVars(), s.NumClauses(), n, len(cnf))
		}
		got := s.Solve()
		counts[got]++
		if (got == Sat) != want || got == Unknown {
			t.Fatalf("iter %d: recycled solver says %v, brute force SAT=%v", iter, got, want)
		}
		if got == Sat && !satisfies(cnf, modelOf(s, n)) {
			t.Fatalf("iter %d: the recycled solver's model does not satisfy the clauses", iter)
		}
	}
	if counts[Sat] < 50 || counts[Unsat] < 50 {
		t.Fatalf("unbalanced test: %v", counts)
	}
}

// TestRecycleReusesStorage: building the same problem on a recycled solver allocates
// far less than on a new one (its variables' and clauses' storage is taken over).
func TestRecycleReusesStorage(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const n = 2000
	cnf := randomCNF(rng, n, 4*n, 3)
	build := func(s *Solver) *Solver {
		s.Reserve(n, len(cnf), 3*len(cnf))
		for s.NumVars() < n {
			s.NewVar()
		}
		for _, c := range cnf {
			s.AddClause(c...)
		}
		return s
	}
	fresh := testing.AllocsPerRun(5, func() { build(New()) })
	s := build(New())
	recycled := testing.AllocsPerRun(5, func() { s = build(s.Recycle()) })
	if recycled*10 > fresh {
		t.Fatalf("recycled build: %.0f allocations, a new one %.0f", recycled, fresh)
	}
	t.Logf("allocations: new %.0f, recycled %.0f", fresh, recycled)
}

// TestDecisionLimit: a Solve bounded by decisions stops with Unknown (checked every
// 1,024 decisions) where it would otherwise go on deciding to a model.
func TestDecisionLimit(t *testing.T) {
	s := New()
	for range 10000 {
		s.NewVar()
	}
	for v := range 9999 {
		s.AddClause(PosLit(Var(v)), PosLit(Var(v+1))) // satisfiable; every variable decided
	}
	s.SetDecisionLimit(10)
	if st := s.Solve(); st != Unknown || s.Stats().Decisions >= 2048 {
		t.Fatalf("with a limit of 10 decisions: %v after %d decisions", st, s.Stats().Decisions)
	}
	s.SetDecisionLimit(0)
	if st := s.Solve(); st != Sat {
		t.Fatalf("without a limit: %v", st)
	}
}
