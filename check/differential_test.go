package check

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"doppel/encode"
	"doppel/internal/brute"
)

var seeds = flag.Int("seeds", 8000, "random tiny histories per model in TestAgainstBruteForce")

// differentialConfigs are the brute-force generator's configurations the differential
// (and the G-single narrowing's own test) runs: -test.run selects them by name.
var differentialConfigs = []struct {
	name string
	cfg  brute.Config
}{
	{"mixed", brute.Config{}},
	{"snapshot-like", brute.Config{Strategy: brute.SnapshotLike}},
	{"fail-info", brute.Config{Strategy: brute.FailInfo}},
	{"three-values", brute.Config{Values: 3, MaxTxns: 7}},
}

// TestAgainstBruteForce compares every verdict with the brute-force checker on random
// tiny histories with heavy duplication. Run more with -seeds=1000000.
func TestAgainstBruteForce(t *testing.T) {
	configs := differentialConfigs
	for _, cf := range configs {
		for _, m := range ModelNames() {
			t.Run(cf.name+"/"+m, func(t *testing.T) { compareWithBrute(t, m, cf.cfg, *seeds/len(configs)) })
		}
		t.Run(cf.name+"/all-models-at-once", func(t *testing.T) { compareAllModels(t, ModelNames(), cf.cfg, *seeds/len(configs)/2) })
		// The serializable family with snapshot isolation, as usually asked: a
		// serializable refutation leads snapshot isolation's witnesses
		// (hybridNarrowedWitness), strict serializability's search the snapshot replays;
		// and the read-committed set (see serialAndSnapshotSets).
		for _, set := range serialAndSnapshotSets {
			t.Run(cf.name+"/"+strings.Join(set, "+"), func(t *testing.T) { compareAllModels(t, set, cf.cfg, *seeds/len(configs)/2) })
		}
	}
}

// serialAndSnapshotSets are sets of models TestAgainstBruteForce checks in one call.
// The third: read committed's forms without real-time order with read uncommitted's,
// whom read committed's witness order proves too (strongWitnessFirst).
var serialAndSnapshotSets = [][]string{
	{"serializable", "strict-serializable", "snapshot-isolation"},
	{"serializable", "strong-session-snapshot-isolation"},
	{"read-committed", "strong-session-read-committed", "read-uncommitted", "strong-read-uncommitted"},
	// bench's sweep set: the weak models decided after the serializable ones
	// (decideWeak), whose inference then holds their findings.
	{"serializable", "snapshot-isolation", "read-committed", "read-uncommitted"},
}

// compareAllModels checks the models in one call: what one model's search finds must
// not leak into another's verdict.
func compareAllModels(t *testing.T, models []string, cfg brute.Config, n int) {
	fails, pauses := 0, 0
	for seed := 0; seed < n; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		h := brute.Random(rng, cfg)
		res, err := Check(h, Options{Models: models})
		if err != nil {
			t.Fatal(err)
		}
		// And again with every open key on a key-order chain.
		encode.ChainFactor = 0
		chained, err := Check(h, Options{Models: models})
		encode.ChainFactor = 2
		if err != nil {
			t.Fatal(err)
		}
		// And again with each model's rounds paused once, before their first
		// (shareTime's pause, as at the end of a model's share of the time), so that
		// the models after it are decided before it resumes.
		pausedOnce := map[string]bool{}
		pauseHook = func(m string) bool {
			first := !pausedOnce[m]
			pausedOnce[m] = true
			return first
		}
		paused, err := Check(h, Options{Models: models})
		pauseHook = nil
		pauses += len(pausedOnce)
		if err != nil {
			t.Fatal(err)
		}
		for i, mr := range res.Models {
			want := brute.Check(h, mr.Model)
			if pm := paused.Models[i]; pm.Model != mr.Model || (pm.Valid == Valid) != want {
				fails++
				if fails <= 5 {
					t.Errorf("seed %d: %s checked with the others, rounds paused: %v (%s), brute force says valid=%v\n%s", seed, pm.Model, pm.Valid, pm.Message, want, brute.Format(h))
				}
			}
			if (mr.Valid == Valid) != want {
				fails++
				if fails <= 5 {
					t.Errorf("seed %d: %s checked with the others: %v, brute force says valid=%v\n%s", seed, mr.Model, mr.Valid, want, brute.Format(h))
				}
			}
			if cm := chained.Models[i]; cm.Model != mr.Model || (cm.Valid == Valid) != want {
				fails++
				if fails <= 5 {
					t.Errorf("seed %d: %s checked with the others, every open key chained: %v, brute force says valid=%v\n%s", seed, cm.Model, cm.Valid, want, brute.Format(h))
				}
			}
		}
	}
	t.Logf("%d histories; rounds paused and resumed %d times", n, pauses)
}

