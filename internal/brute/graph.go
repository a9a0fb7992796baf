package brute

import (
	"fmt"
	"strings"

	"doppel/history"
)

// This file is the oracle for every model, from the dependency graph (DESIGN.md,
// "Consistency models"): it enumerates attributions — which :info transactions
// committed and, per key, the version order of the committed appenders' blocks — keeps
// those every read is consistent with, builds the graph of each and looks for a cycle
// among the edge kinds the model forbids. It shares nothing with the execution oracle in
// check.go (which replays commit orders against real lists): the two are compared on
// the models both decide.

// More model names, as in Elle.
const (
	ReadCommitted                  = "read-committed"
	StrongSessionReadCommitted     = "strong-session-read-committed"
	StrongReadCommitted            = "strong-read-committed"
	RepeatableRead                 = "repeatable-read"
	StrongSessionSnapshotIsolation = "strong-session-snapshot-isolation"
	StrongSnapshotIsolation        = "strong-snapshot-isolation"
	MonotonicAtomicView            = "monotonic-atomic-view"
	MonotonicView                  = "monotonic-view"
	MonotonicSnapshotRead          = "monotonic-snapshot-read"
	CursorStability                = "cursor-stability"
	ConsistentView                 = "consistent-view"
	ForwardConsistentView          = "forward-consistent-view"
	UpdateSerializable             = "update-serializable"
)

// GraphModels lists every model CheckGraph decides.
var GraphModels = []string{
	ReadCommitted, StrongSessionReadCommitted, StrongReadCommitted, RepeatableRead,
	Serializable, StrongSessionSerializable, StrictSerializable,
	SnapshotIsolation, StrongSessionSnapshotIsolation, StrongSnapshotIsolation,
	MonotonicAtomicView, MonotonicView, MonotonicSnapshotRead, CursorStability,
	ConsistentView, ForwardConsistentView, UpdateSerializable,
	ReadUncommitted, StrongSessionReadUncommitted, StrongReadUncommitted,
}

// graphModel is what a model's graph holds.
type graphModel struct {
	perRead  bool // each read its own observation (reads of a key in a txn need not agree)
	rw       bool // anti-dependencies are in the graph
	split    bool // start and commit nodes (snapshot isolation)
	process  bool
	realtime bool
	// single: only cycles with no rw edge or exactly one are forbidden (G2 allowed).
	single bool
	// lostUpdate: Elle's lost update is forbidden (two :ok transactions read the same
	// list of a key before appending to it).
	lostUpdate bool
}

var graphModels = map[string]graphModel{
	ReadCommitted:              {perRead: true},
	StrongSessionReadCommitted: {perRead: true, process: true},
	StrongReadCommitted:        {perRead: true, process: true, realtime: true},
	// Every cycle forbidden makes the per-read freedom moot except for reads that miss
	// the transaction's own write, which repeatable read rejects as internal (a
	// non-repeatable read, DESIGN.md): one base, like serializable.
	RepeatableRead:                 {rw: true},
	Serializable:                   {rw: true},
	StrongSessionSerializable:      {rw: true, process: true},
	StrictSerializable:             {rw: true, process: true, realtime: true},
	SnapshotIsolation:              {rw: true, split: true},
	StrongSessionSnapshotIsolation: {rw: true, split: true, process: true},
	StrongSnapshotIsolation:        {rw: true, split: true, process: true, realtime: true},
	// Elle's models between read committed and serializable: what they forbid beyond
	// read committed that Elle's list-append reports is lost-update (cursor stability)
	// and G-single (consistent view and up, with per-read attributions).
	MonotonicAtomicView:   {perRead: true},
	MonotonicView:         {perRead: true},
	MonotonicSnapshotRead: {perRead: true},
	CursorStability:       {perRead: true, lostUpdate: true},
	ConsistentView:        {perRead: true, rw: true, single: true, lostUpdate: true},
	ForwardConsistentView: {perRead: true, rw: true, single: true, lostUpdate: true},
	UpdateSerializable:    {perRead: true, rw: true, single: true, lostUpdate: true},
}

// obs is one known read of a committed :ok transaction: P ++ O, O the transaction's
// own earlier appends to the key.
type obs struct {
	txn  int
	p    []int32 // the part before the own appends
	own  int     // len(O)
	orig int     // index among all observations (for one-base grouping)
	// version (per read only): the read misses its transaction's own earlier appends.
	// It still shows a state of the key (Elle's version order takes it in): p, the
	// whole read, is a prefix of the key's list and ends at a block boundary or inside
	// the reader's own block; it gives no edge (it is not an external read).
	version bool
}

