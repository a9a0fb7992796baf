package check_test

import (
	"math/rand/v2"
	"testing"

	"doppel/check"
	"doppel/encode"
	"doppel/internal/brute"
	"doppel/workload"
)

// TestHotKeysDecidedByKeyOrder: a write-heavy history on a few hot keys (two appends
// per transaction over three values, one read in five) that the search could not
// decide in 20,000 conflicts before the key-order chain: with it, a few thousand
// conflicts prove it serializable, as the simulator made it.
func TestHotKeysDecidedByKeyOrder(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Sessions, spec.Ops, spec.Keys, spec.KeyDist, spec.Reads, spec.DupKeys, spec.ValDomain, spec.Txns, spec.Seed = 30, 2, 20, "hotspot", 0.2, 1, 3, 100, 10
	h := simulated(t, "hot-writes", spec, workload.SimOptions{Behaviour: workload.SimSerializable})
	res, err := check.Check(h, check.Options{Models: []string{"serializable"}, MaxConflicts: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid != check.Valid {
		t.Fatalf("serializable: %v (%s) after %d conflicts; want valid within 5000", res.Valid, res.Models[0].Message, res.Stats.Conflicts)
	}
	t.Logf("valid after %d conflicts", res.Stats.Conflicts)
}

// TestKeyOrderCyclesShownWithoutChain: with every open key on a key-order chain, each
// model the solver finds not valid still shows a cycle of transactions (the chain's
// shortcuts left out) on random tiny histories, as without the chain.
func TestKeyOrderCyclesShownWithoutChain(t *testing.T) {
	encode.ChainFactor = 0
	defer func() { encode.ChainFactor = 2 }()
	shown := 0
	shapes := []brute.Config{{}, {Strategy: brute.SnapshotLike}, {Values: 3, MaxTxns: 7}}
	for seed := range 4000 {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		h := brute.Random(rng, shapes[seed%len(shapes)])
		res, err := check.Check(h, check.Options{Models: []string{"serializable", "snapshot-isolation"}, Solver: check.SolverOptions{NoWitness: true}})
		if err != nil {
			t.Fatal(err)
		}
		for _, mr := range res.Models {
			if mr.Valid != check.Invalid {
				continue
			}
			if len(mr.Anomalies) == 0 {
				t.Fatalf("seed %d: %s not valid without an anomaly\n%s", seed, mr.Model, brute.Format(h))
			}
			for _, i := range mr.Anomalies {
				a := res.Anomalies[i]
				if a.Model == "" || len(a.Cases) == 0 {
					continue // found without the solver
				}
				shown++
				for _, cs := range a.Cases {
					if len(cs.Steps) == 0 {
						t.Fatalf("seed %d: %s: case %d of %s shows no step", seed, mr.Model, cs.N, a.Type)
					}
				}
			}
		}
	}
	if shown == 0 {
		t.Fatal("no cycle shown by the solver's proof by cases")
	}
	t.Logf("%d proofs by cases shown", shown)
}