func compareWithBrute(t *testing.T, m string, cfg brute.Config, n int) {
	{
		{
			var valid, invalid, fails int
			for seed := 0; seed < n; seed++ {
				rng := rand.New(rand.NewPCG(uint64(seed), 0))
				h := brute.Random(rng, cfg)
				want := brute.Check(h, m)
				res, err := Check(h, Options{Models: []string{m}})
				if err != nil {
					t.Fatal(err)
				}
				got := res.Valid
				if got == Unknown {
					t.Fatalf("seed %d: unknown without a limit: %s\n%s", seed, res.Message, brute.Format(h))
				}
				// Whichever stage decided, the stats describe the history.
				if st := res.Stats; st.Transactions != len(h.Txns) || st.Operations != len(h.Ops) || st.Keys != len(h.Keys) {
					t.Fatalf("seed %d: stats say %d transactions, %d operations, %d keys; the history has %d, %d, %d",
						seed, st.Transactions, st.Operations, st.Keys, len(h.Txns), len(h.Ops), len(h.Keys))
				}
				// The same verdict without the first-guess shortcut exercises the solver.
				slow, _ := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true}})
				if slow.Valid != got {
					t.Errorf("seed %d: %s: %v with the witness shortcut, %v without\n%s", seed, m, got, slow.Valid, brute.Format(h))
				}
				// And on the whole problem, without narrowing the blocks first.
				whole, _ := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true, NoPrune: true}})
				if whole.Valid != got {
					t.Errorf("seed %d: %s: %v narrowed, %v without narrowing\n%s", seed, m, got, whole.Valid, brute.Format(h))
				}
				// And with every position's edges through hubs.
				encode.PairwiseFactor = 0
				hubbed, _ := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true}})
				encode.PairwiseFactor = 4
				if hubbed.Valid != got {
					t.Errorf("seed %d: %s: %v pairwise, %v through hubs\n%s", seed, m, got, hubbed.Valid, brute.Format(h))
				}
				// And with every open key on a key-order chain, and with none.
				for _, factor := range []int32{0, -1} {
					encode.ChainFactor = factor
					chained, _ := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true}})
					encode.ChainFactor = 2
					if chained.Valid != got {
						t.Errorf("seed %d: %s: %v by default, %v with chain factor %d\n%s", seed, m, got, chained.Valid, factor, brute.Format(h))
					}
				}
				// And with the replays' repairs off: the replays get stuck more often, so
				// what runs after them (for the per-read models: the quick serial pass and
				// the serial search with process order as a witness) decides more.
				if unrepaired, _ := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoRepair: true}}); unrepaired.Valid != got {
					t.Errorf("seed %d: %s: %v with repairs, %v without\n%s", seed, m, got, unrepaired.Valid, brute.Format(h))
				}
				// And without the counting theory.
				if uncounted, _ := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true, NoCounting: true}}); uncounted.Valid != got {
					t.Errorf("seed %d: %s: %v with counting, %v without\n%s", seed, m, got, uncounted.Valid, brute.Format(h))
				}
				// And without Hall's condition over the trace positions.
				if unmatched, _ := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true, NoMatching: true}}); unmatched.Valid != got {
					t.Errorf("seed %d: %s: %v with Hall's condition, %v without\n%s", seed, m, got, unmatched.Valid, brute.Format(h))
				}
				// And, for the models that forbid G-single, without the G-cursor pins.
				if models[m].single {
					if unpinned, _ := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true, NoGCursorPins: true}}); unpinned.Valid != got {
						t.Errorf("seed %d: %s: %v with the G-cursor pins, %v without\n%s", seed, m, got, unpinned.Valid, brute.Format(h))
					}
				}
				if (got == Valid) != want {
					fails++
					if fails <= 5 {
						t.Errorf("seed %d: %s: checker says %v, brute force says valid=%v\n%s\nanomalies: %+v",
							seed, m, got, want, brute.Format(h), res.Anomalies)
					}
				}
				if want {
					valid++
				} else {
					invalid++
				}
			}
			if fails > 0 {
				t.Errorf("%d disagreements out of %d", fails, n)
			}
			t.Logf("%s: %d valid, %d invalid", m, valid, invalid)
		}
	}
}

