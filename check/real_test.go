package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"doppel/history"
)

// TestJepsenHistories checks histories that Jepsen recorded against real databases
// (from Elle's repository, kept in ../shared/histories beside the project) and that
// Elle has verdicts for.
func TestJepsenHistories(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "histories")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the shared Jepsen histories are not beside the project: %v", err)
	}
	for _, tc := range []struct {
		file   string
		models []string
		valid  []Validity
		types  []string // anomaly types the invalid models must report (prefix match)
	}{
		{"elle-si-without-g-single.edn", []string{"serializable", "snapshot-isolation"},
			[]Validity{Invalid, Valid}, []string{"G2-item"}},
		{"elle-huge-scc.edn", []string{"serializable", "strict-serializable"},
			[]Validity{Valid, Invalid}, []string{"G2-item-realtime"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			h, err := history.ParseFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Check(h, Options{Models: tc.models})
			if err != nil {
				t.Fatal(err)
			}
			for i, mr := range r.Models {
				if mr.Valid != tc.valid[i] {
					t.Errorf("%s: %v, want %v (%v)", mr.Model, mr.Valid, tc.valid[i], mr.AnomalyTypes)
				}
			}
			for _, want := range tc.types {
				found := false
				for _, a := range r.Anomalies {
					found = found || strings.HasPrefix(a.Type, want)
				}
				if !found {
					t.Errorf("no %s anomaly among %v", want, r.AnomalyTypes)
				}
			}
		})
	}
}
