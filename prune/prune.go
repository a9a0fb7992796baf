// Package prune narrows, before the encoding is built, where each writer's block can
// start on its key (docs/DESIGN.md, "Pruning by thresholds").
//
// In a serial order every key's list only grows, so for each key x and length p there is
// a moment θ(x,p): the transaction that makes x reach p values. A transaction that read x
// with l values ran after θ(x,l) and before θ(x,l+1); a transaction whose block on x may
// start only at positions lo..hi runs after θ(x,lo) and, if it must be observed, before
// θ(x,hi+len+1). With process and real-time order (for the models that have them), this
// is a graph of "strictly before" facts. Along any path, what a transaction knows about a
// key carries over: if T1 precedes T2, x has at least as many values before T2 as after
// T1. So for each key a forward pass over the graph in topological order gives every
// writer a lower bound on where its block starts, a backward pass an upper bound; blocks
// outside the bounds are impossible in every attribution (they would order some
// transaction before itself), and the segmentation of each key within the bounds (only
// blocks that tile the trace) narrows them again. Rounds repeat until nothing changes.
//
// Narrowing is sound for the models whose graph contains the edges used (data edges
// always; process and real-time order when Level says so) and loses no solution of those
// models, so the problem built within the windows decides them exactly and is much
// smaller: on long lists of few values, a writer's block could start at half the
// positions of the list, but its reads of other keys place it within a few.
package prune

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"doppel/encode"
	"doppel/history"
)

// Level says which orders besides the data dependencies the models to decide have.
type Level struct {
	Process, Realtime bool
	// Split: snapshot isolation. Each transaction is two nodes, its start (snapshot:
	// where its reads happen) and its commit (where its appends take effect), and a
	// writer starts after the writer before its block committed (first-committer-wins).
	// With Realtime (and Process), strong snapshot isolation: a commit precedes the
	// start of what was invoked after it completed.
	Split bool
	// PerRead: the per-read models with process (and real-time) order (strong-session
	// and strong read committed), on a per-read inference. Their graph has no rw edge,
	// so a read of l values puts its transaction after θ(x,l) only, never before
	// θ(x,l+1); only a read after the transaction's own appends pins its block, and a
	// version read places nothing. The writers' blocks still follow the order of the
	// graph (ww edges), so the thresholds and passes hold as for the serial models.
	PerRead bool
	// Single: the models that forbid G-single (consistent view and up), on an inference
	// with the G-cursor pins (encode.Inference.GCursorPins). They allow cycles with two
	// rw edges, so the graph is laid out twice: the ww and wr facts in both layers, each
	// rw fact (a read before θ(x,l+1)) from the first layer to the second. A path into
	// a node's copy in layer j has j rw edges, a path out of it at most 1-j, so bounds
	// that cross at one copy close a cycle with at most one rw edge, and each window
	// bound, closed by the key's own order (ww), too. Version reads place nothing.
	Single bool
}

// Options bound the work.
type Options struct {
	Level    Level
	Deadline time.Time // zero: none
	// Stop, when set, is read with the deadline (from several goroutines: it must be
	// safe for that); true ends the narrowing as an expired deadline does.
	Stop func() bool
	// MaxRounds bounds the rounds (0: a default).
	MaxRounds int
	// Work bounds the graph passes of one round, in node and edge visits (0: a default).
	Work int64
	// Whole, with Level.Split, marks the transactions that start and commit at once
	// (one node, as without Split): the windows then hold for the executions in which
	// they do, a hybrid of the serial and snapshot graphs. Not sound for snapshot
	// isolation: only for witnesses, whose solutions are verified.
	Whole []bool
}

// Result is what pruning found.
type Result struct {
	Win *encode.Windows
	// Contradiction, when set, proves that no attribution satisfies the models Level is
	// sound for.
	Contradiction *Contradiction
	// KeyUnsat: a key has no segmentation at all (before any narrowing): the key alone
	// proves the history invalid for every model, and pruning stopped.
	KeyUnsat bool
	UnsatKey int32 // that key
	Rounds   int
	Narrowed int // writers whose window shrank
	Removed  int // candidate blocks removed, where counted
}

// Contradiction is a proof by thresholds: a transaction that would have to run both
// after and before a point of a key's list, or a key whose list cannot be split into
// blocks within the windows.
type Contradiction struct {
	Type  string  // the cycle kind, as Elle names it (the order it needs as -process / -realtime)
	Key   int32   // the key whose thresholds contradict
	Txn   int32   // the transaction that would precede itself (-1: the key cannot be tiled)
	Txns  []int32 // the transactions on the cycle, in order
	Steps []Step
	Text  string
}

// Step is one "strictly before" fact of a contradiction, From before To.
type Step struct {
	From, To int32 // transactions
	Kind     string
	Key      int32 // -1 for process and real-time order
	Why      string
	// Read is the read micro-op (an index into History.Ops) whose anti-dependency the
	// step is, -1 when it is none.
	Read int32
}

const inf = int32(1<<31 - 1)

type pruner struct {
	in   *encode.Inference
	h    *history.History
	opts Options
	win  *encode.Windows

	nTxn      int32
	nTN       int32 // transaction nodes: nTxn, or 2*nTxn split
	split     bool
	thetaBase []int32 // per key: node of θ(x,0), -1 when the key was never read
	nodes     int32
	// half, with Level.Single: the nodes of one layer; node v+half is v's copy in the
	// second (0: one layer).
	half      int32
	committed []bool // :ok transactions: the only ones in the graph
	whole     []bool // split: transactions with one node (Options.Whole); nil: none

	// Static edges (θ chains, reads, order) and this round's writer edges, as a list
	// turned into CSR each round.
	static  []edge
	succOff []int32
	succ    []int32
	topo    []int32
	// The graph by rank (position in topological order): rank per node, the edges out
	// of each rank (rOff), their targets' ranks (rTo) and ids (rEdge).
	rank, rOff, rTo, rEdge []int32
	// ls, one per worker, hold the batched passes (allocated when first needed);
	// explain, one key's passes with the edges that gave each bound.
	ls       [2]*laneScratch
	explain  *laneScratch
	pinned   []bool // per writer: its block position is fixed by its own read
	state    []encode.KeyState
	dirty    []bool          // per key: a window of one of its writers changed
	lastPlan [][]encode.Cand // per key: the blocks its last tiling found viable
	// Per writer, scratch of segmentOnce: first and last viable position, forced one.
	first, last, forced []int32
	narrowed            []bool // per writer
	res                 *Result
	changes             int    // window narrowings so far
	touched             []bool // per key: a window of its writers narrowed since its last passes
	// tileFirst: keys tiled in the first round even when expensive (two pinned blocks
	// collide: the key alone has no segmentation).
	tileFirst []bool
}

