package check_test

import (
	"strings"
	"testing"

	"doppel/check"
	"doppel/workload"
)

// TestPinRefutationSkipsTheSearch: an injected G-single among long lists of two values
// (every value duplicated) is refuted for the one-base models without building the
// problem, and its explanation names the two reads of each step.
func TestPinRefutationSkipsTheSearch(t *testing.T) {
	h := genHistory(t, 8, 10, 10, 2, 300, 301, "g-single")
	res, err := check.Check(h, check.Options{Models: []string{"serializable", "strict-serializable", "snapshot-isolation", "read-committed"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, mr := range res.Models {
		want := check.Invalid
		if mr.Model == "read-committed" {
			want = check.Valid
		}
		if mr.Valid != want {
			t.Errorf("%s: %v, want %v", mr.Model, mr.Valid, want)
		}
	}
	if res.Stats.PinRefuted != 3 || res.Stats.Variables != 0 {
		t.Errorf("refuted by pins: %d models (want 3), %d variables (want 0: no encoding)", res.Stats.PinRefuted, res.Stats.Variables)
	}
	if len(res.Anomalies) == 0 || res.Anomalies[0].Type != "G-single" || !strings.Contains(res.Anomalies[0].Explanation, "before appending") {
		t.Errorf("anomalies: %+v", res.Anomalies)
	}
}

// TestRelaxedSearchProvesHotWriteSkew: snapshot isolation alone on a write skew injected
// among hot keys (`--sessions 30 --ops 2 --keys 20 --key-dist hotspot --reads 0.2
// --dup-keys 1 --val-domain 3 --txns 500 --seed 401`), whose relaxed history (the write
// skew's reads left unknown) the serial replays cannot order: the serial-order search
// finds the order, read as snapshots on the real history. With one conflict allowed,
// and unknown without the search.
func TestRelaxedSearchProvesHotWriteSkew(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Sessions, spec.Ops, spec.Keys, spec.KeyDist, spec.Reads, spec.DupKeys, spec.ValDomain, spec.Txns, spec.Seed = 30, 2, 20, "hotspot", 0.2, 1, 3, 500, 401
	opt := workload.SimOptions{Behaviour: workload.SimSerializable, Inject: []string{workload.InjectWriteSkew}, InjectAt: workload.DefaultInjectAt}
	h := simulate(t, spec, opt)
	for _, off := range []bool{false, true} {
		res, err := check.Check(h, check.Options{Models: []string{"snapshot-isolation"}, MaxConflicts: 1,
			Solver: check.SolverOptions{NoSerialSearch: off}})
		if err != nil {
			t.Fatal(err)
		}
		want := check.Valid
		if off {
			want = check.Unknown
		}
		if res.Valid != want {
			t.Errorf("serial-order search off=%v: %v, want %v", off, res.Valid, want)
		}
	}
}
