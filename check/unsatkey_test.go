package check_test

import (
	"testing"

	"doppel/check"
	"doppel/history"
	"doppel/workload"
)

// TestKeyWithoutAttributionIsNamed: on `doppel gen --txns 200 --seed 1203 --keys 2
// --val-domain 5 --dup-keys 1 --sessions 10 --ops 2 --reads 0.7 --behaviour faulty
// --faults intermediate-read --fault-rate 0.1` (found by TestScreenUntunedHistories),
// key 0 has no attribution at all under the per-read reading, a pigeonhole over
// duplicate values the bounded search of ExplainOpenKeys gives up on: the solver's
// proof by cases found no case, and read committed and snapshot isolation were "not
// valid" with no anomaly. diagnoseUnsatKeys decides the key's own clauses and names it.
func TestKeyWithoutAttributionIsNamed(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Txns, spec.Seed, spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Reads = 200, 1203, 2, 5, 1, 10, 2, 0.7
	opt := workload.SimOptions{Behaviour: workload.SimFaulty, Faults: []string{"intermediate-read"}, FaultRate: 0.1}
	bld := history.NewBuilder("intermediate-read")
	if err := workload.Simulate(spec, opt, bld.Add); err != nil {
		t.Fatal(err)
	}
	h, err := bld.Finish()
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Check(h, check.Options{Models: []string{"read-committed", "snapshot-isolation"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, mr := range res.Models {
		if mr.Valid != check.Invalid || len(mr.AnomalyTypes) == 0 {
			t.Errorf("%s: %v, anomalies %v", mr.Model, mr.Valid, mr.AnomalyTypes)
		}
	}
}
