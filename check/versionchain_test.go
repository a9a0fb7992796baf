package check_test

import (
	"flag"
	"testing"

	"doppel/check"
	"doppel/internal/brute"
	"doppel/workload"
)

// TestMergedAppendsPlacedByChains: histories of a database that merges a duplicate
// append into an equal value just appended by another transaction (dup-noop), whose
// read-by-read replays all get stuck: the merged append needs a place of its value,
// and the blocks of that value after it one place further each. The replay of the
// history without the merged appends, with them placed by a chain (mergedChains),
// proves read committed and cursor stability with one solver conflict allowed (before:
// unknown, the per-read problem's solver at the limit). Seed 8 at 2,000 needs the
// displaced block's transaction, which has no reads, moved earlier on all four keys it
// appends to (earlierMove; before: unknown).
func TestMergedAppendsPlacedByChains(t *testing.T) {
	for _, tc := range []struct {
		txns int
		rate float64
		seed int64
	}{{2000, 0.05, 30}, {2000, 0.05, 41}, {2000, 0.05, 8}, {150, 1, 13}, {150, 1, 15}} {
		spec := workload.DefaultSpec()
		spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Txns, spec.Seed = 20, 3, 1, 10, 4, tc.txns, tc.seed
		h := simulated(t, "dup-noop", spec, workload.SimOptions{Behaviour: workload.SimFaulty, FaultRate: tc.rate, Faults: []string{workload.FaultDupNoop}})
		if !hasVersionRead(h) {
			t.Fatalf("txns %d seed %d: no internal read: not the history this test is about", tc.txns, tc.seed)
		}
		res, err := check.Check(h, check.Options{Models: []string{"read-committed", "cursor-stability"}, MaxConflicts: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, mr := range res.Models {
			if mr.Valid != check.Valid {
				t.Errorf("txns %d seed %d: %s: %v (%s), want valid", tc.txns, tc.seed, mr.Model, mr.Valid, mr.Message)
			}
		}
		if res.Stats.Replayed == 0 || res.Stats.ReplayRejected > 0 {
			t.Errorf("txns %d seed %d: stats %+v, want a verified replay and none rejected", tc.txns, tc.seed, res.Stats)
		}
	}
}

var chainSeeds = flag.Int("chain-seeds", 3000, "tiny dup-noop histories for TestMergedChainsAgainstBruteForce")

// TestMergedChainsAgainstBruteForce: on tiny histories with merged appends (dup-noop at
// every chance), whenever mergedChains places them its order passes verifyPerReadLists
// (its graph agrees with the verification) and the brute force finds the history
// valid under read committed.
func TestMergedChainsAgainstBruteForce(t *testing.T) {
	var tried, placed int
	for seed := int64(1); seed <= int64(*chainSeeds); seed++ {
		spec := workload.DefaultSpec()
		spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Txns, spec.Seed = 2, 2, 1, 3, 3, 7, seed
		h := simulated(t, "tiny", spec, workload.SimOptions{Behaviour: workload.SimFaulty, FaultRate: 1, Faults: []string{workload.FaultDupNoop}})
		ok, order, err := check.MergedChainsOrder(h)
		if !ok {
			continue
		}
		tried++
		if order == nil {
			continue
		}
		placed++
		if err != nil {
			t.Fatalf("seed %d: the chain's order fails verification: %v", seed, err)
		}
		if !brute.Check(h, "read-committed") {
			t.Fatalf("seed %d: placed by a chain, but not valid under read committed by the brute force", seed)
		}
	}
	t.Logf("%d histories with merged appends replayed without them, %d placed by chains", tried, placed)
	if placed == 0 {
		t.Error("no chain placed: the test checks nothing")
	}
}

var lnsSeeds = flag.Int("lns-seeds", 2000, "tiny dup-noop histories for TestMergedLNSAgainstBruteForce")

// TestMergedLNSAgainstBruteForce: on the tiny histories of
// TestMergedChainsAgainstBruteForce, every order the neighbourhood search returns
// was verified (no solver model rejected by verifyPerReadLists) and the brute force
// finds the history valid under read committed.
func TestMergedLNSAgainstBruteForce(t *testing.T) {
	var tried, placed, chains, valid int
	for seed := int64(1); seed <= int64(*lnsSeeds); seed++ {
		spec := workload.DefaultSpec()
		spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Txns, spec.Seed = 2, 2, 1, 3, 3, 7, seed
		h := simulated(t, "tiny", spec, workload.SimOptions{Behaviour: workload.SimFaulty, FaultRate: 1, Faults: []string{workload.FaultDupNoop}})
		ok, at, rejected := check.MergedLNSOrder(h)
		if !ok {
			continue
		}
		tried++
		if rejected {
			t.Fatalf("seed %d: a solver model within the neighbourhood failed verification", seed)
		}
		bf := brute.Check(h, "read-committed")
		if bf {
			valid++
		}
		if _, order, _ := check.MergedChainsOrder(h); order != nil {
			chains++
		}
		if at == nil {
			continue
		}
		placed++
		if !bf {
			t.Fatalf("seed %d: placed by the neighbourhood search, but not valid under read committed by the brute force", seed)
		}
	}
	t.Logf("%d histories with merged appends replayed without them, %d valid by the brute force, %d placed by the neighbourhood search, %d by chains", tried, valid, placed, chains)
	if placed == 0 {
		t.Error("nothing placed: the test checks nothing")
	}
}
