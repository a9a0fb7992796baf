package uncommitted_test

import (
	"testing"

	"doppel/history"
	"doppel/uncommitted"
	"doppel/workload"
)

// TestSerialRefutesLostUpdates: a lost update among 200 transactions on 2 keys with
// values 1..3 (doppel gen --keys 2 --val-domain 3 --dup-keys 1 --sessions 10 --ops 6
// --txns 200 --inject lost-update --seed N): the loser's append fits under process
// order on each key alone, not on both. Decide refutes both strong forms by the serial
// search; the search over attributions alone does not end within 50,000 polls (64
// steps each: it was unknown after 30 s).
func TestSerialRefutesLostUpdates(t *testing.T) {
	for _, seed := range []int64{11, 13} {
		h := genLostUpdate(t, seed)
		x := uncommitted.NewIndex(h)
		for _, realtime := range []bool{false, true} {
			r := x.Decide(true, realtime, nil, nil)
			if r.Verdict != uncommitted.Invalid || r.Serial == nil || len(r.Serial.Stuck) == 0 {
				t.Fatalf("seed %d, realtime %v: %v, want not valid with the serial search's proof", seed, realtime, r.Verdict)
			}
		}
		if uncommitted.SearchDecides(x, true, false, 200) {
			t.Fatalf("seed %d: the search over attributions decided it: the test no longer shows the serial search is needed", seed)
		}
	}
}

func genLostUpdate(t *testing.T, seed int64) *history.History {
	t.Helper()
	spec := workload.DefaultSpec()
	spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Txns, spec.Seed = 2, 3, 1, 10, 6, 200, seed
	bld := history.NewBuilder("lost-update")
	opt := workload.SimOptions{Behaviour: workload.SimSerializable, Inject: []string{workload.InjectLostUpdate}, InjectAt: workload.DefaultInjectAt}
	if _, err := workload.SimulateInjected(spec, opt, bld.Add); err != nil {
		t.Fatal(err)
	}
	h, err := bld.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