type edge struct {
	from, to int32
	kind     uint8
	key      int32 // the key a read or window edge is about
	aux      int32 // the read, or the writer
}

const (
	eChain uint8 = iota
	eReadAfter
	eReadBefore
	eWinAfter
	eWinBefore
	eCross
	eStartCommit
	eFirstCommitter
	eProcess
	eRealtime
)

// Run narrows the windows of in's writers for the models of opts.Level.
func Run(in *encode.Inference, opts Options) *Result {
	in.CheckValues() // keys whose values alone fail are Bad: left out
	if opts.MaxRounds == 0 {
		opts.MaxRounds = 50
	}
	p := &pruner{in: in, h: in.H, opts: opts, win: encode.NewWindows(len(in.Writers)), res: &Result{}}
	p.res.Win = p.win
	// The limits hold in every phase: expired, the windows so far are returned (wider
	// than they could be, never narrower: every narrowing step is sound), and the
	// caller finds the deadline passed.
	if p.expired() {
		return p.res
	}
	p.build()
	if p.expired() {
		return p.res
	}
	p.run()
	p.allow()
	if p.res.Contradiction == nil && !p.res.KeyUnsat && !p.expired() {
		p.order()
	}
	return p.res
}

// order ranks the transactions by a topological order of the final graph that, among
// the nodes it may take next, takes thresholds first and transactions by the middle of
// their interval: a serial order consistent with everything the passes know, and close
// to how the database ran. Windows.Rank holds it (an estimate for guesses, not a fact).
func (p *pruner) order() {
	all := p.windowEdges(slices.Clone(p.static))
	p.csr(all)
	indeg := make([]int32, p.nodes)
	for i := range all {
		indeg[all[i].to]++
	}
	h := p.h
	// An :info transaction took effect, if at all, about when it was invoked (its
	// client gave up a timeout later, and mostly the database decided soon): its key is
	// its invoke plus the mean :ok duration. Placed after every completed one
	// (History.Midpoint), its appends came last in the guess wherever it needed them,
	// against the order of everything around them: othergen's snapshot store with 5%
	// :info at 10K, strong snapshot isolation 42 → 10 CPU-s (BENCHMARKS.md).
	infoDuration := h.MeanOKDuration()
	key := func(v int32) int64 {
		if v >= p.nTN {
			return -1
		}
		t := p.txnOf(v)
		if tx := &h.Txns[t]; tx.Status == history.Info && tx.Invoke >= 0 {
			return 2*int64(tx.Invoke) + infoDuration
		}
		return h.Midpoint(t)
	}
	q := &nodeHeap{key: key}
	for v := int32(0); v < p.nodes; v++ {
		if indeg[v] == 0 {
			q.push(v)
		}
	}
	rank := make([]int32, p.nTxn)
	for i := range rank {
		rank[i] = -1
	}
	next := int32(0)
	for len(q.items) > 0 {
		v := q.pop()
		if v < p.nTN && v == p.commitN(p.txnOf(v)) {
			rank[p.txnOf(v)] = next
			next++
		}
		for _, e := range p.succ[p.succOff[v]:p.succOff[v+1]] {
			u := all[e].to
			indeg[u]--
			if indeg[u] == 0 {
				q.push(u)
			}
		}
	}
	for t := range rank {
		if rank[t] < 0 { // only on a cycle, which the rounds would have reported
			rank[t] = next
			next++
		}
	}
	p.win.Rank = rank
}

// nodeHeap is a binary min-heap of nodes by key.
type nodeHeap struct {
	items []int32
	key   func(int32) int64
}

func (q *nodeHeap) push(v int32) {
	q.items = append(q.items, v)
	i := len(q.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if q.key(q.items[parent]) <= q.key(q.items[i]) {
			break
		}
		q.items[parent], q.items[i] = q.items[i], q.items[parent]
		i = parent
	}
}

