package check

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"doppel/history"
)

var update = flag.Bool("update", false, "rewrite testdata/cases/*.expected.json from the checker's output")

var allModels = []string{"serializable", "strong-session-serializable", "strict-serializable"}

// summary is the part of a result the golden files pin down: per model the verdict and
// anomaly types, and per anomaly its type, key and transactions.
type summary struct {
	Valid     Validity
	Models    []ModelResult
	Anomalies []anomalySummary
}

type anomalySummary struct {
	Type string
	Key  string
	Txns []int64
}

func summarize(r Result) summary {
	s := summary{Valid: r.Valid, Models: r.Models}
	for _, a := range r.Anomalies {
		as := anomalySummary{Type: a.Type, Key: a.Key}
		for _, t := range a.Txns {
			as.Txns = append(as.Txns, t.Index)
		}
		s.Anomalies = append(s.Anomalies, as)
	}
	return s
}

func checkFile(t *testing.T, path string) (*history.History, Result) {
	t.Helper()
	h, err := history.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(h, Options{Models: allModels})
	if err != nil {
		t.Fatal(err)
	}
	return h, r
}

// TestCases checks every hand-written history against its expected result, in EDN and
// converted to JSON lines.
func TestCases(t *testing.T) {
	files, _ := filepath.Glob("../testdata/cases/*.edn")
	if len(files) < 15 {
		t.Fatalf("expected the hand-written cases, found %d files", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".edn")
		t.Run(name, func(t *testing.T) {
			h, r := checkFile(t, f)
			got := summarize(r)
			golden := strings.TrimSuffix(f, ".edn") + ".expected.json"
			if *update {
				b, _ := json.MarshalIndent(got, "", "  ")
				if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			var want summary
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("result differs from %s (-want +got):\n%s", golden, d)
			}
			for _, a := range r.Anomalies {
				if a.Explanation == "" || len(a.Txns) == 0 {
					t.Errorf("anomaly %s lacks an explanation or transactions", a.Type)
				}
			}
			// The same history as JSON lines (committed beside it) gives the same result.
			jsonPath := strings.TrimSuffix(f, ".edn") + ".jsonl"
			if *update {
				var buf bytes.Buffer
				if err := history.WriteHistoryJSON(&buf, h); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(jsonPath, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, rj := checkFile(t, jsonPath)
			if d := cmp.Diff(got, summarize(rj)); d != "" {
				t.Errorf("%s gives another result than %s:\n%s", jsonPath, f, d)
			}
		})
	}
}
