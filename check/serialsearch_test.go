package check

import (
	"flag"
	"math/rand/v2"
	"slices"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
	"doppel/prune"
)

var serialSearchSeeds = flag.Int("serial-search-seeds", 4000, "random tiny histories for TestSerialSearchAgainstBruteForce")

// TestSerialSearchAgainstBruteForce runs the backtracking search for a serial order
// (searchSerial) alone on random tiny duplicate-heavy histories: every order it finds
// must pass verifySerial and the history must be serializable by the brute force. It
// must find one wherever the brute force says serializable: without a node limit the
// search is exhaustive, so a miss is a state wrongly pruned (a slot of one key taken
// for the next key's, once, missed 28 of 2907).
func TestSerialSearchAgainstBruteForce(t *testing.T) {
	found, valid, checked := 0, 0, 0
	eachTinyHistory(*serialSearchSeeds, 97, func(seed int, h *history.History, in *encode.Inference, want bool) {
		checked++
		if want {
			valid++
		}
		order, ok := searchSerial(h, in, commitsOf(h), 1<<20, nil)
		if !ok {
			return
		}
		found++
		if err := verifySerial(h, in, order, false, false); err != nil {
			t.Fatalf("seed %d: the searched order does not verify: %v\n%s", seed, err, brute.Format(h))
		}
		if !want {
			t.Fatalf("seed %d: the search found a serial order, the brute force says not serializable\n%s", seed, brute.Format(h))
		}
	})
	t.Logf("%d histories checked, %d serializable by the brute force, the search found %d", checked, valid, found)
	if found == 0 || found != valid {
		t.Fatalf("the search found %d of %d serializable histories", found, valid)
	}
}

// eachTinyHistory calls visit on the random tiny duplicate-heavy histories of seeds
// 0..n-1 (generated with salt) that have no finding, with the brute force's
// serializable verdict: the searches for a serial order are compared with it.
func eachTinyHistory(n int, salt uint64, visit func(seed int, h *history.History, in *encode.Inference, serializable bool)) {
	for seed := 0; seed < n; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), salt))
		cfg := brute.Config{Strategy: brute.Strategies[seed%len(brute.Strategies)]}
		if seed%4 == 3 {
			cfg = brute.Config{Values: 3, MaxTxns: 7}
		}
		h := brute.Random(rng, cfg)
		in := encode.Infer(h)
		if in.CheckValues(); len(in.Findings) > 0 {
			continue
		}
		visit(seed, h, in, brute.Check(h, "serializable"))
	}
}

var strictSearchSeeds = flag.Int("strict-search-seeds", 4000, "random tiny histories for TestStrictSearchAgainstBruteForce")

