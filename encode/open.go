package encode

import "doppel/history"

// openKey encodes a key with several possible segmentations (DESIGN.md section 5):
// seg(c) "block c is used", b(p) "a block boundary at p", u(w) "writer w committed but
// unobserved", and every edge guarded by the choices it needs.
func (p *Problem) openKey(k int32) {
	in := p.In
	key := &in.Keys[k]
	plan := &p.Plans[k]
	n := int32(len(key.Trace))
	hub := p.HubBase + k

	seg := make([]int32, len(plan.Cands))
	for i := range seg {
		seg[i] = p.newVar()
	}
	p.SegVar[k] = seg
	b := make([]int32, n+1)
	for i := range b {
		b[i] = p.newVar()
	}
	p.clause(Pos(b[0]))
	for l := int32(1); l <= n; l++ {
		if plan.Cut[l] {
			p.clause(Pos(b[l]))
		}
	}
	startsAt := make([][]int32, n+1) // candidate indices starting at each position
	endsAt := make([][]int32, n+1)   // ... ending exactly at each position (<= n)
	overrun := []int32{}             // ... ending past n
	for i, c := range plan.Cands {
		startsAt[c.Pos] = append(startsAt[c.Pos], int32(i))
		e := p.blockEnd(c)
		if e <= n {
			endsAt[e] = append(endsAt[e], int32(i))
		} else {
			overrun = append(overrun, int32(i))
		}
		s := seg[i]
		p.clause(Neg(s), Pos(b[c.Pos]))
		if e <= n {
			p.clause(Neg(s), Pos(b[e]))
		}
		for j := c.Pos + 1; j < e && j <= n; j++ {
			p.clause(Neg(s), Neg(b[j]))
		}
		if t := in.Writers[c.Writer].Txn; p.Commit[t] == MayCommit {
			p.clause(Neg(s), Pos(p.CommitVar[t]))
		}
	}
	for pos := int32(0); pos < n; pos++ {
		cl := []Lit{Neg(b[pos])}
		for _, i := range startsAt[pos] {
			cl = append(cl, Pos(seg[i]))
		}
		p.clause(cl...)
		p.atMostOne(seg, startsAt[pos]) // one block starts at each boundary
	}
	cl := []Lit{Neg(b[n])}
	for _, i := range endsAt[n] {
		cl = append(cl, Pos(seg[i]))
	}
	p.clause(cl...)

	// Each writer has at most one block; a pinned writer has exactly its pinned one
	// (its pin is a cut, and only it may start there).
	byWriter := map[int32][]int32{}
	for i, c := range plan.Cands {
		byWriter[c.Writer] = append(byWriter[c.Writer], int32(i))
	}
	for _, w := range key.Writers { // in writer order: map order would make the clauses differ run to run
		if cs := byWriter[w]; len(cs) > 1 {
			p.atMostOne(seg, cs)
		}
	}

	// Writers that may end up unobserved: u(w) <-> committed(w) and no block of w.
	var unobserved []int32
	for _, w := range key.Writers {
		t := in.Writers[w].Txn
		if in.Writers[w].Status == history.Fail {
			continue
		}
		cg, ok := p.commitGuard(t)
		if !ok {
			continue
		}
		cs := byWriter[w]
		if len(cs) == 0 {
			unobserved = append(unobserved, w)
			continue
		}
		u := p.newVar()
		p.unobsVar[unobsKey{k, w}] = u
		unobserved = append(unobserved, w)
		back := []Lit{Pos(u)}
		for _, i := range cs {
			p.clause(Neg(u), Neg(seg[i]))
			back = append(back, Pos(seg[i]))
		}
		for _, g := range cg {
			p.clause(Neg(u), g)
			back = append(back, g^1)
		}
		p.clause(back...)
	}

	// Readers by the length they read (external reads only).
	readersAt := make([][]int32, n+1)
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if r.Own != 0 {
			continue
		}
		if r.Len == n {
			p.fullReader(k, ri, unobserved)
		} else {
			readersAt[r.Len] = append(readersAt[r.Len], ri)
		}
		for _, i := range endsAt[r.Len] {
			if in.Writers[plan.Cands[i].Writer].Txn == r.Txn {
				p.clause(Neg(seg[i])) // a transaction cannot read its own later append
			}
		}
	}
	for pos := int32(0); pos < n; pos++ {
		p.boundary(k, pos, seg, endsAt[pos], startsAt[pos], readersAt[pos])
	}
	// Reads of the whole trace see the last block.
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if r.Own != 0 || r.Len != n || n == 0 {
			continue
		}
		for _, i := range endsAt[n] {
			if t := in.Writers[plan.Cands[i].Writer].Txn; t != r.Txn {
				p.edge(t, r.Txn, WR, k, ri, plan.Cands[i].Pos, Pos(seg[i]))
			}
		}
	}
	// The last block precedes every unobserved writer (through the hub).
	if len(unobserved) > 0 {
		for _, i := range append(append([]int32{}, endsAt[n]...), overrun...) {
			p.edge(in.Writers[plan.Cands[i].Writer].Txn, hub, WW, k, key.TraceBy, n, Pos(seg[i]))
		}
	}
	p.hubOut(k, unobserved)
}