// block is one committed transaction's appends to a key.
type block struct {
	txn  int
	vals []int32
}

// CheckGraph reports whether h satisfies model by the graph definition, or an error
// for an unknown model or a malformed or too large history.
func CheckGraph(h *history.History, model string) (bool, error) {
	if u, ok := uncommittedModels[model]; ok {
		if err := validate(h); err != nil {
			return false, err
		}
		return checkUncommitted(h, u), nil
	}
	spec, ok := graphModels[model]
	if !ok {
		return false, fmt.Errorf("brute: unknown model %q (graph models: %s)", model, strings.Join(GraphModels, ", "))
	}
	if err := validate(h); err != nil {
		return false, err
	}
	if spec.lostUpdate && lostUpdate(h) {
		return false, nil
	}
	g := &graphSearch{h: h, spec: spec, n: len(h.Txns)}
	if !g.collect() {
		return false, nil
	}
	for sub := uint64(0); ; sub = (sub - g.optional) & g.optional {
		if g.tryCommitted(g.ok | sub) {
			return true, nil
		}
		if sub == g.optional {
			break
		}
	}
	return false, nil
}

type graphSearch struct {
	h        *history.History
	spec     graphModel
	n, keys  int
	ok       uint64
	optional uint64
	reads    [][]obs // per key
	// per candidate commit set:
	orders [][]keyOrder // per key: the version orders consistent with the reads
	edges  []gedge
	rw     []gedge // single: the anti-dependencies, apart from edges
}

type gedge struct{ from, to int32 }

// keyOrder is one version order of a key, as the edges it gives (plain graph, with
// kinds; the split graph is derived).
type keyOrder struct {
	ww, wr, rw []gedge
	// txns are the writers in list order, starts their blocks' starts, total the
	// list's length (for Attributions).
	txns   []int
	starts []int
	total  int
}

// collect gathers the reads and checks what no attribution can fix: a read must end
// with its transaction's own earlier appends (internal), and for one-base models all
// reads of a key in a transaction must share P.
func (g *graphSearch) collect() bool {
	h := g.h
	g.keys = len(h.Keys)
	for _, op := range h.Ops {
		g.keys = max(g.keys, int(op.Key)+1)
	}
	g.reads = make([][]obs, g.keys)
	count := 0
	for t := 0; t < g.n; t++ {
		appends := false
		for _, op := range h.TxnOps(t) {
			appends = appends || op.Kind == history.Append
		}
		switch h.Txns[t].Status {
		case history.OK:
			g.ok |= 1 << t
		case history.Info:
			if appends {
				g.optional |= 1 << t
			}
		}
		if h.Txns[t].Status != history.OK {
			continue
		}
		own := map[int32][]int32{}
		base := map[int32][]int32{}
		for _, op := range h.TxnOps(t) {
			if op.Kind == history.Append {
				own[op.Key] = append(own[op.Key], op.Value)
				continue
			}
			if !op.Known {
				continue
			}
			r := h.ReadValues[op.Start:op.End]
			o := own[op.Key]
			plen := len(r) - len(o)
			if plen < 0 || !equal(r[plen:], o) {
				// internal: the read misses the transaction's own write. Models that
				// allow internal anomalies (per read) keep it as a state of the key.
				if g.spec.perRead {
					g.reads[op.Key] = append(g.reads[op.Key], obs{txn: t, p: r, orig: count, version: true})
					count++
					continue
				}
				return false
			}
			p := r[:plen]
			if !g.spec.perRead {
				if b, seen := base[op.Key]; seen && !equal(b, p) {
					return false // internal: two bases in one transaction
				}
				base[op.Key] = p
			}
			g.reads[op.Key] = append(g.reads[op.Key], obs{txn: t, p: p, own: len(o), orig: count})
			count++
		}
	}
	return true
}

// tryCommitted reports whether some version orders of exactly the committed
// transactions give a graph without the model's cycles.
func (g *graphSearch) tryCommitted(committed uint64) bool {
	g.orders = g.orders[:0]
	for x := 0; x < g.keys; x++ {
		orders := g.keyOrders(x, g.blocksOf(x, committed))
		if len(orders) == 0 {
			return false
		}
		g.orders = append(g.orders, orders)
	}
	g.edges = g.edges[:0]
	g.orderEdges(committed)
	return g.combine(0, committed)
}

