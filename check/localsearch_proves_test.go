package check_test

import (
	"testing"
	"time"

	"doppel/check"
	"doppel/workload"
)

// TestLocalSearchProvesFamilyE: a snapshot-behaviour history of 1,000 transactions on
// 20 keys of two values, serializable, where the replays, the forward backtracking
// search and a bounded solver find no serial order; the local search before the
// solver's first round does (0.04 CPU-s). Without it the solver gives up at its
// conflict limit. The serial searches are off here: the one from the end
// (searchSerialBackward) finds an order first.
func TestLocalSearchProvesFamilyE(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Sessions, spec.Ops, spec.Keys, spec.DupKeys, spec.ValDomain, spec.Txns, spec.Seed = 5, 2, 20, 1, 2, 1000, 22
	h := simulate(t, spec, workload.SimOptions{Behaviour: workload.SimSnapshot})
	for _, off := range []bool{false, true} {
		opts := check.Options{Models: []string{"serializable"}, Timeout: time.Minute, Solver: check.SolverOptions{NoLocalSearch: off, NoSerialSearch: true}}
		if off {
			opts.MaxConflicts = 2_000
		}
		res, err := check.Check(h, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats.ReplayRejected != 0 {
			t.Fatalf("local search off %v: %d orders rejected", off, res.Stats.ReplayRejected)
		}
		if proved := res.Valid == check.Valid && res.Stats.LocalSearched == 1; proved == off {
			t.Fatalf("local search off %v: %v, %d orders by local search; want the local search alone to prove it", off, res.Valid, res.Stats.LocalSearched)
		}
	}
}