// atMostOne says at most one of the variables vars[i], i in idx, is true: pairwise for
// few, a sequential counter (linear) for many.
func (p *Problem) atMostOne(vars []int32, idx []int32) {
	if len(idx) <= 6 {
		for x := 0; x < len(idx); x++ {
			for y := x + 1; y < len(idx); y++ {
				p.clause(Neg(vars[idx[x]]), Neg(vars[idx[y]]))
			}
		}
		return
	}
	// s_i: some of the first i+1 is true.
	prev := int32(-1)
	for i, j := range idx {
		x := vars[j]
		if i == len(idx)-1 {
			p.clause(Neg(x), Neg(prev))
			break
		}
		s := p.newVar()
		p.clause(Neg(x), Pos(s))
		if prev >= 0 {
			p.clause(Neg(prev), Pos(s))
			p.clause(Neg(x), Neg(prev))
		}
		prev = s
	}
}

// PairwiseFactor decides when a position's edges go through hubs: when pairwise edges
// would outnumber PairwiseFactor per candidate. Tests set it to 0 to force hubs.
var PairwiseFactor = 4

// boundary emits the edges about trace position pos of an open key: ww from each block
// that may end there to each block that may start there, wr from the ending block to
// the readers of length pos, rw from those readers to the starting block. Pairwise
// that is quadratic when many duplicates compete for a position, so past a few
// candidates it goes through two hub nodes instead — ending blocks -> after(pos) ->
// before(pos) -> starting blocks, after(pos) -> readers -> before(pos) — which gives
// exactly the same reachability with linearly many edges.
func (p *Problem) boundary(k, pos int32, seg []int32, ends, starts, readers []int32) {
	in := p.In
	plan := &p.Plans[k]
	txnOf := func(i int32) int32 { return in.Writers[plan.Cands[i].Writer].Txn }
	e, s, r := len(ends), len(starts), len(readers)
	if e*s+r*(e+s) <= PairwiseFactor*(e+s+r+1) {
		for _, i := range ends {
			for _, j := range starts {
				if plan.Cands[i].Writer != plan.Cands[j].Writer {
					p.edge(txnOf(i), txnOf(j), WW, k, in.Keys[k].TraceBy, pos, Pos(seg[i]), Pos(seg[j]))
				}
			}
		}
		for _, ri := range readers {
			rt := in.Reads[ri].Txn
			for _, i := range ends {
				if txnOf(i) != rt {
					p.edge(txnOf(i), rt, WR, k, ri, plan.Cands[i].Pos, Pos(seg[i]))
				}
			}
			for _, j := range starts {
				if txnOf(j) != rt {
					p.edge(rt, txnOf(j), RW, k, ri, pos, Pos(seg[j]))
				}
			}
		}
		return
	}
	after, before := int32(p.Nodes), int32(p.Nodes+1)
	p.Nodes += 2
	for _, i := range ends {
		p.edge(txnOf(i), after, WW, k, in.Keys[k].TraceBy, pos, Pos(seg[i]))
	}
	p.edge(after, before, Hub, k, -1, pos)
	for _, j := range starts {
		p.edge(before, txnOf(j), Hub, k, -1, pos, Pos(seg[j]))
	}
	for _, ri := range readers {
		rt := in.Reads[ri].Txn
		p.edge(after, rt, WR, k, ri, pos)
		// A reader that appends right after what it read is itself a starting block:
		// through the hub it would precede itself, so it gets direct edges.
		self := false
		for _, j := range starts {
			self = self || txnOf(j) == rt
		}
		if !self {
			p.edge(rt, before, RW, k, ri, pos)
			continue
		}
		for _, j := range starts {
			if txnOf(j) != rt {
				p.edge(rt, txnOf(j), RW, k, ri, pos, Pos(seg[j]))
			}
		}
	}
}
