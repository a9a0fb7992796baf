package check

import (
	"doppel/history"
	"flag"
	"math/rand/v2"
	"testing"

	"doppel/encode"
	"doppel/internal/brute"
	"doppel/prune"
)

// TestRCSerialAgainstBruteForce runs the serial search alone on random tiny histories
// with heavy duplication: every verdict it gives for strong-session and strong read
// committed is the oracle's, and it decides most of them, a good share not valid.
var rcSerialSeeds = flag.Int("rcserial-seeds", 6000, "random tiny histories in TestRCSerialAgainstBruteForce")

func TestRCSerialAgainstBruteForce(t *testing.T) {
	seeds := *rcSerialSeeds
	if testing.Short() {
		seeds = 600
	}
	configs := []brute.Config{{MaxTxns: 7, Values: 2}, {Strategy: brute.Realtime}, {Values: 3, MaxTxns: 9, MaxKeys: 2}, {Strategy: brute.SnapshotLike}, {Strategy: brute.FailInfo}}
	decided, invalid, withInfo, windowed := 0, 0, 0, 0
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 29))
		h := brute.Random(rng, configs[seed%len(configs)])
		in := encode.InferPerRead(h)
		if in.CheckValues(); len(in.Findings) > 0 {
			continue
		}
		for _, m := range []string{"strong-session-read-committed", "strong-read-committed"} {
			s := newRCSerial(h, in, models[m].realtime, nil)
			if s == nil {
				continue
			}
			v := s.run()
			if v == Unknown {
				t.Fatalf("seed %d, %s: unknown without limits", seed, m)
			}
			decided++
			for i := range in.Writers {
				if in.Writers[i].Status == history.Info {
					withInfo++ // an :info transaction that appends runs as committed
					break
				}
			}
			want := brute.Check(h, m)
			if (v == Valid) != want {
				t.Fatalf("seed %d, %s: the serial search says %v, the oracle valid=%v\n%s", seed, m, v, want, brute.Format(h))
			}
			if v == Valid {
				// The order is a witness for read committed too (proveBySessionWitness).
				if !brute.Check(h, "read-committed") {
					t.Fatalf("seed %d, %s: the search found an order, the oracle says read committed does not hold\n%s", seed, m, brute.Format(h))
				}
				at, err := verifyPerReadLists(h, in, s.order)
				if err == nil {
					err = verifyOrders(h, at, true, models[m].realtime)
				}
				if err != nil {
					t.Fatalf("seed %d, %s: the order found does not verify: %v\n%s", seed, m, err, brute.Format(h))
				}
			} else {
				invalid++
			}
			// Within the windows of the model's narrowing (read by read, with its
			// orders) the search decides the same: the windows keep every order.
			pr := prune.Run(in, prune.Options{Level: prune.Level{PerRead: true, Process: true, Realtime: models[m].realtime}})
			if pr.Contradiction != nil || pr.KeyUnsat {
				if want {
					t.Fatalf("seed %d, %s: the narrowing refutes a valid history\n%s", seed, m, brute.Format(h))
				}
				continue
			}
			sw := newRCSerial(h, in, models[m].realtime, nil)
			sw.setWindows(pr.Win)
			if vw := sw.run(); vw != v {
				t.Fatalf("seed %d, %s: within the windows the search says %v, without %v\n%s", seed, m, vw, v, brute.Format(h))
			}
			windowed++
			if v == Valid {
				at, err := verifyPerReadLists(h, in, sw.order)
				if err == nil {
					err = verifyOrders(h, at, true, models[m].realtime)
				}
				if err != nil {
					t.Fatalf("seed %d, %s: the order found within the windows does not verify: %v\n%s", seed, m, err, brute.Format(h))
				}
			}
		}
	}
	t.Logf("decided %d (%d with :info transactions that append), refuted %d; %d within windows", decided, withInfo, invalid, windowed)
	if decided < seeds || invalid < seeds/10 || withInfo < seeds/50 {
		t.Errorf("decided %d (%d with :info transactions that append) and refuted %d of %d: the search is hardly exercised", decided, withInfo, invalid, 2*seeds)
	}
}

var stubbornSeeds = flag.Int("stubborn-seeds", 6000, "random tiny histories in TestRCStubbornAgainstBruteForce")

// TestRCStubbornAgainstBruteForce runs the serial search with its stubborn sets (and
// the test that a next transaction can never run, at every state) and without, on
// random tiny histories: both give the oracle's verdict, the orders found verify, and
// the reduced search visits fewer failed states in all.
func TestRCStubbornAgainstBruteForce(t *testing.T) {
	seeds := *stubbornSeeds
	defer func() { rcPadChains = 0 }()
	if testing.Short() {
		seeds = 800
	}
	configs := []brute.Config{{MaxTxns: 7, Values: 2}, {Strategy: brute.Realtime}, {Values: 3, MaxTxns: 9, MaxKeys: 2}, {Strategy: brute.SnapshotLike}, {MaxTxns: 10, Values: 2, MaxKeys: 3}, {Strategy: brute.FailInfo}}
	var plainStates, porStates, reduced, hits int
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 37))
		h := brute.Random(rng, configs[seed%len(configs)])
		in := encode.InferPerRead(h)
		if in.CheckValues(); len(in.Findings) > 0 {
			continue
		}
		// Every third history runs with 62 empty processes first, so that its
		// process sets span two words.
		rcPadChains = 0
		if seed%3 == 2 {
			rcPadChains = 62
		}
		for _, m := range []string{"strong-session-read-committed", "strong-read-committed"} {
			plain := newRCSerial(h, in, models[m].realtime, nil)
			if plain == nil {
				continue
			}
			if !plain.por {
				t.Fatalf("seed %d: the reduction is off on a tiny history", seed)
			}
			plain.por = false
			vp := plain.run()
			s := newRCSerial(h, in, models[m].realtime, nil)
			s.deadChecks = true
			v := s.run()
			want := brute.Check(h, m)
			if v == Unknown || (v == Valid) != want || (vp == Valid) != want {
				t.Fatalf("seed %d, %s: reduced %v, plain %v, the oracle valid=%v\n%s", seed, m, v, vp, want, brute.Format(h))
			}
			if v == Valid {
				// The order is a witness for read committed too (proveBySessionWitness).
				if !brute.Check(h, "read-committed") {
					t.Fatalf("seed %d, %s: the search found an order, the oracle says read committed does not hold\n%s", seed, m, brute.Format(h))
				}
				at, err := verifyPerReadLists(h, in, s.order)
				if err == nil {
					err = verifyOrders(h, at, true, models[m].realtime)
				}
				if err != nil {
					t.Fatalf("seed %d, %s: the order found does not verify: %v\n%s", seed, m, err, brute.Format(h))
				}
			}
			plainStates += plain.states
			porStates += s.states
			hits += s.reachHits
			if s.states < plain.states {
				reduced++
			}
		}
	}
	if porStates >= plainStates || reduced < seeds/50 {
		t.Errorf("failed states: %d reduced, %d plain (%d histories with fewer): the reduction hardly applies", porStates, plainStates, reduced)
	}
	if hits < seeds/10 {
		t.Errorf("the competitor sets kept were used %d times: the cache is hardly exercised", hits)
	}
	t.Logf("failed states: %d reduced, %d plain; fewer on %d; competitor sets kept used %d times", porStates, plainStates, reduced, hits)
}
