package check_test

import (
	"fmt"
	"testing"

	"doppel/check"
	"doppel/workload"
)

// TestSnapshotReplayWithInfo: snapshot-behaviour histories on skewed keys with :info
// transactions (bench's snapshot-zipf family, 10K transactions) are proved snapshot
// isolated, strong snapshot isolation included, by the snapshot isolation replay. Ten
// solver conflicts decide nothing here, so only a replay can prove them; before the
// replay spared, aborted and ordered the optional transactions (check/sireplay.go)
// these were unknown, its replay stuck where an :info transaction invoked long before
// took a position a committed writer needed. Seeds 11 (2%) and 2 (5%) need the
// repaired guided replay to undo a committed writer's position whose commit would
// strand a reader (blame).
func TestSnapshotReplayWithInfo(t *testing.T) {
	for _, tc := range []struct {
		seed       int64
		info, fail float64
	}{{1, 0.02, 0}, {2, 0.02, 0}, {3, 0.02, 0}, {11, 0.02, 0}, {3, 0.05, 0.05}, {2, 0.05, 0.05}} {
		t.Run(fmt.Sprintf("seed%d-info%g-fail%g", tc.seed, tc.info, tc.fail), func(t *testing.T) {
			spec := workload.DefaultSpec()
			spec.Txns, spec.Sessions, spec.Ops, spec.Keys, spec.KeyDist, spec.DupKeys, spec.ValDomain, spec.Seed = 10_000, 20, 3, 50, "zipf", 0.3, 2, tc.seed
			h := simulated(t, "gen", spec, workload.SimOptions{Behaviour: workload.SimSnapshot, Info: tc.info, Fail: tc.fail})
			models := []string{"snapshot-isolation", "strong-snapshot-isolation"}
			res, err := check.Check(h, check.Options{Models: models, MaxConflicts: 10})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range models {
				if v := verdicts(res)[m]; v != check.Valid {
					t.Errorf("%s: %v, want valid (proved by the snapshot isolation replay); %s", m, v, res.Message)
				}
			}
			if res.Stats.Replayed == 0 || res.Stats.Conflicts > 0 || res.Stats.ReplayRejected > 0 {
				t.Errorf("decided by %d replays, %d conflicts, %d replays rejected; want the replay alone", res.Stats.Replayed, res.Stats.Conflicts, res.Stats.ReplayRejected)
			}
		})
	}
}

// TestStrongSessionSnapshotWithInfo: the same family where the replays get stuck
// (seed 9 at 2% :info, seed 6 at 5% :info and 5% :fail) is strong-session snapshot
// isolated (not strong-session serializable: a write skew). Process order alone
// narrows its start and commit events little, and on its own problem the hybrid
// witness and 2,000 conflicts decided nothing (seed 9 took 30,000 conflicts, 27 CPU-s);
// strong snapshot isolation's windows, tried first as a witness as for snapshot
// isolation, decide it within a few hundred.
func TestStrongSessionSnapshotWithInfo(t *testing.T) {
	for _, tc := range []struct {
		seed       int64
		info, fail float64
	}{{9, 0.02, 0}, {6, 0.05, 0.05}} {
		t.Run(fmt.Sprintf("seed%d-info%g-fail%g", tc.seed, tc.info, tc.fail), func(t *testing.T) {
			spec := workload.DefaultSpec()
			spec.Txns, spec.Sessions, spec.Ops, spec.Keys, spec.KeyDist, spec.DupKeys, spec.ValDomain, spec.Seed = 10_000, 20, 3, 50, "zipf", 0.3, 2, tc.seed
			h := simulated(t, "gen", spec, workload.SimOptions{Behaviour: workload.SimSnapshot, Info: tc.info, Fail: tc.fail})
			const m = "strong-session-snapshot-isolation"
			res, err := check.Check(h, check.Options{Models: []string{m}, MaxConflicts: 2000})
			if err != nil {
				t.Fatal(err)
			}
			if v := verdicts(res)[m]; v != check.Valid || res.Stats.ReplayRejected > 0 {
				t.Errorf("%s: %v after %d conflicts, %d witnesses rejected; want valid within 2000", m, v, res.Stats.Conflicts, res.Stats.ReplayRejected)
			}
		})
	}
}
