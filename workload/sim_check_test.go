package workload

import (
	"testing"
	"time"

	"doppel/check"
	"doppel/history"
)

// checkSim simulates spec under opt and checks the history against models.
func checkSim(t *testing.T, spec Spec, opt SimOptions, models ...string) check.Result {
	t.Helper()
	var events []history.Event
	err := Simulate(spec, opt, func(e *history.Event) error { events = append(events, *e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.FromEvents(events)
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Check(h, check.Options{Models: models, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func checkSpec(seed int64) Spec {
	s := DefaultSpec()
	s.Sessions, s.Txns, s.Keys, s.Ops, s.ValDomain, s.Seed = 5, 200, 8, 4, 4, seed
	return s
}

// TestSerializableSimulationValid: the Serializable behaviour linearizes every
// transaction inside its interval, so its histories are strict-serializable, with
// aborts, indeterminate completions and duplicate values alike.
func TestSerializableSimulationValid(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		opt := SimOptions{Behaviour: SimSerializable, Info: 0.1, Fail: 0.1}
		res := checkSim(t, checkSpec(seed), opt, "serializable", "strict-serializable")
		if res.Valid != check.Valid {
			t.Errorf("seed %d: serializable simulation judged %v: %v %s", seed, res.Valid, res.AnomalyTypes, res.Message)
		}
	}
}

// TestFaultySimulationInvalid: with faults in a quarter of the transactions, each
// fault alone makes the history invalid under strict serializability.
func TestFaultySimulationInvalid(t *testing.T) {
	for _, f := range AllFaults {
		opt := SimOptions{Behaviour: SimFaulty, Faults: []string{f}, FaultRate: 0.25}
		spec := checkSpec(1)
		if f == FaultDupNoop {
			spec.ValDomain = 2
			opt.FaultRate = 1 // dup-noop applies only to a few transactions
		}
		res := checkSim(t, spec, opt, "strict-serializable")
		if res.Valid != check.Invalid {
			t.Errorf("%s: faulty simulation judged %v %s", f, res.Valid, res.Message)
		} else {
			t.Logf("%s: %v", f, res.AnomalyTypes)
		}
	}
}

// TestSnapshotSimulation: Snapshot histories are snapshot-isolated and, under
// contention, not all serializable (write skew). The models are checked one at a time.
func TestSnapshotSimulation(t *testing.T) {
	notSerializable := 0
	for seed := int64(1); seed <= 3; seed++ {
		opt := SimOptions{Behaviour: SimSnapshot}
		if res := checkSim(t, checkSpec(seed), opt, "snapshot-isolation"); res.Valid != check.Valid {
			t.Errorf("seed %d: snapshot simulation judged %v under snapshot-isolation: %v %s",
				seed, res.Valid, res.AnomalyTypes, res.Message)
		}
		if res := checkSim(t, checkSpec(seed), opt, "serializable"); res.Valid == check.Invalid {
			notSerializable++
		}
	}
	if notSerializable == 0 {
		t.Error("no snapshot simulation was found non-serializable (write skew)")
	}
}

// TestStaleSnapshotSimulation: with stale snapshots (a replica's lag) the Snapshot
// behaviour's histories stay snapshot-isolated, and some are neither strong-session
// nor strong snapshot isolated: a transaction's snapshot misses what its own process
// or a transaction completed before it committed.
func TestStaleSnapshotSimulation(t *testing.T) {
	notStrong := 0
	for seed := int64(1); seed <= 3; seed++ {
		opt := SimOptions{Behaviour: SimSnapshot, Stale: 0.2, StaleCommits: 10}
		if res := checkSim(t, checkSpec(seed), opt, "snapshot-isolation"); res.Valid != check.Valid {
			t.Errorf("seed %d: stale snapshot simulation judged %v under snapshot-isolation: %v %s",
				seed, res.Valid, res.AnomalyTypes, res.Message)
		}
		res := checkSim(t, checkSpec(seed), opt, "strong-session-snapshot-isolation")
		if res.Valid == check.Invalid {
			notStrong++
		}
	}
	if notStrong == 0 {
		t.Error("no stale snapshot simulation was found not strong-session snapshot isolated")
	}
	if err := (SimOptions{Behaviour: SimSerializable, Stale: 0.1, StaleCommits: 1}).Validate(); err == nil {
		t.Error("stale snapshots accepted without the snapshot behaviour")
	}
}

// TestInfoHeavySimulationReplays: serializable histories where many keys see few,
// duplicated values and some transactions end :info are decided by the verified
// replay, for every model, with no encoding. An :info transaction whose append would
// take a trace position that a committed writer of the same value needs must not run
// there (the committed append would land past the trace and strand the readers of the
// whole trace), yet one that must have committed must run in time.
func TestInfoHeavySimulationReplays(t *testing.T) {
	models := []string{"serializable", "strict-serializable", "snapshot-isolation"}
	for seed := int64(1); seed <= 8; seed++ {
		spec := DefaultSpec()
		spec.Sessions, spec.Txns, spec.Ops, spec.Keys, spec.Seed = 20, 3000, 20, 3000, seed
		for _, fail := range []float64{0, 0.05} {
			opt := SimOptions{Behaviour: SimSerializable, Info: 0.05, Fail: fail}
			res := checkSim(t, spec, opt, models...)
			if res.Valid != check.Valid {
				t.Fatalf("seed %d, fail %v: serializable simulation judged %v: %v %s", seed, fail, res.Valid, res.AnomalyTypes, res.Message)
			}
			if res.Stats.Replayed != len(models) || res.Stats.ReplayRejected != 0 {
				t.Errorf("seed %d, fail %v: %d of %d models proved by a replay (%d replays rejected)",
					seed, fail, res.Stats.Replayed, len(models), res.Stats.ReplayRejected)
			}
		}
	}
}
