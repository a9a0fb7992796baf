package check

import (
	"math"
	"slices"

	"doppel/encode"
)

// hallCheck checks Hall's condition within windows, for the serial searches: each
// writer that must start inside its key's trace and has not run needs, for each of its
// block's appends that lands inside the trace wherever the block starts in its window,
// its own position holding that value (blocks do not overlap), within the window moved
// by the append's offset and at or past the key's length. Per (key, value) class,
// earliest deadline first decides it: the class's positions, in order, each to the
// released append whose window ends first; one whose window ended unserved fails.
// The appends past a block's first matter where windows are narrow: a two-append
// block that must start right before another block's only place overlaps it, which
// the first appends alone never show (hot keys with :info: the search then tried every
// interleaving of the other keys above that state).
type hallCheck struct {
	ran []bool // per transaction, owned by the search
	// classOf: per (key, value) of the traces, its class. Per class: its positions
	// pos[posStart[c]:posStart[c+1]], ascending; its appends, indices
	// wStart[c]:wStart[c+1] of lo, hi and txn (each append's window and transaction),
	// by window start; and the widest of their windows.
	classOf map[uint64]int32
	// classAt[keyBase[k]+p]: the class of key k's trace value at position p (matchable
	// is asked in the searches' inner loops: no map there).
	keyBase, classAt []int32
	posStart, pos    []int32
	wStart           []int32
	lo, hi, txn      []int32
	maxWidth         []int32
	due              []int32 // scratch of match: per trace position, the released windows ending there
}

func classKey(k, v int32) uint64 { return uint64(uint32(k))<<32 | uint64(uint32(v)) }

// newHallCheck indexes in's traces and the writers must selects (of transactions that
// must run, whose windows end inside their traces).
func newHallCheck(in *encode.Inference, win *encode.Windows, ran []bool, must func(w int32) bool) *hallCheck {
	hc := &hallCheck{ran: ran, classOf: map[uint64]int32{}}
	var cls []int32 // per trace position, key by key
	hc.keyBase = make([]int32, len(in.Keys))
	for k := range in.Keys {
		hc.keyBase[k] = int32(len(cls))
		for _, v := range in.Keys[k].Trace {
			c, ok := hc.classOf[classKey(int32(k), v)]
			if !ok {
				c = int32(len(hc.classOf))
				hc.classOf[classKey(int32(k), v)] = c
			}
			cls = append(cls, c)
		}
	}
	hc.classAt = cls
	longest := 0
	for k := range in.Keys {
		longest = max(longest, len(in.Keys[k].Trace))
	}
	hc.due = make([]int32, longest)
	n := len(hc.classOf)
	hc.posStart = make([]int32, n+1)
	for _, c := range cls {
		hc.posStart[c+1]++
	}
	for c := range n {
		hc.posStart[c+1] += hc.posStart[c]
	}
	fill := slices.Clone(hc.posStart)
	hc.pos = make([]int32, len(cls))
	i := 0
	for k := range in.Keys {
		for p := range in.Keys[k].Trace {
			hc.pos[fill[cls[i]]] = int32(p)
			fill[cls[i]]++
			i++
		}
	}
	hc.wStart = make([]int32, n+1)
	hc.maxWidth = make([]int32, n)
	var wc []int32
	for w := range in.Writers {
		wr := &in.Writers[w]
		if !must(int32(w)) {
			continue
		}
		traceLen := int32(len(in.Keys[wr.Key].Trace))
		for j := wr.Start; j < wr.End; j++ {
			off := j - wr.Start
			if win.Hi[w]+off >= traceLen {
				break // may land past the trace
			}
			c, ok := hc.classOf[classKey(wr.Key, in.WriterVals[j])]
			if !ok {
				continue
			}
			hc.lo, hc.hi = append(hc.lo, win.Lo[w]+off), append(hc.hi, win.Hi[w]+off)
			hc.txn, wc = append(hc.txn, wr.Txn), append(wc, c)
			hc.wStart[c+1]++
			hc.maxWidth[c] = max(hc.maxWidth[c], win.Hi[w]-win.Lo[w])
		}
	}
	for c := range n {
		hc.wStart[c+1] += hc.wStart[c]
	}
	fill = slices.Clone(hc.wStart)
	ws := make([]int32, len(wc))
	for e, c := range wc {
		ws[fill[c]] = int32(e)
		fill[c]++
	}
	for c := range n {
		slices.SortFunc(ws[hc.wStart[c]:hc.wStart[c+1]], func(a, b int32) int { return int(hc.lo[a] - hc.lo[b]) })
	}
	// Laid out in that order, so that match's sweeps read them in a row.
	lo, hi, txn := make([]int32, len(wc)), make([]int32, len(wc)), make([]int32, len(wc))
	for i, e := range ws {
		lo[i], hi[i], txn[i] = hc.lo[e], hc.hi[e], hc.txn[e]
	}
	hc.lo, hc.hi, hc.txn = lo, hi, txn
	return hc
}