// TestStrictSearchAgainstBruteForce runs the search within real-time order
// (searchStrict) alone on the same random tiny histories: every order it finds must
// pass verifySerial with process and real-time order, and the history must be strict
// serializable by the brute force. Without a node limit the search is exhaustive
// (the gates only hold back what real-time order forbids; ordered is left out, so
// nothing else is pruned but by the value supply), so it must find an order wherever
// the brute force says strict serializable: a gate left closed after an undo, or
// opened early, fails here. So it must within the windows of serializability's and
// strict serializability's narrowings (both hold for every strict-serializable
// order): a block kept out of a position its window allows, or a key held back for a
// writer that need not start there, fails here too.
func TestStrictSearchAgainstBruteForce(t *testing.T) {
	levels := []struct {
		name string
		lv   *prune.Level
	}{{"no windows", nil}, {"serializable's windows", &prune.Level{}}, {"strict serializability's windows", &prune.Level{Process: true, Realtime: true}}}
	found, valid, checked := make([]int, len(levels)), 0, 0
	turns, resumed := 0, 0
	horizonRuns, horizonFound, horizonMissed, horizonCut := 0, 0, 0, 0
	byInvokeFound, byInvokeOther := 0, 0
	eachTinyHistory(*strictSearchSeeds, 101, func(seed int, h *history.History, in *encode.Inference, _ bool) {
		checked++
		want := brute.Check(h, "strict-serializable")
		if want {
			valid++
		}
		for i, l := range levels {
			var win *encode.Windows
			if l.lv != nil {
				pr := prune.Run(in, prune.Options{Level: *l.lv})
				if pr.Contradiction != nil || pr.KeyUnsat {
					if want {
						t.Fatalf("seed %d: the narrowing (%s) refutes a strict-serializable history\n%s", seed, l.name, brute.Format(h))
					}
					continue
				}
				win = pr.Win
			}
			order, ok := searchStrict(h, in, commitsOf(h), win, 0, nil)
			if i == len(levels)-1 {
				// The same search in turns of work (resume) that double from 2 units
				// (a turn shorter than the walk back down makes no progress), as the
				// solver's rounds continue it: it must end with the same order, or
				// none as the one run, whatever the turns' cuts.
				s := newStrictSearch(h, in, commitsOf(h), win, nil)
				var tOrder []int32
				tOk := false
				if s != nil {
					for n, work := 0, int64(2); ; n, work = n+1, work*2 {
						turns++
						if tOk = s.resume(work); tOk || !s.outOfWork() {
							break
						}
						if n == 1 {
							resumed++
						}
					}
					tOrder = s.order
				}
				if tOk != ok || ok && !slices.Equal(tOrder, order) {
					t.Fatalf("seed %d: in turns the search found %v (%v), in one run %v (%v)\n%s", seed, tOk, tOrder, ok, order, brute.Format(h))
				}
				// With the :info choices by invoke (chooseInfoByInvoke, the order the
				// windowed search takes, raced beside prio's): the choices' order
				// changes which order is found first, never whether one is.
				if is := newStrictSearch(h, in, commitsOf(h), win, nil); is != nil {
					is.chooseInfoByInvoke()
					iOk := is.resume(0)
					if iOk != ok {
						t.Fatalf("seed %d: with :info choices by invoke the search found %v, in prio's order %v\n%s", seed, iOk, ok, brute.Format(h))
					}
					if iOk {
						byInvokeFound++
						if err := verifySerial(h, in, is.order, true, true); err != nil {
							t.Fatalf("seed %d: with :info choices by invoke the order does not verify: %v\n%s", seed, err, brute.Format(h))
						}
						if !slices.Equal(is.order, order) {
							byInvokeOther++
						}
					}
				}
				// Within the :info transactions' horizon (searchStrictWithin's first
				// search): it may miss orders, never find a wrong one.
				if hs := newStrictSearch(h, in, commitsOf(h), win, nil); hs != nil && hs.limitInfo() {
					horizonRuns++
					if hs.resume(0) {
						horizonFound++
						if err := verifySerial(h, in, hs.order, true, true); err != nil || !want {
							t.Fatalf("seed %d: within the horizon the search found an order that is not strict serializable (%v; brute force %v)\n%s", seed, err, want, brute.Format(h))
						}
					} else if ok {
						horizonMissed++
					}
					horizonCut += hs.pastHorizon
				}
			}
			if !ok {
				continue
			}
			found[i]++
			if err := verifySerial(h, in, order, true, true); err != nil {
				t.Fatalf("seed %d, %s: the searched order does not verify under real-time order: %v\n%s", seed, l.name, err, brute.Format(h))
			}
			if !want {
				t.Fatalf("seed %d, %s: the search found a strict-serializable order, the brute force says none\n%s", seed, l.name, brute.Format(h))
			}
		}
	})
	t.Logf("in turns: %d turns, %d searches resumed more than once", turns, resumed)
	t.Logf(":info choices by invoke: %d orders found, %d of them another order than prio's", byInvokeFound, byInvokeOther)
	if byInvokeOther == 0 {
		t.Errorf("the choices by invoke never found another order: the variant tests nothing")
	}
	t.Logf("within the :info horizon: %d searches, %d found an order, %d missed one the search without it found; the horizon kept a transaction back %d times", horizonRuns, horizonFound, horizonMissed, horizonCut)
	if horizonFound == 0 || horizonCut == 0 {
		t.Errorf("the horizon was never tried, or never cut: the variant tests nothing")
	}
	if resumed == 0 {
		t.Errorf("no search was resumed: the turns test nothing")
	}
	for i, l := range levels {
		t.Logf("%s: %d histories checked, %d strict serializable by the brute force, the search found %d", l.name, checked, valid, found[i])
		if found[i] == 0 || found[i] != valid {
			t.Errorf("%s: the search found %d of %d strict-serializable histories", l.name, found[i], valid)
		}
	}
}
