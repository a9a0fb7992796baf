package check

import (
	"flag"
	"math/rand/v2"
	"testing"

	"doppel/encode"
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
	for seed := 0; seed < *localSearchSeeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 113))
		cfg := brute.Config{Strategy: brute.Strategies[seed%len(brute.Strategies)]}
		if seed%4 == 3 {
			cfg = brute.Config{Values: 3, MaxTxns: 7}
		}
		h := brute.Random(rng, cfg)
		in := encode.Infer(h)
		if in.CheckValues(); len(in.Findings) > 0 {
			continue
		}
		checked++
		want := brute.Check(h, "serializable")
		if want {
			valid++
		}
		order, ok := localsearch.SerialOrder(h, in, commitsOf(h), localsearch.Options{MaxMoves: 2000, Seed: uint64(seed)})
		if !ok {
			continue
		}
		found++
		if err := verifySerial(h, in, order, false, false); err != nil {
			t.Fatalf("seed %d: the local search's order does not verify: %v\n%s", seed, err, brute.Format(h))
		}
		if !want {
			t.Fatalf("seed %d: the local search found a serial order, the brute force says not serializable\n%s", seed, brute.Format(h))
		}
	}
	t.Logf("%d histories checked, %d serializable by the brute force, the local search found %d", checked, valid, found)
	if found*10 < valid*9 {
		t.Fatalf("the local search found %d of %d serializable histories", found, valid)
	}
}
