package shrink_test

import (
	"strings"
	"testing"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/internal/brute"
	"doppel/shrink"
	"doppel/workload"
)

// TestSearchOnlyKeepsTransactions: a lost update among 300 transactions on zipf keys,
// strong-session read committed, refuted only by the exhaustive search over the
// processes' orders. The checks of removals from a cut over refuteOnlyAbove
// transactions leave that search out, so the shrink removes no transaction and says
// why, instead of spending its time on removals none of which can be taken (15 s
// before, on this history, for the same cut).
func TestSearchOnlyKeepsTransactions(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Sessions, spec.Txns, spec.Ops, spec.Keys, spec.KeyDist, spec.DupKeys, spec.ValDomain, spec.Seed = 30, 300, 4, 50, "zipf", 1, 6, 3
	opt := workload.SimOptions{Behaviour: workload.SimSerializable, Fail: 0.05, Inject: []string{workload.InjectLostUpdate}, InjectAt: 0.5}
	bld := history.NewBuilder("search-only")
	if _, err := workload.SimulateInjected(spec, opt, bld.Add); err != nil {
		t.Fatal(err)
	}
	h, err := bld.Finish()
	if err != nil {
		t.Fatal(err)
	}
	const m = "strong-session-read-committed"
	res, err := check.Check(h, check.Options{Models: []string{m}})
	if err != nil || res.Valid != check.Invalid || !res.RefutedBySearchOnly(m) {
		t.Fatalf("the premise does not hold (another history is needed): %v, refuted by the search only: %v, %v", res.Valid, res.RefutedBySearchOnly(m), err)
	}
	reports, failures := shrink.Counterexamples(h, &res, time.Now().Add(20*time.Second))
	if len(reports) != 1 || len(failures) != 0 {
		t.Fatalf("reports %v, failures %q", reports, failures)
	}
	r := reports[0]
	if r.Minimal || !strings.Contains(r.NotMinimal, "only the search over every order of its processes") || r.Transactions <= shrink.RefuteOnlyAbove {
		t.Errorf("%d transactions, minimal %v: %q", r.Transactions, r.Minimal, r.NotMinimal)
	}

	// A cycle's proof is not the search's.
	small, err := brute.Parse(`T0 p0 ok [a x 1] inv=0 cmp=1
T1 p1 ok [r x [1]] [a x 2] inv=2 cmp=5
T2 p2 ok [r x [1]] [a x 3] inv=3 cmp=4
`)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := check.Check(small, check.Options{Models: []string{"serializable"}}); err != nil || res.Valid != check.Invalid || res.RefutedBySearchOnly("serializable") {
		t.Errorf("a lost update under serializable: %v, refuted by the search only: %v, %v", res.Valid, res.RefutedBySearchOnly("serializable"), err)
	}
}
