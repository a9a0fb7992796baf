package encode

import (
	"cmp"
	"slices"

	"doppel/history"
)

// KeyState says how much choice a key leaves.
type KeyState uint8

const (
	// Unread: no committed read of the key; every writer is unobserved.
	KeyUnread KeyState = iota
	// Fixed: exactly one segmentation of the trace.
	KeyFixed
	// Open: several segmentations may work; the solver chooses.
	KeyOpen
	// Unsat: no segmentation at all; the history is not valid under any model here.
	KeyUnsat
	// OutsideWindows: segmentations exist, but none within the windows the problem was
	// built with (BuildWithin): not valid under the models the windows are sound for.
	KeyOutsideWindows
)

// Cand is a possible block: writer W's appends start at trace position Pos.
type Cand struct {
	Pos    int32
	Writer int32
}

// Plan is the segmentation analysis of one key.
type Plan struct {
	State KeyState
	// Blocks of the unique segmentation (Fixed), in trace order.
	Blocks []Cand
	// Cands are the viable blocks (Open), sorted by position.
	Cands []Cand
	// Cut[p]: an external read of length p exists, so p must be a block boundary.
	Cut []bool
	// Unobserved lists the writers that may have committed without any read of the key
	// observing them (set when the key's edges are built).
	Unobserved []int32
	// Pin per writer of the key (parallel to Key.Writers): -1 free, -2 must stay
	// unobserved (it read the whole trace before appending), else the position its block
	// must start at.
	Pin []int32
}

const (
	pinFree = -1
	pinNone = -2
)

// Segment analyses key k: its read cuts, pins, candidate blocks, and how many
// segmentations exist (counting up to 2, ignoring that writers must be distinct; a
// unique segmentation that repeats a writer is handed to the solver as Open).
func (in *Inference) Segment(k int32) Plan { return newScratch(in, false).segment(k, true, true) }

// Windows narrows where blocks may start: writer w (an index into Inference.Writers)
// may start its block on its key only at positions Lo[w]..Hi[w]; Hi[w] >= the trace
// length means it may also stay unobserved, Hi[w] < the trace length that it must be
// observed. Windows come from reasoning that is sound for some models only (package
// prune): a problem built within them decides those models only.
type Windows struct {
	Lo, Hi []int32
	// Allow, when Allow[w] is not nil, lists (sorted) the only positions writer w's
	// block may start at, besides staying unobserved when Hi allows.
	Allow [][]int32
	// Rank, when set, is a serial order of the transactions consistent with what
	// narrowed the windows (position per transaction): a guide for guesses only.
	Rank []int32
}

// Allowed reports whether writer w's block may start at pos.
func (win *Windows) Allowed(w, pos int32) bool {
	if win == nil {
		return true
	}
	if pos < win.Lo[w] || pos > win.Hi[w] {
		return false
	}
	if win.Allow == nil || win.Allow[w] == nil {
		return true
	}
	_, ok := slices.BinarySearch(win.Allow[w], pos)
	return ok
}

// Unbounded is a Hi that allows every position and leaving the writer unobserved.
const Unbounded = int32(1<<31 - 1)

// NewWindows returns windows that allow everything, for n writers.
func NewWindows(n int) *Windows {
	w := &Windows{Lo: make([]int32, n), Hi: make([]int32, n)}
	for i := range w.Hi {
		w.Hi[i] = Unbounded
	}
	return w
}

// MustObserve reports whether writer w's window keeps its block inside the trace of
// length n.
func (win *Windows) MustObserve(w, n int32) bool { return win != nil && win.Hi[w] < n }

// SegmentWithin is Segment with only the blocks win allows (nil: all). A key that has
// no segmentation within the windows but has one without them is KeyUnsat here; the
// caller tells the two apart.
func (in *Inference) SegmentWithin(k int32, win *Windows) Plan {
	sc := newScratch(in, false)
	sc.win = win
	return sc.segment(k, true, true)
}

