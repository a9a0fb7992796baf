package check

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"doppel/history"
	"doppel/internal/brute"
)

// lazyAll, when set, orients every key's unobserved writers lazily (eagerUnobserved
// 1: a key with one such writer has no pair), so that the brute-force differential
// exercises the refinement on tiny histories.
var lazyAll = flag.Bool("lazy-all", false, "orient the unobserved writers of every key lazily (eagerUnobserved = 1)")

func TestMain(m *testing.M) {
	flag.Parse()
	if *lazyAll {
		eagerUnobserved = 1
	}
	os.Exit(m.Run())
}

// TestLazyOrientationVariables: 80 transactions append to a key nobody reads, so every
// two of them may both be unobserved and snapshot isolation orders them. Ordering
// every pair took 3,160 orientation variables; the lazy orientation (check/view.go)
// starts with none on a key of more than eagerUnobserved such writers and needs none
// here: a topological order of the solver's solution already keeps them apart. Fails
// with orientUnobserved's every-pair views.
func TestLazyOrientationVariables(t *testing.T) {
	var b strings.Builder
	b.WriteString("{:type :invoke, :f :txn, :value [[:append :y 1]], :process 99, :index 0}\n")
	b.WriteString("{:type :ok, :f :txn, :value [[:append :y 1]], :process 99, :index 1}\n")
	idx := 2
	for i := 0; i < 80; i++ {
		fmt.Fprintf(&b, "{:type :invoke, :f :txn, :value [[:append :x %d] [:r :y nil]], :process %d, :index %d}\n", i, i, idx)
		fmt.Fprintf(&b, "{:type :ok, :f :txn, :value [[:append :x %d] [:r :y [1]]], :process %d, :index %d}\n", i, i, idx+1)
		idx += 2
	}
	h, err := history.Parse(strings.NewReader(b.String()), "unread")
	if err != nil {
		t.Fatal(err)
	}
	most, solved := int32(-1), 0
	solveHook = func(c *checker, v *view) {
		if v.split {
			solved++
			most = max(most, v.extraVars)
		}
	}
	defer func() { solveHook = nil }()
	for _, m := range []string{"snapshot-isolation", "strong-session-snapshot-isolation", "strong-snapshot-isolation"} {
		res, err := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Models[0].Valid; got != Valid {
			t.Errorf("%s: %v, want valid", m, got)
		}
	}
	if solved == 0 {
		t.Fatal("no split view reached the solver")
	}
	if most > 0 {
		t.Errorf("a view handed to the solver had %d orientation variables, want 0 (every pair: 3160)", most)
	}
}

// TestLazyOrientationAgainstBruteForce: the snapshot models decided by the solver alone
// (no witness) on random tiny histories, where refinement gives pairs of overlapping
// unobserved writers their variables: every verdict must be the brute force's, and the
// refinement must be exercised.
func TestLazyOrientationAgainstBruteForce(t *testing.T) {
	defer func(n int) { eagerUnobserved = n }(eagerUnobserved)
	eagerUnobserved = 1
	models := []string{"snapshot-isolation", "strong-session-snapshot-isolation", "strong-snapshot-isolation"}
	refinedRuns, decided := 0, 0
	for seed := 0; seed < *seeds; seed++ {
		h, _ := snapshotMixHistory(seed, 31)
		m := models[seed%len(models)]
		res, err := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true}})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Models[0].Valid
		if got == Unknown {
			continue
		}
		decided++
		if want := brute.Check(h, m); (got == Valid) != want {
			t.Fatalf("seed %d, %s: %v, the brute force says valid=%v\n%s", seed, m, got, want, brute.Format(h))
		}
		if res.Stats.OrientedPairs > 0 {
			refinedRuns++
		}
	}
	if refinedRuns == 0 {
		t.Fatalf("refinement never ran (%d histories decided)", decided)
	}
	t.Logf("%d histories decided, %d of them with pairs oriented by refinement", decided, refinedRuns)
}
