package check

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"doppel/internal/brute"
)

// TestAlternatingAgainstBruteForce sends tiny histories through decideAlternating: no
// replays, no first strict witness search (as if it ended undecided) and the rounds
// starting at 1 ns, so the time caps cut searches at every point. A search cut
// by a cap must never count as a verdict, and the rounds must end in the brute force's.
func TestAlternatingAgainstBruteForce(t *testing.T) {
	defer func(slice time.Duration) { alternateFirstSlice = slice }(alternateFirstSlice)
	alternateFirstSlice, skipStrictWitness, skipReplays = time.Nanosecond, true, true
	defer func() { skipStrictWitness, skipReplays = false, false }()
	rounds := 0
	alternateHook = func() { rounds++ }
	defer func() { alternateHook = nil }()
	sets := [][]string{{"serializable"}, {"snapshot-isolation"}, {"serializable", "snapshot-isolation"}, {"strong-session-serializable"}}
	n := max(*seeds/40, 50)
	for _, cfg := range []brute.Config{{}, {Strategy: brute.SnapshotLike}, {Values: 3, MaxTxns: 7}} {
		for _, set := range sets {
			for seed := 0; seed < n; seed++ {
				h := brute.Random(rand.New(rand.NewPCG(uint64(seed), 7)), cfg)
				res, err := Check(h, Options{Models: set})
				if err != nil {
					t.Fatal(err)
				}
				for _, mr := range res.Models {
					if want := brute.Check(h, mr.Model); (mr.Valid == Valid) != want || mr.Valid == Unknown {
						t.Fatalf("seed %d, %s asked: %s is %v (%s), brute force says valid=%v\n%s", seed, strings.Join(set, "+"), mr.Model, mr.Valid, mr.Message, want, brute.Format(h))
					}
				}
			}
		}
	}
	t.Logf("%d strict witness rounds", rounds)
	if rounds == 0 {
		t.Fatal("no history alternated: the test exercises nothing")
	}
}
