package check

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
)

// wholeProblem searches the problem without narrowing the blocks first and without
// repairing stuck replays: either decides these histories without a conflict, and the
// limits of the solver's stages are what these tests are about.
// The serial-order search proves the hard history (valid) in a few hundred nodes.
var wholeProblem = SolverOptions{NoPrune: true, NoRepair: true, NoSerialSearch: true}

// hardHistory is a serializable history that neither replay nor witness decides: the
// solver needs minutes for it (testdata/limits/README.md says how it was generated).
func hardHistory(t *testing.T) *history.History {
	t.Helper()
	h, err := history.ParseFile(filepath.Join("..", "testdata", "limits", "hard-350.edn"))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// checkCounters asserts that every model of res is unknown and that each message
// names the limit and the true number of conflicts of all solver stages.
func checkCounters(t *testing.T, res Result, limit string) {
	t.Helper()
	if res.Valid != Unknown {
		t.Fatalf("verdict %v, want unknown; %s", res.Valid, res.Message)
	}
	want := fmt.Sprintf("after %d conflicts", res.Stats.Conflicts)
	for _, mr := range res.Models {
		if mr.Valid != Unknown || !strings.Contains(mr.Message, limit) || !strings.Contains(mr.Message, want) || !strings.Contains(mr.Message, " while ") {
			t.Errorf("%s: %v, message %q; want unknown naming %q, the phase and %q", mr.Model, mr.Valid, mr.Message, limit, want)
		}
	}
}

// TestMaxConflictsCountsEveryStage: the pre-searches (strict and serializable
// witnesses), the portfolio's stages and every model share one conflict budget.
func TestMaxConflictsCountsEveryStage(t *testing.T) {
	h := hardHistory(t)
	for _, tc := range []struct {
		models []string
		max    int64
	}{
		{[]string{"serializable"}, 1},
		{[]string{"serializable"}, 1000},
		{ModelNames(), 1},
		{ModelNames(), 1000},
	} {
		res, err := Check(h, Options{Models: tc.models, MaxConflicts: tc.max, Solver: wholeProblem})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats.Conflicts > tc.max {
			t.Errorf("%v --max-conflicts %d: %d conflicts", tc.models, tc.max, res.Stats.Conflicts)
		}
		checkCounters(t, res, fmt.Sprintf("conflict limit (%d)", tc.max))
	}
}

// TestTimeoutGivesUnknown: a short time limit on a history the solver needs minutes
// for ends every model unknown, with the counters of the work done.
func TestTimeoutGivesUnknown(t *testing.T) {
	h := hardHistory(t)
	res, err := Check(h, Options{Models: ModelNames(), Timeout: 300 * time.Millisecond, Solver: wholeProblem})
	if err != nil {
		t.Fatal(err)
	}
	checkCounters(t, res, "time limit (300ms)")
}

// TestMemoryLimitGivesUnknown: a memory limit below what the process already holds is
// reached at the watch's first sample; the hard history then ends every model unknown,
// naming the memory limit, the phase and the counters (the solver is interrupted).
func TestMemoryLimitGivesUnknown(t *testing.T) {
	h := hardHistory(t)
	res, err := Check(h, Options{Models: ModelNames(), MaxMemory: 1 << 20, Solver: wholeProblem})
	if err != nil {
		t.Fatal(err)
	}
	checkCounters(t, res, "memory limit (1 MiB)")
	// The runtime's own soft limit is given back.
	if got := debug.SetMemoryLimit(-1); got < 1<<40 {
		t.Errorf("the runtime's memory limit was left at %d", got)
	}
}

// TestLimitSpentBeforeEncoding: a limit reached before any search still gives the
// findings of the inference (anomalies in every attribution), and unknown for the rest.
func TestLimitSpentBeforeEncoding(t *testing.T) {
	cases := filepath.Join("..", "testdata", "cases")
	valid, err := history.ParseFile(filepath.Join(cases, "fig1b.edn"))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := Check(valid, Options{Models: ModelNames(), Timeout: time.Nanosecond})
	checkCounters(t, res, "time limit (1ns)")
	if !strings.Contains(res.Models[0].Message, "while inferring dependencies") {
		t.Errorf("message %q does not name the inference", res.Models[0].Message)
	}
	incompatible, err := history.ParseFile(filepath.Join(cases, "incompatible.edn"))
	if err != nil {
		t.Fatal(err)
	}
	res, _ = Check(incompatible, Options{Models: ModelNames(), Timeout: time.Nanosecond})
	if res.Valid != Invalid || !contains(res.AnomalyTypes, "incompatible-order") {
		t.Errorf("incompatible.edn with a spent limit: %v %v, want not valid (incompatible-order)", res.Valid, res.AnomalyTypes)
	}
	for _, mr := range res.Models {
		// Read uncommitted allows incompatible orders: unknown, like any model the
		// findings do not settle.
		want := Unknown
		if forbids(mr.Model, "incompatible-order") {
			want = Invalid
		}
		if mr.Valid != want {
			t.Errorf("incompatible.edn with a spent limit: %s %v, want %v", mr.Model, mr.Valid, want)
		}
	}
}

// TestSpentLimitStartsNoValueChecks: a G1a is found by the value checks, which a
// spent limit does not start (they take seconds at a million keys): unknown, not a
// verdict bought with time the user did not give. With time, it is not valid.
func TestSpentLimitStartsNoValueChecks(t *testing.T) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "cases", "g1a.edn"))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := Check(h, Options{Models: []string{"serializable"}, Timeout: time.Nanosecond})
	if res.Valid != Unknown || len(res.Anomalies) != 0 {
		t.Errorf("g1a.edn with a spent limit: %v %v, want unknown and no anomaly", res.Valid, res.AnomalyTypes)
	}
	res, _ = Check(h, Options{Models: []string{"serializable"}})
	if res.Valid != Invalid || !contains(res.AnomalyTypes, "G1a") {
		t.Errorf("g1a.edn: %v %v, want not valid (G1a)", res.Valid, res.AnomalyTypes)
	}
}