func (q *nodeHeap) pop() int32 {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(q.items) {
			break
		}
		m := l
		if r := l + 1; r < len(q.items) && q.key(q.items[r]) < q.key(q.items[l]) {
			m = r
		}
		if q.key(q.items[i]) <= q.key(q.items[m]) {
			break
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
	return top
}

// allow records, for the writers of each key tiled, the positions its last tiling
// found viable (intersected with the final windows by Windows.Allowed).
func (p *pruner) allow() {
	in := p.in
	p.win.Allow = make([][]int32, len(in.Writers))
	for k, cands := range p.lastPlan {
		if cands == nil {
			continue
		}
		for _, w := range in.Keys[k].Writers {
			if p.live(w) || p.maybe(w) {
				p.win.Allow[w] = []int32{}
			}
		}
		for _, c := range cands {
			if p.live(c.Writer) || p.maybe(c.Writer) {
				p.win.Allow[c.Writer] = append(p.win.Allow[c.Writer], c.Pos)
			}
		}
	}
}

func (p *pruner) expired() bool {
	return !p.opts.Deadline.IsZero() && time.Now().After(p.opts.Deadline) || p.opts.Stop != nil && p.opts.Stop()
}

// build makes the nodes, the static edges and the first windows (pins).
func (p *pruner) build() {
	in, h := p.in, p.h
	p.nTxn = int32(len(h.Txns))
	p.committed = make([]bool, p.nTxn)
	for t := range h.Txns {
		p.committed[t] = h.Txns[t].Status == history.OK
	}
	p.thetaBase = make([]int32, len(in.Keys))
	p.split = p.opts.Level.Split
	p.nTN = p.nTxn
	if p.split {
		p.nTN = 2 * p.nTxn
		if len(p.opts.Whole) == int(p.nTxn) {
			p.whole = p.opts.Whole
		}
		for t := int32(0); t < p.nTxn; t++ {
			if p.committed[t] && !p.isWhole(t) {
				p.static = append(p.static, edge{from: 2 * t, to: 2*t + 1, kind: eStartCommit, key: -1, aux: -1})
			}
		}
	}
	p.nodes = p.nTN
	// The static edges are sized up front (at a million transactions there are tens of
	// millions, and every doubling of the slice is fresh memory): a key's chain has
	// 3n+4, its boundaries at most n+1, a read at most two; order edges are added after.
	size := len(p.static) + 2*len(in.Reads)
	for k := range in.Keys {
		p.thetaBase[k] = -1
		if in.Keys[k].TraceBy >= 0 && !in.Keys[k].Bad {
			p.thetaBase[k] = p.nodes
			p.nodes += 2 * (int32(len(in.Keys[k].Trace)) + 2) // pre and post of θ(x,0..n+1)
			size += 4*len(in.Keys[k].Trace) + 5
		}
	}
	p.static = slices.Grow(p.static, size-len(p.static))
	p.state = make([]encode.KeyState, len(in.Keys))
	p.dirty = make([]bool, len(in.Keys))
	p.touched = make([]bool, len(in.Keys))
	p.lastPlan = make([][]encode.Cand, len(in.Keys))
	p.first = make([]int32, len(in.Writers))
	p.last = make([]int32, len(in.Writers))
	p.forced = make([]int32, len(in.Writers))
	p.narrowed = make([]bool, len(in.Writers))
	p.pinned = make([]bool, len(in.Writers))
	for k := range in.Keys {
		b := p.thetaBase[k]
		if b < 0 {
			continue
		}
		n := int32(len(in.Keys[k].Trace))
		for q := int32(0); q <= n+1; q++ {
			// Some transaction crosses q between the gaps before and after it.
			p.static = append(p.static, edge{from: b + 2*q, to: b + 2*q + 1, kind: eChain, key: int32(k), aux: -1})
			if q <= n {
				p.static = append(p.static,
					edge{from: b + 2*q, to: b + 2*q + 2, kind: eChain, key: int32(k), aux: -1},
					edge{from: b + 2*q + 1, to: b + 2*q + 3, kind: eChain, key: int32(k), aux: -1})
			}
		}
		p.dirty[k] = true
	}
	if p.expired() {
		return // Run returns the windows as they are
	}
	// A length some transaction read, or where a block is pinned, is a boundary: the
	// transaction crossing it is not the one crossing the next.
	boundary := make([][]bool, len(in.Keys))
	for ri := range in.Reads {
		r := &in.Reads[ri]
		if p.thetaBase[r.Key] < 0 || !p.committed[r.Txn] || (p.opts.Level.PerRead || p.opts.Level.Single) && r.Version {
			continue
		}
		if boundary[r.Key] == nil {
			boundary[r.Key] = make([]bool, len(in.Keys[r.Key].Trace)+1)
			boundary[r.Key][0] = true
		}
		if q := r.Len - r.Own; q <= int32(len(in.Keys[r.Key].Trace)) {
			boundary[r.Key][q] = true
		}
	}
	for k, bs := range boundary {
		for q, ok := range bs {
			if ok && int32(q) < int32(len(in.Keys[k].Trace)) {
				b := p.thetaBase[k]
				p.static = append(p.static, edge{from: b + 2*int32(q) + 1, to: b + 2*int32(q) + 2, kind: eChain, key: int32(k), aux: -1})
			}
		}
	}
	pinAt := map[uint64]int32{}
	p.tileFirst = make([]bool, len(in.Keys))
	for ri := range in.Reads {
		r := &in.Reads[ri]
		b := p.thetaBase[r.Key]
		if b < 0 || !p.committed[r.Txn] {
			continue
		}
		n := int32(len(in.Keys[r.Key].Trace))
		if p.opts.Level.Single && r.Version {
			continue // a version read gives no edge and places no block
		}
		if p.opts.Level.PerRead && (r.Version || r.Own == 0) {
			if !r.Version {
				// After the writer of the block its read ends with (wr), and nothing
				// more: a read before its own appends only keeps its block after it.
				p.static = append(p.static, edge{from: b + 2*r.Len + 1, to: p.startN(r.Txn), kind: eReadAfter, key: r.Key, aux: int32(ri)})
			}
			continue
		}
		if r.Writes {
			// Its block is pinned: start at Len-Own (past the trace: never observed).
			w := p.writerOf(r.Txn, r.Key)
			q := r.Len - r.Own
			p.pinned[w] = true
			if q < n {
				p.win.Lo[w], p.win.Hi[w] = q, q
				// Two blocks pinned at one position (a lost update): tile the key first,
				// it has no segmentation.
				at := uint64(r.Key)<<32 | uint64(q)
				if other, ok := pinAt[at]; ok && other != w {
					p.tileFirst[r.Key] = true
				}
				pinAt[at] = w
			} else {
				p.win.Lo[w] = max(p.win.Lo[w], n)
			}
			if !p.split || q > n || p.isWhole(r.Txn) {
				continue
			}
			// Split, its snapshot (before its own appends) had q values.
			p.static = append(p.static,
				edge{from: b + 2*q + 1, to: p.startN(r.Txn), kind: eReadAfter, key: r.Key, aux: int32(ri)},
				edge{from: p.startN(r.Txn), to: b + 2*q + 2, kind: eReadBefore, key: r.Key, aux: int32(ri)})
			continue
		}
		p.static = append(p.static,
			edge{from: b + 2*r.Len + 1, to: p.startN(r.Txn), kind: eReadAfter, key: r.Key, aux: int32(ri)},
			edge{from: p.startN(r.Txn), to: b + 2*r.Len + 2, kind: eReadBefore, key: r.Key, aux: int32(ri)})
	}
	if p.expired() {
		return
	}
	if p.opts.Level.Process || p.opts.Level.Realtime {
		commit := make([]encode.Commit, p.nTxn)
		for t := range commit {
			if p.committed[t] {
				commit[t] = encode.Committed
			}
		}
		pr := &encode.Problem{In: in, Commit: commit}
		if p.opts.Level.Process {
			edges := pr.ProcessEdges()
			p.static = slices.Grow(p.static, len(edges))
			for _, e := range edges {
				// Split (strong session snapshot isolation), a commit precedes the next start.
				p.static = append(p.static, edge{from: p.commitN(e.From), to: p.startN(e.To), kind: eProcess, key: -1, aux: -1})
			}
		}
		if p.opts.Level.Realtime {
			// Real time also bounds where an :info transaction's appends can be if it
			// committed: after what completed before it was invoked. Edges only go into
			// it (it never completes), so nothing is inferred through it for others.
			for t := range commit {
				if p.h.Txns[t].Status == history.Info {
					commit[t] = encode.MayCommit
				}
			}
			edges := pr.RealtimeEdges()
			p.static = slices.Grow(p.static, len(edges))
			for _, e := range edges {
				p.static = append(p.static, edge{from: p.commitN(e.From), to: p.startN(e.To), kind: eRealtime, key: -1, aux: -1})
			}
		}
	}
	if p.opts.Level.Single {
		p.half = p.nodes
		p.nodes *= 2
		p.static = p.layered(p.static, 0)
	}
}

// layered lays edges[from:] out in the two layers of Level.Single: every edge in both,
// but an rw fact (eReadBefore) from the first layer to the second only.
func (p *pruner) layered(edges []edge, from int) []edge {
	h := p.half
	end := len(edges)
	for i := from; i < end; i++ {
		e := edges[i]
		if e.kind == eReadBefore {
			edges[i].to += h
			continue
		}
		e.from += h
		e.to += h
		edges = append(edges, e)
	}
	return edges
}

// txnNode reports whether node v is a transaction's (in either layer).
func (p *pruner) txnNode(v int32) bool {
	return v < p.nTN || p.half > 0 && v >= p.half && v < p.half+p.nTN
}

// writerOf returns t's writer id on key k.
func (p *pruner) writerOf(t, k int32) int32 {
	if w := p.in.KeyWriter(t, k); w >= 0 {
		return w
	}
	panic("prune: no writer")
}

func (p *pruner) blockLen(w int32) int32 { return p.in.Writers[w].End - p.in.Writers[w].Start }

// startN and commitN are transaction t's nodes (the same one unless split); txnOf maps
// a transaction node back.
func (p *pruner) startN(t int32) int32 {
	if p.split {
		return 2 * t
	}
	return t
}

func (p *pruner) commitN(t int32) int32 {
	if p.split && !p.isWhole(t) {
		return 2*t + 1
	}
	if p.split {
		return 2 * t // whole: its start node (2t+1 is left without edges)
	}
	return t
}

// isWhole reports whether split transaction t has one node (Options.Whole).
func (p *pruner) isWhole(t int32) bool { return p.whole != nil && p.whole[t] }

func (p *pruner) txnOf(v int32) int32 {
	if p.half > 0 && v >= p.half {
		v -= p.half
	}
	if p.split {
		return v / 2
	}
	return v
}

// maybe reports whether writer w is an :info transaction's, of a key with thresholds:
// its window only bounds where its block starts if it committed (from below: edges only
// go into it, since facts through a transaction that may not exist prove nothing).
func (p *pruner) maybe(w int32) bool {
	wr := &p.in.Writers[w]
	return wr.Status == history.Info && p.thetaBase[wr.Key] >= 0
}

// live reports whether writer w takes part: committed, of a key with thresholds.
func (p *pruner) live(w int32) bool {
	wr := &p.in.Writers[w]
	return p.committed[wr.Txn] && p.thetaBase[wr.Key] >= 0
}

// windowEdges appends the edges of the writers' current windows.
func (p *pruner) windowEdges(edges []edge) []edge {
	in := p.in
	start := len(edges)
	for w := range in.Writers {
		w := int32(w)
		if !p.live(w) && !p.maybe(w) {
			continue
		}
		wr := &in.Writers[w]
		b := p.thetaBase[wr.Key]
		n := int32(len(in.Keys[wr.Key].Trace))
		lo, hi, m := min(p.win.Lo[w], n), p.win.Hi[w], p.blockLen(w)
		// After the gap following the crossing of lo; before the gap preceding the
		// crossing of hi+m+1.
		c := p.commitN(wr.Txn)
		edges = append(edges, edge{from: b + 2*lo + 1, to: c, kind: eWinAfter, key: wr.Key, aux: w})
		if !p.live(w) {
			continue // an :info writer: only edges into it
		}
		if p.split && !p.isWhole(wr.Txn) {
			// First-committer-wins: the writer of the block before committed before it
			// started.
			edges = append(edges, edge{from: b + 2*lo + 1, to: p.startN(wr.Txn), kind: eFirstCommitter, key: wr.Key, aux: w})
		}
		if hi < n && hi+m+1 <= n+1 {
			edges = append(edges, edge{from: c, to: b + 2*(hi+m+1), kind: eWinBefore, key: wr.Key, aux: w})
		}
		// Wherever it starts, it crosses hi+1..lo+m itself.
		if hi < n && hi+1 <= lo+m {
			edges = append(edges,
				edge{from: b + 2*(hi+1), to: c, kind: eCross, key: wr.Key, aux: w},
				edge{from: c, to: b + 2*min(lo+m, n+1) + 1, kind: eCross, key: wr.Key, aux: w})
		}
	}
	if p.half > 0 {
		return p.layered(edges, start)
	}
	return edges
}

func (p *pruner) run() {
	var all []edge
	for round := 0; round < p.opts.MaxRounds; round++ {
		if p.expired() {
			return
		}
		p.res.Rounds = round + 1
		// Segment the keys whose windows changed: tiling narrows them again. In the first
		// round, keys whose blocks could start almost anywhere (long lists of few values)
		// get their passes first: tiling them unbounded is what costs quadratic time.
		for k := range p.in.Keys {
			if !p.dirty[k] {
				continue
			}
			if k%64 == 0 && p.expired() {
				return
			}
			if round == 0 && !p.tileFirst[k] && p.expensive(int32(k)) {
				p.state[k] = encode.KeyOpen
				continue
			}
			p.dirty[k] = false
			if p.segment(int32(k)) {
				return
			}
		}
		// Each of these passes visits every edge (tens of millions at a million
		// transactions): the limits are asked between them.
		all = p.windowEdges(append(all[:0], p.static...))
		if p.expired() {
			return
		}
		p.csr(all)
		if cyc := p.sortTopo(all); cyc || p.expired() {
			return
		}
		p.rankGraph(all)
		if p.expired() {
			return
		}
		keys := p.openKeys()
		if round >= 2 {
			// By now a key's passes rarely narrow anything unless its own writers moved.
			active := keys[:0]
			for _, k := range keys {
				if p.touched[k] {
					active = append(active, k)
				}
			}
			keys = active
		}
		clear(p.touched)
		limit := p.opts.Work
		if limit == 0 {
			limit = 1_000_000_000
		}
		{
			if per := 2 * int64(len(p.rTo)+len(p.topo)); per > 0 && int64(len(keys))*per > limit {
				keys = keys[:max(1, limit/per)]
			}
		}
		before := p.changes
		changed, stop := p.passesAll(keys, all)
		if stop {
			return
		}
		if !changed {
			return
		}
		// Later rounds narrow less and less: stop when one changes almost nothing.
		if round >= 1 && p.changes-before <= len(p.in.Writers)/500 {
			return
		}
	}
}

// expensive reports whether tiling key k without windows would consider many blocks:
// more than a few per position.
func (p *pruner) expensive(k int32) bool {
	in := p.in
	L := in.Keys[k].Trace
	if len(L) < 64 {
		return false
	}
	count := map[int32]int{}
	for _, v := range L {
		count[v]++
	}
	total := 0
	for _, w := range in.Keys[k].Writers {
		if p.live(w) && !p.pinned[w] {
			total += count[in.WriterVals[in.Writers[w].Start]]
		}
	}
	return total > 8*len(L)
}

// openKeys lists the keys some of whose live writers still have a choice, those with
// the most choice first.
func (p *pruner) openKeys() []int32 {
	var ks []int32
	var width []int64
	for k := range p.in.Keys {
		if p.thetaBase[k] < 0 || p.state[k] != encode.KeyOpen {
			continue
		}
		ks = append(ks, int32(k))
		wd := int64(0)
		for _, w := range p.in.Keys[k].Writers {
			if p.live(w) && p.win.Lo[w] != p.win.Hi[w] {
				wd += int64(min(p.win.Hi[w], int32(len(p.in.Keys[k].Trace))) - p.win.Lo[w])
			}
		}
		width = append(width, wd)
	}
	idx := make([]int, len(ks))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case width[a] > width[b]:
			return -1
		case width[a] < width[b]:
			return 1
		}
		return 0
	})
	out := make([]int32, len(ks))
	for i, j := range idx {
		out[i] = ks[j]
	}
	return out
}