// feasible checks every class from the start, over all its positions: matchable's
// sweeps stop early on the strength of it.
func (hc *hallCheck) feasible() bool {
	for c := range hc.maxWidth {
		if !hc.match(int32(c), 0, true) {
			return false
		}
	}
	return true
}

// matchable checks the class of the value at position p of key k's trace, the key's
// length being now pos.
func (hc *hallCheck) matchable(k, p, pos int32) bool {
	return hc.match(hc.classAt[hc.keyBase[k]+p], pos, false)
}

// match sweeps class c's positions from pos. Where no released writer waits, the rest
// is a part of the matching that held before the search (feasible, whole), so a sweep
// that is not whole stops there: it mostly walks a few windows' widths.
//
// The released writers' window ends are counted per trace position (due), with the
// least one waiting (first): each position goes to the window that ends first, and
// the next least is found by walking up from it, a few positions on a dense trace (a
// binary heap's pops took 40% of match's time on hot keys).
func (hc *hallCheck) match(c, pos int32, whole bool) bool {
	from, to := int(hc.wStart[c]), int(hc.wStart[c+1])
	if from == to {
		return true
	}
	lo, hi, txn, ran, due := hc.lo[:to], hc.hi[:to], hc.txn[:to], hc.ran, hc.due
	waiting, first, last := 0, int32(math.MaxInt32), int32(-1)
	release := func(d int32) {
		due[d]++
		waiting++
		first, last = min(first, d), max(last, d)
	}
	// Released before pos: those whose windows may still reach it (a wider one not
	// run has ended before pos: the searches' stranding test has failed it already,
	// or the sweep that took its last position).
	j, _ := slices.BinarySearch(lo[from:], pos+1)
	j += from
	for i := j - 1; i >= from && lo[i] >= pos-hc.maxWidth[c]; i-- {
		if !ran[txn[i]] {
			release(hi[i])
		}
	}
	ps := hc.pos[hc.posStart[c]:hc.posStart[c+1]]
	q0, _ := slices.BinarySearch(ps, pos)
	ok := true
	for _, q := range ps[q0:] {
		for j < to && lo[j] <= q {
			if !ran[txn[j]] {
				release(hi[j])
			}
			j++
		}
		if waiting == 0 {
			if !whole {
				break
			}
			continue
		}
		if first < q {
			ok = false
			break
		}
		due[first]--
		if waiting--; waiting == 0 {
			first, last = math.MaxInt32, -1
		} else {
			for due[first] == 0 {
				first++
			}
		}
	}
	if ok && waiting > 0 {
		ok = false // positions ran out
	}
	for d := first; d <= last; d++ {
		due[d] = 0
	}
	for ; ok && whole && j < to; j++ {
		ok = ran[txn[j]]
	}
	return ok
}
