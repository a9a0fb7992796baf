package check

import (
	"math/rand/v2"
	"testing"

	"doppel/encode"
	"doppel/internal/brute"
)

// TestSICopyFloorBoundsCopy: siScheduleRepaired gives up before building the replay
// when siCopyFloor already exceeds the copy bound, so the floor must never exceed what
// the built replay copies (else a repair that fits would be skipped).
func TestSICopyFloorBoundsCopy(t *testing.T) {
	for _, cfg := range []brute.Config{{}, {Strategy: brute.FailInfo}, {Strategy: brute.SnapshotLike}, {Values: 3, MaxTxns: 7}} {
		for seed := 0; seed < 200; seed++ {
			rng := rand.New(rand.NewPCG(uint64(seed), 3))
			h := brute.Random(rng, cfg)
			in := encode.Infer(h)
			s := newSIReplay(h, in, commitsOf(h), nil)
			s.filledBy = newFilledBy(len(s.traceAt))
			if floor, copied := siCopyFloor(h, in), s.copyBytes()+4*int64(len(s.traceAt)); floor > copied {
				t.Fatalf("seed %d: floor %d bytes, the replay copies %d\n%s", seed, floor, copied, brute.Format(h))
			}
		}
	}
}
