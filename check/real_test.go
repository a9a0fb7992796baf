package check

import (
	"os"
	"path/filepath"
	"slices"
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

// TestRecordedPostgresG2 keeps a history doppel recorded from PostgreSQL 15 SERIALIZABLE
// (testdata/recorded/README.md): a G2-item among unique values, snapshot isolated.
func TestRecordedPostgresG2(t *testing.T) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "recorded", "postgres15-serializable-g2-item.edn"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(h, Options{Models: []string{"serializable", "snapshot-isolation"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Models[0].Valid != Invalid || r.Models[1].Valid != Valid {
		t.Fatalf("verdicts %+v", r.Models)
	}
	found := false
	for _, a := range r.Anomalies {
		if a.Type != "G2-item" {
			continue
		}
		var idx []int64
		for _, tx := range a.Txns {
			idx = append(idx, tx.Index)
		}
		found = found || len(idx) == 3 && slices.Contains(idx, 2294) && slices.Contains(idx, 2298) && slices.Contains(idx, 2302)
	}
	if !found {
		t.Fatalf("no G2-item among T2294, T2298, T2302: %+v", r.AnomalyTypes)
	}
}
