package check

import (
	"strings"
	"testing"
	"time"
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