// keySegment is what segment knows about one key before it lists candidate blocks.
type keySegment struct {
	sc *scratch
	k  int32
	L  []int32 // the trace
	n  int32   // its length
	p  Plan    // state (when decided already), cuts and pins
	// minStart: see prepareSegment; versionCuts: (position, transaction) of version
	// reads; pinnedAt[pos]: the index of the writer pinned at pos, or -1;
	// cutBefore[i]: cuts at positions < i.
	minStart, versionCuts, pinnedAt, cutBefore []int32
	// byVal: positions sorted by value (valKey(value) | position).
	byVal []uint64
	// group: per writer index, its group of writers with the same values, or -1 (see
	// groupWriters).
	group []int32
}

// prepareSegment reads key k's cuts and pins (the read cuts or the pins optionally
// ignored) and indexes its trace. done: ks.p is the whole plan already.
func (sc *scratch) prepareSegment(k int32, useCuts, usePins bool) (ks keySegment, done bool) {
	in := sc.in
	key := &in.Keys[k]
	L := key.Trace
	n := int32(len(L))
	ks = keySegment{sc: sc, k: k, L: L, n: n, p: Plan{Cut: sc.newBools(int(n) + 1), Pin: sc.newInt32s(len(key.Writers))}}
	p := &ks.p
	for i := range p.Pin {
		p.Pin[i] = pinFree
	}
	if key.TraceBy < 0 {
		p.State = KeyUnread
		return ks, true
	}
	sc.touch(k, true)
	// minStart[wi]: per read (in.PerRead), the writer's block starts at or after what
	// its reads before its own appends saw (inside it would be a future read). With the
	// G-cursor pins those reads pin the block instead, as in the one-base inference.
	if in.PerRead && usePins && !(in.GCursorPins && !sc.noGCursor) {
		ks.minStart = sc.newInt32s(len(key.Writers))
		clear(ks.minStart)
	}
	minStart := ks.minStart
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
			return ks, true
		}
	}
	sc.versionCuts, ks.versionCuts = versionCuts, versionCuts
	for wi, lo := range minStart {
		switch q := p.Pin[wi]; {
		case q >= 0 && q < lo:
			p.State = KeyUnsat // placed by one read inside what another read saw
			return ks, true
		case q == pinFree && lo >= n && lo > 0:
			p.Pin[wi] = pinNone // it read the whole trace before appending: unobserved
		}
	}
	if n == 0 {
		p.State = KeyFixed
		return ks, true
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
	ks.pinnedAt = pinnedAt
	for i := range pinnedAt {
		pinnedAt[i] = -1
	}
	for wi, q := range p.Pin {
		if q >= 0 {
			p.Cut[q] = true
			if other := pinnedAt[q]; other >= 0 && other != int32(wi) {
				p.State = KeyUnsat
				return ks, true
			}
			pinnedAt[q] = int32(wi)
		}
	}
	cutBefore := grow(&sc.cutBefore, int(n)+2) // cutBefore[i] = cuts at positions < i
	ks.cutBefore = cutBefore
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
	ks.byVal = byVal
	ks.group = sc.groupWriters(&ks)
	return ks, false
}

// valueRange returns where value v's positions lie in ks.byVal.
func (ks *keySegment) valueRange(v int32) (int, int) {
	j0, _ := slices.BinarySearch(ks.byVal, valKey(v))
	j1, _ := slices.BinarySearch(ks.byVal, valKey(v)|0xffffffff)
	return j0, j1
}

// fits reports whether a block of seq at i matches the trace and has no cut strictly
// inside (the end of the trace counts as inside when the block runs past it): what
// does not depend on whose block it is.
func (ks *keySegment) fits(i int32, seq []int32) bool {
	e := i + int32(len(seq))
	m := min(e, ks.n)
	return equal(ks.L[i:m], seq[:m-i]) && ks.cutBefore[min(e, ks.n+1)]-ks.cutBefore[i+1] == 0
}

