package check

import (
	"math/rand/v2"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
)

// TestVerifySerialNeverAcceptsInvalid: verifySerial is what makes a replay a proof, so
// an order it accepts must come from a history the brute-force checker finds valid
// (under the model the order was checked for). Random orders of random tiny histories,
// many of them invalid, probe it; the replay's own orders must be accepted.
func TestVerifySerialNeverAcceptsInvalid(t *testing.T) {
	accepted, rejected := 0, 0
	for seed := 0; seed < *seeds/4; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		h := brute.Random(rng, brute.Config{Strategy: brute.Strategy(seed % 6)})
		in := encode.Infer(h)
		for try := 0; try < 20; try++ {
			var order []int32
			for tx := range h.Txns {
				if st := h.Txns[tx].Status; st == history.OK || st == history.Info && rng.IntN(2) == 0 {
					order = append(order, int32(tx))
				}
			}
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			if len(order) > 0 && rng.IntN(4) == 0 {
				order = order[1:] // sometimes leave one out, even an :ok one
			}
			for _, m := range []string{"serializable", "strong-session-serializable", "strict-serializable"} {
				spec := models[m]
				if verifySerial(h, in, order, spec.process, spec.realtime) != nil {
					rejected++
					continue
				}
				accepted++
				if !brute.Check(h, m) {
					t.Fatalf("seed %d: verifySerial accepted order %v under %s, but the history is not valid:\n%s", seed, order, m, brute.Format(h))
				}
			}
		}
	}
	if accepted == 0 || rejected == 0 {
		t.Fatalf("the probe is not probing: %d accepted, %d rejected", accepted, rejected)
	}
	t.Logf("%d orders accepted, %d rejected", accepted, rejected)
}

// TestReplayOrdersVerify: whenever the replay claims an order, verifySerial accepts it
// (a rejection would be a replay bug turned into a slower, still sound, answer), and the
// replay succeeds on many of the valid histories.
func TestReplayOrdersVerify(t *testing.T) {
	proved, valid := 0, 0
	for seed := 0; seed < *seeds/4; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 8))
		h := brute.Random(rng, brute.Config{Strategy: brute.Strategy(seed % 6)})
		for _, m := range []string{"serializable", "strict-serializable", "snapshot-isolation"} {
			res, err := Check(h, Options{Models: []string{m}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Stats.ReplayRejected > 0 {
				t.Fatalf("seed %d: %s: verifySerial rejected the replay's order\n%s", seed, m, brute.Format(h))
			}
			if res.Valid == Valid {
				valid++
				proved += res.Stats.Replayed
			}
		}
	}
	if proved == 0 {
		t.Fatal("the replay proved nothing")
	}
	t.Logf("the replay proved %d of %d valid verdicts", proved, valid)
}

// TestVerifySINeverAcceptsInvalid probes verifySI as TestVerifySerialNeverAcceptsInvalid
// probes verifySerial: random start/commit sequences it accepts must come from
// histories the brute-force checker finds snapshot isolated.
func TestVerifySINeverAcceptsInvalid(t *testing.T) {
	accepted, rejected := 0, 0
	for seed := 0; seed < *seeds/4; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		h := brute.Random(rng, brute.Config{Strategy: brute.Strategy(seed % 6)})
		in := encode.Infer(h)
		for try := 0; try < 20; try++ {
			var events []siEvent
			for tx := range h.Txns {
				if st := h.Txns[tx].Status; st == history.OK || st == history.Info && rng.IntN(2) == 0 {
					events = append(events, siEvent{int32(tx), false}, siEvent{int32(tx), true})
				}
			}
			rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
			// Each transaction's first event is its start.
			seen := map[int32]bool{}
			for i := range events {
				events[i].Commit = seen[events[i].Txn]
				seen[events[i].Txn] = true
			}
			if len(events) > 0 && rng.IntN(4) == 0 {
				// Sometimes a transaction, even an :ok one, is missing, or its commit.
				gone := events[rng.IntN(len(events))].Txn
				onlyCommit := rng.IntN(2) == 0
				kept := events[:0]
				for _, e := range events {
					if e.Txn != gone || onlyCommit && !e.Commit {
						kept = append(kept, e)
					}
				}
				events = kept
			}
			if verifySI(h, in, events, false, false) != nil {
				rejected++
				continue
			}
			accepted++
			if !brute.Check(h, "snapshot-isolation") {
				t.Fatalf("seed %d: verifySI accepted %v, but the history is not snapshot isolated:\n%s", seed, events, brute.Format(h))
			}
		}
	}
	if accepted == 0 || rejected == 0 {
		t.Fatalf("the probe is not probing: %d accepted, %d rejected", accepted, rejected)
	}
	t.Logf("%d event sequences accepted, %d rejected", accepted, rejected)
}

// TestSIReplayProvesWriteSkew: histories that are snapshot isolated but not
// serializable are what the snapshot replay is for; it should prove most of them.
func TestSIReplayProvesWriteSkew(t *testing.T) {
	proved, cases := 0, 0
	for seed := 0; seed < *seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 9))
		h := brute.Random(rng, brute.Config{Strategy: brute.SnapshotLike})
		if !brute.Check(h, "snapshot-isolation") || brute.Check(h, "serializable") {
			continue
		}
		cases++
		res, err := Check(h, Options{Models: []string{"snapshot-isolation"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid != Valid || res.Stats.ReplayRejected > 0 {
			t.Fatalf("seed %d: %v, %d replays rejected\n%s", seed, res.Valid, res.Stats.ReplayRejected, brute.Format(h))
		}
		proved += res.Stats.Replayed
	}
	if cases == 0 || proved < cases/2 {
		t.Fatalf("the snapshot replay proved %d of %d write-skew histories", proved, cases)
	}
	t.Logf("the snapshot replay proved %d of %d write-skew histories", proved, cases)
}
