package check_test

import (
	"strings"
	"testing"
	"time"

	"doppel/check"
	"doppel/workload"
)

// TestTimeoutInsideOneLongKey: one key of two values, appended to thousands of times
// and rarely read, encoded without narrowing: the time limit is reached while that one
// key is being encoded, and every model ends unknown, naming the limit and the phase
// (the builder asks the clock inside a key, not only between keys).
func TestTimeoutInsideOneLongKey(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Reads, spec.Txns, spec.Seed = 1, 2, 1, 8, 2, 0.02, 6000, 1
	h := simulated(t, "long-key", spec, workload.SimOptions{Behaviour: workload.SimSerializable})
	res, err := check.Check(h, check.Options{Models: check.ModelNames(), Timeout: 200 * time.Millisecond,
		Solver: check.SolverOptions{NoPrune: true, NoWitness: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, mr := range res.Models {
		if mr.Valid != check.Unknown || !strings.Contains(mr.Message, "time limit (200ms)") || !strings.Contains(mr.Message, "while building the encoding") {
			t.Errorf("%s: %v, %q; want unknown at the time limit, while building the encoding", mr.Model, mr.Valid, mr.Message)
		}
	}
}