// mayStart reports whether writer w (index wi, transaction txn) may start a block of
// length l at i: no other writer is pinned at i, its window allows i, and no other
// transaction's version read ends inside.
func (ks *keySegment) mayStart(wi int, w, txn, i, l int32) bool {
	if at := ks.pinnedAt[i]; at >= 0 && at != int32(wi) {
		return false
	}
	if win := ks.sc.win; win != nil && !win.Allowed(w, i) {
		return false
	}
	for x := 0; x < len(ks.versionCuts); x += 2 {
		if q := ks.versionCuts[x]; i < q && q < i+l && ks.versionCuts[x+1] != txn {
			return false // another's version read would end inside this block
		}
	}
	return true
}

// startRange returns the positions free writer w (index wi) may start at by its
// reads and window: lo..hi.
func (ks *keySegment) startRange(wi int, w int32) (lo, hi int32) {
	lo, hi = 0, ks.n-1
	if ks.minStart != nil {
		lo = ks.minStart[wi]
	}
	if win := ks.sc.win; win != nil {
		lo, hi = max(lo, win.Lo[w]), min(hi, win.Hi[w])
	}
	return lo, hi
}

// segment is Segment with the read cuts or the pins optionally ignored, which tells
// which observations make a key unsatisfiable.
func (sc *scratch) segment(k int32, useCuts, usePins bool) Plan {
	ks, done := sc.prepareSegment(k, useCuts, usePins)
	if done {
		return ks.p
	}
	in := sc.in
	key := &in.Keys[k]
	n, p, group := ks.n, ks.p, ks.group
	// Room for the grouped writers' candidates at once: on a long list of few values
	// they are millions, and growing the slice step by step copied them several times.
	room := 0
	for wi, w := range key.Writers {
		if g := group[wi]; g >= 0 {
			at := sc.groupPositions(&ks, g, in.Vals(w))
			lo, hi := ks.startRange(wi, w)
			j0, _ := slices.BinarySearch(at, max(lo, 0))
			j1, _ := slices.BinarySearch(at, max(hi, -1)+1)
			room += max(j1-j0, 0)
		}
	}
	cands := sc.cs[:0]
	if cap(cands) < room {
		cands = make([]Cand, 0, room+room/4) // not slices.Grow: that copies the old buffer
	}
	for wi, w := range key.Writers {
		wr := &in.Writers[w]
		if wr.Status == history.Fail || p.Pin[wi] == pinNone {
			continue
		}
		seq := in.WriterVals[wr.Start:wr.End]
		l := int32(len(seq))
		lo, hi := ks.startRange(wi, w)
		if q := p.Pin[wi]; q >= 0 {
			if q >= lo && q <= hi && !sc.expired() && ks.fits(q, seq) && ks.mayStart(wi, w, wr.Txn, q, l) {
				cands = append(cands, Cand{Pos: q, Writer: w})
			}
			continue
		}
		if g := group[wi]; g >= 0 {
			// The positions where this sequence fits, found once for all its writers.
			at := sc.groupPositions(&ks, g, seq)
			j, _ := slices.BinarySearch(at, max(lo, 0))
			for ; j < len(at) && at[j] <= hi; j++ {
				if i := at[j]; !sc.expired() && ks.mayStart(wi, w, wr.Txn, i, l) {
					cands = append(cands, Cand{Pos: i, Writer: w})
				}
			}
			continue
		}
		v := valKey(seq[0])
		byVal := ks.byVal
		j, _ := slices.BinarySearch(byVal, v|uint64(max(lo, 0)))
		for ; j < int(n) && byVal[j]&^0xffffffff == v && int32(uint32(byVal[j])) <= hi; j++ {
			if i := int32(uint32(byVal[j])); !sc.expired() && ks.fits(i, seq) && ks.mayStart(wi, w, wr.Txn, i, l) {
				cands = append(cands, Cand{Pos: i, Writer: w})
			}
		}
	}
	if sc.stopped {
		sc.cs = cands
		return p // the build is abandoned: the plan is never read
	}
	// By position; the variables and clauses follow this order. Many candidates (long
	// lists of few values) are sorted by counting, in the order of their writers.
	if countedSort(len(cands), n) {
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
	if !sc.build && len(viable) >= cap(sc.cs)/2 && &viable[:1][0] == &sc.cs[:1][0] {
		// A lone segmentation's candidates fill most of its buffer: the plan takes the
		// buffer instead of a copy (millions of candidates on a long list of few values).
		p.Cands, sc.cs = viable[:len(viable):len(viable)], nil
		return p
	}
	p.Cands = sc.keepCands(viable)
	return p
}

// groupMinOccurrences: a free writer whose first value occurs fewer times in the
// trace scans those positions itself, not worth grouping (a var for tests).
var groupMinOccurrences = 8

// groupWriters returns, for each writer of key k (by index in Keys[k].Writers), its
// group of the free writers with the same values (sc.groupSize: how many; 0 for a
// group disbanded), or -1: a writer that failed or is
// pinned, whose first value occurs fewer than groupMinOccurrences times, or whose
// group would not pay: the group scans every position of the first value once, while
// its writers alone scan the positions within their ranges, which are all of them on
// a long list of few values without windows (each writer scanning every position of
// its first value was quadratic there, issue 9), and few within narrow windows.
func (sc *scratch) groupWriters(ks *keySegment) []int32 {
	in := sc.in
	ws := in.Keys[ks.k].Writers
	pin := ks.p.Pin
	group := grow(&sc.seqGroup, len(ws))
	heads := sc.seqHead
	if heads == nil || len(heads) > 0 {
		heads = map[uint64]int32{} // not clear(): it costs a big map's capacity per key
	}
	rep, size, cost, next := sc.groupRep[:0], sc.groupSize[:0], sc.groupCost[:0], sc.groupNext[:0]
	for wi, w := range ws {
		group[wi] = -1
		wr := &in.Writers[w]
		if wr.Status == history.Fail || pin[wi] != pinFree || len(ws) < 2 {
			continue
		}
		seq := in.WriterVals[wr.Start:wr.End]
		if j0, j1 := ks.valueRange(seq[0]); j1-j0 < groupMinOccurrences {
			continue
		}
		h := seqHash(seq)
		g, ok := heads[h]
		if !ok {
			g = -1
		}
		for ; g >= 0; g = next[g] {
			r := &in.Writers[rep[g]]
			if equal(in.WriterVals[r.Start:r.End], seq) {
				break
			}
		}
		if g < 0 {
			g = int32(len(rep))
			rep, size, cost = append(rep, w), append(size, 0), append(cost, 0)
			if head, ok := heads[h]; ok {
				next = append(next, head)
			} else {
				next = append(next, -1)
			}
			heads[h] = g
		}
		size[g]++
		// What this writer alone would scan: its first value's positions in its range.
		if lo, hi := ks.startRange(wi, w); lo <= hi {
			v := valKey(seq[0])
			j0, _ := slices.BinarySearch(ks.byVal, v|uint64(max(lo, 0)))
			j1, _ := slices.BinarySearch(ks.byVal, v|uint64(hi+1))
			cost[g] += int64(j1 - j0)
		}
		group[wi] = g
	}
	for g, w := range rep {
		if j0, j1 := ks.valueRange(in.WriterVals[in.Writers[w].Start]); size[g] < 2 || cost[g] <= int64(j1-j0) {
			size[g] = 0 // disbanded
		}
	}
	for wi, g := range group {
		if g >= 0 && size[g] == 0 {
			group[wi] = -1
		}
	}
	sc.seqHead = heads
	sc.groupRep, sc.groupSize, sc.groupCost, sc.groupNext = rep, size, cost, next
	sc.groupAt = grow(&sc.groupAt, len(rep))
	sc.groupLen = grow(&sc.groupLen, len(rep))
	for g := range sc.groupAt {
		sc.groupAt[g] = -1
	}
	sc.groupPos = sc.groupPos[:0]
	return group
}

// groupPositions returns, in increasing order, the trace positions where group g's
// sequence seq fits (keySegment.fits), finding them at the group's first use.
func (sc *scratch) groupPositions(ks *keySegment, g int32, seq []int32) []int32 {
	if sc.groupAt[g] < 0 {
		start := len(sc.groupPos)
		j0, j1 := ks.valueRange(seq[0])
		for _, x := range ks.byVal[j0:j1] {
			if i := int32(uint32(x)); !sc.expired() && ks.fits(i, seq) {
				sc.groupPos = append(sc.groupPos, i)
			}
		}
		sc.groupAt[g], sc.groupLen[g] = int32(start), int32(len(sc.groupPos)-start)
	}
	at := sc.groupAt[g]
	return sc.groupPos[at : at+sc.groupLen[g]]
}

// seqHash hashes a writer's values (FNV-1a over their bits).
func seqHash(seq []int32) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range seq {
		h ^= uint64(uint32(v))
		h *= 1099511628211
	}
	return h
}

