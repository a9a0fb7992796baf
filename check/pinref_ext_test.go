package check_test

import (
	"strings"
	"testing"

	"doppel/check"
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
