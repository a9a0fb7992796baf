package uncommitted

import (
	"math/rand/v2"
	"testing"

	"doppel/internal/brute"
)

// TestSerialAgainstBruteForce runs the serial search alone on random tiny histories
// with heavy duplication, under process and real-time order: every verdict it gives
// (where it applies) is the oracle's, and it applies and decides on most of them.
func TestSerialAgainstBruteForce(t *testing.T) {
	seeds := 6000
	if testing.Short() {
		seeds = 600
	}
	configs := []brute.Config{{MaxTxns: 7, Values: 2}, {Strategy: brute.Realtime}, {Values: 3, MaxTxns: 9, MaxKeys: 2}, {Strategy: brute.SnapshotLike}}
	decided, invalid := 0, 0
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 23))
		h := brute.Random(rng, configs[seed%len(configs)])
		x := NewIndex(h)
		if len(x.Findings) > 0 {
			continue
		}
		for _, m := range modelsUnderTest[1:] {
			v, proof := x.Serial(m.realtime, nil)
			if v == Unknown {
				continue
			}
			decided++
			want := brute.Check(h, m.name)
			if (v == Valid) != want {
				t.Fatalf("seed %d, %s: the serial search says %v, the oracle valid=%v\n%s", seed, m.name, v, want, brute.Format(h))
			}
			if v == Invalid {
				invalid++
				if proof == nil || len(proof.Writers) == 0 {
					t.Fatalf("seed %d, %s: not valid without a proof", seed, m.name)
				}
			}
		}
	}
	if decided < seeds/2 || invalid < seeds/20 {
		t.Errorf("decided %d and refuted %d of %d: the search is hardly exercised", decided, invalid, 2*seeds)
	}
}
