package brute

import (
	"math/rand/v2"
	"testing"

	"doppel/history"
)

// TestAttributionsAgreeWithCheckGraph: a history is valid under a model exactly when one
// of the attributions Attributions enumerates is valid, and every attribution it gives
// places each committed writer's block on its key's list with the writer's own values.
func TestAttributionsAgreeWithCheckGraph(t *testing.T) {
	strategies := []Strategy{Mixed, Corrupted, SnapshotLike, FailInfo, Realtime}
	checked, valid := 0, 0
	for seed := 0; seed < 1500; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		h := Random(rng, Config{Strategy: strategies[seed%len(strategies)]})
		for _, m := range GraphModels {
			if _, ok := graphModels[m]; !ok {
				continue // read uncommitted's models are not enumerated
			}
			want, err := CheckGraph(h, m)
			if err != nil {
				t.Fatal(err)
			}
			got := false
			_, err = Attributions(h, m, 1<<30, func(a *Attribution) bool {
				checkPlacement(t, h, a)
				got = got || a.Valid
				return !got
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("seed %d, %s: CheckGraph %v, a valid attribution %v\n%s", seed, m, want, got, Format(h))
			}
			checked++
			if want {
				valid++
			}
		}
	}
	if valid == 0 || valid == checked {
		t.Fatalf("%d of %d valid: the corpus does not test both answers", valid, checked)
	}
}

func checkPlacement(t *testing.T, h *history.History, a *Attribution) {
	t.Helper()
	for x := range a.Writers {
		end := 0
		for i, w := range a.Writers[x] {
			if a.Committed&(1<<w) == 0 || a.Starts[x][i] != end {
				t.Fatalf("key %d: writer %d (committed %b) starts at %d, not %d", x, w, a.Committed, a.Starts[x][i], end)
			}
			for _, op := range h.TxnOps(w) {
				if op.Kind == history.Append && int(op.Key) == x {
					end++
				}
			}
		}
		if end != a.Len[x] {
			t.Fatalf("key %d: blocks end at %d, the list has %d", x, end, a.Len[x])
		}
	}
}
