package check

import (
	"math/rand/v2"
	"slices"
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

// TestHallMatchAgainstHeap compares match's counted deadlines with the binary-heap
// earliest-deadline-first sweep it replaced, on random traces, windows, blocks of one
// to three appends, transactions run, start positions and sweeps whole or not.
func TestHallMatchAgainstHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	checked := 0
	for iter := 0; iter < 20000; iter++ {
		n := 1 + rng.IntN(24)
		if iter%4 == 0 {
			n = 1 + rng.IntN(300) // windows' ends far apart
		}
		vals := 1 + rng.IntN(3)
		in := &encode.Inference{Keys: []encode.Key{{Trace: make([]int32, n)}}}
		for p := range in.Keys[0].Trace {
			in.Keys[0].Trace[p] = int32(1 + rng.IntN(vals))
		}
		nw := 1 + rng.IntN(12)
		win := &encode.Windows{}
		for w := range nw {
			ln := 1 + rng.IntN(3)
			start := int32(len(in.WriterVals))
			for range ln {
				in.WriterVals = append(in.WriterVals, int32(1+rng.IntN(vals)))
			}
			in.Writers = append(in.Writers, encode.Writer{Txn: int32(w), Key: 0, Start: start, End: start + int32(ln)})
			lo := int32(rng.IntN(n))
			win.Lo = append(win.Lo, lo)
			win.Hi = append(win.Hi, lo+int32(rng.IntN(n-int(lo)+1)))
		}
		ran := make([]bool, nw)
		hc := newHallCheck(in, win, ran, func(int32) bool { return true })
		for range 8 {
			for w := range ran {
				ran[w] = rng.IntN(3) == 0
			}
			pos, whole := int32(rng.IntN(n+1)), rng.IntN(2) == 0
			for c := range hc.maxWidth {
				got, want := hc.match(int32(c), pos, whole), heapMatch(hc, int32(c), pos, whole)
				if got != want {
					t.Fatalf("iteration %d, class %d, pos %d, whole %v: match %v, heap %v", iter, c, pos, whole, got, want)
				}
				for d, x := range hc.due {
					if x != 0 {
						t.Fatalf("iteration %d: match left %d due at %d", iter, x, d)
					}
				}
				checked++
			}
		}
	}
	t.Logf("%d sweeps agree", checked)
}

// heapMatch is match as it was, with a binary min-heap of window ends.
func heapMatch(hc *hallCheck, c, pos int32, whole bool) bool {
	ws := make([]int32, 0) // the appends of class c
	for i := hc.wStart[c]; i < hc.wStart[c+1]; i++ {
		ws = append(ws, i)
	}
	if len(ws) == 0 {
		return true
	}
	lo, hi := hc.lo, hc.hi
	var h []int32
	push := func(d int32) {
		h = append(h, d)
		slices.Sort(h)
	}
	j, _ := slices.BinarySearchFunc(ws, pos+1, func(w, p int32) int { return int(lo[w] - p) })
	for i := j - 1; i >= 0 && lo[ws[i]] >= pos-hc.maxWidth[c]; i-- {
		if !hc.ran[hc.txn[ws[i]]] {
			push(hi[ws[i]])
		}
	}
	ps := hc.pos[hc.posStart[c]:hc.posStart[c+1]]
	q0, _ := slices.BinarySearch(ps, pos)
	for _, q := range ps[q0:] {
		for j < len(ws) && lo[ws[j]] <= q {
			if !hc.ran[hc.txn[ws[j]]] {
				push(hi[ws[j]])
			}
			j++
		}
		if len(h) == 0 {
			if !whole {
				break
			}
			continue
		}
		if h[0] < q {
			return false
		}
		h = h[1:]
	}
	if len(h) > 0 {
		return false
	}
	for ; whole && j < len(ws); j++ {
		if !hc.ran[hc.txn[ws[j]]] {
			return false
		}
	}
	return true
}
