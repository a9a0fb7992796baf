package encode

import "doppel/history"

// openKey encodes a key with several possible segmentations (DESIGN.md section 5):
// seg(c) "block c is used", b(p) "a block boundary at p", u(w) "writer w committed but
// unobserved", and every edge guarded by the choices it needs.
func (p *Problem) openKey(k int32) {
	in := p.In
	sc := p.sc
	key := &in.Keys[k]
	plan := &p.Plans[k]
	cands := plan.Cands
	nc := int32(len(cands))
	n := int32(len(key.Trace))
	hub := p.HubBase + k
	txnOf := func(i int32) int32 { return in.Writers[cands[i].Writer].Txn }

	// seg(Cands[i]) is variable s0+i, b(pos) is b0+pos.
	s0 := p.NumVars
	p.NumVars += nc
	if !p.counting {
		seg := sc.segVars[:nc:nc]
		sc.segVars = sc.segVars[nc:]
		for i := range seg {
			seg[i] = s0 + int32(i)
		}
		p.SegVar[k] = seg
	}
	b0 := p.NumVars
	p.NumVars += n + 1
	if !p.counting {
		p.boundaryBase[k] = b0
	}
	p.clause1(Pos(b0))
	for l := int32(1); l <= n; l++ {
		if plan.Cut[l] {
			p.clause1(Pos(b0 + l))
		}
	}
	// Candidates are sorted by position: those starting at pos are
	// Cands[starts[pos]:starts[pos+1]]. Those ending exactly at e <= n are
	// endIdx[endOff[e]:endOff[e+1]], in index order; overrun: those ending past n.
	iota := sc.iotaTo(nc)
	starts := grow(&sc.starts, int(n)+1)
	for pos, i := int32(0), int32(0); pos <= n; pos++ {
		for i < nc && cands[i].Pos < pos {
			i++
		}
		starts[pos] = i
	}
	endOff := grow(&sc.endOff, int(n)+3)
	clear(endOff)
	overrun := sc.overrun[:0]
	for i, c := range cands {
		if sc.expired() {
			return // the build is abandoned (BuildWithinStop)
		}
		e := p.blockEnd(c)
		if e <= n {
			endOff[e+2]++
		} else {
			overrun = append(overrun, int32(i))
		}
		s := s0 + int32(i)
		p.clause2(Neg(s), Pos(b0+c.Pos))
		if e <= n {
			p.clause2(Neg(s), Pos(b0+e))
		}
		for j := c.Pos + 1; j < e && j <= n; j++ {
			p.clause2(Neg(s), Neg(b0+j))
		}
		if in.Writers[c.Writer].Status == history.Info {
			if t := in.Writers[c.Writer].Txn; p.Commit[t] == MayCommit {
				p.clause2(Neg(s), Pos(p.CommitVar[t]))
			}
		}
	}
	sc.overrun = overrun
	for e := int32(2); e < n+3; e++ {
		endOff[e] += endOff[e-1]
	}
	endIdx := grow(&sc.endIdx, int(nc))
	for i, c := range cands {
		if e := p.blockEnd(c); e <= n {
			endIdx[endOff[e+1]] = int32(i)
			endOff[e+1]++
		}
	}
	endsAt := func(e int32) []int32 { return endIdx[endOff[e]:endOff[e+1]] }

	for pos := int32(0); pos < n; pos++ {
		if sc.expired() {
			return
		}
		p.lit(Neg(b0 + pos))
		for i := starts[pos]; i < starts[pos+1]; i++ {
			p.lit(Pos(s0 + i))
		}
		p.endClause()
		if !p.native { // else the theory: one block over each position
			p.atMostOne(s0, iota[starts[pos]:starts[pos+1]]) // one block starts at each boundary
		}
	}
	p.lit(Neg(b0 + n))
	for _, i := range endsAt(n) {
		p.lit(Pos(s0 + i))
	}
	p.endClause()

	// Each writer has at most one block; a pinned writer has exactly its pinned one
	// (its pin is a cut, and only it may start there). wIdx[i]: the index in Writers of
	// candidate i's writer; the candidates of the writer at index wi are
	// wCand[wOff[wi]:wOff[wi+1]].
	nw := len(key.Writers)
	wOff := grow(&sc.wOff, nw+2)
	clear(wOff)
	wIdx := grow(&sc.wIdx, int(nc))
	for i, c := range cands {
		wi := int32(sc.writerIndex(k, c.Writer))
		wIdx[i] = wi
		wOff[wi+2]++
	}
	for j := 2; j < nw+2; j++ {
		wOff[j] += wOff[j-1]
	}
	wCand := grow(&sc.wCand, int(nc))
	for i := range cands {
		j := wIdx[i] + 1
		wCand[wOff[j]] = int32(i)
		wOff[j]++
	}
	if p.native {
		p.tileKey(k, s0, wIdx, wOff)
	} else {
		for wi := range key.Writers {
			if cs := wCand[wOff[wi]:wOff[wi+1]]; len(cs) > 1 {
				p.atMostOne(s0, cs)
			}
		}
	}

	// Writers that may end up unobserved: u(w) <-> committed(w) and no block of w.
	unobserved, lits := sc.unobs[:0], sc.unobsLit[:0]
	for wi, w := range key.Writers {
		if sc.expiredAfter(1 + int(wOff[wi+1]-wOff[wi])) {
			return
		}
		cg, ok := p.writerCommit(w)
		if !ok {
			continue
		}
		cs := wCand[wOff[wi]:wOff[wi+1]]
		if p.Win.MustObserve(w, n) && len(cs) > 0 {
			// Its window keeps it inside the trace: one of its blocks (if it committed),
			// and it is no unobserved writer (which snapshot isolation would order
			// pairwise with the others).
			for _, i := range cs {
				p.lit(Pos(s0 + i))
			}
			if cg >= 0 {
				p.lit(cg ^ 1)
			}
			p.endClause()
			continue
		}
		unobserved = append(unobserved, w)
		if len(cs) == 0 {
			lits = append(lits, cg)
			continue
		}
		u := p.newVar()
		p.unobsVar[int(p.keyBase[k])+wi] = u
		lits = append(lits, Pos(u))
		for _, i := range cs {
			p.clause2(Neg(u), Neg(s0+i))
		}
		if cg >= 0 {
			p.clause2(Neg(u), cg)
		}
		p.lit(Pos(u))
		for _, i := range cs {
			p.lit(Pos(s0 + i))
		}
		if cg >= 0 {
			p.lit(cg ^ 1)
		}
		p.endClause()
	}
	sc.unobs, sc.unobsLit = unobserved, lits

	// Readers by the length they read (external reads only), in read order:
	// rIdx[rOff[l]:rOff[l+1]].
	rOff := grow(&sc.rOff, int(n)+3)
	clear(rOff)
	nr := 0
	for _, ri := range key.Reads {
		if r := &in.Reads[ri]; r.Own == 0 && !r.Version && r.Len < n {
			rOff[r.Len+2]++
			nr++
		}
	}
	for l := int32(2); l < n+3; l++ {
		rOff[l] += rOff[l-1]
	}
	rIdx := grow(&sc.rIdx, nr)
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if r.Own != 0 || r.Version {
			continue
		}
		if r.Len == n {
			p.fullReader(k, ri, unobserved, lits)
		} else {
			rIdx[rOff[r.Len+1]] = ri
			rOff[r.Len+1]++
		}
		for _, i := range endsAt(r.Len) {
			if txnOf(i) == r.Txn {
				p.clause1(Neg(s0 + i)) // a transaction cannot read its own later append
			}
		}
	}
	// The key-order chain: on keys where writers compete for each position, every
	// position's two hubs, chained along the trace (see chainNodes).
	chain := int32(-1)
	if ChainFactor >= 0 && nc >= ChainFactor*n && n > 1 {
		chain = int32(p.Nodes)
		p.Nodes += 2 * int(n)
		for pos := int32(0); pos+1 < n; pos++ {
			p.chainEdge(chain+2*pos, chain+2*pos+2, k, pos)
			p.chainEdge(chain+2*pos+1, chain+2*pos+3, k, pos)
		}
	}
	for pos := int32(0); pos < n; pos++ {
		// boundary's work: each block ending or starting here, and each reader with
		// each block starting here (pairwise, without hubs, only where that is small).
		e, s, r := len(endsAt(pos)), int(starts[pos+1]-starts[pos]), int(rOff[pos+1]-rOff[pos])
		if sc.expiredAfter(1 + e + s + r*(s+1)) {
			return
		}
		hubs := int32(-1)
		if chain >= 0 {
			hubs = chain + 2*pos
		}
		p.boundary(k, pos, s0, endsAt(pos), iota[starts[pos]:starts[pos+1]], rIdx[rOff[pos]:rOff[pos+1]], hubs)
	}
	// Reads of the whole trace see the last block.
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if r.Own != 0 || r.Version || r.Len != n || n == 0 {
			continue
		}
		for _, i := range endsAt(n) {
			if t := txnOf(i); t != r.Txn {
				p.edge1(t, r.Txn, WR, k, ri, cands[i].Pos, Pos(s0+i))
			}
		}
	}
	// The last block precedes every unobserved writer (through the hub).
	if len(unobserved) > 0 {
		for _, i := range endsAt(n) {
			p.edge1(txnOf(i), hub, WW, k, key.TraceBy, n, Pos(s0+i))
		}
		for _, i := range overrun {
			p.edge1(txnOf(i), hub, WW, k, key.TraceBy, n, Pos(s0+i))
		}
	}
	p.hubOut(k, unobserved, lits)
}