func (p *pruner) csr(all []edge) {
	if p.succOff == nil {
		p.succOff = make([]int32, p.nodes+1)
	}
	clear(p.succOff)
	for i := range all {
		p.succOff[all[i].from+1]++
	}
	for v := int32(0); v < p.nodes; v++ {
		p.succOff[v+1] += p.succOff[v]
	}
	p.succ = slices.Grow(p.succ[:0], len(all))[:len(all)]
	fill := slices.Clone(p.succOff[:p.nodes])
	for i := range all {
		p.succ[fill[all[i].from]] = int32(i) // edge ids, so steps can be explained
		fill[all[i].from]++
	}
}

// sortTopo orders the nodes topologically (Kahn); a cycle is a contradiction, reported.
func (p *pruner) sortTopo(all []edge) bool {
	indeg := make([]int32, p.nodes)
	for i := range all {
		indeg[all[i].to]++
	}
	p.topo = p.topo[:0]
	for v := int32(0); v < p.nodes; v++ {
		if indeg[v] == 0 {
			p.topo = append(p.topo, v)
		}
	}
	for i := 0; i < len(p.topo); i++ {
		v := p.topo[i]
		for _, e := range p.succ[p.succOff[v]:p.succOff[v+1]] {
			u := all[e].to
			indeg[u]--
			if indeg[u] == 0 {
				p.topo = append(p.topo, u)
			}
		}
	}
	if int32(len(p.topo)) == p.nodes {
		return false
	}
	// A cycle among the nodes left: walk back along edges between them until a node
	// repeats.
	left := make([]bool, p.nodes)
	for v := range indeg {
		left[v] = indeg[v] > 0
	}
	pred := make([]int32, p.nodes)
	for i := range all {
		if left[all[i].from] && left[all[i].to] {
			pred[all[i].to] = int32(i)
		}
	}
	var v int32
	for v = 0; !left[v]; v++ {
	}
	seen := map[int32]int{}
	var path []int32
	for {
		if at, ok := seen[v]; ok {
			path = path[at:]
			break
		}
		seen[v] = len(path)
		e := pred[v]
		path = append(path, e)
		v = all[e].from
	}
	slices.Reverse(path)
	p.contradict(all, path, -1, -1)
	return true
}

