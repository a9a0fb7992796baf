package check

import (
	"path/filepath"
	"testing"
	"time"

	"doppel/history"
)

// TestShareTimeCapsAtTheModelsLeft checks the cap shareTime sets: the time left over
// the models still undecided, none for the last one or without a time limit.
func TestShareTimeCapsAtTheModelsLeft(t *testing.T) {
	var conflicts int64
	c := &checker{budget: newBudget(Options{Timeout: 60 * time.Second}, &conflicts), proven: map[string]bool{}}
	names := []string{"serializable", "strict-serializable", "snapshot-isolation"}
	results := map[string]*ModelResult{}
	lift := c.shareTime(names, results)
	if got := time.Until(c.budget.capUntil); got < 15*time.Second || got > 20*time.Second {
		t.Errorf("three models left of 60 s: a cap %v from now, want about 20 s", got)
	}
	lift()
	if !c.budget.capUntil.IsZero() {
		t.Error("the cap stays after lift")
	}
	results["serializable"] = &ModelResult{Valid: Unknown}
	c.proven["strict-serializable"] = true
	c.shareTime(names, results)()
	lift = c.shareTime(names, results)
	if !c.budget.capUntil.IsZero() {
		t.Error("one model left: capped")
	}
	lift()
	c.budget = newBudget(Options{}, &conflicts)
	delete(results, "serializable")
	if c.shareTime(names, results)(); !c.budget.capUntil.IsZero() {
		t.Error("no time limit: capped")
	}
}

// TestPausedRoundsResume pauses serializable's rounds on family E's 360-transaction
// history (valid, found by the rounds' local search) after its first round, as at the
// end of its share of the time: snapshot isolation is decided meanwhile, and the paused
// rounds must go on afterwards to the order (without the resumption serializable
// stays unknown).
func TestPausedRoundsResume(t *testing.T) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", "family-e-360-s11.edn"))
	if err != nil {
		t.Fatal(err)
	}
	paused, rounds := 0, 0
	pauseHook = func(m string) bool {
		if m != "serializable" {
			return false
		}
		rounds++
		if rounds == 2 { // after its first round
			paused++
			return true
		}
		return false
	}
	defer func() { pauseHook = nil }()
	// The neighbourhood search finds the order before the first round: left out, so
	// that the rounds are what is paused and resumed.
	defer func() { lnsOff = false }()
	lnsOff = true
	res, err := Check(h, Options{Models: []string{"serializable", "strict-serializable", "snapshot-isolation"}, Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if paused != 1 {
		t.Fatalf("serializable's rounds were not paused (%d): the history no longer reaches a second round", paused)
	}
	want := map[string]Validity{"serializable": Valid, "strict-serializable": Invalid, "snapshot-isolation": Valid}
	for _, mr := range res.Models {
		if mr.Valid != want[mr.Model] {
			t.Errorf("%s: %v (%s), want %v", mr.Model, mr.Valid, mr.Message, want[mr.Model])
		}
	}
}
