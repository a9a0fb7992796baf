package check

import (
	"path/filepath"
	"slices"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/localsearch"
	"doppel/sat"
)

// TestLocalSearchRestartsProveFamilyE: a snapshot-behaviour history of 360
// transactions on 20 keys of two values (family E, seed 11: testdata/search), serializable, where the
// local search before the first round ends one unsatisfied read short; the rounds'
// restarts (seeds and Luby lengths as localSearch draws them) find an order that
// verifySerial accepts within their first dozen runs. One run of all those moves
// together with the first run's seed does not (it stays stuck where it started).
func TestLocalSearchRestartsProveFamilyE(t *testing.T) {
	h, in, commit := familyE360(t)
	n := len(h.Txns)
	if _, ok := localsearch.SerialOrder(h, in, commit, localsearch.Options{MaxMoves: 1000 + 20*n, MaxWork: localFirstWork}); ok {
		t.Fatal("the first run found an order: the history no longer tests the restarts")
	}
	total := 0
	for run := 0; run < 12; run++ {
		moves := localRestartUnit(n) * int(sat.Luby(run))
		total += moves
		order, ok := localsearch.SerialOrder(h, in, commit, localsearch.Options{MaxMoves: moves, Seed: uint64(run + 1)})
		if !ok {
			continue
		}
		if err := verifySerial(h, in, order, false, false); err != nil {
			t.Fatalf("run %d: the order is rejected: %v", run, err)
		}
		var pr localsearch.Progress
		if _, ok := localsearch.SerialOrder(h, in, commit, localsearch.Options{MaxMoves: total, Progress: &pr}); ok {
			t.Logf("one run of %d moves found an order too", total)
		}
		t.Logf("run %d (%d moves, %d in all) found an order; one long run of as many moves ends at %d unsatisfied reads", run, moves, total, pr.Best)
		return
	}
	t.Fatalf("no order within 12 restarts (%d moves)", total)
}

// familyE360 is testdata/search/family-e-360-s11.edn, its inference and commits.
func familyE360(t *testing.T) (*history.History, *encode.Inference, []encode.Commit) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", "family-e-360-s11.edn"))
	if err != nil {
		t.Fatal(err)
	}
	return h, encode.Infer(h), commitsOf(h)
}

// TestLocalSearchContinues: a run continued in slices (as a caller whose time comes in
// slices would go on with it) makes the same moves as the run in one call: the same
// progress, the same best order kept, and at the end the same order found or not.
func TestLocalSearchContinues(t *testing.T) {
	h, in, commit := familyE360(t)
	for seed := uint64(1); seed <= 4; seed++ {
		const moves = 30_000
		var whole localsearch.Progress
		var wholeBest []int32
		one := localsearch.New(h, in, commit, seed)
		wholeOrder, wholeOK := one.Continue(localsearch.Options{MaxMoves: moves, Progress: &whole, Best: &wholeBest, BestWithin: 8})
		r := localsearch.New(h, in, commit, seed)
		var pr localsearch.Progress
		var best, order []int32
		var ok bool
		calls := 0
		for left := moves; left > 0 && !ok; calls++ {
			step := min(left, 1+int(seed)*997*(calls+1)%7919)
			made := r.Moves()
			order, ok = r.Continue(localsearch.Options{MaxMoves: step, Progress: &pr, Best: &best, BestWithin: 8})
			if !ok && r.Moves()-made != step {
				t.Fatalf("seed %d: a slice of %d moves made %d", seed, step, r.Moves()-made)
			}
			left -= r.Moves() - made
		}
		if ok != wholeOK || pr != whole || r.Moves() != one.Moves() {
			t.Fatalf("seed %d: in %d slices found=%v %+v after %d moves; in one call found=%v %+v after %d", seed, calls, ok, pr, r.Moves(), wholeOK, whole, one.Moves())
		}
		if !slices.Equal(order, wholeOrder) || !slices.Equal(best, wholeBest) {
			t.Fatalf("seed %d: the orders differ between %d slices and one call", seed, calls)
		}
		t.Logf("seed %d: %d slices, found=%v, best %d of %d", seed, calls, ok, pr.Best, pr.Start)
	}
}