// iotaTo returns [0, 1, ..., n-1].
func (sc *scratch) iotaTo(n int32) []int32 {
	for i := int32(len(sc.iota)); i < n; i++ {
		sc.iota = append(sc.iota, i)
	}
	return sc.iota[:n]
}

// tileKey records key k's candidates (variables s0+i) in the tiling the
// append-adjacency theory (theory.Segments) enforces in place of the clausal one:
// candidate i covers its block's positions (those inside the trace), and the
// candidates of a writer with several form a group (at most one chosen).
// wIdx[i] is candidate i's writer index, wOff the offsets of each writer's candidates.
func (p *Problem) tileKey(k, s0 int32, wIdx, wOff []int32) {
	if p.counting {
		return // the tiling is not among the measured lists
	}
	t := p.Tiling
	cands := p.Plans[k].Cands
	n := int32(len(p.In.Keys[k].Trace))
	base := t.Cells
	for i, c := range cands {
		g := int32(-1)
		if wi := wIdx[i]; wOff[wi+1]-wOff[wi] > 1 {
			g = t.Groups + wi
		}
		t.Var = append(t.Var, s0+int32(i))
		t.Cell0 = append(t.Cell0, base+c.Pos)
		t.Cell1 = append(t.Cell1, base+min(p.blockEnd(c), n))
		t.Group = append(t.Group, g)
	}
	t.KeyStart = append(t.KeyStart, base)
	t.CellVal = append(t.CellVal, p.In.Keys[k].Trace...)
	t.Cells += n
	t.Groups += int32(len(wOff) - 2)
}

