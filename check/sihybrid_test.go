package check

import (
	"math/rand/v2"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
)

// TestHybridWitnessAgainstBruteForce: the hybrid witness for snapshot isolation
// (transactions whole except where a cycle needs them split) is run on every problem
// the solver is handed for a snapshot model on random tiny histories. Every solution it
// reports must be accepted by verifySI (none rejected: its graph says exactly what a
// snapshot-isolated execution needs) and the brute force must find the history valid;
// and it must prove histories that are snapshot isolated but not serializable, which
// only the splitting can (all whole, the view is the serializable graph).
func TestHybridWitnessAgainstBruteForce(t *testing.T) {
	var probes []*checker
	solveHook = func(c *checker, v *view) {
		if v.split && (len(probes) == 0 || probes[len(probes)-1] != c) {
			probes = append(probes, c)
		}
	}
	defer func() { solveHook = nil }()
	models := []string{"snapshot-isolation", "strong-session-snapshot-isolation", "strong-snapshot-isolation"}
	var tried, proved, split int
	for seed := 0; seed < *seeds/2; seed++ {
		h, _ := snapshotMixHistory(seed, 23)
		m := models[seed%len(models)]
		probes = probes[:0]
		if _, err := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true}}); err != nil {
			t.Fatal(err)
		}
		if len(probes) == 0 {
			continue
		}
		c := probes[len(probes)-1] // its last problem is still built
		if c.p == nil {
			continue
		}
		tried++
		c.res.Stats.ReplayRejected = 0
		found := c.hybridWitness(m)
		if c.res.Stats.ReplayRejected != 0 {
			t.Fatalf("seed %d, %s: verifySI rejected the hybrid witness's events\n%s", seed, m, brute.Format(h))
		}
		if !found {
			continue
		}
		proved++
		if !brute.Check(h, m) {
			t.Fatalf("seed %d, %s: the hybrid witness proved a history the brute force finds not valid\n%s", seed, m, brute.Format(h))
		}
		if !brute.Check(h, "serializable") {
			split++
		}
	}
	if proved == 0 || split == 0 {
		t.Fatalf("the witness is not exercised: %d problems, %d proved, %d of them not serializable", tried, proved, split)
	}
	t.Logf("%d problems; the hybrid witness proved %d, %d of them not serializable", tried, proved, split)
}

// TestHybridNarrowedWitnessAgainstBruteForce: the hybrid narrowed witness alone, on
// random tiny histories, with the cut points the serializable narrowing's refutation
// gives (a write skew's) or, where it gives none, a random third of the transactions
// split (the witness's soundness must not depend on which are). Every history it proves
// must be valid by the brute force, and it must prove histories that are not
// serializable, which only the split transactions allow.
func TestHybridNarrowedWitnessAgainstBruteForce(t *testing.T) {
	models := []string{"snapshot-isolation", "strong-session-snapshot-isolation"}
	var tried, proved, split, fromRefutation int
	for seed := 0; seed < *seeds/2; seed++ {
		h, rng := snapshotMixHistory(seed, 29)
		m := models[seed%len(models)]
		in := encode.Infer(h)
		if len(in.Findings) > 0 {
			continue
		}
		c := &checker{h: h, proven: map[string]bool{}}
		c.budget = newBudget(c.opts, &c.res.Stats.Conflicts)
		c.oneBaseIn = in
		c.decideNarrowed(in, "serializable")
		if c.keyUnsat {
			continue
		}
		if len(c.serialCuts) > 0 {
			fromRefutation++
		} else {
			for tx := range h.Txns {
				if rng.IntN(3) == 0 {
					c.serialCuts = append(c.serialCuts, int32(tx))
				}
			}
		}
		tried++
		if !c.hybridNarrowedWitness(in, m) {
			continue
		}
		proved++
		if !brute.Check(h, m) {
			t.Fatalf("seed %d, %s: the hybrid narrowed witness proved a history the brute force finds not valid\n%s", seed, m, brute.Format(h))
		}
		if !brute.Check(h, "serializable") {
			split++
		}
	}
	if proved == 0 || split == 0 || fromRefutation == 0 {
		t.Fatalf("the witness is not exercised: %d tried (%d with a refutation's cuts), %d proved, %d of them not serializable", tried, fromRefutation, proved, split)
	}
	t.Logf("%d tried (%d with a refutation's cuts); the hybrid narrowed witness proved %d, %d of them not serializable", tried, fromRefutation, proved, split)
}

// snapshotMixHistory is the hybrid witness tests' random tiny history: snapshot-like
// two times in three, another of the oracle's strategies the third; and the generator,
// for the caller's further draws.
func snapshotMixHistory(seed int, stream uint64) (*history.History, *rand.Rand) {
	rng := rand.New(rand.NewPCG(uint64(seed), stream))
	st := brute.SnapshotLike
	if seed%3 == 2 {
		st = brute.Strategies[seed%len(brute.Strategies)]
	}
	return brute.Random(rng, brute.Config{Strategy: st}), rng
}