// rankGraph numbers the nodes in topological order (rank) and lays the edges out in
// that order, so that the passes walk memory front to back.
func (p *pruner) rankGraph(all []edge) {
	if p.rank == nil {
		p.rank = make([]int32, p.nodes)
		p.rOff = make([]int32, p.nodes+1)
	}
	for r, v := range p.topo {
		p.rank[v] = int32(r)
	}
	clear(p.rOff)
	for i := range all {
		p.rOff[p.rank[all[i].from]+1]++
	}
	for r := int32(0); r < p.nodes; r++ {
		p.rOff[r+1] += p.rOff[r]
	}
	p.rTo = slices.Grow(p.rTo[:0], len(all))[:len(all)]
	p.rEdge = slices.Grow(p.rEdge[:0], len(all))[:len(all)]
	fill := slices.Clone(p.rOff[:p.nodes])
	for i := range all {
		r := p.rank[all[i].from]
		p.rTo[fill[r]] = p.rank[all[i].to]
		p.rEdge[fill[r]] = int32(i)
		fill[r]++
	}
}

// passesAll runs the passes of keys on two workers and applies what they narrowed, in
// key order; it reports whether any window changed, and stops at the first key (in
// order) whose passes contradict, explained.
func (p *pruner) passesAll(keys []int32, all []edge) (changed, stop bool) {
	narrow := make([][]int32, len(keys))
	contra := make([]int32, len(keys))
	for i := range contra {
		contra[i] = -1 // also for the keys left when time runs out
	}
	var next atomic.Int32
	var wg sync.WaitGroup
	batches := (len(keys) + lanes - 1) / lanes
	workers := min(2, batches)
	if p.ls[0] == nil && workers > 0 {
		p.ls[0] = p.newLaneScratch()
	}
	if p.ls[1] == nil && workers > 1 {
		p.ls[1] = p.newLaneScratch()
	}
	for wi := range workers {
		ls := p.ls[wi]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				bi := int(next.Add(1)) - 1
				if bi >= batches || p.expired() {
					return
				}
				lo := bi * lanes
				hi := min(lo+lanes, len(keys))
				if !p.passesBatch(keys[lo:hi], ls) {
					return // expired: these keys narrow nothing
				}
				for i := lo; i < hi; i++ {
					contra[i] = ls.contraV[i-lo]
					narrow[i] = append([]int32(nil), ls.narrow[i-lo]...)
				}
			}
		}()
	}
	wg.Wait()
	for i, k := range keys {
		if contra[i] >= 0 {
			if p.explain == nil {
				p.explain = p.newLaneScratch()
				p.explain.viaF = make([]int32, len(p.explain.best))
				p.explain.viaB = make([]int32, len(p.explain.best))
			}
			if !p.passesBatch([]int32{k}, p.explain) { // one key alone, keeping its paths
				return false, true // expired: the caller finds the deadline passed
			}
			if p.explain.contraV[0] < 0 {
				panic("prune: a key's passes contradict in a batch and not alone")
			}
			p.contradictAt(all, k, p.explain.contraV[0])
			return false, true
		}
		for j := 0; j < len(narrow[i]); j += 3 {
			p.setWindow(narrow[i][j], narrow[i][j+1], narrow[i][j+2])
			changed = true
		}
	}
	return changed, false
}

