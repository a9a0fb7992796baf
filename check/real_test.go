package check

import (
	"compress/gzip"
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

// TestRecordedPostgresReadCommitted keeps a history doppel recorded from PostgreSQL 15
// READ COMMITTED with connections killed (testdata/recorded/README.md): valid under read
// committed, proved by the read-by-read replay without building the per-read problem
// (its solver took 385 s: the replay got stuck at 319 of 4,250 transactions where a
// transaction that read older lists was the right writer of a duplicate value).
func TestRecordedPostgresReadCommitted(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "recorded", "postgres15-read-committed-kill-conn.edn.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.Parse(zr, "postgres15-read-committed-kill-conn.edn")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(h, Options{Models: []string{"read-committed"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Models[0].Valid != Valid {
		t.Fatalf("read-committed: %v (%s)", r.Models[0].Valid, r.Message)
	}
	if r.Stats.Encoded() || r.Stats.Replayed != 1 {
		t.Fatalf("not proved by a verified replay alone: %d replayed, %d variables, %d edges", r.Stats.Replayed, r.Stats.Variables, r.Stats.Edges)
	}
}
