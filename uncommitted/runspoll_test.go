package uncommitted_test

import (
	"testing"

	"doppel/history"
	"doppel/uncommitted"
	"doppel/workload"
)

// TestRunsSearchPollsWhileListingChoices: one listing of a writer's choices (a lazy
// restart, whose frontier loop is quadratic in a long list) can be millions of units of
// work; the limits are asked within it, not only once per listing (a check of read
// uncommitted with --timeout 20s ran 24 s there, on a lost update among 10K
// transactions on 50 zipf keys).
func TestRunsSearchPollsWhileListingChoices(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Sessions, spec.Txns, spec.Ops, spec.Keys, spec.KeyDist = 30, 5000, 4, 50, "zipf"
	spec.DupKeys, spec.ValDomain, spec.Seed = 1, 6, 1
	bld := history.NewBuilder("gen")
	opt := workload.SimOptions{Behaviour: workload.SimSerializable, Fail: 0.05,
		Inject: []string{workload.InjectLostUpdate}, InjectAt: 0.5}
	if _, err := workload.SimulateInjected(spec, opt, bld.Add); err != nil {
		t.Fatal(err)
	}
	h, err := bld.Finish()
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	stop := func() bool { asked++; return asked > 1 }
	work, stopped, ok := uncommitted.LazyListing(h, stop)
	if !ok {
		t.Fatal("no runs search")
	}
	if asked < 2 || !stopped {
		t.Errorf("one listing of %d units of work asked the limits %d times (stopped %v), want them asked again within it", work, asked, stopped)
	}
}
