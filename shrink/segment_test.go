package shrink_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/internal/brute"
	"doppel/report"
	"doppel/shrink"
	"doppel/workload"
)

// TestOrderCountKeepsItsSegment: a lost update injected into 200 transactions on two
// keys of values 1..3 (doppel gen --keys 2 --val-domain 3 --dup-keys 1 --sessions 10
// --ops 6 --txns 200 --inject lost-update --seed 13) is not valid under strong-session
// read committed only by a count: the loser's append fits in no position its process
// order leaves it. Rules 1–9 kept every writer of the key (162 transactions, the time
// ran out); rule 10 keeps the segment the whole's windows overfill and what bounds it.
func TestOrderCountKeepsItsSegment(t *testing.T) {
	h, injected, res, reports := lostUpdateCounterexample(t, 13)
	r := reports[0]
	var segments int
	count := ""
	for _, p := range r.Prefixes {
		segments += len(p.Confined)
		for _, sp := range p.Confined {
			if n := sp.To - sp.From + 1; sp.Appends > n {
				count = fmt.Sprintf("append %d values and it has %d", sp.Appends, n)
			}
		}
	}
	if r.Transactions > 10 || segments == 0 {
		t.Fatalf("counterexample of %d transactions, %d stretches kept by their windows; want at most 10, one at least:\n%s", r.Transactions, segments, r.EDNText())
	}
	for _, inv := range injected[0].Invokes {
		found := false
		for _, t0 := range r.Orig() {
			found = found || t0 >= 0 && int64(h.Txns[t0].Invoke) == inv
		}
		if !found {
			t.Errorf("the injected transaction invoked at %d is not in the counterexample:\n%s", inv, r.EDNText())
		}
	}
	// The count is stated where a person reads the counterexample: the EDN file's
	// comments (and so the text output's lines) and the report page.
	if count == "" || !strings.Contains(r.EDNText(), count) {
		t.Errorf("no overfull stretch stated as %q in the counterexample:\n%s", count, r.EDNText())
	}
	dir := t.TempDir()
	if err := report.Write(dir, h, &res, reports); err != nil {
		t.Fatal(err)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "index.html")); err != nil || !strings.Contains(string(page), count) {
		t.Errorf("the report page does not state the count %q (err %v)", count, err)
	}
	if ok, err := brute.CheckGraph(r.History(), orderCountModel); err != nil || ok {
		t.Errorf("the brute force finds the counterexample valid (err %v):\n%s", err, r.EDNText())
	}
	if r.WhyLarge != "" {
		t.Errorf("a counterexample of %d transactions says why it is large: %s", r.Transactions, r.WhyLarge)
	}
	t.Logf("%d transactions:\n%s", r.Transactions, r.EDNText())
}

// TestLargeCounterexampleSaysWhy: the same family at seed 12 shrinks to 11 transactions
// (1-minimal), past the bar of 10, and the counterexample says which key's unpinned
// writers make it so.
func TestLargeCounterexampleSaysWhy(t *testing.T) {
	_, _, _, reports := lostUpdateCounterexample(t, 12)
	r := reports[0]
	if r.Transactions <= 10 {
		t.Fatalf("the counterexample has %d transactions (11 when written): pick a history whose counterexample is large", r.Transactions)
	}
	if !strings.Contains(r.WhyLarge, "append to key") || !strings.Contains(r.WhyLarge, "rules 4, 9 and 10") {
		t.Errorf("a counterexample of %d transactions does not say why: %q", r.Transactions, r.WhyLarge)
	}
	t.Log(r.WhyLarge)
}

// orderCountModel is the model the order-count counterexample tests shrink under.
const orderCountModel = "strong-session-read-committed"

// lostUpdateCounterexample simulates the family of TestOrderCountKeepsItsSegment at
// seed, requires it not valid under orderCountModel, and shrinks it to its one counterexample. No
// deadline: the sizes the tests assert must not depend on the machine's load (without
// rule 10 the search is at 162 transactions after a minute).
func lostUpdateCounterexample(t *testing.T, seed int64) (*history.History, []workload.Injection, check.Result, []*shrink.Report) {
	t.Helper()
	spec := workload.DefaultSpec()
	spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Txns, spec.Seed = 2, 3, 1, 10, 6, 200, seed
	bld := history.NewBuilder("lost-update")
	opt := workload.SimOptions{Behaviour: workload.SimSerializable, Inject: []string{workload.InjectLostUpdate}, InjectAt: workload.DefaultInjectAt}
	injected, err := workload.SimulateInjected(spec, opt, bld.Add)
	if err != nil {
		t.Fatal(err)
	}
	h, err := bld.Finish()
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Check(h, check.Options{Models: []string{orderCountModel}})
	if err != nil || res.Valid != check.Invalid {
		t.Fatalf("%s: %v %v", orderCountModel, res.Valid, err)
	}
	reports, failures := shrink.Counterexamples(h, &res, time.Time{})
	if len(reports) != 1 || len(failures) > 0 {
		t.Fatalf("%s: %v %v", orderCountModel, reports, failures)
	}
	return h, injected, res, reports
}