func (p *pruner) setWindow(w, lo, hi int32) {
	p.changes++
	p.touched[p.in.Writers[w].Key] = true
	if !p.narrowed[w] {
		p.narrowed[w] = true
		p.res.Narrowed++
	}
	p.win.Lo[w], p.win.Hi[w] = lo, hi
	p.dirty[p.in.Writers[w].Key] = true
}

// segment tiles key k within the windows and narrows its writers to the blocks that
// tile; it stops on a key that cannot be tiled within the windows (a contradiction) or
// at all (left to the encoding's diagnosis: the key alone proves the history invalid).
func (p *pruner) segment(k int32) (stop bool) {
	if p.thetaBase[k] < 0 {
		return false
	}
	for range 20 {
		again, stop := p.segmentOnce(k)
		if stop || !again {
			return stop
		}
	}
	return false
}

// segmentOnce tiles key k once; again: some window of its own writers narrowed.
func (p *pruner) segmentOnce(k int32) (again, stop bool) {
	in := p.in
	plan := in.SegmentWithin(k, p.win)
	p.state[k] = plan.State
	switch plan.State {
	case encode.KeyUnsat:
		if in.SegmentWithin(k, nil).State == encode.KeyUnsat {
			p.res.KeyUnsat = true // no attribution at all: the encoding diagnoses it
			p.res.UnsatKey = k
			return false, true
		}
		p.contradictKey(k)
		return false, true
	case encode.KeyFixed:
		// One tiling: its blocks are each writer's only viable one, and forced.
		p.lastPlan[k] = plan.Blocks
		if p.lastPlan[k] == nil {
			p.lastPlan[k] = []encode.Cand{} // tiled: an empty list allows no position
		}
		for _, w := range in.Keys[k].Writers {
			p.first[w], p.last[w], p.forced[w] = -1, -1, -1
		}
		for _, c := range plan.Blocks {
			p.first[c.Writer], p.last[c.Writer], p.forced[c.Writer] = c.Pos, c.Pos, c.Pos
		}
		return p.narrowToViable(k)
	case encode.KeyOpen:
		// Each writer's viable blocks; a boundary every tiling has (a read's cut, or 0)
		// with a single viable block forces it.
		p.lastPlan[k] = plan.Cands
		for _, w := range in.Keys[k].Writers {
			p.first[w], p.last[w], p.forced[w] = -1, -1, -1
		}
		for i, c := range plan.Cands {
			if p.first[c.Writer] < 0 {
				p.first[c.Writer] = c.Pos
			}
			p.last[c.Writer] = c.Pos
			single := (i == 0 || plan.Cands[i-1].Pos != c.Pos) && (i+1 == len(plan.Cands) || plan.Cands[i+1].Pos != c.Pos)
			if single && (c.Pos == 0 || plan.Cut[c.Pos]) {
				p.forced[c.Writer] = c.Pos
			}
		}
		return p.narrowToViable(k)
	}
	return false, false
}

// narrowToViable narrows the windows of key k's writers to the viable blocks of its
// last tiling (p.first, p.last, p.forced); again: some narrowed.
func (p *pruner) narrowToViable(k int32) (again, stop bool) {
	in := p.in
	n := int32(len(in.Keys[k].Trace))
	for _, w := range in.Keys[k].Writers {
		if p.maybe(w) {
			// If it committed: at its first viable block or later, or unobserved.
			lo := n
			if f := p.first[w]; f >= 0 {
				lo = f
			}
			if lo > p.win.Lo[w] {
				p.setWindowQuiet(w, lo, p.win.Hi[w])
				again = true
			}
			continue
		}
		if !p.live(w) {
			continue
		}
		lo, hi := p.win.Lo[w], p.win.Hi[w]
		if pos := p.forced[w]; pos >= 0 {
			lo, hi = pos, pos
		} else if f := p.first[w]; f >= 0 {
			lo = max(lo, f)
			if hi < n {
				hi = min(hi, p.last[w])
			}
		} else {
			lo = max(lo, n) // no block fits: it can only stay unobserved
		}
		if lo > hi {
			p.contradictKey(k)
			return false, true
		}
		if lo != p.win.Lo[w] || hi != p.win.Hi[w] {
			p.setWindowQuiet(w, lo, hi)
			again = true
		}
	}
	return again, false
}

// setWindowQuiet narrows w's window after tiling its own key (which needs no new tiling
// of that key, but new passes).
func (p *pruner) setWindowQuiet(w, lo, hi int32) {
	p.changes++
	p.touched[p.in.Writers[w].Key] = true
	if !p.narrowed[w] {
		p.narrowed[w] = true
		p.res.Narrowed++
	}
	p.win.Lo[w], p.win.Hi[w] = lo, hi
}

