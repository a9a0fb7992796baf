package check

import (
	"path/filepath"
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
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", "family-e-360-s11.edn"))
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	commit := commitsOf(h)
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
