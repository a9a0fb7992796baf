package check

import (
	"flag"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
)

var lnsLocalSeeds = flag.Int("local-lns-seeds", 3000, "random tiny histories for TestLocalLNSAgainstBruteForce")

// TestLocalLNSAgainstBruteForce runs the neighbourhood search alone on random tiny
// duplicate-heavy histories, from a random order of their transactions (mostly far
// from serial) and with no band, so that every writer but those of the broken
// transactions starts assumed at the order's place and only the final conflicts let
// them go. Whatever it proves must be serializable by the brute force, and whatever it
// refutes not. Since the assumptions are let go until none is left, it must decide
// every history within its conflicts (but those with a key that has no segmentation
// at all, which it leaves to the model's own search): a final conflict read wrongly (a
// writer kept that should go) or a base place taken wrongly shows as a miss, and a
// refutation must name an anomaly serializability forbids.
func TestLocalLNSAgainstBruteForce(t *testing.T) {
	defer func(b, u int32) { lnsBandOverride, lnsLevelUnitOverride = b, u }(lnsBandOverride, lnsLevelUnitOverride)
	lnsBandOverride = 0
	proved, refuted, valid, checked, keyUnsat := 0, 0, 0, 0, 0
	eachTinyHistory(*lnsLocalSeeds, 211, func(seed int, h *history.History, in *encode.Inference, want bool) {
		checked++
		if want {
			valid++
		}
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		var order []int32
		for _, t := range rng.Perm(len(h.Txns)) {
			if h.Txns[t].Status == history.OK {
				order = append(order, int32(t))
			}
		}
		// Every other history from the transactions in the order of their indexes,
		// mostly near a serial order, with a random one moved, and the writers in
		// solver levels by their distance from a broken transaction with a unit of one
		// place (the default unit is longer than these histories, and puts them all
		// in one level): the farther levels then stand while the nearer ones are let
		// go.
		lnsLevelUnitOverride = 1 << 30
		if seed%2 == 1 && len(order) > 1 {
			slices.Sort(order)
			i, j := rng.IntN(len(order)), rng.IntN(len(order))
			t := order[i]
			order = slices.Insert(slices.Delete(order, i, i+1), min(j, len(order)-1), t)
			lnsLevelUnitOverride = 1
		}
		c := &checker{h: h, proven: map[string]bool{}}
		c.budget = newBudget(c.opts, &c.res.Stats.Conflicts)
		switch c.proveLocalLNS(in, order, "serializable", 100_000) {
		case Valid:
			proved++
			if !want {
				t.Fatalf("seed %d: the neighbourhood search proved a history the brute force says is not serializable\n%s", seed, brute.Format(h))
			}
			if !c.proven["serializable"] || c.res.Stats.LocalSearched != 1 {
				t.Fatalf("seed %d: proved, but not recorded (proven %v, stats %d)", seed, c.proven, c.res.Stats.LocalSearched)
			}
		case Invalid:
			refuted++
			if want {
				t.Fatalf("seed %d: the neighbourhood search refuted a history the brute force says is serializable\n%s", seed, brute.Format(h))
			}
			if !c.named("serializable") && !slices.ContainsFunc(c.res.Anomalies, func(a Anomaly) bool { return forbids("serializable", a.Type) }) {
				t.Fatalf("seed %d: refuted, but no anomaly serializability forbids: %+v", seed, c.res.Anomalies)
			}
		default:
			if p := encode.BuildWith(in, encode.BuildOptions{}); p != nil && len(p.UnsatKeys) > 0 {
				keyUnsat++
			}
		}
	})
	t.Logf("%d histories, %d serializable by the brute force, %d proved and %d refuted by the neighbourhood search, %d left with a key without segmentation", checked, valid, proved, refuted, keyUnsat)
	if proved != valid || refuted+keyUnsat != checked-valid {
		t.Fatalf("the neighbourhood search proved %d of %d serializable histories and refuted %d of %d others (%d with a key without segmentation)", proved, valid, refuted, checked-valid, keyUnsat)
	}
}

// TestBrokenRanks checks the transactions brokenRanks names on a hand-made order: key
// 0's trace is [1 2]; the order runs the writer of 2 first, so its block takes a place
// of 1, and the read of [1] after it sees two values installed.
func TestBrokenRanks(t *testing.T) {
	h, err := history.Parse(strings.NewReader(`{:type :invoke, :f :txn, :value [[:append 0 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:append 0 1]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:append 0 2]], :process 1, :index 2}
{:type :ok, :f :txn, :value [[:append 0 2]], :process 1, :index 3}
{:type :invoke, :f :txn, :value [[:r 0 nil]], :process 2, :index 4}
{:type :ok, :f :txn, :value [[:r 0 [1]]], :process 2, :index 5}
{:type :invoke, :f :txn, :value [[:r 0 nil]], :process 3, :index 6}
{:type :ok, :f :txn, :value [[:r 0 [1 2]]], :process 3, :index 7}
`), "broken")
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	good := []int32{0, 2, 1, 3}
	bad := []int32{1, 0, 2, 3}
	rank := func(order []int32) []int32 {
		r := make([]int32, len(h.Txns))
		for i, t := range order {
			r[t] = int32(i)
		}
		return r
	}
	if got := brokenRanks(in, newMergedBase(in, good, nil), rank(good)); len(got) != 0 {
		t.Errorf("a serial order: broken %v, want none", got)
	}
	// Places: T1 (the 2) at 0, T0 at 1; T2 reads [1] after both: broken are T1's
	// block (place 0 of the order), T0's (a 1 where the trace has 2: place 1) and T2's
	// read (place 2). T3 reads [1 2] after two values but of the wrong ones: broken too.
	got := brokenRanks(in, newMergedBase(in, bad, nil), rank(bad))
	want := []int32{0, 1, 2, 3}
	if !slices.Equal(got, want) {
		t.Errorf("broken %v, want %v", got, want)
	}
}
