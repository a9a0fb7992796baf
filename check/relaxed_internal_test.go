package check

import (
	"math/rand/v2"
	"testing"

	"doppel/encode"
	"doppel/internal/brute"
)

// TestRelaxedWitnessIsSound runs the relaxed witness alone (no replay, no serial witness
// before it) on random tiny histories: every model it proves must be valid by the brute
// force. It must prove some, and some of them on histories that are not serializable
// (lost updates, G-single), or the test checks nothing.
func TestRelaxedWitnessIsSound(t *testing.T) {
	for _, part := range []string{"all", "solver only", "left out only"} {
		relaxedWitnessIsSound(t, part)
	}
}

// relaxedWitnessIsSound is TestRelaxedWitnessIsSound's run of part: the whole witness,
// its solver on the relaxed history alone (no replay or serial search), or the history
// without the lost updates' losers alone (lostLeftOut).
func relaxedWitnessIsSound(t *testing.T, part string) {
	weak := []string{"read-committed", "strong-session-read-committed", "strong-read-committed"}
	proved, notSerial := 0, 0
	for seed := 0; seed < 4000; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 23))
		h := brute.Random(rng, brute.Config{Strategy: brute.Strategies[seed%len(brute.Strategies)]})
		c := &checker{h: h, proven: map[string]bool{}, relaxedSolverOnly: part == "solver only", relaxedLeftOutOnly: part == "left out only"}
		c.budget = newBudget(c.opts, &c.res.Stats.Conflicts)
		c.oneBaseIn = encode.Infer(h)
		if c.oneBaseIn.CheckValues(); len(c.oneBaseIn.Findings) > 0 {
			continue
		}
		c.res.Anomalies = lostUpdates(h)
		in := encode.InferPerRead(h)
		results := map[string]*ModelResult{}
		c.relaxedWitness(in, append([]string(nil), weak...), results)
		for _, m := range weak {
			if !c.proven[m] {
				continue
			}
			proved++
			if !brute.Check(h, m) {
				t.Fatalf("seed %d, %s: the relaxed witness proves %s, the brute force finds it not valid\n%s", seed, part, m, brute.Format(h))
			}
			if m == "read-committed" && !brute.Check(h, "serializable") {
				notSerial++
			}
		}
	}
	if proved == 0 || notSerial == 0 {
		t.Fatalf("%s: %d models proved, %d of read committed on histories that are not serializable: the test checks nothing", part, proved, notSerial)
	}
	t.Logf("%s: %d models proved, %d of read committed on histories that are not serializable", part, proved, notSerial)
}
