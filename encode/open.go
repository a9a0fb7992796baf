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
	for _, cs := range byWriter {
		p.atMostOne(seg, cs)
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

	// ww between consecutive blocks.
	for pos := int32(1); pos < n; pos++ {
		for _, i := range endsAt[pos] {
			for _, j := range startsAt[pos] {
				wi, wj := plan.Cands[i].Writer, plan.Cands[j].Writer
				if wi == wj {
					continue
				}
				p.edge(in.Writers[wi].Txn, in.Writers[wj].Txn, WW, k, key.TraceBy, pos, Pos(seg[i]), Pos(seg[j]))
			}
		}
	}
	// wr and rw of external reads.
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if r.Own != 0 {
			continue
		}
		if r.Len > 0 {
			for _, i := range endsAt[r.Len] {
				if t := in.Writers[plan.Cands[i].Writer].Txn; t != r.Txn {
					p.edge(t, r.Txn, WR, k, ri, plan.Cands[i].Pos, Pos(seg[i]))
				} else {
					p.clause(Neg(seg[i])) // a transaction cannot read its own later append
				}
			}
		}
		if r.Len < n {
			for _, i := range startsAt[r.Len] {
				if t := in.Writers[plan.Cands[i].Writer].Txn; t != r.Txn {
					p.edge(r.Txn, t, RW, k, ri, r.Len, Pos(seg[i]))
				}
			}
		} else {
			p.fullReader(k, ri, unobserved)
		}
	}
	// The last block precedes every unobserved writer (through the hub).
	if len(unobserved) > 0 {
		for _, i := range append(append([]int32{}, endsAt[n]...), overrun...) {
			p.edge(in.Writers[plan.Cands[i].Writer].Txn, hub, WW, k, key.TraceBy, n, Pos(seg[i]))
		}
	}
	p.hubOut(k, unobserved, nil)
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
