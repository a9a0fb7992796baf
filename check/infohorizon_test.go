package check

import (
	"fmt"
	"path/filepath"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/prune"
)

// TestInfoHorizonShortensStrongWitness: the independent generator's read-committed
// store with 2% :info transactions (2,000 transactions), about half of which never
// committed but fit the traces. The strong witness's search (real-time order, within
// its narrowing's windows) finds an order either way, but with the :info transactions
// confined to their horizon (rcSerial.limitInfo) in 47 failed states, against 7,934
// without: each decoy is a choice only around its own time. Both orders verify.
func TestInfoHorizonShortensStrongWitness(t *testing.T) {
	h, in := perReadSearchHistory(t, "rc-engine-info-2000-s1.edn.gz")
	pr := prune.Run(in, prune.Options{Level: prune.Level{PerRead: true, Process: true, Realtime: true}, MaxRounds: 2})
	if pr.Contradiction != nil || pr.KeyUnsat {
		t.Fatal("the narrowing refutes a read-committed store's history")
	}
	states := map[bool]int{}
	for _, horizon := range []bool{true, false} {
		s := newRCSerial(h, in, true, nil)
		if s == nil {
			t.Fatal("no serial search")
		}
		if horizon && !s.limitInfo() {
			t.Fatal("limitInfo: no :info transaction to confine")
		}
		s.setWindows(pr.Win)
		if v := s.runLimited(1 << 20); v != Valid {
			t.Fatalf("horizon %v: %v, want an order", horizon, v)
		}
		wantStrongOrder(t, h, in, s.order, fmt.Sprintf("horizon %v", horizon))
		states[horizon] = s.states
	}
	t.Logf("failed states: %d within the horizon, %d without", states[true], states[false])
	if states[true]*10 > states[false] {
		t.Errorf("within the horizon %d failed states, without %d: want at least ten times fewer", states[true], states[false])
	}
}

// perReadSearchHistory is testdata/search's history name with its per-read inference,
// values checked.
func perReadSearchHistory(t *testing.T, name string) (*history.History, *encode.Inference) {
	t.Helper()
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", name))
	if err != nil {
		t.Fatal(err)
	}
	in := encode.InferPerRead(h)
	in.CheckValues()
	return h, in
}

// wantStrongOrder fails t (naming what) unless order verifies read by read and keeps process and
// real-time order.
func wantStrongOrder(t *testing.T, h *history.History, in *encode.Inference, order []int32, what string) {
	t.Helper()
	at, err := verifyPerReadLists(h, in, order)
	if err != nil {
		t.Fatalf("%s: the order does not verify: %v", what, err)
	}
	if err := verifyOrders(h, at, true, true); err != nil {
		t.Fatalf("%s: the order breaks process or real-time order: %v", what, err)
	}
}
