package encode

import (
	"doppel/history"
	"doppel/theory"
)

// EdgeKind is why one transaction must precede another.
type EdgeKind uint8

const (
	WW          EdgeKind = iota // write-write: consecutive blocks of a key
	WR                          // write-read: the reader saw the writer's last append
	RW                          // read-write (anti-dependency): the writer's block follows what was read
	Process                     // same process, earlier first
	Realtime                    // completed before the other was invoked
	Hub                         // from a key's hub to a writer never observed in any read of it
	StartCommit                 // snapshot isolation: a transaction starts before it commits
)

var edgeKindNames = [...]string{"ww", "wr", "rw", "process", "realtime", "unobserved", "start-commit"}

func (k EdgeKind) String() string { return edgeKindNames[k] }

// CycleType names a dependency cycle as Elle does, from how many anti-dependencies (rw)
// and write-read dependencies (wr) it has: G0 (ww only), G1c (ww and wr), G-single (one
// rw), G2-item (several; G-nonadjacent in snapshot isolation's split graph, where two are
// never adjacent), with -realtime or -process when it needs such an edge.
func CycleType(rw, wr int, split, process, realtime bool) string {
	typ := "G2-item"
	switch {
	case rw == 0 && wr == 0:
		typ = "G0"
	case rw == 0:
		typ = "G1c"
	case rw == 1:
		typ = "G-single"
	case split:
		typ = "G-nonadjacent"
	}
	if realtime {
		return typ + "-realtime"
	}
	if process {
		return typ + "-process"
	}
	return typ
}

// Edge is a dependency From -> To between graph nodes (transactions, or a key's hub).
// A key's hub stands for "after the whole trace": the last writer and the readers of
// the whole trace go into it, and it goes to every writer never observed, so those
// edges are linear in number rather than quadratic.
type Edge struct {
	From, To int32
	Kind     EdgeKind
	// Chain: an edge between two nodes of a key's order chain (openKey), which only
	// shortcuts paths the other edges make in every full attribution; the cycles shown
	// to users leave it out.
	Chain bool
	Key   int32 // -1 for process and real-time edges
	Read  int32 // the read that shows it (wr, rw), -1 otherwise
	Pos   int32 // the trace position the edge is about (the start of To's block)
	// The edge holds when all its guard literals are true: Problem.Guards[G0:G1].
	G0, G1 int32
}

// Lit is a literal of the problem's variables: 2*v for v, 2*v+1 for not v (the
// solver's encoding).
type Lit = int32

// Pos and Neg make literals.
func Pos(v int32) Lit { return 2 * v }
func Neg(v int32) Lit { return 2*v + 1 }

// Commit says whether a transaction is in the graph.
type Commit uint8

const (
	NotCommitted Commit = iota
	Committed
	MayCommit // an :info transaction observed only where other attributions exist
)

// Problem is the whole decision problem for the data dependencies of a history.
type Problem struct {
	In    *Inference
	Plans []Plan
	// Nodes: transactions 0..len(Txns)-1, then one hub per key at HubBase+key.
	Nodes   int
	HubBase int32
	Edges   []Edge
	Guards  []Lit
	// Boolean part.
	NumVars   int32
	Clauses   []Lit   // flat
	ClauseEnd []int32 // clause i is Clauses[ClauseEnd[i-1]:ClauseEnd[i]]
	Commit    []Commit
	CommitVar []int32 // per transaction, the variable of MayCommit ones, else -1
	// SegVar[k][i] is the variable of Plans[k].Cands[i] (open keys).
	SegVar [][]int32
	// Tiling (built with BuildOptions.NativeTiling): the open keys' candidates, whose
	// choice must tile each trace; theory.Segments enforces it, the clauses only
	// tie the candidates to the boundary variables. Nil: the clauses say it all.
	Tiling *theory.Tiling
	// Unsat keys: no segmentation exists; the history is not valid.
	UnsatKeys []int32
	// Win narrowed the candidate blocks (BuildWithin); WindowUnsatKeys have no
	// segmentation within it (but have one without).
	Win             *Windows
	WindowUnsatKeys []int32

	// unobsVar[keyBase[k]+i] is the variable "writer Keys[k].Writers[i] committed but
	// unobserved on key k" for writers of open keys that may or may not be observed,
	// else -1 (both nil: no open key). Indexed by key, so that a key's writers are
	// together.
	unobsVar, keyBase []int32
	// boundaryBase[k]: the variable b(0) of open key k (b(p) is boundaryBase[k]+p).
	boundaryBase []int32
	// While BuildFrom runs: scratch buffers, and whether this is the pass that only
	// measures how much the keys emit (the emitted lists are emptied after each key).
	sc       *scratch
	counting bool
	native   bool // Tiling instead of the tiling clauses
}

