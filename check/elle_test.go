package check

import (
	"path/filepath"
	"slices"
	"testing"

	"doppel/history"
)

// TestElleHistories runs histories transcribed from Elle's own list-append tests
// (elle.list-append-test: G1a, G1b, G1c, G-single, G2, strong SI, strong session SI,
// G-nonadjacent-process, contradictory read orders, dirty updates, duplicated elements,
// unobserved writes, G-nonadjacent, lost update, wr-process, the repeatable-read item
// tests, future read, internal; and histories/si-without-g-single.edn) under every
// model. Each row gives
// the verdicts Elle's test states (a model asked and its :valid?, or ruled out by its
// :not), and Elle's :not, which must be among doppel's Not. Elle writes an :ok read of
// the empty list as nil, and so may the transcriptions (doppel reads an :ok nil as the
// empty list too).
func TestElleHistories(t *testing.T) {
	// Elle's models between read committed and serializable: their verdicts follow from
	// Elle's table and the anomaly each test reports (G1a/G1b/G1c/incompatible-order
	// rule them all out; G-single rules out consistent view and up, not cursor stability
	// nor the models decided as read committed; G2 alone none of them).
	rcVerdict := []string{"monotonic-atomic-view", "monotonic-view", "monotonic-snapshot-read"}
	gSingle := []string{"consistent-view", "forward-consistent-view", "update-serializable"}
	between := list(rcVerdict, []string{"cursor-stability"}, gSingle)
	uncommittedAll := []string{"read-uncommitted", "strong-session-read-uncommitted", "strong-read-uncommitted"}
	// Elle's :not is read-uncommitted on duplicate-elements, unobserved-write and
	// internal (a G0) only; on every other test it is a stronger model, so read
	// uncommitted holds, and so do its strong forms (no ww edge with a process or
	// real-time edge makes a cycle in these tests).
	uncommittedNot := map[string]bool{"duplicate-elements.edn": true, "unobserved-write.edn": true, "internal.edn": true}
	for _, tc := range []struct {
		file           string
		valid, invalid []string
		not            []string
	}{
		{"g1a.edn", nil, list([]string{"read-committed", "repeatable-read"}, between), []string{"read-committed"}},
		{"g1b.edn", nil, list([]string{"read-committed", "strict-serializable"}, between), []string{"read-committed"}},
		{"g1c.edn", nil, list([]string{"read-committed"}, between), []string{"read-committed"}},
		{"g-single.edn", list([]string{"read-committed"}, rcVerdict, []string{"cursor-stability"}),
			list([]string{"repeatable-read", "snapshot-isolation", "serializable"}, gSingle), []string{"consistent-view", "repeatable-read"}},
		{"g2.edn", list([]string{"read-committed", "snapshot-isolation"}, between), []string{"repeatable-read", "serializable"},
			[]string{"repeatable-read"}},
		{"strong-si.edn", list([]string{"serializable"}, between), []string{"strong-snapshot-isolation", "strict-serializable"},
			[]string{"strong-snapshot-isolation"}},
		{"strong-session-si.edn", list([]string{"serializable"}, between), []string{"strong-session-snapshot-isolation"},
			[]string{"strong-session-snapshot-isolation"}},
		{"g-nonadjacent-process.edn", list([]string{"serializable"}, between), []string{"strong-session-snapshot-isolation"},
			[]string{"strong-session-snapshot-isolation"}},
		{"contradictory-read-orders.edn", nil, list([]string{"read-committed"}, between), []string{"read-committed"}},
		// Elle calls these dirty updates; doppel names the read of the failed append G1a.
		{"dirty-update.edn", nil, list([]string{"read-committed"}, between), []string{"read-committed"}},
		{"dirty-update-indirect.edn", nil, list([]string{"read-committed"}, between), []string{"read-committed"}},
		{"duplicate-elements.edn", nil, list([]string{"read-committed"}, between, uncommittedAll), []string{"read-uncommitted"}},
		{"unobserved-write.edn", nil, list([]string{"read-committed", "serializable"}, between, uncommittedAll), []string{"read-uncommitted"}},
		{"g-nonadjacent.edn", between, []string{"strict-serializable"}, []string{"snapshot-isolation", "repeatable-read"}},
		{"adjacent-rw.edn", list([]string{"snapshot-isolation"}, between), nil, nil},
		// Elle's lost-update: cursor stability and up.
		{"lost-update.edn", list([]string{"read-committed"}, rcVerdict), list([]string{"strict-serializable", "cursor-stability"}, gSingle), []string{"cursor-stability"}},
		{"double-write.edn", list([]string{"strict-serializable"}, between), nil, nil},
		{"wr-process.edn", between, []string{"strong-session-snapshot-isolation"}, []string{"strong-session-read-committed"}},
		{"rr-g-single-item.edn", list(rcVerdict, []string{"cursor-stability"}), list([]string{"repeatable-read"}, gSingle), []string{"consistent-view", "repeatable-read"}},
		{"rr-g-nonadjacent-item.edn", between, []string{"repeatable-read"}, []string{"repeatable-read", "snapshot-isolation"}},
		{"future-read.edn", nil, list([]string{"read-committed"}, between), []string{"read-committed"}},
		// internal only: Elle's models below serializable and snapshot isolation allow it.
		{"fauna-internal.edn", between, []string{"serializable"}, nil},
		// Elle's :not is read-uncommitted: it draws a G0 from T2's read, which does not
		// end with T2's own append but still shows a state of x (a version read,
		// DESIGN.md "Consistency models"): T1's 2 before T2's 3 before T1's 4.
		{"internal.edn", nil, list([]string{"read-committed", "serializable", "snapshot-isolation"}, between, uncommittedAll), []string{"read-uncommitted"}},
		{"si-without-g-single.edn", list([]string{"snapshot-isolation"}, between), []string{"repeatable-read"}, []string{"repeatable-read"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			h, err := history.ParseFile(filepath.Join("..", "testdata", "elle", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Check(h, Options{Models: []string{"all"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, mr := range res.Models {
				if !uncommittedNot[tc.file] && slices.Contains(uncommittedAll, mr.Model) && mr.Valid != Valid {
					t.Errorf("%s: %v, Elle's :not is above it (anomalies %v)", mr.Model, mr.Valid, mr.AnomalyTypes)
				}
				switch {
				case slices.Contains(tc.valid, mr.Model) && mr.Valid != Valid,
					slices.Contains(tc.invalid, mr.Model) && mr.Valid != Invalid:
					t.Errorf("%s: %v, Elle's test says otherwise (anomalies %v)", mr.Model, mr.Valid, mr.AnomalyTypes)
				}
			}
			for _, m := range tc.not {
				if !slices.Contains(res.Not, m) {
					t.Errorf("Elle's :not has %s; doppel's not is %v (also not %v)", m, res.Not, res.AlsoNot)
				}
			}
		})
	}
}