// touch loads key k's reads and writers, which are scattered over the history, in
// loops of independent loads that the processor overlaps, so that the loops that use
// them do not wait for each cache miss in turn.
// With vals, it loads the trace and the first value of each writer too.
func (sc *scratch) touch(k int32, vals bool) {
	in := sc.in
	key := &in.Keys[k]
	x := int32(0)
	for _, ri := range key.Reads {
		x += in.Reads[ri].Len
	}
	for _, w := range key.Writers {
		x += in.Writers[w].Start
	}
	if vals {
		for _, w := range key.Writers {
			x += in.WriterVals[in.Writers[w].Start]
		}
		for i := 0; i < len(key.Trace); i += 16 {
			x += key.Trace[i]
		}
	}
	sc.sink += x
}

// valKey puts value v in the high half of a uint64, ordered as v.
func valKey(v int32) uint64 { return uint64(uint32(v)^0x80000000) << 32 }

// keyWriterIndex returns the index in Keys[k].Writers of transaction t's writer.
func (sc *scratch) keyWriterIndex(k, t int32) int {
	if w := sc.in.KeyWriter(t, k); w >= 0 {
		return sc.writerIndex(k, w)
	}
	return -1
}

// observable reports whether every writer of key k that its window says must be
// observed has a viable block.
func (sc *scratch) observable(k int32, viable []Cand) bool {
	in := sc.in
	n := int32(len(in.Keys[k].Trace))
	need := 0
	for _, w := range in.Keys[k].Writers {
		if in.Writers[w].Status != history.Fail && sc.win.MustObserve(w, n) {
			need++
		}
	}
	if need == 0 {
		return true
	}
	seen := map[int32]bool{}
	for _, c := range viable {
		if sc.win.MustObserve(c.Writer, n) && !seen[c.Writer] {
			seen[c.Writer] = true
			need--
		}
	}
	return need == 0
}

