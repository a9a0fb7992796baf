package uncommitted

import (
	"math/rand/v2"
	"testing"

	"doppel/internal/brute"
)

// TestLongestReadsWitnessIsSound runs the longest-reads witness alone on random tiny
// histories with heavy duplication, under the three models: whenever it proves one
// valid, the brute-force oracle agrees; and it proves a good share of them.
func TestLongestReadsWitnessIsSound(t *testing.T) {
	seeds := 20000
	if testing.Short() {
		seeds = 2000
	}
	configs := []brute.Config{{}, {MaxTxns: 7, Values: 2}, {Strategy: brute.FailInfo}, {Strategy: brute.Realtime},
		{Values: 3, MaxTxns: 9, MaxKeys: 2}, {Strategy: brute.SnapshotLike}}
	proved, valid := 0, 0
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 29))
		h := brute.Random(rng, configs[seed%len(configs)])
		x := NewIndex(h)
		if len(x.Findings) > 0 || x.Open() == 0 {
			continue
		}
		for _, m := range modelsUnderTest {
			want := brute.Check(h, m.name)
			if want {
				valid++
			}
			if !x.LongestReads(m.process, m.realtime, nil) {
				continue
			}
			proved++
			if !want {
				t.Fatalf("seed %d, %s: the witness says valid, the oracle not\n%s", seed, m.name, brute.Format(h))
			}
		}
	}
	if proved < valid/2 {
		t.Errorf("the witness proved %d of %d valid (model, history) pairs with open keys: hardly exercised", proved, valid)
	}
}

// TestVerifyAttributionRejects: the check behind the witness refuses attributions that
// break the definition: a position given to a transaction that did not append its
// value, an append used twice, and one whose ww edges close a cycle.
func TestVerifyAttributionRejects(t *testing.T) {
	// x: 1 by T0 or T2, then T1's 2; T0 → T1 on y. T0's 1 first gives T0 → T1 and
	// T1 → T2 (T2's 1 left over, T1 the last): acyclic.
	h, err := brute.Parse("ok [a x 1] [a y 5]\nok [a y 6] [a x 2]\nok [a x 1]\nok [r x [1 2]] [r y [5 6]]")
	if err != nil {
		t.Fatal(err)
	}
	x := NewIndex(h)
	if x.Open() != 1 {
		t.Fatalf("%d open keys, want 1", x.Open())
	}
	good := []keyAttribution{{li: 0, at: []int32{0, 1}}}
	if !x.verifyAttribution(false, false, good) {
		t.Fatal("a valid attribution was refused")
	}
	for name, bad := range map[string][]keyAttribution{
		"not its value":     {{li: 0, at: []int32{1, 1}}},
		"no such append":    {{li: 0, at: []int32{-1, 1}}},
		"wrong length":      {{li: 0, at: []int32{0}}},
		"no longest read 1": {{li: 1, at: []int32{0, 1}}},
	} {
		if x.verifyAttribution(false, false, bad) {
			t.Errorf("%s: accepted", name)
		}
	}
	// A cycle: T2's 1 first leaves T0's 1 over, so T1 (last) → T0, and T0 → T1 on y.
	if x.verifyAttribution(false, false, []keyAttribution{{li: 0, at: []int32{2, 1}}}) {
		t.Error("T1 → T0 (left over) and T0 → T1 on y: a cycle accepted")
	}
}
