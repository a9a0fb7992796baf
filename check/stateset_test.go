package check

import (
	"math/rand/v2"
	"testing"
)

// TestStateSetAgainstMap adds and asks random hashes, many sharing their low bits (so
// that probes run long), 0 among them, and compares with a map; clear empties it.
func TestStateSetAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var set stateSet
	want := map[uint64]bool{}
	draw := func() uint64 {
		switch rng.IntN(4) {
		case 0:
			return uint64(rng.IntN(8)) << 40 // low bits all 0: one long probe chain
		case 1:
			return uint64(rng.IntN(3)) // 0 too
		}
		return rng.Uint64()
	}
	for round := 0; round < 3; round++ {
		for i := 0; i < 100_000; i++ {
			h := draw()
			if rng.IntN(2) == 0 {
				set.add(h)
				want[h] = true
			} else if got := set.has(h); got != want[h] {
				t.Fatalf("round %d: has(%#x) = %v, want %v", round, h, got, want[h])
			}
		}
		if set.len() != len(want) {
			t.Fatalf("round %d: len %d, want %d", round, set.len(), len(want))
		}
		set.clear()
		clear(want)
		if set.len() != 0 || set.has(0) || set.has(1) {
			t.Fatalf("round %d: not empty after clear", round)
		}
	}
}
