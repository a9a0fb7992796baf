package check

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"doppel/internal/brute"
)

var pinSeeds = flag.Int("pin-seeds", 5000, "random tiny histories per configuration in TestPinRefutationAgainstBruteForce")

// TestPinRefutationAgainstBruteForce: every model refuted by a cycle of pinned blocks
// (refuteByPins) is not valid by the brute force, every step of the cycle holds in
// every attribution the model reads (TestEveryStepHolds checks them too), and the
// path does decide some histories, so the test tests something.
func TestPinRefutationAgainstBruteForce(t *testing.T) {
	configs := []struct {
		name string
		cfg  brute.Config
	}{
		{"mixed", brute.Config{}},
		{"snapshot-like", brute.Config{Strategy: brute.SnapshotLike}},
		{"three-values", brute.Config{Values: 3, MaxTxns: 7}},
		// Mostly unique values: the value pins close the cycles (looked at once a
		// replay got stuck).
		{"eight-values", brute.Config{Values: 8, MaxKeys: 2, Strategy: brute.SnapshotLike}},
	}
	oneBase := []string{"repeatable-read", "serializable", "strong-session-serializable", "strict-serializable",
		"snapshot-isolation", "strong-session-snapshot-isolation", "strong-snapshot-isolation"}
	for _, cf := range configs {
		t.Run(cf.name, func(t *testing.T) {
			var refuted, fails, steps, byValue int
			var st stepStats
			for seed := 0; seed < *pinSeeds; seed++ {
				rng := rand.New(rand.NewPCG(uint64(seed), 11))
				h := brute.Random(rng, cf.cfg)
				res, err := Check(h, Options{Models: ModelNames()})
				if err != nil {
					t.Fatal(err)
				}
				if res.Stats.PinRefuted == 0 {
					continue
				}
				refuted += res.Stats.PinRefuted
				for _, a := range res.Anomalies {
					if strings.Contains(a.Explanation, "no other transaction appends") {
						byValue++ // a step placed by a value pin
						break
					}
				}
				for _, mr := range res.Models {
					if mr.Valid == Invalid && brute.Check(h, mr.Model) {
						fails++
						t.Errorf("seed %d: %s not valid (%v), the brute force says valid\n%s", seed, mr.Model, mr.AnomalyTypes, brute.Format(h))
					}
				}
				for _, m := range oneBase {
					one, err := Check(h, Options{Models: []string{m}})
					if err != nil {
						t.Fatal(err)
					}
					if want := brute.Check(h, m); (one.Valid == Valid) != want {
						fails++
						t.Errorf("seed %d: %s alone: %v, the brute force says valid=%v\n%s", seed, m, one.Valid, want, brute.Format(h))
					}
				}
				for _, msg := range checkSteps(h, &res, &st) {
					fails++
					t.Errorf("seed %d: %s", seed, msg)
				}
				steps = st.steps
				if fails > 5 {
					t.FailNow()
				}
			}
			if refuted == 0 {
				t.Errorf("no model was refuted by a cycle of pinned blocks: the test checks nothing")
			}
			if cf.name == "eight-values" && byValue == 0 {
				t.Errorf("no cycle needed a value pin: the test checks nothing of them")
			}
			t.Logf("%d models refuted by pinned cycles in %d histories (%d with a value pin), %d steps checked", refuted, *pinSeeds, byValue, steps)
		})
	}
}
