package check

import (
	"flag"
	"math/rand/v2"
	"testing"

	"doppel/internal/brute"
)

var siWitnessSeeds = flag.Int("si-witness-seeds", 6000, "random tiny histories per model in TestSnapshotWitnessForWeakAgainstBruteForce")

// TestSnapshotWitnessForWeakAgainstBruteForce: the models snapshot isolation implies
// (consistent view, forward consistent view, update serializable), checked alone on
// random tiny snapshot-like histories with the serial witnesses unable to help (write
// skews), agree with the brute force, and snapshot isolation's own check proves some
// of them (snapshotWitnessForWeak is reached and decides).
func TestSnapshotWitnessForWeakAgainstBruteForce(t *testing.T) {
	proved := 0
	snapshotWitnessHook = func(ms []string) { proved++ }
	defer func() { snapshotWitnessHook = nil }()
	for _, m := range []string{"consistent-view", "forward-consistent-view", "update-serializable"} {
		for seed := 0; seed < *siWitnessSeeds; seed++ {
			rng := rand.New(rand.NewPCG(uint64(seed), 313))
			cfg := brute.Config{Strategy: brute.SnapshotLike}
			if seed%3 == 2 {
				cfg = brute.Config{Strategy: brute.FailInfo}
			}
			h := brute.Random(rng, cfg)
			// Also without the snapshot search, which proves most of them before the
			// witness is reached.
			want := brute.Check(h, m)
			for _, noSearch := range []bool{false, true} {
				res, err := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoSnapshotSearch: noSearch}})
				if err != nil {
					t.Fatal(err)
				}
				if (res.Valid == Valid) != want || res.Valid == Unknown {
					t.Fatalf("seed %d: %s (no snapshot search %v): checker says %v, brute force says valid=%v\n%s", seed, m, noSearch, res.Valid, want, brute.Format(h))
				}
			}
		}
	}
	t.Logf("snapshot isolation's check proved the weaker model %d times", proved)
	if proved == 0 {
		t.Fatal("snapshot isolation's check never proved a weaker model: the test no longer reaches it")
	}
}