// BoundaryVar returns the variable "a block starts at position pos" (pos = the trace
// length: "the last block ends exactly there") of open key k.
func (p *Problem) BoundaryVar(k, pos int32) int32 { return p.boundaryBase[k] + pos }

// IsHub reports whether node is a key's hub.
func (p *Problem) IsHub(node int32) bool { return node >= p.HubBase }

// Guard returns edge e's guard.
func (p *Problem) Guard(e *Edge) []Lit { return p.Guards[e.G0:e.G1] }

func (p *Problem) newVar() int32 {
	p.NumVars++
	return p.NumVars - 1
}

func (p *Problem) clause1(a Lit) {
	p.Clauses = append(p.Clauses, a)
	p.ClauseEnd = append(p.ClauseEnd, int32(len(p.Clauses)))
}

func (p *Problem) clause2(a, b Lit) {
	p.Clauses = append(p.Clauses, a, b)
	p.ClauseEnd = append(p.ClauseEnd, int32(len(p.Clauses)))
}

// lit adds a literal to the clause under construction; endClause closes it.
func (p *Problem) lit(a Lit)  { p.Clauses = append(p.Clauses, a) }
func (p *Problem) endClause() { p.ClauseEnd = append(p.ClauseEnd, int32(len(p.Clauses))) }

// Clause returns clause i.
func (p *Problem) Clause(i int) []Lit {
	start := int32(0)
	if i > 0 {
		start = p.ClauseEnd[i-1]
	}
	return p.Clauses[start:p.ClauseEnd[i]]
}

// edge adds an unguarded edge.
func (p *Problem) edge(from, to int32, kind EdgeKind, key, read, pos int32) {
	g := int32(len(p.Guards))
	p.Edges = append(p.Edges, Edge{From: from, To: to, Kind: kind, Key: key, Read: read, Pos: pos, G0: g, G1: g})
}

// edge1 adds an edge guarded by literal g, or unguarded if g < 0.
func (p *Problem) edge1(from, to int32, kind EdgeKind, key, read, pos int32, g Lit) {
	g0 := int32(len(p.Guards))
	if g >= 0 {
		p.Guards = append(p.Guards, g)
	}
	p.Edges = append(p.Edges, Edge{From: from, To: to, Kind: kind, Key: key, Read: read, Pos: pos, G0: g0, G1: int32(len(p.Guards))})
}

// edge2 adds an edge guarded by literals g and h.
func (p *Problem) edge2(from, to int32, kind EdgeKind, key, read, pos int32, g, h Lit) {
	g0 := int32(len(p.Guards))
	p.Guards = append(p.Guards, g, h)
	p.Edges = append(p.Edges, Edge{From: from, To: to, Kind: kind, Key: key, Read: read, Pos: pos, G0: g0, G1: g0 + 2})
}

// Build infers, segments every key and produces the data-dependency problem.
func Build(h *history.History) *Problem {
	in := Infer(h)
	return BuildFrom(in)
}

// BuildFrom is Build for an existing inference.
func BuildFrom(in *Inference) *Problem { return BuildWithinStop(in, nil, nil) }

// BuildFromStop is BuildFrom that asks stop (when not nil) before each key and returns
// nil as soon as it reports true: a checker's time limit.
func BuildFromStop(in *Inference, stop func() bool) *Problem { return BuildWithinStop(in, nil, stop) }

