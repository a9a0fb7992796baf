package check

import (
	"flag"
	"math/rand/v2"
	"testing"

	"doppel/encode"
	"doppel/internal/brute"
	"doppel/uncommitted"
)

var ruWitnessSeeds = flag.Int("ru-witness-seeds", 20000, "random tiny histories per configuration in TestRURelaxedWitnessAgainstBruteForce")

// TestRURelaxedWitnessAgainstBruteForce runs read uncommitted's relaxed serial witness
// alone (in the checker it runs only once the longest-reads witness and the serial
// search decided nothing), and its second turn (the longest reads apart) alone, on
// random tiny histories with heavy duplication: every form they prove, the brute force
// must find valid; and each must prove some (or the test tests nothing).
func TestRURelaxedWitnessAgainstBruteForce(t *testing.T) {
	names := []string{"read-uncommitted", "strong-session-read-uncommitted", "strong-read-uncommitted"}
	for _, cf := range differentialConfigs {
		t.Run(cf.name, func(t *testing.T) {
			proved, apart, failedReads := 0, 0, 0
			for seed := 0; seed < *ruWitnessSeeds/len(differentialConfigs); seed++ {
				rng := rand.New(rand.NewPCG(uint64(seed), 7))
				h := brute.Random(rng, cf.cfg)
				x := uncommitted.NewIndex(h)
				if len(x.Findings) > 0 {
					continue // Decide refutes these before any witness
				}
				newChecker := func() *checker {
					c := &checker{h: h, opts: Options{Models: names}, proven: map[string]bool{}}
					c.budget = newBudget(c.opts, &c.res.Stats.Conflicts)
					c.budget.states = &c.res.Stats.SearchStates
					return c
				}
				c := newChecker()
				c.ruRelaxedWitness(x, names, names[0])
				// And the second turn alone: the longest reads apart, serializability's.
				a := newChecker()
				hr, orig := ruRelaxedHistory(h, true)
				if ir := encode.InferStop(hr, nil); ir.CheckValuesStop(nil) && len(ir.Findings) == 0 {
					a.ruRelaxedTry(x, names, hr, orig, ir, "serializable", false)
				}
				for _, m := range names {
					for i, p := range []*checker{c, a} {
						if !p.proven[m] {
							continue
						}
						if i == 1 {
							apart++
						} else {
							proved++
						}
						if !brute.Check(h, m) {
							t.Fatalf("seed %d: the relaxed witness (turn %d) proved %s, the brute force says not valid\n%s", seed, i, m, brute.Format(h))
						}
					}
				}
				if c.proven[names[0]] && !brute.Check(h, "read-committed") {
					failedReads++ // proved where read committed is not valid
				}
			}
			t.Logf("%d forms proved, %d of read-uncommitted's where read committed is not valid; the second turn alone: %d", proved, failedReads, apart)
			if proved == 0 || apart == 0 || failedReads == 0 && cf.name == "fail-info" {
				t.Errorf("the witness proved %d forms (%d where read committed is not valid): nothing tested", proved, failedReads)
			}
		})
	}
}

var losersPlacedSeeds = flag.Int("losers-placed-seeds", 100000, "random tiny histories in TestLosersPlacedAgainstBruteForce (most have no lost update and cost nothing)")

// TestLosersPlacedAgainstBruteForce runs losersPlaced alone on random tiny histories
// with heavy duplication that have a lost update: every form it proves, the brute force
// finds valid; and it proves forms with process order, of read uncommitted and of read
// committed.
func TestLosersPlacedAgainstBruteForce(t *testing.T) {
	names := []string{"read-uncommitted", "strong-session-read-uncommitted", "strong-read-uncommitted",
		"strong-session-read-committed", "strong-read-committed"}
	for _, cf := range differentialConfigs {
		t.Run(cf.name, func(t *testing.T) {
			lost, proved, process, committed := 0, 0, 0, 0
			for seed := 0; seed < *losersPlacedSeeds/len(differentialConfigs); seed++ {
				rng := rand.New(rand.NewPCG(uint64(seed), 11))
				h := brute.Random(rng, cf.cfg)
				if len(lostUpdates(h)) == 0 {
					continue // (the findings too: the witness must not prove those)
				}
				lost++
				c := &checker{h: h, opts: Options{Models: names}, proven: map[string]bool{}}
				c.budget = newBudget(c.opts, &c.res.Stats.Conflicts)
				c.budget.states = &c.res.Stats.SearchStates
				c.losersPlaced(names)
				for _, m := range names {
					if !c.proven[m] {
						continue
					}
					proved++
					if models[m].process {
						process++
					}
					if models[m].perRead {
						committed++
					}
					if !brute.Check(h, m) {
						t.Fatalf("seed %d: the losers placed anew proved %s, the brute force says not valid\n%s", seed, m, brute.Format(h))
					}
				}
			}
			t.Logf("%d histories with a lost update: %d forms proved, %d with process order, %d of read committed", lost, proved, process, committed)
			if process == 0 || committed == 0 {
				t.Errorf("%d forms with process order and %d of read committed proved among %d histories with a lost update: nothing tested", process, committed, lost)
			}
		})
	}
}