// solverUnsat is a history whose serializability violation only the solver proves, in
// 5 conflicts (brute.Random seed 839).
const solverUnsat = `T0 p0 ok [a 1 1] inv=0 cmp=1
T1 p0 ok [r 2 []] inv=2 cmp=3
T2 p0 ok [a 2 1] [a 1 2] inv=4 cmp=5
T3 p0 ok [r 1 [1 2 2]] [r 2 [1]] [a 2 2] [a 1 1] inv=6 cmp=7
T4 p0 ok [a 1 2] [r 0 []] [r 2 [1 2]] [a 2 2] inv=8 cmp=9
`

// TestExplanationCutShortStaysInvalid: with a conflict limit that the proof of UNSAT
// uses up, the verdict is still not valid (it is proven), the model's message says
// the explanation was cut short, and an anomaly the model forbids is named all the same
// (a limit used to leave "not valid" with none); with fewer conflicts the verdict is
// unknown, never valid.
func TestExplanationCutShortStaysInvalid(t *testing.T) {
	h, err := brute.Parse(solverUnsat)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := Check(h, Options{Solver: wholeProblem})
	if full.Valid != Invalid || len(full.Anomalies) == 0 || full.Anomalies[0].Model == "" {
		t.Fatalf("without limits: %v %+v; want a violation the solver proves", full.Valid, full.Anomalies)
	}
	proved := int64(0) // the smallest limit under which the solver proves the violation
	for n := int64(1); n <= full.Stats.Conflicts && proved == 0; n++ {
		res, _ := Check(h, Options{MaxConflicts: n, Solver: wholeProblem})
		switch {
		case res.Stats.Conflicts > n:
			t.Fatalf("limit %d: %d conflicts", n, res.Stats.Conflicts)
		case res.Valid == Valid:
			t.Fatalf("limit %d: valid", n)
		case res.Valid == Unknown:
			checkCounters(t, res, fmt.Sprintf("conflict limit (%d)", n))
		default:
			proved = n
			if res.Stats.Conflicts != n || !strings.Contains(res.Models[0].Message, "explanation was cut short") {
				t.Errorf("limit %d: %d conflicts, message %q; want the whole budget spent and the explanation cut short",
					n, res.Stats.Conflicts, res.Models[0].Message)
			}
			// Cut short, it still names an anomaly the model forbids, with transactions.
			if !namesForbidden(&res, res.Models[0]) {
				t.Errorf("limit %d: not valid naming no anomaly it forbids: %v %+v", n, res.Models[0].AnomalyTypes, res.Anomalies)
			}
		}
	}
	if proved == 0 {
		t.Fatalf("no limit up to %d conflicts proves the violation", full.Stats.Conflicts)
	}
}