// BuildWithin is BuildFrom with the candidate blocks narrowed to win (nil: all), for
// the models win's reasoning is sound for. A key with no segmentation within the
// windows that has one without them is listed in WindowUnsatKeys, not diagnosed: the
// windows, not the key alone, rule it out.
func BuildWithin(in *Inference, win *Windows) *Problem { return BuildWithinStop(in, win, nil) }

// BuildWithinStop is BuildWithin with BuildFromStop's stop.
func BuildWithinStop(in *Inference, win *Windows, stop func() bool) *Problem {
	return BuildWith(in, BuildOptions{Win: win, Stop: stop})
}

// BuildOptions are BuildWith's: the windows and stop of BuildWithinStop, and
// NativeTiling: leave "at most one block over each trace position" and "at most one
// block per writer" of each open key to the append-adjacency theory (Problem.Tiling,
// theory.Segments), which also propagates "at least one", instead of
// sequential-counter clauses.
type BuildOptions struct {
	Win          *Windows
	Stop         func() bool
	NativeTiling bool
}

// BuildWith builds the problem as opts say.
//
// Each key's edges and clauses are emitted twice: first only to measure them (into
// small buffers emptied after every key), right after segmenting the key while its
// reads and writers are in cache, then for good into lists of exactly the right size.
// Growing those lists instead (the biggest structures of a check) would copy them
// several times over and leave as much garbage.
func BuildWith(in *Inference, opts BuildOptions) *Problem {
	win, stop := opts.Win, opts.Stop
	in.CheckValues()
	h := in.H
	p := &Problem{In: in, Plans: make([]Plan, len(in.Keys)), HubBase: int32(len(h.Txns)), Win: win, native: opts.NativeTiling}
	if p.native {
		p.Tiling = &theory.Tiling{}
	}
	p.Nodes = len(h.Txns) + len(in.Keys)
	sc := newScratch(in, true)
	sc.win = win
	sc.stop = stop
	p.sc = sc

	// Which transactions are in the graph: ok ones; :info ones observed in a fixed
	// segmentation; :info ones that some open key may use get a variable; the other
	// :info ones are settled not committed before search. None of their appends can
	// fill a trace position and their reads count for nothing, so committed they would
	// only add a node with edges into it (an unobserved writer after each key's hub)
	// and out of it only by process order; not committed, no edge is lost: process
	// edges skip it (its neighbours stay ordered) and it never completes, so it has no
	// real-time successors. Not committed is therefore at least as good.
	p.Commit = make([]Commit, len(h.Txns))
	p.CommitVar = make([]int32, len(h.Txns))
	for t := range h.Txns {
		p.CommitVar[t] = -1
		if h.Txns[t].Status == history.OK {
			p.Commit[t] = Committed
		}
	}

	// Segment every key, and measure what it will emit while its data is at hand; except
	// keys with :info writers, whose emission depends on the other keys' plans.
	var deferred []int32
	var size emitSize
	nSeg := 0
	for k := range in.Keys {
		if stop != nil && stop() {
			return nil
		}
		if in.Keys[k].Bad {
			p.Plans[k] = Plan{State: KeyUnsat} // emits nothing
			continue
		}
		p.Plans[k] = sc.segment(int32(k), true, true)
		if sc.stopped {
			return nil
		}
		if p.Plans[k].State == KeyUnsat && win != nil {
			sc.win = nil
			if sc.segment(int32(k), true, true).State != KeyUnsat {
				p.Plans[k] = Plan{State: KeyOutsideWindows}
				p.WindowUnsatKeys = append(p.WindowUnsatKeys, int32(k))
				sc.win = win
				continue
			}
			p.Plans[k] = sc.segment(int32(k), true, true) // diagnosed without windows
			sc.win = win
			if sc.stopped {
				return nil
			}
		}
		switch p.Plans[k].State {
		case KeyUnsat:
			p.UnsatKeys = append(p.UnsatKeys, int32(k))
		case KeyOpen:
			nSeg += len(p.Plans[k].Cands)
			if p.unobsVar == nil {
				p.unobsVar = make([]int32, len(in.Writers))
				for i := range p.unobsVar {
					p.unobsVar[i] = -1
				}
				p.keyBase = make([]int32, len(in.Keys))
				for k, base := 0, 0; k < len(in.Keys); k++ {
					p.keyBase[k] = int32(base)
					base += len(in.Keys[k].Writers)
				}
			}
		}
		if !p.infoWriter(int32(k)) {
			p.measureKey(int32(k), &size)
			if sc.stopped {
				return nil
			}
			continue
		}
		deferred = append(deferred, int32(k))
		for _, c := range p.Plans[k].Blocks {
			p.Commit[in.Writers[c.Writer].Txn] = Committed
		}
	}
	// (Only keys with :info writers have :info blocks and candidates.)
	for _, k := range deferred {
		for _, c := range p.Plans[k].Cands {
			if w := &in.Writers[c.Writer]; w.Status == history.Info && p.Commit[w.Txn] == NotCommitted {
				p.Commit[w.Txn] = MayCommit
				p.CommitVar[w.Txn] = p.newVar()
			}
		}
	}
	for _, k := range deferred {
		if p.measureKey(k, &size); sc.stopped {
			return nil
		}
	}

	if stop != nil && stop() {
		return nil // before allocating the lists (hundreds of MB on long keys)
	}
	p.SegVar = make([][]int32, len(in.Keys))
	p.boundaryBase = make([]int32, len(in.Keys))
	sc.segVars = make([]int32, nSeg)
	if p.native {
		t := p.Tiling
		t.Var, t.Cell0, t.Cell1, t.Group = make([]int32, 0, nSeg), make([]int32, 0, nSeg), make([]int32, 0, nSeg), make([]int32, 0, nSeg)
	}
	// The checker appends the process and real-time edges to Edges in place: leave room.
	p.Edges = make([]Edge, 0, size.edges+p.orderEdgeCount())
	p.Guards = make([]Lit, 0, size.guards)
	p.Clauses = make([]Lit, 0, size.lits)
	p.ClauseEnd = make([]int32, 0, size.clauses)
	for k := range p.Plans {
		if stop != nil && stop() {
			return nil
		}
		if p.emitKey(int32(k)); sc.stopped {
			return nil
		}
	}
	p.sc = nil
	return p
}

