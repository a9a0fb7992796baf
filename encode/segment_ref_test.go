package encode

import (
	"cmp"
	"slices"

	"doppel/history"
)

// segmentReference is segment as it was before candidates were grouped by writer
// sequence (commit a29f3ba): every free writer tries every position of its first
// value. TestSegmentMatchesReference holds the two to the same plans.
func (sc *scratch) segmentReference(k int32, useCuts, usePins bool) Plan {
	in := sc.in
	key := &in.Keys[k]
	L := key.Trace
	n := int32(len(L))
	p := Plan{Cut: sc.newBools(int(n) + 1), Pin: sc.newInt32s(len(key.Writers))}
	for i := range p.Pin {
		p.Pin[i] = pinFree
	}
	if key.TraceBy < 0 {
		p.State = KeyUnread
		return p
	}
	sc.touch(k, true)
	// minStart[wi]: per read (in.PerRead), the writer's block starts at or after what
	// its reads before its own appends saw (inside it would be a future read).
	var minStart []int32
	if in.PerRead && usePins && !(in.GCursorPins && !sc.noGCursor) {
		minStart = sc.newInt32s(len(key.Writers))
		clear(minStart)
	}
	// Cuts and pins from the reads. A version read's cut binds every block but its own
	// transaction's (versionCuts: position, transaction), so it is not in Cut.
	versionCuts := sc.versionCuts[:0]
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if r.Version {
			if useCuts {
				versionCuts = append(versionCuts, r.Len, r.Txn)
			}
			continue
		}
		if r.Own == 0 && useCuts {
			p.Cut[r.Len] = true
		}
		if !r.Writes || !usePins {
			continue
		}
		wi := sc.keyWriterIndex(k, r.Txn)
		if minStart != nil && r.Own == 0 {
			minStart[wi] = max(minStart[wi], r.Len)
			continue
		}
		q := r.Len - r.Own
		if q >= n {
			q = pinNone
		}
		if p.Pin[wi] == pinFree {
			p.Pin[wi] = q
		} else if p.Pin[wi] != q {
			// Different reads of one transaction place its block differently; the
			// internal check makes this impossible, but never guess.
			p.State = KeyUnsat
			return p
		}
	}
	sc.versionCuts = versionCuts
	for wi, lo := range minStart {
		switch q := p.Pin[wi]; {
		case q >= 0 && q < lo:
			p.State = KeyUnsat // placed by one read inside what another read saw
			return p
		case q == pinFree && lo >= n && lo > 0:
			p.Pin[wi] = pinNone // it read the whole trace before appending: unobserved
		}
	}
	if n == 0 {
		p.State = KeyFixed
		return p
	}
	if sc.win != nil {
		// A writer whose window holds one position inside the trace is placed as surely
		// as by its own read: pinned there, its block's end a boundary too.
		for wi, w := range key.Writers {
			if lo := sc.win.Lo[w]; p.Pin[wi] == pinFree && lo == sc.win.Hi[w] && lo < n && in.Writers[w].Status != history.Fail {
				p.Pin[wi] = lo
				if e := lo + in.Writers[w].End - in.Writers[w].Start; e <= n {
					p.Cut[e] = true
				}
			}
		}
	}
	// A pinned block must start exactly at its pin: the pin is a boundary, and only the
	// pinned writer may start there. pinnedAt[pos]: the index of the writer pinned at
	// pos, or -1.
	pinnedAt := grow(&sc.pinAt, int(n))
	for i := range pinnedAt {
		pinnedAt[i] = -1
	}
	for wi, q := range p.Pin {
		if q >= 0 {
			p.Cut[q] = true
			if other := pinnedAt[q]; other >= 0 && other != int32(wi) {
				p.State = KeyUnsat
				return p
			}
			pinnedAt[q] = int32(wi)
		}
	}
	cutBefore := grow(&sc.cutBefore, int(n)+2) // cutBefore[i] = cuts at positions < i
	cutBefore[0] = 0
	for i := int32(0); i <= n; i++ {
		cutBefore[i+1] = cutBefore[i]
		if p.Cut[i] {
			cutBefore[i+1]++
		}
	}

	// Positions of the trace sorted by value, to find where a writer's first value
	// occurs: value (order-preserving as unsigned) in the high half, position in the low.
	byVal := grow(&sc.byVal, int(n))
	for i, v := range L {
		byVal[i] = valKey(v) | uint64(i)
	}
	slices.Sort(byVal)
	cands := sc.cs[:0]
	for wi, w := range key.Writers {
		wr := &in.Writers[w]
		if wr.Status == history.Fail || p.Pin[wi] == pinNone {
			continue
		}
		seq := in.WriterVals[wr.Start:wr.End]
		// try adds the block of w at i if it matches the trace, has no cut strictly
		// inside (the end of the trace counts as inside when the block runs past it),
		// and no other writer is pinned at i.
		try := func(i int32) {
			if sc.expired() {
				return // the build is abandoned (BuildWithinStop)
			}
			e := i + int32(len(seq))
			m := min(e, n)
			if !equal(L[i:m], seq[:m-i]) || cutBefore[min(e, n+1)]-cutBefore[i+1] > 0 {
				return
			}
			if at := pinnedAt[i]; at >= 0 && at != int32(wi) {
				return
			}
			if sc.win != nil && !sc.win.Allowed(w, i) {
				return
			}
			for x := 0; x < len(versionCuts); x += 2 {
				if q := versionCuts[x]; i < q && q < e && versionCuts[x+1] != wr.Txn {
					return // another's version read would end inside this block
				}
			}
			cands = append(cands, Cand{Pos: i, Writer: w})
		}
		lo, hi := int32(0), n-1
		if minStart != nil {
			lo = minStart[wi]
		}
		if sc.win != nil {
			lo, hi = max(lo, sc.win.Lo[w]), min(hi, sc.win.Hi[w])
		}
		if q := p.Pin[wi]; q >= 0 {
			if q >= lo && q <= hi {
				try(q)
			}
			continue
		}
		v := valKey(seq[0])
		j, _ := slices.BinarySearch(byVal, v|uint64(max(lo, 0)))
		for ; j < int(n) && byVal[j]&^0xffffffff == v && int32(uint32(byVal[j])) <= hi; j++ {
			try(int32(uint32(byVal[j])))
		}
	}
	if sc.stopped {
		sc.cs = cands
		return p // the build is abandoned: the plan is never read
	}
	// By position; the variables and clauses follow this order. Many candidates (long
	// lists of few values) are sorted by counting, in the order of their writers.
	if len(cands) > 4*int(n)+64 {
		cands = sc.countingSort(cands, n)
	} else {
		slices.SortFunc(cands, func(a, b Cand) int { return cmp.Compare(a.Pos, b.Pos) })
	}
	sc.cs = cands

	// Count segmentations forwards (f) and completions backwards (g), capped at 2.
	end := func(c Cand) int32 { return c.Pos + in.Writers[c.Writer].End - in.Writers[c.Writer].Start }
	f := grow(&sc.f, int(n)+1)
	g := grow(&sc.g, int(n)+1)
	clear(f)
	clear(g)
	f[0] = 1
	add := func(a, b int8) int8 {
		if a+b > 2 {
			return 2
		}
		return a + b
	}
	for _, c := range cands {
		if f[c.Pos] == 0 {
			continue
		}
		e := min(end(c), n)
		f[e] = add(f[e], f[c.Pos])
	}
	g[n] = 1
	for i := len(cands) - 1; i >= 0; i-- {
		c := cands[i]
		e := min(end(c), n)
		g[c.Pos] = add(g[c.Pos], g[e])
	}
	viable := cands[:0]
	for _, c := range cands {
		if f[c.Pos] > 0 && g[min(end(c), n)] > 0 {
			viable = append(viable, c)
		}
	}
	if sc.win != nil && !sc.observable(k, viable) {
		p.State = KeyUnsat
		return p
	}
	switch f[n] {
	case 0:
		p.State = KeyUnsat
		return p
	case 1:
		// Walk the unique segmentation; a writer used twice means the relaxation
		// overcounted possibilities, so leave the exact answer to the solver.
		blocks := sc.blocks[:0]
		for i, pos := 0, int32(0); pos < n; {
			for i < len(viable) && viable[i].Pos < pos {
				i++
			}
			c := viable[i]
			blocks = append(blocks, c)
			pos = end(c)
		}
		sc.blocks = blocks
		ws := grow(&sc.blockWriters, len(blocks))
		for i, c := range blocks {
			ws[i] = c.Writer
		}
		slices.Sort(ws)
		repeated := false
		for i := 1; i < len(ws); i++ {
			repeated = repeated || ws[i] == ws[i-1]
		}
		if !repeated && (sc.win == nil || sc.observedIn(k, blocks)) {
			p.State = KeyFixed
			p.Blocks = sc.keepCands(blocks)
			return p
		}
	}
	p.State = KeyOpen
	p.Cands = sc.keepCands(viable)
	return p
}
