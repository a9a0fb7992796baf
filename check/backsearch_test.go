package check

import (
	"flag"
	"path/filepath"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
)

var backSearchSeeds = flag.Int("back-search-seeds", 4000, "random tiny histories for TestBackwardSearchAgainstBruteForce")

// TestBackwardSearchAgainstBruteForce runs the search from the end
// (searchSerialBackward) alone on the random tiny duplicate-heavy histories: every
// order it finds must pass verifySerial, and the history must be serializable by the
// brute force. Without a work bound the search is exhaustive, so where no :info
// transaction could run (it never runs them) it must find an order wherever the brute
// force says serializable: a reader stranded wrongly, a value's supply miscounted or a
// candidate missed from its key's bucket fails here.
func TestBackwardSearchAgainstBruteForce(t *testing.T) {
	found, valid, checked := 0, 0, 0
	eachTinyHistory(*backSearchSeeds, 131, func(seed int, h *history.History, in *encode.Inference, want bool) {
		checked++
		info := false
		for i := range h.Txns {
			info = info || h.Txns[i].Status == history.Info
		}
		if want && !info {
			valid++
		}
		order, ok := searchSerialBackward(h, in, commitsOf(h), 0, nil)
		if !ok {
			if want && !info {
				t.Fatalf("seed %d: the backward search found no order, the brute force says serializable\n%s", seed, brute.Format(h))
			}
			return
		}
		if err := verifySerial(h, in, order, false, false); err != nil {
			t.Fatalf("seed %d: the order found does not verify: %v\n%s", seed, err, brute.Format(h))
		}
		if !want {
			t.Fatalf("seed %d: the backward search found a serial order, the brute force says not serializable\n%s", seed, brute.Format(h))
		}
		if !info {
			found++
		}
	})
	t.Logf("%d histories checked, %d serializable without :info by the brute force, the search found %d", checked, valid, found)
	if found == 0 || found != valid {
		t.Fatalf("the search found %d of %d serializable histories without :info", found, valid)
	}
}

// TestBackwardSearchProvesFamilyE: on a family-E history (snapshot-isolated clients,
// 20 keys of values 1..2, checked as serializable) the search from the end finds a
// serial order within its bound (backSearchWork) where the forward search does not
// within its own (serialSearchNodes); the whole check took 9.6 s before the backward
// search, in the solver.
func TestBackwardSearchProvesFamilyE(t *testing.T) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", "snapshot-few-1000-s1.edn.gz"))
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	in.CheckValues()
	if _, ok := searchSerial(h, in, commitsOf(h), serialSearchNodes(len(h.Txns)), nil); ok {
		t.Log("the forward search found an order too")
	}
	order, ok := searchSerialBackward(h, in, commitsOf(h), backSearchWork(len(h.Txns)), nil)
	if !ok {
		t.Fatal("the backward search found no serial order")
	}
	if err := verifySerial(h, in, order, false, false); err != nil {
		t.Fatalf("the order found does not verify: %v", err)
	}
}