// atMostOne says at most one of the variables base+i, i in idx, is true: pairwise for
// few, a sequential counter (linear) for many.
func (p *Problem) atMostOne(base int32, idx []int32) {
	if len(idx) <= 6 {
		for x := 0; x < len(idx); x++ {
			for y := x + 1; y < len(idx); y++ {
				p.clause2(Neg(base+idx[x]), Neg(base+idx[y]))
			}
		}
		return
	}
	// s_i: some of the first i+1 is true.
	prev := int32(-1)
	for i, j := range idx {
		x := base + j
		if i == len(idx)-1 {
			p.clause2(Neg(x), Neg(prev))
			break
		}
		s := p.newVar()
		p.clause2(Neg(x), Pos(s))
		if prev >= 0 {
			p.clause2(Neg(prev), Pos(s))
			p.clause2(Neg(x), Neg(prev))
		}
		prev = s
	}
}

// PairwiseFactor decides when a position's edges go through hubs: when pairwise edges
// would outnumber PairwiseFactor per candidate. Tests set it to 0 to force hubs.
var PairwiseFactor = 4

// boundary emits the edges about trace position pos of an open key (whose candidate i
// has variable s0+i): ww from each block that may end there to each block that may
// start there, wr from the ending block to the readers of length pos, rw from those
// readers to the starting block. Pairwise that is quadratic when many duplicates compete
// for a position, so past a few candidates it goes through two hub nodes instead —
// ending blocks -> after(pos) -> before(pos) -> starting blocks, after(pos) -> readers ->
// before(pos) — which gives exactly the same reachability with linearly many edges.
//
// hubs >= 0: the position's two hubs are nodes hubs (after) and hubs+1 (before), those
// of the key's order chain, always used.
func (p *Problem) boundary(k, pos, s0 int32, ends, starts, readers []int32, hubs int32) {
	in := p.In
	cands := p.Plans[k].Cands
	traceBy := in.Keys[k].TraceBy
	txnOf := func(i int32) int32 { return in.Writers[cands[i].Writer].Txn }
	e, s, r := len(ends), len(starts), len(readers)
	if hubs < 0 && e*s+r*(e+s) <= PairwiseFactor*(e+s+r+1) {
		for _, i := range ends {
			for _, j := range starts {
				if cands[i].Writer != cands[j].Writer {
					p.edge2(txnOf(i), txnOf(j), WW, k, traceBy, pos, Pos(s0+i), Pos(s0+j))
				}
			}
		}
		for _, ri := range readers {
			rt := in.Reads[ri].Txn
			for _, i := range ends {
				if txnOf(i) != rt {
					p.edge1(txnOf(i), rt, WR, k, ri, cands[i].Pos, Pos(s0+i))
				}
			}
			for _, j := range starts {
				if txnOf(j) != rt {
					p.edge1(rt, txnOf(j), RW, k, ri, pos, Pos(s0+j))
				}
			}
		}
		return
	}
	after, before := hubs, hubs+1
	if hubs < 0 {
		after, before = int32(p.Nodes), int32(p.Nodes+1)
		p.Nodes += 2
	}
	for _, i := range ends {
		p.edge1(txnOf(i), after, WW, k, traceBy, pos, Pos(s0+i))
	}
	p.edge(after, before, Hub, k, -1, pos)
	for _, j := range starts {
		p.edge1(before, txnOf(j), Hub, k, -1, pos, Pos(s0+j))
	}
	for _, ri := range readers {
		rt := in.Reads[ri].Txn
		p.edge(after, rt, WR, k, ri, pos)
		// A reader that appends right after what it read is itself a starting block:
		// through the hub it would precede itself, so it gets direct edges. On a chain,
		// before(pos) leads to every later block, so any reader that appends to the key
		// (its block comes after what it read) does.
		self := hubs >= 0 && in.Reads[ri].Writes
		for _, j := range starts {
			self = self || txnOf(j) == rt
		}
		if !self {
			p.edge(rt, before, RW, k, ri, pos)
			continue
		}
		for _, j := range starts {
			if txnOf(j) != rt {
				p.edge1(rt, txnOf(j), RW, k, ri, pos, Pos(s0+j))
			}
		}
	}
}

