package localsearch

import (
	"math/rand/v2"
	"slices"
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
			addRandomEntry(rng, s, int32(e), tl)
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

// addRandomEntry appends to s an entry of transaction txn on key 0 (whose trace is tl
// long): a weight of 1-3, a read of a random length or none, and 0-2 values of two.
func addRandomEntry(rng *rand.Rand, s *search, txn int32, tl int) int32 {
	en := entry{txn: txn, key: 0, need: -1, weight: int32(1 + rng.IntN(3)), vs: int32(len(s.vals))}
	if rng.IntN(2) == 0 {
		en.need = int32(rng.IntN(tl + 1))
	}
	for a := rng.IntN(3); a > 0; a-- {
		s.vals = append(s.vals, int32(rng.IntN(2)))
	}
	en.ve = int32(len(s.vals))
	s.ents = append(s.ents, en)
	return int32(len(s.ents) - 1)
}

// TestSwappedCostMatchesKeyCost checks the windowed weighing of a trade of places
// against keyCost of the list sorted again after the trade, on random keys, with both
// transactions on the key or one of them only, and in every other round priorities
// that tie.
func TestSwappedCostMatchesKeyCost(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	windowed := 0
	for round := 0; round < 50000; round++ {
		n := 3 + rng.IntN(9) // transactions; the last one is never on the key
		s := &search{trace: make([][]int32, 1), lists: make([][]int32, 1), prio: make([]float64, n),
			curAt: make([][]int32, 1), goodAt: make([][]int32, 1), costBefore: make([][]int64, 1), stale: []bool{true}}
		tl := rng.IntN(10)
		for p := 0; p < tl; p++ {
			s.trace[0] = append(s.trace[0], int32(rng.IntN(2)))
		}
		for i, p := range rng.Perm(n) {
			s.prio[i] = float64(p) * 8
			if round%2 == 1 {
				s.prio[i] = float64(rng.IntN(n / 2)) // ties, which a trade can make
			}
		}
		entryOf := make([]int32, n)
		for u := 0; u < n; u++ {
			entryOf[u] = -1
			if u == n-1 || rng.IntN(4) == 0 && u > 1 {
				continue // not on the key (transactions 0 and 1 always are)
			}
			entryOf[u] = addRandomEntry(rng, s, int32(u), tl)
			s.lists[0] = append(s.lists[0], entryOf[u])
		}
		byPrio := func(a, b int32) int { return s.before(s.ents[a].txn, s.ents[b].txn) }
		slices.SortFunc(s.lists[0], byPrio)
		// t on the key; x on it or not.
		tx := int32(rng.IntN(2))
		x := int32(rng.IntN(n))
		if x == tx {
			x = int32(n - 1)
		}
		got := s.swappedCost(0, tx, x, entryOf[tx], entryOf[x])
		if len(s.listBuf) < len(s.lists[0]) {
			windowed++
		}
		s.prio[tx], s.prio[x] = s.prio[x], s.prio[tx]
		after := slices.Clone(s.lists[0])
		slices.SortFunc(after, byPrio)
		if want := s.keyCost(0, after, -1, 0); got != want {
			t.Fatalf("round %d: swappedCost %x, keyCost %x (t %d, x %d, trace %v, list %v after %v)", round, got, want, tx, x, s.trace[0], s.lists[0], after)
		}
	}
	if windowed < 10000 {
		t.Fatalf("weak test: %d of 50,000 trades weighed on a window shorter than the list", windowed)
	}
}