var (
	strategySeeds     = flag.Int("strategy-seeds", 400, "random tiny histories per model and solver strategy in TestSolverStrategiesAgainstBruteForce")
	strategySeedStart = flag.Int("strategy-seed-start", 0, "the first seed of TestSolverStrategiesAgainstBruteForce (runs over disjoint ranges add up)")
)

// TestSolverStrategiesAgainstBruteForce: each solver configuration the portfolio is
// made of agrees with the brute force alone, without the replay or any other shortcut
// (so the solver decides): VSIDS with glucose, luby or no restarts, the static order,
// theory propagation off, the tiling as clauses instead of the append-adjacency
// theory (whose path every other strategy takes), and chronological backtracking
// forced. The histories cycle through the shapes of TestAgainstBruteForce.
func TestSolverStrategiesAgainstBruteForce(t *testing.T) {
	shapes := []brute.Config{{}, {Strategy: brute.SnapshotLike}, {Strategy: brute.FailInfo}, {Values: 3, MaxTxns: 7}}
	strategies := []struct {
		name string
		opts SolverOptions
	}{
		{"vsids-glucose", SolverOptions{NoWitness: true, Heuristic: "vsids", Restarts: "glucose"}},
		{"vsids-luby", SolverOptions{NoWitness: true, Heuristic: "vsids", Restarts: "luby"}},
		{"vsids-no-restarts", SolverOptions{NoWitness: true, Heuristic: "vsids", Restarts: "none"}},
		{"static", SolverOptions{NoWitness: true, Heuristic: "static", Restarts: "none"}},
		{"no-theory-propagation", SolverOptions{NoWitness: true, NoTheoryPropagation: true}},
		{"clausal-tiling", SolverOptions{NoWitness: true, ClausalTiling: true}},
		{"clausal-tiling-static", SolverOptions{NoWitness: true, ClausalTiling: true, Heuristic: "static", Restarts: "none"}},
		// Chronological backtracking on every jump of two levels or more (the default
		// waits for 100, which tiny histories never reach); the static order with glucose
		// restarts also keeps most of the trail at each restart (sat's reuseLevel).
		{"static-chrono", SolverOptions{NoWitness: true, Heuristic: "static", Restarts: "glucose", ChronoLevels: 1}},
		{"vsids-chrono", SolverOptions{NoWitness: true, Heuristic: "vsids", Restarts: "luby", ChronoLevels: 1}},
	}
	// One subtest per model: each history is drawn and brute-forced once, then decided by
	// every strategy alone, so a run costs the strategies' checks and little else.
	for _, m := range ModelNames() {
		t.Run(m, func(t *testing.T) {
			var valid, invalid int
			var chrono int64
			fails := make([]int, len(strategies))
			for seed := *strategySeedStart; seed < *strategySeedStart+*strategySeeds; seed++ {
				rng := rand.New(rand.NewPCG(uint64(seed), 2))
				h := brute.Random(rng, shapes[seed%len(shapes)])
				want := brute.Check(h, m)
				if want {
					valid++
				} else {
					invalid++
				}
				for i, st := range strategies {
					res, err := Check(h, Options{Models: []string{m}, Solver: st.opts})
					if err != nil {
						t.Fatal(err)
					}
					if st.opts.ChronoLevels > 0 {
						chrono += res.Stats.Chrono
					}
					if res.Valid == Unknown {
						t.Fatalf("seed %d: %s with %s: unknown without a limit: %s\n%s", seed, m, st.name, res.Message, brute.Format(h))
					}
					if (res.Valid == Valid) != want {
						fails[i]++
						if fails[i] <= 5 {
							t.Errorf("seed %d: %s with %s: %v, brute force says valid=%v\n%s", seed, m, st.name, res.Valid, want, brute.Format(h))
						}
					}
				}
			}
			for i, st := range strategies {
				if fails[i] > 0 {
					t.Errorf("%s: %d disagreements out of %d", st.name, fails[i], *strategySeeds)
				}
			}
			t.Logf("%s: %d valid, %d invalid, each decided by all %d strategies; %d chronological backtracks", m, valid, invalid, len(strategies), chrono)
		})
	}
}

