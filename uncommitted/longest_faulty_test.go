package uncommitted_test

import (
	"path/filepath"
	"testing"

	"doppel/history"
	"doppel/uncommitted"
	"doppel/workload"
)

// TestLongestReadsWitnessProvesFaultyHistories: faulty databases' histories with
// :info and :fail transactions (doppel gen --behaviour faulty --fault-rate 0.05
// --sessions 10 --ops 4 --keys 20 --val-domain 3 --dup-keys 1 --info 0.05 --fail 0.05)
// that the search over attributions leaves undecided within a bound are proved valid
// by the witness, and Decide says valid by it.
func TestLongestReadsWitnessProvesFaultyHistories(t *testing.T) {
	for _, seed := range []int64{1, 3, 12, 15} { // w1–w4; 12 and 15 need the dead-end rule that fills any waiting position
		spec := workload.DefaultSpec()
		spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Txns, spec.Seed = 20, 3, 1, 10, 4, 2000, seed
		h := simulated(t, spec, workload.SimOptions{Behaviour: workload.SimFaulty, FaultRate: 0.05, Info: 0.05, Fail: 0.05})
		x := uncommitted.NewIndex(h)
		if len(x.Findings) > 0 || x.Open() == 0 {
			t.Fatalf("seed %d: %d findings, %d open keys: not the history this test is about", seed, len(x.Findings), x.Open())
		}
		if uncommitted.SearchDecides(x, false, false, 2000) {
			t.Fatalf("seed %d: the search over attributions decided it: the test no longer shows the witness is needed", seed)
		}
		polls := 0 // bounds the search Decide falls back to when the witness fails
		r := x.Decide(false, false, func() bool { polls++; return polls > 4000 }, nil)
		if r.Verdict != uncommitted.Valid || !r.ByWitness {
			t.Fatalf("seed %d: %v (by the witness: %v), want valid by the witness", seed, r.Verdict, r.ByWitness)
		}
	}
}

// TestRunsSearchFollowsTheDatabase: histories of a database whose reads see aborted
// appends (doppel gen --behaviour faulty --faults aborted-read --fault-rate 0.05
// --sessions 10 --ops 4 --keys 20 --dup-keys 1 --val-domain 3) are proved valid by the
// runs search under process and real-time order: its narrow search keeps to each key's
// frontier, where the database appended. Without the frontier rules each of these was
// unknown after the search's whole budget (the first wrong turn, a committed writer
// taking an aborted append's position, showed hundreds of writers later).
func TestRunsSearchFollowsTheDatabase(t *testing.T) {
	for _, c := range []struct {
		txns int
		seed int64
	}{{3000, 22}, {5000, 1}, {5000, 11}} {
		spec := workload.DefaultSpec()
		spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Txns, spec.Seed = 20, 3, 1, 10, 4, c.txns, c.seed
		h := simulated(t, spec, workload.SimOptions{Behaviour: workload.SimFaulty, Faults: []string{workload.FaultAbortedRead}, FaultRate: 0.05})
		x := uncommitted.NewIndex(h)
		if len(x.Findings) > 0 {
			t.Fatalf("%d transactions, seed %d: %d findings: not the history this test is about", c.txns, c.seed, len(x.Findings))
		}
		if v := x.Runs(true, true, nil); v != uncommitted.Valid {
			t.Errorf("%d transactions, seed %d: the runs search says %v, want valid", c.txns, c.seed, v)
		}
	}
}

// TestRunsSearchLazyRestarts: a snapshot store's history with :fail and :info
// transactions (testdata/search/si-engine-2000-s1.edn.gz, from tools/othergen), whose
// uncommitted appends were mostly never installed, is proved valid under process and
// real-time order by the runs search: its lazy restarts leave those appends unplaced
// until a committed writer needs a position made uncommitted. With greedy restarts
// only it was unknown after the whole budget.
func TestRunsSearchLazyRestarts(t *testing.T) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", "si-engine-2000-s1.edn.gz"))
	if err != nil {
		t.Fatal(err)
	}
	x := uncommitted.NewIndex(h)
	if len(x.Findings) > 0 {
		t.Fatalf("%d findings: not the history this test is about", len(x.Findings))
	}
	if v := x.Runs(true, true, nil); v != uncommitted.Valid {
		t.Errorf("the runs search says %v, want valid", v)
	}
}
