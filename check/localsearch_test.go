package check

import (
	"flag"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
	"doppel/localsearch"
)

var localSearchSeeds = flag.Int("local-search-seeds", 4000, "random tiny histories for TestLocalSearchAgainstBruteForce")

// TestLocalSearchAgainstBruteForce runs the local search for a serial order alone on
// random tiny duplicate-heavy histories: every order it returns must pass verifySerial
// and the history must be serializable by the brute force. It is not complete (a
// local search), but on histories this small it must find most serial orders.
func TestLocalSearchAgainstBruteForce(t *testing.T) {
	found, valid, checked := 0, 0, 0
	eachTinyHistory(*localSearchSeeds, 113, func(seed int, h *history.History, in *encode.Inference, want bool) {
		checked++
		if want {
			valid++
		}
		order, ok := localsearch.SerialOrder(h, in, commitsOf(h), localsearch.Options{MaxMoves: 2000, Seed: uint64(seed)})
		if !ok {
			return
		}
		found++
		if err := verifySerial(h, in, order, false, false); err != nil {
			t.Fatalf("seed %d: the local search's order does not verify: %v\n%s", seed, err, brute.Format(h))
		}
		if !want {
			t.Fatalf("seed %d: the local search found a serial order, the brute force says not serializable\n%s", seed, brute.Format(h))
		}
	})
	t.Logf("%d histories checked, %d serializable by the brute force, the local search found %d", checked, valid, found)
	if found*10 < valid*9 {
		t.Fatalf("the local search found %d of %d serializable histories", found, valid)
	}
}
