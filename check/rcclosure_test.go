package check

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
	"doppel/internal/ordersearch"
)

// withBounds gives s the closure, with the order count's bounds.
func withBounds(h *history.History, in *encode.Inference, s *rcSerial, realtime bool) {
	s.newClosure()
	b := &orderBounds{Lo: make([]int32, len(in.Writers)), Hi: make([]int32, len(in.Writers))}
	for i := range b.Lo {
		b.Lo[i], b.Hi[i] = 1, 1<<30
	}
	orderCountInto(h, in, realtime, nil, nil, b)
	s.cl.bounds = b
}

// completes runs the plain search (no closure) from s's current state and reports
// whether some order completes it; s is back in that state when none does.
func completes(s *rcSerial) bool {
	cl := s.cl
	s.cl = nil
	defer func() { s.cl = cl }()
	return ordersearch.Search(s, ordersearch.Limits{MaxStates: 1 << 20, MaxBytes: 1 << 28}).Outcome == ordersearch.Found
}

// TestRCClosureAgainstBruteForce walks random orders through the serial search's
// states on random tiny histories and, at each state, asks the closure about every
// process's transactions near its next one (dead) and the pigeonhole about every key
// (keyShort): whenever either refutes a state, the search without them must find no
// order that completes it. Then the search with both decides each history as the
// brute force does.
var closureSeeds = flag.Int("closure-seeds", 3000, "random tiny histories in TestRCClosureAgainstBruteForce")

func TestRCClosureAgainstBruteForce(t *testing.T) {
	seeds := *closureSeeds
	if testing.Short() {
		seeds = 300
	}
	configs := []brute.Config{{MaxTxns: 7, Values: 2}, {Strategy: brute.Realtime}, {Values: 3, MaxTxns: 9, MaxKeys: 2}, {Strategy: brute.SnapshotLike}, {MaxTxns: 10, MaxKeys: 1, Values: 2, MaxProcesses: 4}}
	refutedDead, refutedShort, checked := 0, 0, 0
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 31))
		h := brute.Random(rng, configs[seed%len(configs)])
		in := encode.InferPerRead(h)
		if in.CheckValues(); len(in.Findings) > 0 {
			continue
		}
		for _, m := range []string{"strong-session-read-committed", "strong-read-committed"} {
			realtime := models[m].realtime
			s := newRCSerial(h, in, realtime, nil)
			if s == nil {
				continue
			}
			withBounds(h, in, s, realtime)
			for !s.Done() {
				for c, ch := range s.chains {
					for x := s.head[c]; int(x) < len(ch) && x < s.head[c]+closureHorizon; x++ {
						checked++
						if s.dead(int32(c), x, false) {
							refutedDead++
							if completes(s) {
								s.dead(int32(c), x, true)
								t.Fatalf("seed %d, %s: the closure refutes a state an order completes: %s\n%s", seed, m, s.closureText(), brute.Format(h))
							}
						}
					}
				}
				for k := range in.Keys {
					if short := s.keyShort(int32(k)); short != nil {
						refutedShort++
						if completes(s) {
							t.Fatalf("seed %d, %s: the pigeonhole refutes key %d at a state an order completes: %+v\n%s", seed, m, k, *short, brute.Format(h))
						}
					}
				}
				cl := s.cl
				s.cl = nil
				cands := s.Candidates(nil)
				s.cl = cl
				if len(cands) == 0 {
					break
				}
				s.Run(cands[rng.IntN(len(cands))])
			}
			// The whole search with the closure and the pigeonhole, from the start.
			s = newRCSerial(h, in, realtime, nil)
			withBounds(h, in, s, realtime)
			s.cl.deadTests, s.failed = true, 1
			v := s.run()
			if v == Unknown {
				t.Fatalf("seed %d, %s: unknown without limits", seed, m)
			}
			if want := brute.Check(h, m); (v == Valid) != want {
				t.Fatalf("seed %d, %s: the search with the closure says %v, the oracle valid=%v\n%s", seed, m, v, want, brute.Format(h))
			}
		}
	}
	if refutedDead < seeds/20 || refutedShort < seeds/50 {
		t.Errorf("the closure refuted %d and the pigeonhole %d of %d states asked: hardly exercised", refutedDead, refutedShort, checked)
	}
	t.Logf("closure refuted %d, pigeonhole %d, of %d asked", refutedDead, refutedShort, checked)
}

// TestClosureRefutesLostUpdate: T0 (process 0) and T1 (process 1) both read x empty
// and append 1; T1's process then appends 2 and T0's appends 3, and a reader sees
// [1 2 3]. T0's block can only go where the list shows 1 (T1's), since before 3
// (T0's successor T3's) its process must have installed it: once T1 ran, the closure
// shows T0 can run in no continuation, and says why.
func TestClosureRefutesLostUpdate(t *testing.T) {
	const edn = `{:index 0, :type :invoke, :process 0, :f :txn, :value [[:r 0 nil] [:append 0 1]]}
{:index 1, :type :invoke, :process 1, :f :txn, :value [[:r 0 nil] [:append 0 1]]}
{:index 2, :type :ok, :process 1, :f :txn, :value [[:r 0 []] [:append 0 1]]}
{:index 3, :type :ok, :process 0, :f :txn, :value [[:r 0 []] [:append 0 1]]}
{:index 4, :type :invoke, :process 1, :f :txn, :value [[:append 0 2]]}
{:index 5, :type :ok, :process 1, :f :txn, :value [[:append 0 2]]}
{:index 6, :type :invoke, :process 0, :f :txn, :value [[:append 0 3]]}
{:index 7, :type :ok, :process 0, :f :txn, :value [[:append 0 3]]}
{:index 8, :type :invoke, :process 2, :f :txn, :value [[:r 0 nil]]}
{:index 9, :type :ok, :process 2, :f :txn, :value [[:r 0 [1 2 3]]]}
`
	h, err := history.ParseEDN(strings.NewReader(edn), "lost-update")
	if err != nil {
		t.Fatal(err)
	}
	const m = "strong-session-read-committed"
	if brute.Check(h, m) {
		t.Fatal("the oracle finds the history valid")
	}
	in := encode.InferPerRead(h)
	in.CheckValues()
	s := newRCSerial(h, in, false, nil)
	if s == nil {
		t.Fatal("the serial search does not apply")
	}
	s.newClosure()
	// Run T1 (process 1's first transaction): x has one value, and T0's 1 fits
	// nowhere after it but past the list, which needs T0's successor's 3 first.
	var c1 int32 = -1
	for c, ch := range s.chains {
		if h.Txns[ch[0]].Process == 1 {
			c1 = int32(c)
		}
	}
	s.Run(c1)
	var c0 int32 = -1
	for c, ch := range s.chains {
		if h.Txns[ch[0]].Process == 0 {
			c0 = int32(c)
		}
	}
	if !s.dead(c0, s.head[c0], true) {
		t.Fatal("the closure does not refute the state after T1")
	}
	if txt := s.closureText(); !strings.Contains(txt, "can run in no continuation") || !strings.Contains(txt, "key 0") {
		t.Fatalf("explanation: %s", txt)
	}
	// And the search with the closure refutes the history.
	s = newRCSerial(h, in, false, nil)
	s.newClosure()
	s.cl.deadTests, s.failed = true, 1
	if v := s.run(); v != Invalid {
		t.Fatalf("the search says %v", v)
	}
	if s.cl.refuted == 0 {
		t.Fatal("the closure refuted no state")
	}
}