var chronoSeeds = flag.Int("chrono-seeds", 300, "random mid-size histories per model in TestChronologicalBacktrackingAgrees")

// TestChronologicalBacktrackingAgrees: tiny histories rarely make the solver jump back
// two levels, so the strategies' differential exercises chronological backtracking
// little. Histories of 16-30 transactions (beyond the brute force) make it jump often:
// forced on every such jump, each solver configuration must reach the verdict it
// reaches without it (a Sat answer is verified against the problem either way).
func TestChronologicalBacktrackingAgrees(t *testing.T) {
	shape := brute.Config{MinTxns: 16, MaxTxns: 30, MaxKeys: 4, MaxProcesses: 4, Values: 2}
	configs := []SolverOptions{
		{NoWitness: true, Heuristic: "static", Restarts: "glucose"},
		{NoWitness: true, Heuristic: "vsids", Restarts: "luby"},
		{NoWitness: true, Heuristic: "static", Restarts: "none", NoTheoryPropagation: true},
	}
	var chrono int64
	var verdicts [3]int
	for _, m := range []string{"serializable", "strict-serializable", "snapshot-isolation", "read-committed", "strong-session-snapshot-isolation"} {
		for seed := range *chronoSeeds {
			rng := rand.New(rand.NewPCG(uint64(seed), 5))
			if seed%2 == 1 {
				shape.Strategy = brute.SnapshotLike
			} else {
				shape.Strategy = 0
			}
			h := brute.Random(rng, shape)
			for _, o := range configs {
				var got [2]Validity
				for i, levels := range []int{-1, 1} {
					o.ChronoLevels = levels
					res, err := Check(h, Options{Models: []string{m}, Solver: o})
					if err != nil {
						t.Fatal(err)
					}
					if res.Valid == Unknown {
						t.Fatalf("seed %d: %s with %+v: unknown without a limit: %s", seed, m, o, res.Message)
					}
					got[i] = res.Valid
					if levels > 0 {
						chrono += res.Stats.Chrono
					}
				}
				if got[0] != got[1] {
					t.Errorf("seed %d: %s with %+v: %v without chronological backtracking, %v with it\n%s", seed, m, o, got[0], got[1], brute.Format(h))
				}
				verdicts[got[0]]++
			}
		}
	}
	if chrono < 1000 {
		t.Errorf("weak test: %d chronological backtracks", chrono)
	}
	t.Logf("verdicts %v, %d chronological backtracks", verdicts, chrono)
}