// ChainFactor decides which open keys get a key-order chain: those with at least
// ChainFactor candidates per trace position (0: every open key, negative: none).
// Tests change it.
var ChainFactor int32 = 2

// chainEdge adds the chain edge from one position's hub to the next position's (after
// to after, before to before).
//
// The chain: after(p) stands for "after every block ending at or before p" and
// before(p) for "before every block starting at or after p". A block ending at p goes
// into after(p), after(p) -> before(p), before(p) goes to each block starting at p, and
// the readers of length p sit between after(p) and before(p) (boundary). The chain
// edges after(p) -> after(p+1) and before(p) -> before(p+1) order two writers as soon
// as their blocks are chosen, whoever lies between them: without them the order of two
// blocks far apart on the trace follows only once every block between them is chosen,
// so the acyclicity theory sees a contradiction late (quadratically many pairwise edges
// would say the same). In a full attribution every path through a chain edge is also
// a path of the other edges (consecutive blocks), so the chain adds no cycle; the
// explanations leave it out and show the cycle of consecutive blocks.
func (p *Problem) chainEdge(from, to, k, pos int32) {
	g := int32(len(p.Guards))
	p.Edges = append(p.Edges, Edge{From: from, To: to, Kind: Hub, Chain: true, Key: k, Read: -1, Pos: pos, G0: g, G1: g})
}
