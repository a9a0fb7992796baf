package check

import (
	"strings"
	"testing"

	"doppel/history"
)

// gcursorHistory: T2 reads x = [1] and then appends 2, but another 1 comes between
// (T1's or T3's, whichever is second): T2 →rw it →ww T2, a G-single in each
// attribution, which read committed allows (T2's block may follow what it read
// anywhere).
const gcursorHistory = `{:type :invoke, :f :txn, :value [[:append :x 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:append :x 1]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:r :x nil] [:append :x 2]], :process 1, :index 2}
{:type :invoke, :f :txn, :value [[:append :x 1]], :process 2, :index 3}
{:type :ok, :f :txn, :value [[:append :x 1]], :process 2, :index 4}
{:type :ok, :f :txn, :value [[:r :x [1]] [:append :x 2]], :process 1, :index 5}
{:type :invoke, :f :txn, :value [[:r :x nil]], :process 3, :index 6}
{:type :ok, :f :txn, :value [[:r :x [1 1 2]]], :process 3, :index 7}
`

// TestGCursorPinsStayWithTheirModels: the G-cursor pin leaves key x without a
// segmentation for the models that forbid G-single, which name it a G-single from the
// pin; read committed and cursor stability, checked in the same call, stay valid with
// no anomaly of theirs (the finding is the G-single models' alone).
func TestGCursorPinsStayWithTheirModels(t *testing.T) {
	h, err := history.Parse(strings.NewReader(gcursorHistory), "gcursor")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"read-committed", "cursor-stability", "consistent-view", "forward-consistent-view", "update-serializable"}
	res, err := Check(h, Options{Models: names, Solver: SolverOptions{NoWitness: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, mr := range res.Models {
		single := models[mr.Model].single
		switch {
		case single && (mr.Valid != Invalid || !contains(mr.AnomalyTypes, "G-single")):
			t.Errorf("%s: %v %v, want not valid (G-single)", mr.Model, mr.Valid, mr.AnomalyTypes)
		case !single && (mr.Valid != Valid || len(mr.AnomalyTypes) > 0):
			t.Errorf("%s: %v %v, want valid with no anomaly", mr.Model, mr.Valid, mr.AnomalyTypes)
		}
	}
	found := false
	for _, a := range res.Anomalies {
		found = found || a.Type == "G-single" && strings.Contains(a.Explanation, "right after what its transaction read")
	}
	if !found {
		t.Errorf("no G-single named by the G-cursor pin among %+v", res.Anomalies)
	}
}