// contradictAt reports the contradiction of the passes for key k at transaction v: the
// forward path from θ(k,best) to v and the backward path from v to θ(k,least).
func (p *pruner) contradictAt(all []edge, k, v int32) {
	var fwd []int32
	ls := p.explain
	via := func(arr []int32, u int32) int32 { return arr[p.rank[u]*lanes] }
	for u := v; via(ls.viaF, u) >= 0; u = all[via(ls.viaF, u)].from {
		fwd = append(fwd, via(ls.viaF, u))
	}
	slices.Reverse(fwd)
	var bwd []int32
	for u := v; via(ls.viaB, u) >= 0; u = all[via(ls.viaB, u)].to {
		bwd = append(bwd, via(ls.viaB, u))
	}
	p.contradict(all, append(fwd, bwd...), k, v)
}

// contradictKey reports a key that cannot be tiled within the windows. It names every
// writer whose window is narrowed, :info ones included (their windows say where the
// block lies if it committed: a key whose only writers are :info has no live one), and
// counts the others, which may start anywhere, so the text never ends empty.
func (p *pruner) contradictKey(k int32) {
	in := p.in
	n := int32(len(in.Keys[k].Trace))
	var txns []int32
	var parts []string
	var free []string // the writers that may start anywhere, named while few
	freeCount, freeVals := int32(0), int32(0)
	for _, w := range in.Keys[k].Writers {
		live, maybe := p.live(w), p.maybe(w)
		if !live && !maybe {
			continue
		}
		wr := &in.Writers[w]
		txns = append(txns, wr.Txn)
		who := encode.TxnName(p.h, wr.Txn)
		if maybe {
			who += " (:info; if it committed)"
		}
		block := fmt.Sprintf("%s's block of %s", who, plural(wr.End-wr.Start, "value"))
		lo, hi := p.win.Lo[w], p.win.Hi[w]
		if lo == 0 && hi >= n {
			freeCount++
			freeVals += wr.End - wr.Start
			free = append(free, block+" at any position")
			continue
		}
		parts = append(parts, block+" at "+windowText(lo, hi, n))
	}
	switch {
	case freeCount > 4:
		other := ""
		if len(parts) > 0 {
			other = "other "
		}
		parts = append(parts, fmt.Sprintf("%d %swriters (%s in all) at any position", freeCount, other, plural(freeVals, "value")))
	case freeCount > 0:
		parts = append(parts, free...)
	case len(parts) == 0:
		parts = append(parts, "no transaction that committed or may have committed appends to it")
	}
	p.res.Contradiction = &Contradiction{Type: p.suffix(p.noTilingType()), Key: k, Txn: -1, Txns: txns,
		Text: fmt.Sprintf("key %s = %s cannot be split into whole appends of distinct transactions once each block is placed where the other keys' reads allow (positions counted from 1): %s",
			p.h.Keys[k], encode.ShortList(p.h, in.Keys[k].Trace), strings.Join(parts, "; "))}
}

