package check

import (
	"math/rand/v2"
	"testing"

	"doppel/encode"
	"doppel/internal/brute"
)

// TestRCSerialAgainstBruteForce runs the serial search alone on random tiny histories
// with heavy duplication: every verdict it gives for strong-session and strong read
// committed is the oracle's, and it decides most of them, a good share not valid.
func TestRCSerialAgainstBruteForce(t *testing.T) {
	seeds := 6000
	if testing.Short() {
		seeds = 600
	}
	configs := []brute.Config{{MaxTxns: 7, Values: 2}, {Strategy: brute.Realtime}, {Values: 3, MaxTxns: 9, MaxKeys: 2}, {Strategy: brute.SnapshotLike}}
	decided, invalid := 0, 0
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 29))
		h := brute.Random(rng, configs[seed%len(configs)])
		in := encode.InferPerRead(h)
		if in.CheckValues(); len(in.Findings) > 0 {
			continue
		}
		for _, m := range []string{"strong-session-read-committed", "strong-read-committed"} {
			s := newRCSerial(h, in, models[m].realtime, nil)
			if s == nil {
				continue
			}
			v := s.run()
			if v == Unknown {
				t.Fatalf("seed %d, %s: unknown without limits", seed, m)
			}
			decided++
			want := brute.Check(h, m)
			if (v == Valid) != want {
				t.Fatalf("seed %d, %s: the serial search says %v, the oracle valid=%v\n%s", seed, m, v, want, brute.Format(h))
			}
			if v == Valid {
				at, err := verifyPerReadLists(h, in, s.order)
				if err == nil {
					err = verifyOrders(h, at, true, models[m].realtime)
				}
				if err != nil {
					t.Fatalf("seed %d, %s: the order found does not verify: %v\n%s", seed, m, err, brute.Format(h))
				}
			} else {
				invalid++
			}
		}
	}
	if decided < seeds || invalid < seeds/10 {
		t.Errorf("decided %d and refuted %d of %d: the search is hardly exercised", decided, invalid, 2*seeds)
	}
}