// emitSize is how much the keys emit.
type emitSize struct{ edges, guards, lits, clauses int }

// measureKey adds to size what key k emits, emitting it into the lists (which it
// leaves empty) without changing anything else.
func (p *Problem) measureKey(k int32, size *emitSize) {
	vars, nodes := p.NumVars, p.Nodes
	p.counting = true
	p.emitKey(k)
	p.counting = false
	p.NumVars, p.Nodes = vars, nodes
	size.edges += len(p.Edges)
	size.guards += len(p.Guards)
	size.lits += len(p.Clauses)
	size.clauses += len(p.ClauseEnd)
	p.Edges, p.Guards, p.Clauses, p.ClauseEnd = p.Edges[:0], p.Guards[:0], p.Clauses[:0], p.ClauseEnd[:0]
}

// infoWriter reports whether an :info transaction appends to key k.
func (p *Problem) infoWriter(k int32) bool {
	for _, w := range p.In.Keys[k].Writers {
		if p.In.Writers[w].Status == history.Info {
			return true
		}
	}
	return false
}

// emitKey emits key k's edges and clauses.
func (p *Problem) emitKey(k int32) {
	if !p.counting { // when measuring, the key was just segmented
		p.sc.touch(k, false)
	}
	switch p.Plans[k].State {
	case KeyFixed:
		p.fixedKey(k)
	case KeyOpen:
		p.openKey(k)
	case KeyUnsat:
		// Diagnosed without windows: the key alone has no segmentation.
		win := p.sc.win
		p.sc.win = nil
		defer func() { p.sc.win = win }()
		if p.counting {
			// Findings are recorded once, when emitting.
			n := len(p.In.Findings)
			p.diagnose(k)
			clear(p.In.Findings[n:])
			p.In.Findings = p.In.Findings[:n]
			return
		}
		p.diagnose(k)
	case KeyUnread:
		if !p.counting {
			p.unreadKey(k)
		}
	}
}

