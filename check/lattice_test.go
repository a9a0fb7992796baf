package check

import (
	"math/rand/v2"
	"testing"

	"doppel/internal/brute"
)

// TestLatticeAgreesWithChecker: every implication of Elle's lattice is one the
// checker's definitions give (the stronger model's attributions and graph contain the
// weaker's), and every model doppel decides is in the lattice.
func TestLatticeAgreesWithChecker(t *testing.T) {
	for _, m := range ModelNames() {
		if _, ok := implies[m]; !ok {
			t.Errorf("%s is not in the lattice", m)
		}
		for _, w := range implies[m] {
			if _, ok := models[w]; !ok {
				t.Errorf("%s implies %s, which doppel does not decide", m, w)
			}
			if !graphWithin(w, m) || !forbidsWithin(w, m) {
				t.Errorf("%s implies %s in Elle's lattice, but the checker's definitions do not", m, w)
			}
		}
	}
}

// TestSummary checks Elle's summary against the verdicts on random histories: Not and
// AlsoNot hold exactly the models ruled out, no model is both ruled out and among the
// strongest valid ones, and every model found valid is implied by a strongest one.
func TestSummary(t *testing.T) {
	for seed := 0; seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 9))
		h := brute.Random(rng, brute.Config{Strategy: brute.Strategies[seed%len(brute.Strategies)]})
		res, err := Check(h, Options{Models: []string{"all"}})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, m := range append(append([]string{}, res.Not...), res.AlsoNot...) {
			out[m] = true
		}
		for _, mr := range res.Models {
			if (mr.Valid == Invalid) != out[mr.Model] {
				t.Fatalf("seed %d: %s is %v but not/also-not are %v / %v", seed, mr.Model, mr.Valid, res.Not, res.AlsoNot)
			}
			if mr.Valid != Valid {
				continue
			}
			covered := false
			for _, s := range res.Strongest {
				covered = covered || s == mr.Model || below(s)[mr.Model]
			}
			if !covered {
				t.Fatalf("seed %d: %s valid but not implied by the strongest %v", seed, mr.Model, res.Strongest)
			}
		}
		for _, s := range res.Strongest {
			if out[s] {
				t.Fatalf("seed %d: %s both strongest valid and ruled out", seed, s)
			}
		}
		for _, m := range res.Not {
			for x := range below(m) {
				if out[x] {
					t.Fatalf("seed %d: %s in not, but %s below it is ruled out too", seed, m, x)
				}
			}
		}
	}
}
