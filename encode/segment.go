package encode

import (
	"sort"

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
func (in *Inference) Segment(k int32) Plan { return in.segment(k, true, true) }

// segment is Segment with the read cuts or the pins optionally ignored, which tells
// which observations make a key unsatisfiable.
func (in *Inference) segment(k int32, useCuts, usePins bool) Plan {
	key := &in.Keys[k]
	L := key.Trace
	n := int32(len(L))
	p := Plan{Cut: make([]bool, n+1), Pin: make([]int32, len(key.Writers))}
	for i := range p.Pin {
		p.Pin[i] = pinFree
	}
	if key.TraceBy < 0 {
		p.State = KeyUnread
		return p
	}
	// Cuts and pins from the reads.
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if r.Own == 0 && useCuts {
			p.Cut[r.Len] = true
		}
		if !r.Writes || !usePins {
			continue
		}
		wi := in.keyWriterIndex(k, r.Txn)
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
	if n == 0 {
		p.State = KeyFixed
		return p
	}
	// A pinned block must start exactly at its pin: the pin is a boundary, and only the
	// pinned writer may start there.
	pinnedAt := make(map[int32]int32) // position -> writer index pinned there
	for wi, q := range p.Pin {
		if q >= 0 {
			p.Cut[q] = true
			if other, ok := pinnedAt[q]; ok && other != int32(wi) {
				p.State = KeyUnsat
				return p
			}
			pinnedAt[q] = int32(wi)
		}
	}
	cutBefore := make([]int32, n+2) // cutBefore[i] = cuts at positions < i
	for i := int32(0); i <= n; i++ {
		cutBefore[i+1] = cutBefore[i]
		if p.Cut[i] {
			cutBefore[i+1]++
		}
	}
	// cutsInside reports whether a block [i, e) has a cut strictly inside it, counting the
	// end of the trace as inside when the block runs past it.
	cutsInside := func(i, e int32) bool {
		hi := e
		if e > n {
			hi = n + 1
		}
		return cutBefore[hi]-cutBefore[i+1] > 0
	}

	// Positions of the trace sorted by value, to find where a writer's first value occurs.
	byVal := make([]int32, n)
	for i := range byVal {
		byVal[i] = int32(i)
	}
	sort.Slice(byVal, func(a, b int) bool {
		if L[byVal[a]] != L[byVal[b]] {
			return L[byVal[a]] < L[byVal[b]]
		}
		return byVal[a] < byVal[b]
	})
	var cands []Cand
	for wi, w := range key.Writers {
		wr := &in.Writers[w]
		if wr.Status == history.Fail || p.Pin[wi] == pinNone {
			continue
		}
		seq := in.Vals(w)
		try := func(i int32) {
			e := i + int32(len(seq))
			m := e
			if m > n {
				m = n
			}
			if !equal(L[i:m], seq[:m-i]) || cutsInside(i, e) {
				return
			}
			if at, ok := pinnedAt[i]; ok && at != int32(wi) {
				return
			}
			cands = append(cands, Cand{Pos: i, Writer: w})
		}
		if q := p.Pin[wi]; q >= 0 {
			try(q)
			continue
		}
		lo := sort.Search(int(n), func(j int) bool { return L[byVal[j]] >= seq[0] })
		for j := lo; j < int(n) && L[byVal[j]] == seq[0]; j++ {
			try(byVal[j])
		}
	}
	sort.Slice(cands, func(a, b int) bool { return cands[a].Pos < cands[b].Pos })

	// Count segmentations forwards (f) and completions backwards (g), capped at 2.
	end := func(c Cand) int32 { return c.Pos + in.Writers[c.Writer].End - in.Writers[c.Writer].Start }
	f := make([]int8, n+1)
	g := make([]int8, n+1)
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
	switch f[n] {
	case 0:
		p.State = KeyUnsat
		return p
	case 1:
		// Walk the unique segmentation; a writer used twice means the relaxation
		// overcounted possibilities, so leave the exact answer to the solver.
		seen := make(map[int32]bool)
		ok := true
		for i, pos := 0, int32(0); pos < n; {
			for i < len(viable) && viable[i].Pos < pos {
				i++
			}
			c := viable[i]
			if seen[c.Writer] {
				ok = false
				break
			}
			seen[c.Writer] = true
			p.Blocks = append(p.Blocks, c)
			pos = end(c)
		}
		if ok {
			p.State = KeyFixed
			return p
		}
		p.Blocks = nil
	}
	p.State = KeyOpen
	p.Cands = viable
	return p
}

// keyWriterIndex returns the index in Keys[k].Writers of transaction t's writer.
func (in *Inference) keyWriterIndex(k, t int32) int {
	for _, w := range in.TxnWriters(t) {
		if in.Writers[w].Key == k {
			// Writers of a key are stored in writer-id order; find its index.
			ws := in.Keys[k].Writers
			return sort.Search(len(ws), func(i int) bool { return ws[i] >= w })
		}
	}
	return -1
}
