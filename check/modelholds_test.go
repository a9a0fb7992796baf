package check

import (
	"math/rand/v2"
	"testing"

	"doppel/internal/brute"
)

// TestModelHoldsAgainstBruteForce: a Sat answer is reported as "valid" only once
// modelHolds accepts the solver's assignment (a solver or theory bug must not become a
// wrong verdict). So modelHolds must accept no assignment at all of a problem whose
// history the brute force finds not valid, and must accept the solver's models of the
// valid ones: every problem handed to the solver on random tiny histories is probed
// with random assignments, and every Check must end without the verification warning.
func TestModelHoldsAgainstBruteForce(t *testing.T) {
	type probe struct {
		c *checker
		v *view
	}
	var probes []probe
	solveHook = func(c *checker, v *view) { probes = append(probes, probe{c, v}) }
	defer func() { solveHook = nil }()
	models := []string{"serializable", "snapshot-isolation", "strict-serializable", "read-committed"}
	var tried, rejected, solved int
	for seed := 0; seed < *seeds/4; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		h := brute.Random(rng, brute.Config{Strategy: brute.Strategy(seed % 6)})
		m := models[seed%len(models)]
		probes = probes[:0]
		res, err := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true}})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range res.Warnings {
			t.Fatalf("seed %d, %s: %s\n%s", seed, m, w, brute.Format(h))
		}
		if len(probes) == 0 {
			continue
		}
		solved++
		valid := brute.Check(h, m)
		for _, p := range probes {
			if p.c.p == nil {
				continue
			}
			n := int(p.c.p.NumVars) + int(p.v.extraVars)
			for try := 0; try < 50; try++ {
				vals := make([]bool, n)
				for i := range vals {
					vals[i] = rng.IntN(2) == 0
				}
				tried++
				if !p.c.modelHolds(vals, p.v) {
					rejected++
					continue
				}
				if !valid {
					t.Fatalf("seed %d, %s: modelHolds accepted an assignment of a history that is not valid\n%s", seed, m, brute.Format(h))
				}
			}
		}
	}
	if solved == 0 || rejected == 0 || rejected == tried {
		t.Fatalf("the probe is not probing: %d problems solved, %d of %d assignments rejected", solved, rejected, tried)
	}
	t.Logf("%d problems solved; %d of %d random assignments rejected", solved, rejected, tried)
}