// observedIn reports whether the unique segmentation blocks uses every writer that
// must be observed.
func (sc *scratch) observedIn(k int32, blocks []Cand) bool {
	in := sc.in
	n := int32(len(in.Keys[k].Trace))
	used := 0
	for _, c := range blocks {
		if sc.win.MustObserve(c.Writer, n) {
			used++
		}
	}
	need := 0
	for _, w := range in.Keys[k].Writers {
		if in.Writers[w].Status != history.Fail && sc.win.MustObserve(w, n) {
			need++
		}
	}
	return used == need
}

// countingSortSlack: segment sorts more than 4n + countingSortSlack candidates of a
// trace of length n by counting, which orders those at one position by writer (a var
// for tests).
var countingSortSlack = 64

// countedSort reports whether segment sorts m candidates on a trace of length n by
// counting.
func countedSort(m int, n int32) bool { return m > 4*int(n)+countingSortSlack }

// countingSort sorts candidates by position (< n), stably, into a second buffer.
func (sc *scratch) countingSort(cands []Cand, n int32) []Cand {
	count := grow(&sc.posCount, int(n)+1)
	clear(count)
	for _, c := range cands {
		count[c.Pos+1]++
	}
	for i := int32(1); i <= n; i++ {
		count[i] += count[i-1]
	}
	out := grow(&sc.cs2, len(cands))
	for _, c := range cands {
		out[count[c.Pos]] = c
		count[c.Pos]++
	}
	sc.cs2 = cands[:0] // the buffers swap roles
	return out
}
