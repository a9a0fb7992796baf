package localsearch

import (
	"math/rand/v2"
	"testing"
)

// TestCostsAtMatchesKeyCost checks the linear evaluation of every insertion point
// against keyCost's direct count on random keys.
func TestCostsAtMatchesKeyCost(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for round := 0; round < 20000; round++ {
		s := &search{trace: make([][]int32, 1)}
		tl := rng.IntN(8)
		for p := 0; p < tl; p++ {
			s.trace[0] = append(s.trace[0], int32(rng.IntN(2)))
		}
		m := 1 + rng.IntN(7)
		var list []int32
		for e := 0; e <= m; e++ {
			en := entry{txn: int32(e), key: 0, need: -1, weight: int32(1 + rng.IntN(3)), vs: int32(len(s.vals))}
			if rng.IntN(2) == 0 {
				en.need = int32(rng.IntN(tl + 1))
			}
			for a := rng.IntN(3); a > 0; a-- {
				s.vals = append(s.vals, int32(rng.IntN(2)))
			}
			en.ve = int32(len(s.vals))
			s.ents = append(s.ents, en)
			if e < m {
				list = append(list, int32(e))
			}
		}
		ins := int32(m)
		got := s.costsAt(0, list, ins, make([]int64, m+1))
		for at := 0; at <= m; at++ {
			if want := s.keyCost(0, list, ins, at); got[at] != want {
				t.Fatalf("round %d at %d: costsAt %x, keyCost %x (trace %v, ents %+v, vals %v)", round, at, got[at], want, s.trace[0], s.ents, s.vals)
			}
		}
	}
}