// blocksOf lists the committed transactions' blocks on key x.
func (g *graphSearch) blocksOf(x int, committed uint64) []block {
	var blocks []block
	for t := 0; t < g.n; t++ {
		if committed&(1<<t) == 0 {
			continue
		}
		var vals []int32
		for _, op := range g.h.TxnOps(t) {
			if op.Kind == history.Append && int(op.Key) == x {
				vals = append(vals, op.Value)
			}
		}
		if len(vals) > 0 {
			blocks = append(blocks, block{txn: t, vals: vals})
		}
	}
	return blocks
}

// keyOrders enumerates the permutations of blocks whose concatenation every read of
// key x is consistent with, and returns each as its edges.
func (g *graphSearch) keyOrders(x int, blocks []block) []keyOrder {
	var out []keyOrder
	reads := g.reads[x]
	used := make([]bool, len(blocks))
	var seq []int    // block indices in order
	var list []int32 // concatenation so far
	var starts []int
	var rec func()
	rec = func() {
		if len(seq) == len(blocks) {
			if ko, ok := g.finishOrder(reads, blocks, seq, starts, len(list)); ok {
				out = append(out, ko)
			}
			return
		}
		for i := range blocks {
			if used[i] {
				continue
			}
			start := len(list)
			list = append(list, blocks[i].vals...)
			end := len(list)
			ok := true
			for _, r := range reads {
				// The read's P must agree with the list where both reach, and must not
				// end strictly inside this block (an intermediate read).
				n := min(len(r.p), end)
				if n > start && !equal(list[start:n], r.p[start:n]) {
					ok = false
					break
				}
				if len(r.p) > start && len(r.p) < end && !(r.version && blocks[i].txn == r.txn) {
					ok = false
					break
				}
				// A read after own appends places its transaction's block right after P.
				if r.own > 0 && blocks[i].txn == r.txn && start != len(r.p) {
					ok = false
					break
				}
			}
			if ok {
				used[i] = true
				seq = append(seq, i)
				starts = append(starts, start)
				rec()
				seq, starts = seq[:len(seq)-1], starts[:len(starts)-1]
				used[i] = false
			}
			list = list[:start]
		}
	}
	rec()
	return out
}

// finishOrder checks the reads against a complete order of length total and returns
// its edges.
func (g *graphSearch) finishOrder(reads []obs, blocks []block, seq, starts []int, total int) (keyOrder, bool) {
	var ko keyOrder
	for _, r := range reads {
		if len(r.p) > total {
			return ko, false // the read shows more than the committed appends
		}
	}
	ko.total = total
	for j := range seq {
		ko.txns = append(ko.txns, blocks[seq[j]].txn)
		ko.starts = append(ko.starts, starts[j])
	}
	for j := 1; j < len(seq); j++ {
		ko.ww = append(ko.ww, gedge{int32(blocks[seq[j-1]].txn), int32(blocks[seq[j]].txn)})
	}
	for _, r := range reads {
		if r.version {
			continue
		}
		p := len(r.p)
		// The block ending at p, and the one starting there.
		for j := range seq {
			b := &blocks[seq[j]]
			if p > 0 && starts[j]+len(b.vals) == p {
				ko.wr = append(ko.wr, gedge{int32(b.txn), int32(r.txn)}) // self: a future read
			}
			if r.own == 0 && starts[j] == p && b.txn != r.txn {
				ko.rw = append(ko.rw, gedge{int32(r.txn), int32(b.txn)})
			}
		}
	}
	return ko, true
}

// orderEdges adds the process and real-time edges among committed transactions.
func (g *graphSearch) orderEdges(committed uint64) {
	for a := 0; a < g.n; a++ {
		for b := 0; b < g.n; b++ {
			if a == b || committed&(1<<a) == 0 || committed&(1<<b) == 0 {
				continue
			}
			if g.spec.process && processBefore(g.h, a, b) || g.spec.realtime && realTimeBefore(g.h, a, b) {
				g.edges = append(g.edges, g.orderEdge(a, b))
			}
		}
	}
}

// Nodes of the split graph: start 2t, commit 2t+1.
func (g *graphSearch) orderEdge(a, b int) gedge {
	if g.spec.split {
		return gedge{int32(2*a + 1), int32(2 * b)}
	}
	return gedge{int32(a), int32(b)}
}