// commitGuard returns the guard for "transaction t committed" and whether t can commit.
func (p *Problem) commitGuard(t int32) ([]Lit, bool) {
	switch p.Commit[t] {
	case Committed:
		return nil, true
	case MayCommit:
		return []Lit{Pos(p.CommitVar[t])}, true
	}
	return nil, false
}

// writerCommit is commitLit for writer w's transaction.
func (p *Problem) writerCommit(w int32) (Lit, bool) {
	switch wr := &p.In.Writers[w]; wr.Status {
	case history.OK:
		return -1, true
	case history.Fail:
		return -1, false
	default:
		return p.commitLit(wr.Txn)
	}
}

// commitLit is commitGuard as one literal, -1 for none (t surely committed).
func (p *Problem) commitLit(t int32) (Lit, bool) {
	switch p.Commit[t] {
	case Committed:
		return -1, true
	case MayCommit:
		return Pos(p.CommitVar[t]), true
	}
	return -1, false
}

func (p *Problem) blockEnd(c Cand) int32 {
	w := &p.In.Writers[c.Writer]
	return c.Pos + w.End - w.Start
}

// blockAt finds the block covering trace position pos.
func blockAt(blocks []Cand, pos int32) int {
	lo, hi := 0, len(blocks)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if blocks[mid].Pos <= pos {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// fixedKey emits the known edges of a key with exactly one segmentation.
func (p *Problem) fixedKey(k int32) {
	in := p.In
	key := &in.Keys[k]
	plan := &p.Plans[k]
	n := int32(len(key.Trace))
	blocks := plan.Blocks
	hub := p.HubBase + k
	for j := 1; j < len(blocks); j++ {
		p.edge(in.Writers[blocks[j-1].Writer].Txn, in.Writers[blocks[j].Writer].Txn, WW, k, key.TraceBy, blocks[j].Pos)
	}
	inSeg := grow(&p.sc.inSeg, len(key.Writers)) // by index in key.Writers
	clear(inSeg)
	for _, b := range blocks {
		inSeg[p.sc.writerIndex(k, b.Writer)] = true
	}
	unobserved, lits := p.sc.unobs[:0], p.sc.unobsLit[:0]
	for wi, w := range key.Writers {
		if !inSeg[wi] {
			if c, ok := p.writerCommit(w); ok {
				unobserved = append(unobserved, w)
				lits = append(lits, c)
			}
		}
	}
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if r.Own != 0 || r.Version {
			continue
		}
		if r.Len > 0 {
			b := blocks[blockAt(blocks, r.Len-1)]
			if t := in.Writers[b.Writer].Txn; t != r.Txn {
				p.edge(t, r.Txn, WR, k, ri, b.Pos)
			}
		}
		if r.Len < n {
			b := blocks[blockAt(blocks, r.Len)]
			if t := in.Writers[b.Writer].Txn; t != r.Txn {
				p.edge(r.Txn, t, RW, k, ri, b.Pos)
			}
		} else {
			p.fullReader(k, ri, unobserved, lits)
		}
	}
	if len(unobserved) > 0 && len(blocks) > 0 {
		last := blocks[len(blocks)-1]
		p.edge(in.Writers[last.Writer].Txn, hub, WW, k, key.TraceBy, n)
	}
	p.hubOut(k, unobserved, lits)
	p.sc.unobs, p.sc.unobsLit = unobserved, lits
}

// fullReader emits the anti-dependencies of a read of the whole trace: the reader
// precedes every writer never observed. A reader that is itself such a writer gets
// direct edges, since going through the hub would make it precede itself. lits[i] is
// the condition for unobserved[i] to be unobserved (-1: none).
func (p *Problem) fullReader(k, ri int32, unobserved []int32, lits []Lit) {
	in := p.In
	r := &in.Reads[ri]
	n := int32(len(in.Keys[k].Trace))
	if !r.Writes {
		if len(unobserved) > 0 {
			p.edge(r.Txn, p.HubBase+k, RW, k, ri, n)
		}
		return
	}
	for i, w := range unobserved {
		t := in.Writers[w].Txn
		if t == r.Txn {
			continue
		}
		p.edge1(r.Txn, t, RW, k, ri, n, lits[i])
	}
}

// UnobservedVar returns the variable "writer w is committed but unobserved on key k",
// for writers of open keys that may or may not be observed.
func (p *Problem) UnobservedVar(k, w int32) (int32, bool) {
	if p.unobsVar == nil || k < 0 || int(k) >= len(p.In.Keys) {
		return 0, false
	}
	ws := p.In.Keys[k].Writers
	i := writerIndex(ws, w)
	if i == len(ws) || ws[i] != w || p.unobsVar[int(p.keyBase[k])+i] < 0 {
		return 0, false
	}
	return p.unobsVar[int(p.keyBase[k])+i], true
}

// UnobservedGuard is the condition for writer w (one of Plans[k].Unobserved) to be a
// committed writer of key k that no read observed.
func (p *Problem) UnobservedGuard(k, w int32) []Lit {
	if v, ok := p.UnobservedVar(k, w); ok {
		return []Lit{Pos(v)}
	}
	g, _ := p.commitGuard(p.In.Writers[w].Txn)
	return g
}

// hubOut emits hub -> writer for every possibly-unobserved writer (guarded by lits, as
// in fullReader), and records them.
func (p *Problem) hubOut(k int32, unobserved []int32, lits []Lit) {
	if !p.counting {
		p.Plans[k].Unobserved = p.sc.keepInt32s(unobserved)
	}
	n := int32(len(p.In.Keys[k].Trace))
	for i, w := range unobserved {
		p.edge1(p.HubBase+k, p.In.Writers[w].Txn, Hub, k, -1, n, lits[i])
	}
}

// unreadKey: nobody read the key; every committed writer is unobserved and nothing
// precedes them through the key, so no edge is needed (snapshot isolation still orders
// them among themselves, from Plans[k].Unobserved).
func (p *Problem) unreadKey(k int32) {
	unobserved := p.sc.unobs[:0]
	for _, w := range p.In.Keys[k].Writers {
		if _, ok := p.writerCommit(w); ok {
			unobserved = append(unobserved, w)
		}
	}
	p.Plans[k].Unobserved = p.sc.keepInt32s(unobserved)
	p.sc.unobs = unobserved
}

// scratch holds the buffers BuildFrom reuses from key to key, and the slabs the plans'
// small lists are cut from (one allocation for many keys instead of several per key).
type scratch struct {
	in *Inference
	// build: this is BuildFrom's scratch, which cuts the plans' lists from slabs and
	// may keep a table of writer indexes; else (a lone Segment) it does neither.
	build bool
	bools slab[bool]
	ints  slab[int32]
	cands slab[Cand]
	// segVars: the flat SegVar lists of open keys, handed out in key order.
	segVars []int32
	// win, when set, narrows the candidate blocks (BuildWithin).
	win *Windows
	// noGCursor: segment ignores Inference.GCursorPins (read committed's pins), for the
	// diagnosis of a key the G-cursor pins alone leave without a segmentation.
	noGCursor bool

	// segment
	pinAt, cutBefore, blockWriters []int32
	byVal                          []uint64
	cs, cs2, blocks                []Cand
	posCount                       []int32
	f, g                           []int8
	// segment's groups of writers with the same values (groupWriters): per writer
	// index its group; per group a writer with its values, its number of writers, the
	// next group of the same hash, where its positions start in groupPos (-1: not
	// found yet) and how many there are, and what its writers would scan alone.
	seqGroup, groupRep, groupSize, groupNext, groupAt, groupLen, groupPos []int32
	groupCost                                                             []int64
	seqHead                                                               map[uint64]int32
	// segmentableGrouped: per position its groups and extra candidates; per group
	// its block length and writers.
	posGroups, posFill, groupEnd, members, memberOff, memberFill, extraOff []int32
	// keys
	unobs, starts, endOff, endIdx, overrun, wOff, wIdx, rOff, rIdx, iota []int32
	versionCuts                                                          []int32 // segment: (position, transaction) of version reads
	wCand                                                                []int32
	unobsLit                                                             []Lit
	inSeg                                                                []bool
	// index[w]: writer w's index in Keys[indexed].Writers (see writerIndex).
	index   []int32
	indexed int32
	sink    int32 // see touch

	// stop (BuildWithinStop's, nil: none) is asked every expiredEvery units of work
	// inside a key (a position tried, a candidate or position encoded): one long key
	// of few values can take seconds. Once it said so, stopped stays set.
	stop    func() bool
	stopped bool
	work    uint64
}

const expiredEvery = 1 << 14

// expired reports whether the build's stop said to give up, asking it every
// expiredEvery units of work (a call is one).
func (sc *scratch) expired() bool { return sc.expiredAfter(1) }

// expiredAfter is expired for a step of units units of work: a trace position whose
// edges pair thousands of blocks with hundreds of readers is that many (3 keys of two
// values, 5,000 transactions: one key's positions took 14 s between two asks).
func (sc *scratch) expiredAfter(units int) bool {
	if sc.stop == nil || sc.stopped {
		return sc.stopped
	}
	before := sc.work
	sc.work += uint64(units)
	if sc.work/expiredEvery != before/expiredEvery && sc.stop() {
		sc.stopped = true
	}
	return sc.stopped
}

func newScratch(in *Inference, forBuild bool) *scratch {
	return &scratch{in: in, build: forBuild, indexed: -1}
}

// writerIndex returns the index of writer w in Keys[k].Writers, which must hold it:
// by binary search for few writers, else from a table by writer id, filled for the key
// at the first call (a writer belongs to one key, so entries stay valid).
func (sc *scratch) writerIndex(k, w int32) int {
	ws := sc.in.Keys[k].Writers
	if len(ws) <= 32 || !sc.build {
		return writerIndex(ws, w)
	}
	if sc.indexed != k {
		if sc.index == nil {
			sc.index = make([]int32, len(sc.in.Writers))
		}
		for i, w := range ws {
			sc.index[w] = int32(i)
		}
		sc.indexed = k
	}
	return int(sc.index[w])
}

// writerIndex returns the index of writer w in ws (a key's Writers, in increasing
// order), which must hold it.
func writerIndex(ws []int32, w int32) int {
	lo, hi := 0, len(ws)
	for lo < hi {
		mid := int(uint(lo+hi) / 2)
		if ws[mid] < w {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// slab hands out small slices cut from big chunks.
// slab hands out small slices from large chunks. Chunks start small and double up to
// slabLen, so a tiny problem (the differential tests build millions) does not allocate
// and clear a full chunk.
type slab[T any] struct {
	free []T
	next int // the length of the next chunk
}

const slabLen = 1 << 14

func (s *slab[T]) take(n int) []T {
	if n > len(s.free) {
		if n >= slabLen/8 {
			return make([]T, n)
		}
		s.next = min(max(2*s.next, 256), slabLen)
		s.free = make([]T, max(s.next, n))
	}
	r := s.free[:n:n]
	s.free = s.free[n:]
	return r
}

func (sc *scratch) newBools(n int) []bool {
	if sc.build {
		return sc.bools.take(n)
	}
	return make([]bool, n)
}

func (sc *scratch) newInt32s(n int) []int32 {
	if sc.build {
		return sc.ints.take(n)
	}
	return make([]int32, n)
}

// keepInt32s returns a copy of xs for a plan (nil if empty).
func (sc *scratch) keepInt32s(xs []int32) []int32 {
	if len(xs) == 0 {
		return nil
	}
	r := sc.newInt32s(len(xs))
	copy(r, xs)
	return r
}

// keepCands returns a copy of cs for a plan.
func (sc *scratch) keepCands(cs []Cand) []Cand {
	var r []Cand
	if sc.build {
		r = sc.cands.take(len(cs))
	} else {
		r = make([]Cand, len(cs))
	}
	copy(r, cs)
	return r
}

// grow returns (*buf)[:n], reallocating when too short; the contents are not cleared.
func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n, n+n/4)
	}
	return (*buf)[:n]
}
