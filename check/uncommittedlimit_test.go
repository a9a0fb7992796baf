package check_test

import (
	"fmt"
	"strings"
	"testing"

	"doppel/check"
	"doppel/workload"
)

// TestUncommittedSolverHonoursMaxConflicts: read uncommitted's solver over attributions
// runs in chunks of conflicts, and a chunk stops at the user's conflict limit (with
// --max-conflicts 1 it ran 500). The history is one read uncommitted takes to that
// solver: lost updates among duplicates, where the replays and witnesses find nothing.
func TestUncommittedSolverHonoursMaxConflicts(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Sessions, spec.Txns, spec.Ops, spec.Keys, spec.DupKeys, spec.ValDomain, spec.Seed = 10, 400, 4, 20, 1, 3, 1
	h := simulate(t, spec, workload.SimOptions{Behaviour: workload.SimFaulty,
		Faults: []string{workload.FaultLostUpdate}, FaultRate: 0.02})
	for _, tc := range []struct {
		model string
		max   int64
	}{
		{"read-uncommitted", 1},
		{"read-uncommitted", 700},
	} {
		res, err := check.Check(h, check.Options{Models: []string{tc.model}, MaxConflicts: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid != check.Unknown {
			// Decided within the limit: the test needs a history the solver must search.
			t.Fatalf("%s --max-conflicts %d: %v, want unknown", tc.model, tc.max, res.Valid)
		}
		if res.Stats.Conflicts > tc.max {
			t.Errorf("%s --max-conflicts %d: %d conflicts", tc.model, tc.max, res.Stats.Conflicts)
		}
		limit := fmt.Sprintf("conflict limit (%d)", tc.max)
		if !strings.Contains(res.Message, limit) {
			t.Errorf("%s: message %q, want it to name the %s", tc.model, res.Message, limit)
		}
	}
}
