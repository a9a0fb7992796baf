package check_test

import (
	"path/filepath"
	"strings"
	"testing"

	"doppel/check"
	"doppel/history"
	"doppel/workload"
)

// TestRepairDecidesStuckReplay: the replays of hard-350 get stuck on a wrong choice
// among writers of the same values; undoing the choices blame names proves every
// model with a verified replay, and no replay the verifiers reject.
func TestRepairDecidesStuckReplay(t *testing.T) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "limits", "hard-350.edn"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Check(h, check.Options{Models: check.ModelNames(), Solver: check.SolverOptions{NoPrune: true}})
	if err != nil {
		t.Fatal(err)
	}
	// Read uncommitted's models are not replayed: the replayed ones imply them.
	replayable := 0
	for _, m := range check.ModelNames() {
		if !strings.HasSuffix(m, "read-uncommitted") {
			replayable++
		}
	}
	if res.Valid != check.Valid || res.Stats.Repairs == 0 || res.Stats.Replayed != replayable || res.Stats.ReplayRejected != 0 {
		t.Fatalf("verdict %v, %d repairs, %d models replayed, %d replays rejected; want valid, repaired, every model replayed, none rejected",
			res.Valid, res.Stats.Repairs, res.Stats.Replayed, res.Stats.ReplayRejected)
	}
}

// TestRepairKeepsWriteSkewVerdicts: one write skew injected into a valid
// duplicate-heavy history. The serial replays get stuck on it and their repair cannot
// explain it (nothing to undo makes it serializable): the serializable models stay
// refuted and snapshot isolation proved, with the repair and without.
func TestRepairKeepsWriteSkewVerdicts(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Txns, spec.Seed = 100, 3, 1, 10, 6, 3000, 1
	bld := history.NewBuilder("write-skew")
	opt := workload.SimOptions{Behaviour: workload.SimSerializable, Inject: []string{workload.InjectWriteSkew}, InjectAt: workload.DefaultInjectAt}
	if _, err := workload.SimulateInjected(spec, opt, bld.Add); err != nil {
		t.Fatal(err)
	}
	h, err := bld.Finish()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]check.Validity{"serializable": check.Invalid, "strict-serializable": check.Invalid, "snapshot-isolation": check.Valid}
	models := []string{"serializable", "strict-serializable", "snapshot-isolation"}
	for _, noRepair := range []bool{false, true} {
		res, err := check.Check(h, check.Options{Models: models, Solver: check.SolverOptions{NoRepair: noRepair}})
		if err != nil {
			t.Fatal(err)
		}
		for _, mr := range res.Models {
			if mr.Valid != want[mr.Model] {
				t.Errorf("repair off %v: %s %v, want %v", noRepair, mr.Model, mr.Valid, want[mr.Model])
			}
		}
		if res.Stats.ReplayRejected != 0 {
			t.Errorf("repair off %v: %d replays rejected", noRepair, res.Stats.ReplayRejected)
		}
		if noRepair != (res.Stats.Repairs == 0) {
			t.Errorf("repair off %v: %d repairs", noRepair, res.Stats.Repairs)
		}
	}
}