// plural says "1 value", "3 values".
func plural(n int32, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// windowText says where a block may start (lo..hi are 0-based offsets into the trace
// of n values), in positions counted from 1 as every explanation counts them.
func windowText(lo, hi, n int32) string {
	switch {
	case lo >= n:
		return "no position of the trace (never observed)"
	case hi >= n:
		return fmt.Sprintf("position %d (counted from 1) or later, or never observed", lo+1)
	case lo == hi:
		return fmt.Sprintf("position %d (counted from 1)", lo+1)
	}
	return fmt.Sprintf("positions %d..%d (counted from 1)", lo+1, hi+1)
}

// contradict turns a path of graph edges into a Contradiction: a closed cycle (v < 0),
// or, for the passes of key k at transaction v, a path from θ(k,b) to v and on to
// θ(k,l) with b plus the appends on the way at least l.
func (p *pruner) contradict(all []edge, path []int32, k, v int32) {
	h, in := p.h, p.in
	name := func(t int32) string { return encode.TxnName(h, t) }
	keyName := func(k int32) string { return "key " + h.Keys[k] }
	if v < 0 {
		// Start the cycle at a transaction.
		for i, id := range path {
			if p.txnNode(all[id].from) {
				path = append(path[i:len(path):len(path)], path[:i]...)
				break
			}
		}
	}
	c := &Contradiction{Key: k, Txn: -1}
	if v >= 0 {
		c.Txn = p.txnOf(v)
	}
	describe := func(e *edge) string {
		switch e.kind {
		case eReadAfter, eReadBefore:
			r := &in.Reads[e.aux]
			return fmt.Sprintf("%s read %s with %d values", name(r.Txn), keyName(e.key), r.Len)
		case eWinAfter, eWinBefore, eCross:
			w := e.aux
			n := int32(len(in.Keys[e.key].Trace))
			how := "as " + windowBasis(p.opts.Level) + " allow"
			switch {
			case p.pinned[w] && p.opts.Level.Single:
				how = "its own reads show it there: after appending, or right before (elsewhere the block after what it read reaches it by ww edges, a G-single)"
			case p.pinned[w] && p.opts.Level.PerRead:
				how = "its own read after appending shows it there"
			case p.pinned[w]:
				how = "it read the key right before appending"
			}
			return fmt.Sprintf("%s's append of %s to %s can only start at %s (%s)", name(in.Writers[w].Txn),
				encode.ShortList(h, in.Vals(w)), keyName(e.key), windowText(p.win.Lo[w], p.win.Hi[w], n), how)
		case eProcess:
			return fmt.Sprintf("%s and %s ran on process %s in this order", name(p.txnOf(e.from)), name(p.txnOf(e.to)), h.Processes[h.Txns[p.txnOf(e.from)].Process])
		case eRealtime:
			return fmt.Sprintf("%s completed (line %d) before %s was invoked", name(p.txnOf(e.from)), h.Txns[p.txnOf(e.from)].Line, name(p.txnOf(e.to)))
		case eFirstCommitter:
			return fmt.Sprintf("under first-committer-wins, %s started after the append before its own to %s committed", name(in.Writers[e.aux].Txn), keyName(e.key))
		}
		return ""
	}
	// Each hop from a transaction to the next is one step; its kind is that of a
	// dependency: from a read to a later append (rw), from an append to a read (wr), between
	// appends (ww), between two reads (a read that missed an append the other saw: rw, wr).
	var rw, wr int
	var process, realtime bool
	var why []string
	from := int32(-1)
	var lead []string
	hopKind := func(out, into *edge) string {
		switch {
		case out.kind == eProcess || into.kind == eProcess:
			process = true
			return "process"
		case out.kind == eRealtime || into.kind == eRealtime:
			realtime = true
			return "realtime"
		}
		reader := out.kind == eReadBefore
		readBy := into.kind == eReadAfter
		switch {
		case reader && readBy:
			rw++
			wr++
			return "rw"
		case reader:
			rw++
			return "rw"
		case readBy:
			wr++
			return "wr"
		}
		return "ww"
	}
	var out *edge
	for _, id := range path {
		e := &all[id]
		if e.kind == eStartCommit {
			continue // within one transaction
		}
		if p.txnNode(e.from) {
			from, out, why = p.txnOf(e.from), e, why[:0]
		}
		if d := describe(e); d != "" && !slices.Contains(why, d) && !slices.Contains(lead, d) {
			if from < 0 {
				lead = append(lead, d)
			} else {
				why = append(why, d)
			}
		}
		if p.txnNode(e.to) && from >= 0 {
			to := p.txnOf(e.to)
			st := Step{From: from, To: to, Kind: hopKind(out, e), Key: e.key,
				Why: fmt.Sprintf("%s < %s because %s", name(from), name(to), strings.Join(why, ", and ")), Read: -1}
			if out.kind == eReadBefore && out.aux >= 0 {
				st.Read = p.in.Reads[out.aux].Op
			}
			c.Steps = append(c.Steps, st)
			c.Txns = append(c.Txns, from)
			from, why = to, why[:0]
		}
	}
	var lines []string
	if len(lead) > 0 {
		lines = append(lines, "Before "+name(c.firstTxn(v))+", "+keyName(k)+" already had the values up to where "+strings.Join(lead, ", and "))
	}
	for _, s := range c.Steps {
		lines = append(lines, s.Why)
	}
	if v >= 0 {
		if tv := p.txnOf(v); len(c.Steps) == 0 || c.Steps[len(c.Steps)-1].To != tv && !slices.Contains(c.Txns, tv) {
			c.Txns = append(c.Txns, tv)
		}
		if from >= 0 && len(why) > 0 {
			lines = append(lines, "after "+name(from)+", "+keyName(k)+" has fewer values than where "+strings.Join(why, ", and "))
		}
		lines = append(lines, fmt.Sprintf("counting the values each of them appends to %s, %s would have to run after %s had %d values and finish with fewer: no attribution of the duplicates to appends allows that",
			keyName(k), name(p.txnOf(v)), keyName(k), p.explain.best[p.rank[v]*lanes]))
		// The list's own order closes the cycle: the last transaction precedes the first.
		rw++
	} else if len(c.Steps) > 0 {
		lines = append(lines, fmt.Sprintf("so %s would precede itself: a cycle", name(c.Steps[0].From)))
	}
	c.Text = strings.Join(lines, "; ")
	if p.opts.Level.PerRead {
		// The per-read graph has no anti-dependency: what closes the cycle there is the
		// key's version order (ww), and reads give wr edges only.
		rw = 0
	}
	c.Type = p.suffix(encode.CycleType(rw, wr, p.split, process, realtime))
	if p.opts.Level.Single {
		// Its windows rest on the G-cursor pins and on paths with one rw edge, each
		// kept because the alternative closes a cycle with at most one: named by the
		// more permissive of the two kinds the level's models forbid.
		c.Type = "G-single"
	}
	p.res.Contradiction = c
}

// noTilingType names a key that cannot be tiled within the windows, a violation with
// no single cycle to show: as the most permissive cycle the level's graph can close
// (per read, with no rw edge: G1c; else G2-item, or in snapshot isolation's split
// graph, where two rw edges are never adjacent, G-nonadjacent), so the name is one the
// level's models forbid (snapshot isolation allows G2-item).
func (p *pruner) noTilingType() string {
	if p.opts.Level.Single {
		return "G-single" // as the level's contradictions
	}
	if p.opts.Level.PerRead {
		return cycleType(0, 1, false, false)
	}
	return encode.CycleType(2, 0, p.split, false, false)
}

// suffix marks a contradiction with the strongest order of the level: the windows it
// rests on may have been narrowed through that order even where its last cycle is not.
func (p *pruner) suffix(typ string) string {
	if strings.HasSuffix(typ, "-realtime") || strings.HasSuffix(typ, "-process") && !p.opts.Level.Realtime {
		return typ
	}
	typ = strings.TrimSuffix(typ, "-process")
	switch {
	case p.opts.Level.Realtime:
		return typ + "-realtime"
	case p.opts.Level.Process:
		return typ + "-process"
	}
	return typ
}

func (c *Contradiction) firstTxn(int32) int32 {
	if len(c.Steps) > 0 {
		return c.Steps[0].From
	}
	return c.Txn
}

// cycleType names a cycle of the serializable family's graph (encode.CycleType).
func cycleType(rw, wr int, process, realtime bool) string {
	return encode.CycleType(rw, wr, false, process, realtime)
}

// NoAttributionType names a violation proved without a single cycle to show: as the
// cycles of several attributions with at least two anti-dependencies would be (the most
// permissive name: G2-item, or in snapshot isolation's split graph, where two are never
// adjacent, G-nonadjacent), marked with the strongest order the proof may use.
func NoAttributionType(split, process, realtime bool) string {
	p := &pruner{opts: Options{Level: Level{Process: process, Realtime: realtime}}}
	return p.suffix(encode.CycleType(2, 0, split, false, false))
}

// windowBasis names what narrowed a writer's window at level lv: the other keys' reads
// and the level's own orders (the per-read levels narrow with process order, and with
// real time at the strong one).
func windowBasis(lv Level) string {
	process := lv.Process || lv.PerRead
	switch {
	case process && lv.Realtime:
		return "the other keys' reads, process and real-time order"
	case lv.Realtime:
		return "the other keys' reads and real-time order"
	case process:
		return "the other keys' reads and process order"
	}
	return "the other keys' reads"
}
