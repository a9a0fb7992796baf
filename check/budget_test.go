package check

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"doppel/history"
)

// TestBudgetMessageNamesTheLimit: a model left unknown after the deadline passed,
// without a phase having asked the budget (a solver stopped by its own clock hook),
// is told which limit was reached, not "the  was reached while ,".
func TestBudgetMessageNamesTheLimit(t *testing.T) {
	var conflicts int64
	b := newBudget(Options{Start: time.Now().Add(-time.Hour), Timeout: time.Second}, &conflicts)
	b.phase = "deciding update-serializable"
	msg := b.message("update-serializable")
	if !strings.Contains(msg, "time limit (1s)") || !strings.Contains(msg, "deciding update-serializable") {
		t.Fatalf("message %q does not name the limit and the phase", msg)
	}
	none := newBudget(Options{}, &conflicts)
	if msg := none.message("read-committed"); !strings.Contains(msg, "no limit reached") {
		t.Fatalf("message %q without any limit reached", msg)
	}
}

// TestBudgetMessageCountsSearchStates: where the searches over orders did the work (read
// uncommitted's runs search spends a limit with no solver conflict), the message says
// how many states they failed, and a check they decide counts them in its stats.
func TestBudgetMessageCountsSearchStates(t *testing.T) {
	var conflicts, states int64 = 0, 38915
	b := newBudget(Options{Start: time.Now().Add(-time.Hour), Timeout: time.Second}, &conflicts)
	b.states = &states
	b.phase = "deciding strong-read-uncommitted"
	if msg := b.message("strong-read-uncommitted"); !strings.Contains(msg, "0 conflicts (all solver stages), 38915 failed states of the searches over orders") {
		t.Fatalf("message %q does not count the failed states", msg)
	}
	states = 0
	b = newBudget(Options{Start: time.Now().Add(-time.Hour), Timeout: time.Second}, &conflicts)
	b.states = &states
	if msg := b.message("serializable"); strings.Contains(msg, "failed states") {
		t.Fatalf("message %q names failed states where there were none", msg)
	}
	// The snapshot store with :fail and :info: read uncommitted's strong form is
	// decided by the runs search's restarts, after failed states of the first ones.
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", "si-engine-2000-s1.edn.gz"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(h, Options{Models: []string{"strong-read-uncommitted"}})
	if err != nil || res.Valid != Valid || res.Stats.SearchStates == 0 {
		t.Fatalf("valid %v, %d failed states counted, %v", res.Valid, res.Stats.SearchStates, err)
	}
}

// TestBudgetReserve: Options.Reserve brings the deadline forward by that much (at most
// the whole limit), and the message says that part was kept.
func TestBudgetReserve(t *testing.T) {
	var conflicts int64
	start := time.Now()
	b := newBudget(Options{Start: start, Timeout: 10 * time.Second, Reserve: 500 * time.Millisecond}, &conflicts)
	if got := b.deadline.Sub(start); got != 9500*time.Millisecond {
		t.Fatalf("deadline %v after the start, want 9.5s", got)
	}
	b = newBudget(Options{Start: start.Add(-time.Hour), Timeout: time.Second, Reserve: time.Hour}, &conflicts)
	if !b.deadline.Equal(start.Add(-time.Hour)) || !b.out() {
		t.Fatalf("a reserve over the limit: deadline %v, out %v", b.deadline, b.out())
	}
	if msg := b.message("serializable"); !strings.Contains(msg, "time limit (1s, of which 1s is kept for counterexamples)") {
		t.Fatalf("message %q does not say the part kept", msg)
	}
}
