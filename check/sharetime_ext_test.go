package check_test

import (
	"testing"
	"time"

	"doppel/check"
	"doppel/workload"
)

// TestUnroundedDecisionResumesAfterItsShare: a model decided without rounds (no strict
// witness or local search to alternate with: NoWitness) whose share of the time runs
// out is paused as the rounds are, and goes on with the time the others leave. Every
// share here ends at once, on snapshot stores' 300 transactions on 20 keys of two
// values; without the pause serializable stayed unknown ("the solver stopped without
// a verdict") with most of the time limit unused.
func TestUnroundedDecisionResumesAfterItsShare(t *testing.T) {
	check.ShareAndReplaysForTests(time.Nanosecond, true)
	defer check.ShareAndReplaysForTests(0, false)
	decided := 0
	for seed := int64(1); seed <= 3; seed++ {
		spec := workload.DefaultSpec()
		spec.Sessions, spec.Txns, spec.Ops, spec.Keys, spec.DupKeys, spec.ValDomain, spec.Seed = 5, 300, 2, 20, 1, 2, seed
		h := simulate(t, spec, workload.SimOptions{Behaviour: workload.SimSnapshot})
		res, err := check.Check(h, check.Options{Models: []string{"serializable", "snapshot-isolation"}, Timeout: time.Minute,
			Solver: check.SolverOptions{NoWitness: true}})
		if err != nil {
			t.Fatal(err)
		}
		for _, mr := range res.Models {
			if mr.Valid == check.Unknown {
				t.Errorf("seed %d: %s unknown: %s", seed, mr.Model, mr.Message)
			} else if mr.Model == "serializable" {
				decided++
			}
		}
	}
	if decided == 0 {
		t.Fatal("serializable decided on no seed: the test checks nothing")
	}
}
