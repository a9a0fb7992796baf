package check_test

import (
	"slices"
	"testing"

	"doppel/check"
	"doppel/history"
	"doppel/workload"
)

// TestVersionReadsKeepWitnesses: a transaction whose read misses its own append (a
// merged duplicate append, MariaDB's MDEV-26642: doppel gen --behaviour faulty
// --faults dup-noop --fault-rate 0.05 --sessions 10 --ops 4 --keys 20 --val-domain 3
// --dup-keys 1 --txns 2000 --seed 1) is internal, which the per-read models allow (a
// version read). The read-by-read replay handles version reads, so it still runs and
// proves read committed, with one solver conflict allowed; it used to be skipped
// whenever the per-read inference had found an internal read, and the per-read
// problem was left to the solver (unknown after 60 s).
func TestVersionReadsKeepWitnesses(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Txns, spec.Seed = 20, 3, 1, 10, 4, 2000, 1
	h := simulated(t, "dup-noop", spec, workload.SimOptions{Behaviour: workload.SimFaulty, FaultRate: 0.05, Faults: []string{workload.FaultDupNoop}})
	res, err := check.Check(h, check.Options{Models: []string{"read-committed", "cursor-stability"}, MaxConflicts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !hasVersionRead(h) {
		t.Fatal("no internal read: not the history this test is about")
	}
	for _, mr := range res.Models {
		if mr.Valid != check.Valid {
			t.Errorf("%s: %v (%s), want valid", mr.Model, mr.Valid, mr.Message)
		}
	}
	if res.Stats.Replayed == 0 {
		t.Errorf("no model proved by a verified replay (stats %+v)", res.Stats)
	}
}

// hasVersionRead reports whether some :ok transaction reads a key without its own
// earlier appends to it at the end of the list.
func hasVersionRead(h *history.History) bool {
	for t := range h.Txns {
		if h.Txns[t].Status != history.OK {
			continue
		}
		own := map[int32][]int32{}
		for _, op := range h.TxnOps(t) {
			if op.Kind == history.Append {
				own[op.Key] = append(own[op.Key], op.Value)
				continue
			}
			r, o := h.ReadList(&op), own[op.Key]
			if op.Known && (len(r) < len(o) || !slices.Equal(r[len(r)-len(o):], o)) {
				return true
			}
		}
	}
	return false
}