// combine picks a version order per key from key x on and tests the graph.
func (g *graphSearch) combine(x int, committed uint64) bool {
	if x == len(g.orders) {
		return g.acyclic(committed) && (!g.spec.single || !g.closesSingle())
	}
	mark, rwMark := len(g.edges), len(g.rw)
	for _, ko := range g.orders[x] {
		g.edges, g.rw = g.edges[:mark], g.rw[:rwMark]
		g.addOrder(ko)
		if g.combine(x+1, committed) {
			return true
		}
	}
	g.edges, g.rw = g.edges[:mark], g.rw[:rwMark]
	return false
}

// addOrder adds a key's version order's edges to the graph.
func (g *graphSearch) addOrder(ko keyOrder) {
	for _, e := range ko.ww {
		g.edges = append(g.edges, g.orderEdge(int(e.from), int(e.to)))
	}
	for _, e := range ko.wr {
		g.edges = append(g.edges, g.orderEdge(int(e.from), int(e.to)))
	}
	if g.spec.single {
		g.rw = append(g.rw, ko.rw...)
	} else if g.spec.rw {
		for _, e := range ko.rw {
			if g.spec.split {
				g.edges = append(g.edges, gedge{2 * e.from, 2*e.to + 1})
			} else {
				g.edges = append(g.edges, e)
			}
		}
	}
}

// acyclic reports whether the graph of the current edges (plus start -> commit in the
// split graph) has no cycle; a self-loop is a cycle.
func (g *graphSearch) acyclic(committed uint64) bool {
	nodes := g.n
	if g.spec.split {
		nodes = 2 * g.n
	}
	adj := make([][]int32, nodes)
	for _, e := range g.edges {
		adj[e.from] = append(adj[e.from], e.to)
	}
	if g.spec.split {
		for t := 0; t < g.n; t++ {
			if committed&(1<<t) != 0 {
				adj[2*t] = append(adj[2*t], int32(2*t+1))
			}
		}
	}
	const white, grey, black = 0, 1, 2
	color := make([]uint8, nodes)
	var visit func(v int32) bool
	visit = func(v int32) bool {
		color[v] = grey
		for _, w := range adj[v] {
			if color[w] == grey {
				return false
			}
			if color[w] == white && !visit(w) {
				return false
			}
		}
		color[v] = black
		return true
	}
	for v := range nodes {
		if color[v] == white && !visit(int32(v)) {
			return false
		}
	}
	return true
}

// closesSingle reports whether some anti-dependency a -> b has b reaching a by the other
// edges: a cycle with exactly one rw edge (G-single). (Reachability from b, by depth-first
// search, per rw edge: the histories are tiny.)
func (g *graphSearch) closesSingle() bool {
	adj := make([][]int32, g.n)
	for _, e := range g.edges {
		adj[e.from] = append(adj[e.from], e.to)
	}
	for _, rw := range g.rw {
		seen := make([]bool, g.n)
		stack := []int32{rw.to}
		seen[rw.to] = true
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if v == rw.from {
				return true
			}
			for _, w := range adj[v] {
				if !seen[w] {
					seen[w] = true
					stack = append(stack, w)
				}
			}
		}
	}
	return false
}

// lostUpdate reports whether two :ok transactions each read a key (their first read of
// it, before their first append to it) and then appended to it, having read the same
// list: Elle's lost-update, which holds whatever the attribution.
func lostUpdate(h *history.History) bool {
	type readThenAppend struct {
		key  int32
		read []int32
	}
	var seen []readThenAppend
	for t := range h.Txns {
		if h.Txns[t].Status != history.OK {
			continue
		}
		firstRead := map[int32][]int32{}
		hasRead := map[int32]bool{}
		appended := map[int32]bool{}
		for _, op := range h.TxnOps(t) {
			switch {
			case op.Kind == history.Read && !hasRead[op.Key] && !appended[op.Key]:
				hasRead[op.Key] = true
				if op.Known {
					firstRead[op.Key] = h.ReadValues[op.Start:op.End]
				}
			case op.Kind == history.Append && !appended[op.Key]:
				appended[op.Key] = true
				r, ok := firstRead[op.Key]
				if !ok {
					continue
				}
				for _, o := range seen {
					if o.key == op.Key && equal(o.read, r) {
						return true
					}
				}
				seen = append(seen, readThenAppend{op.Key, r})
			}
		}
	}
	return false
}
