package uncommitted_test

import (
	"testing"

	"doppel/history"
	"doppel/uncommitted"
	"doppel/workload"
)

// TestSerialWitnessProvesReadUncommitted: stale reads (doppel gen --behaviour faulty
// --faults stale-read --fault-rate 0.05 --sessions 10 --ops 4 --keys 20 --val-domain 3
// --dup-keys 1 --txns 1000), where neither the longest reads' witness nor a bounded
// search over attributions decides read uncommitted (asked alone it was unknown at
// 10 s), while an order of the writers under process order exists: Decide without
// process order takes it as a witness.
func TestSerialWitnessProvesReadUncommitted(t *testing.T) {
	for _, seed := range []int64{1, 2} {
		spec := workload.DefaultSpec()
		spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Txns, spec.Seed = 20, 3, 1, 10, 4, 1000, seed
		h := simulated(t, spec, workload.SimOptions{Behaviour: workload.SimFaulty, FaultRate: 0.05, Faults: []string{workload.FaultStaleRead}})
		x := uncommitted.NewIndex(h)
		if len(x.Findings) > 0 || x.Open() == 0 {
			t.Fatalf("seed %d: %d findings, %d open keys: not the history this test is about", seed, len(x.Findings), x.Open())
		}
		if x.LongestReads(false, false, nil) {
			t.Fatalf("seed %d: the longest reads' witness proves it: the test no longer needs the serial one", seed)
		}
		if uncommitted.SearchDecides(x, false, false, 2000) {
			t.Fatalf("seed %d: the search over attributions decided it: the test no longer shows the witness is needed", seed)
		}
		polls := 0 // bounds the search Decide falls back to when the witness fails
		r := x.Decide(false, false, func() bool { polls++; return polls > 4000 }, nil)
		if r.Verdict != uncommitted.Valid || !r.ByWitness {
			t.Fatalf("seed %d: %v (by a witness: %v), want valid by a witness", seed, r.Verdict, r.ByWitness)
		}
	}
}

// simulated is the history workload.Simulate gives for spec and opt.
func simulated(t *testing.T, spec workload.Spec, opt workload.SimOptions) *history.History {
	t.Helper()
	bld := history.NewBuilder("simulated")
	if err := workload.Simulate(spec, opt, bld.Add); err != nil {
		t.Fatal(err)
	}
	h, err := bld.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
