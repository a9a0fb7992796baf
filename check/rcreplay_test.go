package check

import (
	"math/rand/v2"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
)

// TestPerReadVerifierIsSound probes verifyPerRead with the replay's orders and with
// random orders of random tiny histories: any order it accepts must come from a history
// the brute force finds valid under the model it was verified for.
func TestPerReadVerifierIsSound(t *testing.T) {
	accepted, replayed := 0, 0
	for seed := 0; seed < 3000; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		h := brute.Random(rng, brute.Config{Strategy: brute.Strategies[seed%len(brute.Strategies)]})
		in := encode.InferPerRead(h)
		var orders [][]int32
		if order, ok, _ := perReadSchedule(h, in, nil, seed%2 == 0, seed%3 == 0, nil); ok {
			orders = append(orders, order)
			replayed++
		}
		for range 4 {
			orders = append(orders, randomOrder(h, rng))
		}
		for _, order := range orders {
			for _, m := range []string{"read-committed", "strong-session-read-committed", "strong-read-committed"} {
				spec := models[m]
				if verifyPerRead(h, order, spec.process, spec.realtime) != nil {
					continue
				}
				accepted++
				if !brute.Check(h, m) {
					t.Fatalf("seed %d: %s: verifyPerRead accepts %v, the brute force finds the history not valid\n%s", seed, m, order, brute.Format(h))
				}
			}
		}
	}
	if accepted == 0 || replayed == 0 {
		t.Fatalf("%d orders accepted, %d replays: the test checks nothing", accepted, replayed)
	}
	t.Logf("%d orders accepted, %d histories replayed", accepted, replayed)
}

// randomOrder is the :ok transactions and some :info ones, shuffled.
func randomOrder(h *history.History, rng *rand.Rand) []int32 {
	var order []int32
	for t := range h.Txns {
		switch h.Txns[t].Status {
		case history.OK:
			order = append(order, int32(t))
		case history.Info:
			if rng.IntN(2) == 0 {
				order = append(order, int32(t))
			}
		}
	}
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}

// TestPerReadVerifierChecksVersionReads: a read that misses its transaction's own
// append still shows a state of the key: the verifier accepts it where a block ends
// or inside its own block, and rejects it inside another transaction's block or when it
// is not a prefix of the final list.
func TestPerReadVerifierChecksVersionReads(t *testing.T) {
	for _, c := range []struct {
		text  string
		order []int32
		ok    bool
	}{
		{"ok [a x 1]\nok [a x 2] [r x [1 2 3]]\nok [a x 3]", []int32{0, 1, 2}, true},
		{"ok [a x 1] [a x 2]\nok [a x 3] [r x [1]]", []int32{0, 1}, false}, // inside T0's block
		{"ok [a x 1] [a x 2] [r x [1]]", []int32{0}, true},                 // inside its own block
		{"ok [a x 1]\nok [a x 2] [r x [2 1]]", []int32{0, 1}, false},       // not a prefix of [1 2]
		{"ok [a x 1]\nok [a x 2] [r x [2 1]]", []int32{1, 0}, true},
	} {
		h, err := brute.Parse(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if err := verifyPerRead(h, c.order, false, false); (err == nil) != c.ok {
			t.Errorf("%q in order %v: verifier says %v, want accepted=%v", c.text, c.order, err, c.ok)
		}
	}
}

// TestPerReadRepairTakesOlderReads reproduces, small, where a database's read-committed
// run left the read-by-read replay stuck (a PostgreSQL kill-conn run, at 319 of 4,250
// transactions): T2 read y before T1's append and w after it (read skew, so no serial
// order), so it runs only by reading an older list and is kept aside; T3, another
// writer of x's first 5, takes position 0; T5 (x's 6) waits for z, which T4 appends
// after reading T2's q. T2's 5 now fits only at 2, behind T5: stuck. The repair must
// see T2 as behind on x only, though it reads an older list, and undo T3's choice; the
// gated repair stops where T2 is kept aside each time, so the one gated on pins only
// finishes.
func TestPerReadRepairTakesOlderReads(t *testing.T) {
	h, err := brute.Parse(`ok [a y 1] inv=0 cmp=1
ok [a y 2] [a w 3] inv=2 cmp=3
ok [r y [1]] [r w [3]] [a x 5] [a q 9] inv=1 cmp=12
ok [a x 5] inv=4 cmp=14
ok [r q [9]] [a z 7] inv=13 cmp=15
ok [a x 6] [r z [7]] inv=5 cmp=20
ok [r x [5 6 5]] [r y [1 2]] [r w [3]] [r q [9]] [r z [7]] inv=21 cmp=22`)
	if err != nil {
		t.Fatal(err)
	}
	if !brute.Check(h, "strong-read-committed") || brute.Check(h, "serializable") {
		t.Fatal("the history should be strong read committed and not serializable")
	}
	in := encode.InferPerRead(h)
	if _, ok, _ := perReadSchedule(h, in, nil, false, false, nil); ok {
		t.Fatal("the unrepaired replay runs through: the history no longer shows the stuck pattern")
	}
	never := func() bool { return false }
	for _, guide := range [][]encode.Edge{nil, orderGuide(in, commitsOf(h))} {
		order, ok, n := perReadReplays(h, in, guide, true, nil, never)
		if !ok {
			t.Fatalf("guide %v: the repaired read-by-read replays are stuck (%d repairs)", guide != nil, n)
		}
		m := "read-committed"
		if guide != nil {
			m = "strong-read-committed"
		}
		if err := verifyPerRead(h, order, models[m].process, models[m].realtime); err != nil {
			t.Fatalf("guide %v: order %v rejected: %v", guide != nil, order, err)
		}
	}
}
