package check

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"doppel/history"
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
				wantBruteVerdicts(t, seed, set, h, res)
			}
		}
	}
	t.Logf("%d strict witness rounds", rounds)
	if rounds == 0 {
		t.Fatal("no history alternated: the test exercises nothing")
	}
}

// TestStrictTurnsAgainstBruteForce sends tiny histories through the strict search's
// turns between the solver's rounds. Of the replays only the strict search runs (none
// within windows either), its first run bounded by one unit of work, so it is kept
// wherever it has a state to search. The rounds start at 1 ns, each with the search's
// turn first, so the search is cut at every point. Every verdict must be the brute
// force's, and every order the turns find must verify (none rejected).
func TestStrictTurnsAgainstBruteForce(t *testing.T) {
	defer func(slice time.Duration, work int64, rate float64) {
		alternateFirstSlice, strictFirstWork, strictResumeWorkPerSecond = slice, work, rate
	}(alternateFirstSlice, strictFirstWork, strictResumeWorkPerSecond)
	// Turns of 8 units at first (8 per nanosecond), doubling with the rounds.
	alternateFirstSlice, strictFirstWork, strictResumeWorkPerSecond, onlyStrictSearch = time.Nanosecond, 1, 8e9, true
	defer func() { onlyStrictSearch = false }()
	sets := [][]string{{"strict-serializable"}, {"serializable"}, {"serializable", "strict-serializable", "snapshot-isolation"},
		{"snapshot-isolation"}, {"read-committed"}, {"strong-session-read-committed"}}
	n := max(*seeds/40, 50)
	turns, found, rejectedPerRead := 0, 0, 0
	for _, cfg := range []brute.Config{{}, {Strategy: brute.SnapshotLike}, {Values: 3, MaxTxns: 7}} {
		for _, set := range sets {
			for seed := 0; seed < n; seed++ {
				h := brute.Random(rand.New(rand.NewPCG(uint64(seed), 11)), cfg)
				res, err := Check(h, Options{Models: set})
				if err != nil {
					t.Fatal(err)
				}
				// Read by read, the replay leaves version reads (reads missing their own
				// appends) to the verification (newPerReadReplay), which may reject its
				// order on one: counted apart, not failed on. Any other rejection is.
				rejectedPerRead += res.Stats.VersionReadRejected
				if res.Stats.ReplayRejected > 0 {
					t.Fatalf("seed %d, %s asked: %d orders rejected\n%s", seed, strings.Join(set, "+"), res.Stats.ReplayRejected, brute.Format(h))
				}
				turns += res.Stats.SearchTurns
				if res.Stats.SearchTurns > 0 && res.Stats.Searched > 0 {
					found++
				}
				wantBruteVerdicts(t, seed, set, h, res)
			}
		}
	}
	t.Logf("%d turns, %d histories proved by an order the turns found; %d read-by-read replays rejected on a version read", turns, found, rejectedPerRead)
	if found == 0 {
		t.Fatal("no order was found in turns: the test exercises nothing")
	}
}

// wantBruteVerdicts fails t unless every model of res has the brute force's verdict
// on h (unknown counts as a failure).
func wantBruteVerdicts(t *testing.T, seed int, set []string, h *history.History, res Result) {
	t.Helper()
	for _, mr := range res.Models {
		if want := brute.Check(h, mr.Model); (mr.Valid == Valid) != want || mr.Valid == Unknown {
			t.Fatalf("seed %d, %s asked: %s is %v (%s), brute force says valid=%v\n%s", seed, strings.Join(set, "+"), mr.Model, mr.Valid, mr.Message, want, brute.Format(h))
		}
	}
}
