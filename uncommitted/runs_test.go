package uncommitted

import (
	"flag"
	"math/rand/v2"
	"testing"

	"doppel/internal/brute"
)

var runsSeeds = flag.Int("runs-seeds", 6000, "random histories TestRunsAgainstBruteForce compares with the oracle")

// TestRunsAgainstBruteForce runs the runs search alone on random tiny histories with
// heavy duplication and failed or indeterminate appends: every verdict it gives (where
// it applies) is the oracle's (a valid one for plain read uncommitted too, whose graph
// lies within the order's), and it applies, proves and refutes on many of them. Both
// ways: first with only the uncommitted writers making positions uncommitted (Invalid
// only when no other choice was cut), greedy and lazy (s.lazy), then whole.
func TestRunsAgainstBruteForce(t *testing.T) {
	seeds := *runsSeeds
	if testing.Short() {
		seeds /= 10
	}
	configs := []brute.Config{
		{Strategy: brute.FailInfo},
		{Strategy: brute.FailInfo, Values: 3, MaxTxns: 9, MaxKeys: 2},
		{Strategy: brute.FailInfo, MaxTxns: 7, Values: 2, MaxKeys: 1},
		{MaxTxns: 7, Values: 2},
		{Strategy: brute.Realtime},
	}
	valid, invalid, withUnc, lazyValid := 0, 0, 0, 0
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 29))
		h := brute.Random(rng, configs[seed%len(configs)])
		x := NewIndex(h)
		if len(x.Findings) > 0 {
			continue
		}
		if s := newSerialSearch(h, false, nil); s == nil {
			withUnc++
		}
		for i := 0; i < 4*len(modelsUnderTest); i++ {
			m, way := modelsUnderTest[i/4], i%4
			if way == 2 && m.process {
				continue // unchained: for the plain form only
			}
			noDesig := way != 1
			s := newRunsSearch(h, m.process && m.realtime, nil)
			if s == nil {
				continue
			}
			if noDesig {
				s.narrow()
			}
			if way == 2 {
				s.unchain()
			}
			s.lazy = way == 3
			v := x.runsVerdict(s, m.process, m.realtime, serialMaxStates)
			if v == Unknown {
				continue
			}
			want := brute.Check(h, m.name)
			if v == Invalid && !m.process {
				t.Fatalf("seed %d, %s: the runs search refutes a model without process order\n%s", seed, m.name, brute.Format(h))
			}
			if (v == Valid) != want {
				t.Fatalf("seed %d, %s (noDesig %v): the runs search says %v, the oracle valid=%v\n%s", seed, m.name, noDesig, v, want, brute.Format(h))
			}
			if v == Valid {
				valid++
				if way == 3 {
					lazyValid++
				}
			} else {
				invalid++
			}
		}
	}
	t.Logf("%d histories (%d where the serial search does not apply): %d valid (%d lazily), %d not valid by the runs search", seeds, withUnc, valid, lazyValid, invalid)
	if valid < seeds/2 || invalid < seeds/20 || withUnc < seeds/10 || lazyValid < seeds/4 {
		t.Errorf("valid %d, not valid %d, with uncommitted positions %d of %d: the search is hardly exercised", valid, invalid, withUnc, seeds)
	}
}
