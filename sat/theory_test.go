package sat

import (
	"math/rand"
	"testing"
)

// atMostK is a toy theory: at most k of vars are true. It counts the true ones on the trail,
// implies the others false once k are true (explained lazily by those k), and reports k+1
// true ones as a conflict. With lazy set, it sometimes skips work until the trail is full,
// so that its conflicts and implications come late, at levels below the current one.
type atMostK struct {
	vars    []Var
	member  []bool
	k       int
	lazy    *rand.Rand
	seen    int   // trail prefix processed
	truePos []int // trail positions of true members, in trail order
	trueLit []Lit
	// cause[v] is the number of true members (a prefix of trueLit) that implied NOT v.
	cause     map[Var]int
	explains  int
	conflicts int
}

func newAtMostK(numVars int, vars []Var, k int, lazy *rand.Rand) *atMostK {
	t := &atMostK{vars: vars, member: make([]bool, numVars), k: k, lazy: lazy, cause: map[Var]int{}}
	for _, v := range vars {
		t.member[v] = true
	}
	return t
}

func (t *atMostK) Propagate(s *Solver) []Lit {
	trail := s.Trail()
	if t.lazy != nil && len(trail) < s.NumVars() && t.lazy.Intn(3) != 0 {
		return nil
	}
	for ; t.seen < len(trail); t.seen++ {
		l := trail[t.seen]
		if !l.IsNeg() && int(l.Var()) < len(t.member) && t.member[l.Var()] {
			t.truePos = append(t.truePos, t.seen)
			t.trueLit = append(t.trueLit, l)
		}
	}
	if len(t.trueLit) > t.k {
		t.conflicts++
		var c []Lit
		for _, l := range t.trueLit[:t.k+1] {
			c = append(c, l.Not())
		}
		return c
	}
	if len(t.trueLit) == t.k {
		for _, v := range t.vars {
			if s.Value(PosLit(v)) == LUndef {
				t.cause[v] = t.k
				if !s.Imply(NegLit(v)) {
					panic("unreachable: literal was unassigned")
				}
			}
		}
	}
	return nil
}

func (t *atMostK) Explain(l Lit) []Lit {
	t.explains++
	n, ok := t.cause[l.Var()]
	if !ok || !l.IsNeg() {
		panic("explain of a literal the theory did not imply")
	}
	c := []Lit{l}
	for _, x := range t.trueLit[:n] {
		c = append(c, x.Not())
	}
	return c
}

func (t *atMostK) Backtrack(n int) {
	if t.seen > n {
		t.seen = n
	}
	for len(t.truePos) > 0 && t.truePos[len(t.truePos)-1] >= n {
		t.truePos = t.truePos[:len(t.truePos)-1]
		t.trueLit = t.trueLit[:len(t.trueLit)-1]
	}
}

func TestTheoryAtMostKAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	var explains, conflicts, tprops, chrono int64
	results := [3]int{}
	for iter := 0; iter < 400; iter++ {
		n := 8 + rng.Intn(9)
		// Fewer clauses than the SAT threshold, so the theory decides most answers.
		cnf := randomCNF(rng, n, int(float64(n)*(1.5+2*rng.Float64())), 3)
		setSize := 3 + rng.Intn(n-3)
		var set []Var
		for _, v := range rng.Perm(n)[:setSize] {
			set = append(set, Var(v))
		}
		k := rng.Intn(setSize)
		var lazy *rand.Rand
		if iter%2 == 1 {
			lazy = rand.New(rand.NewSource(int64(iter)))
		}
		th := newAtMostK(n, set, k, lazy)
		s := newSolverWith(n, cnf)
		s.SetTheory(th)
		switch iter % 4 {
		case 2:
			s.SetOptions(Options{Restarts: "luby", LubyUnit: 1, ReduceFirst: 3, ReduceInc: 1, PhaseSaving: true})
		case 3: // chronological backtracking whenever a conflict would jump two levels or more
			s.SetOptions(Options{Heuristic: "static", Restarts: "luby", LubyUnit: 8, ReduceFirst: 3, ReduceInc: 1, PhaseSaving: true, ChronoLevels: 1})
		}
		atMost := func(a uint32) bool {
			c := 0
			for _, v := range set {
				if a>>uint(v)&1 == 1 {
					c++
				}
			}
			return c <= k
		}
		var prev []Lit
		for round := 0; round < 5; round++ {
			if round == 2 { // a clause added between calls, with the theory attached
				extra := randomCNF(rng, n, 1, 2)[0]
				s.AddClause(extra...)
				cnf = append(cnf, extra)
			}
			var assumps []Lit
			if round > 0 {
				for _, v := range rng.Perm(n)[:rng.Intn(4)] {
					assumps = append(assumps, PosLit(Var(v)))
				}
			}
			if round == 4 { // the same again: the kept level stands
				assumps = prev
			}
			prev = assumps
			holds := func(as []Lit) func(uint32) bool {
				return func(a uint32) bool {
					for _, l := range as {
						if !litTrue(l, a) {
							return false
						}
					}
					return atMost(a)
				}
			}
			want := bruteForce(n, cnf, holds(assumps))
			var got Status
			if round%2 == 1 || round == 4 { // half kept in a level of their own
				got = s.SolveLevels([][]Lit{assumps[:len(assumps)/2], assumps[len(assumps)/2:]})
			} else {
				got = s.Solve(assumps...)
			}
			results[got]++
			if (got == Sat) != want || got == Unknown {
				t.Fatalf("iter %d round %d: got %v, want SAT=%v", iter, round, got, want)
			}
			if got == Sat {
				m := modelOf(s, n)
				if !satisfies(cnf, m) || !holds(assumps)(m) {
					t.Fatalf("iter %d round %d: model violates clauses, assumptions or theory", iter, round)
				}
			} else {
				var sub []Lit
				for _, l := range s.FinalConflict() {
					sub = append(sub, l.Not())
				}
				if bruteForce(n, cnf, holds(sub)) {
					t.Fatalf("iter %d round %d: final conflict %v is satisfiable", iter, round, s.FinalConflict())
				}
			}
		}
		chrono += s.Stats().Chrono
		explains += int64(th.explains)
		conflicts += int64(th.conflicts)
		tprops += s.Stats().TheoryPropagations
	}
	// The test must exercise the interface, not just the clauses.
	if explains < 100 || conflicts < 100 || tprops < 1000 || chrono < 50 || results[Sat] < 100 || results[Unsat] < 100 {
		t.Fatalf("weak test: explains=%d theory conflicts=%d theory propagations=%d chronological backtracks=%d results=%v",
			explains, conflicts, tprops, chrono, results)
	}
	t.Logf("explains=%d theory conflicts=%d theory propagations=%d chronological backtracks=%d results=%v", explains, conflicts, tprops, chrono, results)
}

// TestTheoryOnly checks a pure theory problem with no clauses: exactly-k via at-most-k and
// an at-least clause, on pigeonhole-like instances that need many theory conflicts.
func TestTheoryPigeonhole(t *testing.T) {
	// PHP with the "at most one pigeon per hole" constraints given by theories would need
	// several theories; instead use one at-most-k over all variables and clauses forcing
	// one variable per pigeon: with k < pigeons it is UNSAT.
	for pigeons := 2; pigeons <= 7; pigeons++ {
		holes := pigeons
		n := pigeons * holes
		var cnf [][]Lit
		for p := 0; p < pigeons; p++ {
			var c []Lit
			for h := 0; h < holes; h++ {
				c = append(c, PosLit(Var(p*holes+h)))
			}
			cnf = append(cnf, c)
		}
		var all []Var
		for v := 0; v < n; v++ {
			all = append(all, Var(v))
		}
		for _, k := range []int{pigeons - 1, pigeons} {
			s := newSolverWith(n, cnf)
			s.SetTheory(newAtMostK(n, all, k, nil))
			got := s.Solve()
			want := Sat
			if k < pigeons {
				want = Unsat
			}
			if got != want {
				t.Fatalf("pigeons=%d k=%d: got %v want %v", pigeons, k, got, want)
			}
		}
	}
}

// emptyConflict is a theory that becomes unsatisfiable, whatever the assignment, once
// at least after trail entries are assigned: it then returns an empty conflict clause.
type emptyConflict struct{ after int }

func (t *emptyConflict) Propagate(s *Solver) []Lit {
	if len(s.Trail()) >= t.after {
		return []Lit{}
	}
	return nil
}
func (t *emptyConflict) Explain(l Lit) []Lit { return nil }
func (t *emptyConflict) Backtrack(n int)     {}

// An empty theory conflict means the theory has no model at all: the solver must answer
// Unsat, on the first call and on a later one, rather than read the empty clause as "no
// conflict" and report a model the theory rejected.
func TestEmptyTheoryConflictIsUnsat(t *testing.T) {
	for _, after := range []int{0, 1, 3} {
		s := newSolverWith(4, [][]Lit{{PosLit(0), PosLit(1)}, {NegLit(2), PosLit(3)}})
		s.SetTheory(&emptyConflict{after: after})
		if got := s.Solve(); got != Unsat {
			t.Errorf("theory unsatisfiable after %d assignments: Solve = %v, want Unsat", after, got)
		}
	}
}
