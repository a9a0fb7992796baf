package check

import (
	"testing"

	"doppel/encode"
)

// TestHallCheckCountsEveryAppendOfABlock: key 0 reads [1 0]; writer A (block 1 0) must
// start at 0 and writer B (block 0) at 1. Their first appends fit (1 at 0, 0 at 1), but
// A's second append needs position 1 too: no order exists, which only counting every
// append of a block shows. Each writer alone fits.
func TestHallCheckCountsEveryAppendOfABlock(t *testing.T) {
	in := &encode.Inference{
		Keys:       []encode.Key{{Trace: []int32{1, 0}}},
		Writers:    []encode.Writer{{Txn: 0, Key: 0, Start: 0, End: 2}, {Txn: 1, Key: 0, Start: 2, End: 3}},
		WriterVals: []int32{1, 0, 0},
	}
	win := &encode.Windows{Lo: []int32{0, 1}, Hi: []int32{0, 1}}
	for _, tc := range []struct {
		name     string
		must     func(w int32) bool
		feasible bool
	}{
		{"both", func(int32) bool { return true }, false},
		{"A alone", func(w int32) bool { return w == 0 }, true},
		{"B alone", func(w int32) bool { return w == 1 }, true},
	} {
		hc := newHallCheck(in, win, make([]bool, 2), tc.must)
		if got := hc.feasible(); got != tc.feasible {
			t.Errorf("%s: feasible %v, want %v", tc.name, got, tc.feasible)
		}
	}
	// A block's later append that may land past the trace needs no position: with A's
	// window reaching position 1, its second append is not counted.
	win = &encode.Windows{Lo: []int32{0, 1}, Hi: []int32{1, 1}}
	hc := newHallCheck(in, win, make([]bool, 2), func(w int32) bool { return w == 0 })
	if !hc.feasible() {
		t.Error("A with a window reaching the trace's end: infeasible")
	}
}