// TestLimitsNeverDecideWrongly: under any limits a verdict that is not unknown is the
// brute force's, and the conflicts stay within the limit.
func TestLimitsNeverDecideWrongly(t *testing.T) {
	n := *seeds / 8
	var unknown, decided, unnamed int
	for seed := 0; seed < n; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		h := brute.Random(rng, brute.Config{})
		opts := Options{Models: ModelNames(), MaxConflicts: 1 + rng.Int64N(4)}
		if seed%5 == 0 {
			opts.Timeout = time.Duration(rng.Int64N(200)) * time.Microsecond
		}
		res, err := Check(h, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats.Conflicts > opts.MaxConflicts {
			t.Errorf("seed %d: %d conflicts over the limit %d", seed, res.Stats.Conflicts, opts.MaxConflicts)
		}
		for _, mr := range res.Models {
			if mr.Valid == Unknown {
				unknown++
				continue
			}
			decided++
			if want := brute.Check(h, mr.Model); (mr.Valid == Valid) != want {
				t.Errorf("seed %d: %s: %v under limits %+v, brute force says valid=%v\n%s", seed, mr.Model, mr.Valid, opts, want, brute.Format(h))
			}
			if mr.Valid == Invalid && !namesForbidden(&res, mr) {
				unnamed++
				if unnamed <= 5 {
					t.Errorf("seed %d: %s not valid under max-conflicts %d, timeout %v, naming no anomaly it forbids (types %v, message %q, anomalies %+v)\n%s",
						seed, mr.Model, opts.MaxConflicts, opts.Timeout, mr.AnomalyTypes, mr.Message, res.Anomalies, brute.Format(h))
				}
			}
		}
	}
	if unknown == 0 || decided == 0 {
		t.Errorf("%d verdicts unknown, %d decided: the limits were not exercised", unknown, decided)
	}
	if unnamed > 0 {
		t.Errorf("%d not valid verdicts under limits name no anomaly their model forbids", unnamed)
	}
	t.Logf("%d verdicts unknown, %d decided", unknown, decided)
}

// TestReplaysStop: the replays give up when their stop hook says so, and otherwise
// replay as without one.
func TestReplaysStop(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	h := brute.Random(rng, brute.Config{MinTxns: 3 * stopEvery, MaxTxns: 3 * stopEvery, MaxKeys: stopEvery, Values: 3, MaxOps: 6,
		MaxProcesses: 1, Strategy: brute.Serial}) // one process: the greedy replays succeed
	in := encode.Infer(h)
	commit := commitsOf(h)
	never := func() bool { return false }
	always := func() bool { return true }
	order, ok := schedule(h, in, commit, nil, false, never)
	if !ok || verifySerial(h, in, order, false, false) != nil {
		t.Fatal("a serial history does not replay")
	}
	if _, ok := schedule(h, in, commit, nil, false, always); ok {
		t.Error("schedule went on after stop")
	}
	if _, ok := siSchedule(h, in, commit, nil, false, false, never); !ok {
		t.Fatal("a serial history does not replay under snapshot isolation")
	}
	if _, ok := siSchedule(h, in, commit, nil, false, false, always); ok {
		t.Error("siSchedule went on after stop")
	}
	// The serial-order search asks at its first node: a small serial history.
	h = brute.Random(rng, brute.Config{MinTxns: 200, MaxTxns: 200, MaxKeys: 20, Values: 2, MaxOps: 4, MaxProcesses: 1, Strategy: brute.Serial})
	in = encode.Infer(h)
	commit = commitsOf(h)
	if order, ok := searchSerial(h, in, commit, 1<<20, never); !ok || verifySerial(h, in, order, false, false) != nil {
		t.Fatal("the search finds no serial order of a serial history")
	}
	if _, ok := searchSerial(h, in, commit, 1<<20, always); ok {
		t.Error("searchSerial went on after stop")
	}
	// And the search within real-time order, whose budget counts work, not nodes.
	if order, ok := searchStrict(h, in, commit, nil, strictSearchWork(), never); !ok || verifySerial(h, in, order, true, true) != nil {
		t.Fatal("the strict search finds no strict-serializable order of a serial history")
	}
	if _, ok := searchStrict(h, in, commit, nil, strictSearchWork(), always); ok {
		t.Error("searchStrict went on after stop")
	}
	if _, ok := searchStrict(h, in, commit, nil, 1, never); ok {
		t.Error("searchStrict went on past its work budget")
	}
}

// TestUncommittedStagesNamed: read uncommitted's own stages (the longest reads'
// witness, the writers' order, the search over attributions) report themselves, so a
// limit reached inside them names them; the message used to name the stage before
// (e.g. "inferring dependencies").
func TestUncommittedStagesNamed(t *testing.T) {
	h := hardHistory(t)
	for _, m := range []string{"read-uncommitted", "strong-session-read-uncommitted"} {
		var stages []string
		// The search over attributions alone (no witness) on the hard history: it runs
		// until the time limit stops it, which only ends the test sooner.
		res, err := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true}, Timeout: time.Second,
			Progress: func(s string) { stages = append(stages, s) }})
		if err != nil {
			t.Fatal(err)
		}
		want := "deciding " + m + ": searching the attributions of read uncommitted"
		if !slices.Contains(stages, want) {
			t.Errorf("%s (%v): stages %q lack %q", m, res.Valid, stages, want)
		}
	}
}
