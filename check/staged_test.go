package check_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/workload"
)

// checkPhases checks h for models and returns the result and the phases it went through.
func checkPhases(t *testing.T, h *history.History, models []string) (check.Result, []string) {
	t.Helper()
	return checkPhasesWith(t, h, models, check.SolverOptions{})
}

// checkPhasesWith is checkPhases with the solver options given.
func checkPhasesWith(t *testing.T, h *history.History, models []string, solver check.SolverOptions) (check.Result, []string) {
	t.Helper()
	var mu sync.Mutex
	var phases []string
	// The time limit only ends a failing case sooner (unknown).
	res, err := check.Check(h, check.Options{Models: models, Timeout: 60 * time.Second, Solver: solver, Progress: func(p string) {
		mu.Lock()
		phases = append(phases, p)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	return res, phases
}

// genHistory is `doppel gen --sessions S --ops O --keys K --dup-keys 1 --val-domain V
// --txns N --seed seed [--inject inject]`.
func genHistory(t *testing.T, sessions, ops, keys, valDomain, txns int, seed int64, inject string) *history.History {
	t.Helper()
	spec := workload.DefaultSpec()
	spec.Sessions, spec.Ops, spec.Keys, spec.DupKeys, spec.ValDomain, spec.Txns, spec.Seed = sessions, ops, keys, 1, valDomain, txns, seed
	opt := workload.SimOptions{Behaviour: workload.SimSerializable}
	if inject != "" {
		opt.Inject, opt.InjectAt = []string{inject}, workload.DefaultInjectAt
	}
	return simulate(t, spec, opt)
}

// simulate is `doppel gen` with spec and opt.
func simulate(t *testing.T, spec workload.Spec, opt workload.SimOptions) *history.History {
	t.Helper()
	bld := history.NewBuilder("gen")
	if _, err := workload.SimulateInjected(spec, opt, bld.Add); err != nil {
		t.Fatal(err)
	}
	h, err := bld.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func verdicts(res check.Result) map[string]check.Validity {
	out := map[string]check.Validity{}
	for _, mr := range res.Models {
		out[mr.Model] = mr.Valid
	}
	return out
}

var serialAndSnapshot = []string{"serializable", "strict-serializable", "snapshot-isolation"}

// TestSnapshotReplaysWaitForSerialNarrowing: a valid duplicate-heavy history (10 keys
// of two values) whose serial replays get stuck, so that strict serializability is
// decided on its narrowed problem. That proves snapshot isolation too: the snapshot
// replays (with their repairs) must not run (they did, before the narrowing). The
// serial-order search, which finds one here, is off.
func TestSnapshotReplaysWaitForSerialNarrowing(t *testing.T) {
	h := genHistory(t, 8, 4, 10, 2, 1000, 3, "")
	res, phases := checkPhasesWith(t, h, serialAndSnapshot, check.SolverOptions{NoSerialSearch: true})
	for m, v := range verdicts(res) {
		if v != check.Valid {
			t.Errorf("%s: %v, want valid", m, v)
		}
	}
	if !slices.Contains(phases, "narrowing for strict-serializable") {
		t.Fatalf("the serial replays did not get stuck (phases %v): the case no longer tests the order", phases)
	}
	if slices.Contains(phases, "replaying under snapshot isolation") {
		t.Errorf("the snapshot replays ran although the narrowing proved a serial order (phases %v)", phases)
	}
}

// TestRelaxedSnapshotWitnessProvesWriteSkews: one write skew injected into a
// duplicate-heavy history (100 keys of three values), where the snapshot replays get
// lost among the duplicates long before the anomaly. The reads the serializable
// refutation runs through are relaxed, and the serial order of the relaxed history,
// read as snapshots, proves snapshot isolation: verified, without strong snapshot
// isolation's narrowing and search (which decided it before).
//
// The search for a snapshot-isolated execution proves it before (with it on, snapshot
// isolation is proved by that search); the witness is tested with the search off.
func TestRelaxedSnapshotWitnessProvesWriteSkews(t *testing.T) {
	for _, seed := range []int64{2, 6} {
		h := genHistory(t, 10, 6, 100, 3, 2000, seed, workload.InjectWriteSkew)
		res, phases := checkPhases(t, h, serialAndSnapshot)
		if v := verdicts(res)["snapshot-isolation"]; v != check.Valid || !slices.Contains(phases, "searching a snapshot-isolated execution") {
			t.Errorf("seed %d: snapshot isolation %v, phases %v; want it proved by the snapshot search", seed, v, phases)
		}
		res, phases = checkPhasesWith(t, h, serialAndSnapshot, check.SolverOptions{NoSnapshotSearch: true})
		want := map[string]check.Validity{"serializable": check.Invalid, "strict-serializable": check.Invalid, "snapshot-isolation": check.Valid}
		for m, v := range verdicts(res) {
			if v != want[m] {
				t.Errorf("seed %d: %s %v, want %v", seed, m, v, want[m])
			}
		}
		if !slices.Contains(phases, "replaying under snapshot isolation") {
			t.Fatalf("seed %d: the snapshot replays did not run (phases %v): the case no longer tests the witness", seed, phases)
		}
		if slices.Contains(phases, "narrowing for strong snapshot isolation") || !slices.Contains(phases, "replaying serially with reads relaxed") ||
			res.Stats.ReplayRejected != 0 {
			t.Errorf("seed %d: phases %v, %d replays rejected; want snapshot isolation proved with reads relaxed, before strong snapshot isolation's narrowing",
				seed, phases, res.Stats.ReplayRejected)
		}
	}
}

// TestRepairCatchUpProvesWriteSkew: snapshot isolation alone on a 10K write skew
// (100 keys of three values, seed 8), whose snapshot replay gets stuck every few
// hundred events. Its repairs resume from a copy at the earliest choice they undo
// (catchUp); from the copies n/8 events apart, the work bound ran out and strong
// snapshot isolation's narrowing and search decided. The snapshot search (before the
// repairs) is off: it proves it first.
func TestRepairCatchUpProvesWriteSkew(t *testing.T) {
	h := genHistory(t, 10, 6, 100, 3, 10_000, 8, workload.InjectWriteSkew)
	res, phases := checkPhasesWith(t, h, []string{"snapshot-isolation"}, check.SolverOptions{NoSnapshotSearch: true})
	if res.Valid != check.Valid || res.Stats.Repairs == 0 || res.Stats.ReplayRejected != 0 || slices.Contains(phases, "narrowing for strong snapshot isolation") {
		t.Errorf("%v, %d repairs, %d replays rejected, phases %v; want valid by a repaired replay, none rejected, no narrowing",
			res.Valid, res.Stats.Repairs, res.Stats.ReplayRejected, phases)
	}
}

// TestRelaxedSnapshotWitnessSkipsGSingle: with one G-single injected instead, the
// serializable refutation's cycle has a single anti-dependency, which snapshot
// isolation forbids too: its reads are not relaxed (each relaxed round narrows the
// whole history: 5 CPU-s at 10K for nothing), and snapshot isolation stays refuted.
func TestRelaxedSnapshotWitnessSkipsGSingle(t *testing.T) {
	h := genHistory(t, 10, 6, 100, 3, 2000, 2, workload.InjectGSingle)
	res, phases := checkPhases(t, h, serialAndSnapshot)
	for m, v := range verdicts(res) {
		if v != check.Invalid {
			t.Errorf("%s: %v, want not valid", m, v)
		}
	}
	if slices.Contains(phases, "replaying serially with reads relaxed") {
		t.Errorf("reads relaxed for a G-single (phases %v)", phases)
	}
}

// TestSnapshotReplayBeforeSerialSearch: snapshot isolation's replays, left for after
// the serializable-family models' narrowing, run before those models' solver. Here
// (`doppel gen --behaviour snapshot --sessions 5 --ops 4 --keys 200 --dup-keys 1
// --val-domain 2 --txns 1000 --seed 1`) the narrowing decides neither serializable nor
// strict serializability, and their search used the whole conflict bound before the
// snapshot replay, which proves snapshot isolation at once, ran: unknown.
func TestSnapshotReplayBeforeSerialSearch(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Sessions, spec.Ops, spec.Keys, spec.DupKeys, spec.ValDomain, spec.Txns, spec.Seed = 5, 4, 200, 1, 2, 1000, 1
	h := simulated(t, "gen", spec, workload.SimOptions{Behaviour: workload.SimSnapshot})
	res, err := check.Check(h, check.Options{Models: []string{"serializable", "snapshot-isolation"}, MaxConflicts: 10})
	if err != nil {
		t.Fatal(err)
	}
	if v := verdicts(res)["snapshot-isolation"]; v != check.Valid {
		t.Fatalf("snapshot isolation: %v, want valid (proved by its replay); %s", v, res.Message)
	}
}

// simulated is the history source names, simulated by workload.Simulate from spec.
func simulated(t *testing.T, source string, spec workload.Spec, opt workload.SimOptions) *history.History {
	t.Helper()
	bld := history.NewBuilder(source)
	if err := workload.Simulate(spec, opt, bld.Add); err != nil {
		t.Fatal(err)
	}
	h, err := bld.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
