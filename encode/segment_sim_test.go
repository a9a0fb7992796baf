package encode_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/workload"
)

// TestSegmentMatchesReferenceSimulated is TestSegmentMatchesReference on generated
// workloads: long lists of 2–3 values on a few hot keys (thousands of writers sharing
// a handful of sequences), with :info and :fail transactions, snapshot and faulty
// databases and injected anomalies, so that keys are fixed, open and unsatisfiable;
// and TestSegmentableGroupedMatchesPlan's comparison on them (without forcing the
// counting sort: these keys have many candidates).
func TestSegmentMatchesReferenceSimulated(t *testing.T) {
	states := map[encode.KeyState]int{}
	answered, searched := 0, 0
	for seed := int64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 17))
		spec := workload.DefaultSpec()
		spec.Seed, spec.DupKeys = seed, 1
		spec.Sessions = 2 + rng.IntN(10)
		spec.Txns = []int{100, 300, 800}[rng.IntN(3)]
		spec.Ops = 2 + rng.IntN(9)
		spec.Keys = 1 + rng.IntN(5)
		spec.ValDomain = 2 + rng.IntN(2)
		spec.KeyDist = []string{"uniform", "hotspot"}[rng.IntN(2)]
		opt := workload.SimOptions{Behaviour: []workload.Behaviour{workload.SimSerializable, workload.SimSnapshot, workload.SimFaulty}[rng.IntN(3)],
			Info: []float64{0, 0.02}[rng.IntN(2)], Fail: []float64{0, 0.05}[rng.IntN(2)], FaultRate: 0.05}
		if opt.Behaviour == workload.SimSerializable && rng.IntN(2) == 0 {
			opt.Inject, opt.InjectAt = []string{[]string{"lost-update", "write-skew", "g-single"}[rng.IntN(3)]}, workload.DefaultInjectAt
		}
		bld := history.NewBuilder("gen")
		if _, err := workload.SimulateInjected(spec, opt, bld.Add); err != nil {
			t.Fatal(err)
		}
		h, err := bld.Finish()
		if err != nil {
			t.Fatal(err)
		}
		for _, perRead := range []bool{false, true} {
			in := encode.Infer(h)
			if perRead {
				in = encode.InferPerRead(h)
			}
			in.CheckValues()
			if !perRead {
				a, s := encode.CompareSegmentable(t, in, fmt.Sprintf("seed %d (%+v, %+v)", seed, spec, opt))
				answered, searched = answered+a, searched+s
			}
			for wn, win := range []*encode.Windows{nil, encode.RandomWindows(rng, in)} {
				for k := range in.Keys {
					for _, cp := range [][2]bool{{true, true}, {false, true}, {true, false}, {false, false}} {
						got, want := encode.SegmentAndReference(in, int32(k), win, cp[0], cp[1])
						if !encode.SamePlan(got, want) {
							t.Fatalf("%s: plans differ: %s and %s, %d and %d candidates",
								fmt.Sprintf("seed %d (%+v, %+v), per read %v, windows %d, key %d, cuts %v, pins %v", seed, spec, opt, perRead, wn, k, cp[0], cp[1]),
								stateName(got.State), stateName(want.State), len(got.Cands), len(want.Cands))
						}
						states[got.State]++
					}
				}
			}
		}
	}
	t.Logf("plans by state: %v; explanations' searches answered by the groups: %d, %d of them undecided at budget 0", states, answered, searched)
	if states[encode.KeyOpen] == 0 || states[encode.KeyUnsat] == 0 || searched == 0 {
		t.Errorf("no open or no unsatisfiable key: the test tests too little")
	}
}

func stateName(s encode.KeyState) string {
	return [...]string{"unread", "fixed", "open", "unsat", "outside windows"}[s]
}
