package check

import "testing"

// TestStrongWitnessWithoutWindows: the independent generator's read-committed store
// without :info, 30 clients on 20 zipf keys (2,000 transactions). The serial search
// under real-time order, without the narrowing's windows, finds an order within
// strongWitnessFirst's bound (strongPlainStates), and it verifies with process and
// real-time order; the session search (process order alone) finds none within its
// own bound (rcWitnessStates), which is why the real-time one comes first.
func TestStrongWitnessWithoutWindows(t *testing.T) {
	h, in := perReadSearchHistory(t, "rc-engine-hot-2000-s1.edn.gz")
	if infoAppends(in) {
		t.Fatal("an :info transaction appends: strongWitnessFirst would narrow first")
	}
	states := map[bool]int{}
	for _, realtime := range []bool{true, false} {
		s := newRCSerial(h, in, realtime, nil)
		if s == nil {
			t.Fatal("no serial search")
		}
		v := s.runLimited(rcWitnessStates)
		states[realtime] = s.states
		if !realtime {
			t.Logf("the session search: %v after %d failed states", v, s.states)
			continue
		}
		if v != Valid || s.states > strongPlainStates {
			t.Fatalf("under real-time order: %v after %d failed states, want an order within %d", v, s.states, strongPlainStates)
		}
		wantStrongOrder(t, h, in, s.order, "under real-time order")
	}
	t.Logf("failed states: %d under real-time order, %d under process order alone", states[true], states[false])
	if states[true]*10 > states[false] {
		t.Errorf("under real-time order %d failed states, under process order %d: want at least ten times fewer", states[true], states[false])
	}
}
