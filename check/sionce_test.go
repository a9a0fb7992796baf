package check

import (
	"math/rand/v2"
	"testing"

	"doppel/internal/brute"
)

// TestSnapshotReplaysRunOnce: with only snapshot models asked, proveByReplay tries the
// snapshot replays first and again after the serial ones; the same inputs fail the
// same way, so each (guided, unguided) runs at most once per check.
func TestSnapshotReplaysRunOnce(t *testing.T) {
	var runs [2]int
	defer func() { onSIReplay = nil }()
	onSIReplay = func(withGuide bool) {
		if withGuide {
			runs[1]++
		} else {
			runs[0]++
		}
	}
	both := 0
	for seed := range 3000 {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		h := brute.Random(rng, brute.Config{Strategy: brute.SnapshotLike, MaxTxns: 8})
		runs = [2]int{}
		if _, err := Check(h, Options{Models: []string{"snapshot-isolation"}}); err != nil {
			t.Fatal(err)
		}
		if runs[0] > 1 || runs[1] > 1 {
			t.Fatalf("seed %d: snapshot replays run %d times unguided, %d guided\n%s", seed, runs[0], runs[1], brute.Format(h))
		}
		if runs[0] == 1 && runs[1] == 1 {
			both++
		}
	}
	// Histories where both failed (the case that ran them twice) must be among them.
	if both < 20 {
		t.Fatalf("weak test: both replays ran (and the guided one failed) on only %d histories", both)
	}
	t.Logf("both replays ran on %d histories", both)
}
