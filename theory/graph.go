// Package theory implements the graph-acyclicity theory used by the CDCL solver
// (package sat): a directed graph whose edges are guarded by conjunctions of
// solver literals, kept acyclic over the enabled edges.
//
// An edge is enabled when every literal of its guard is true; an edge with an
// empty guard is known (always enabled). The enabled edges are kept in an
// incremental topological order (Pearce–Kelly). Enabling an edge that closes a
// cycle is a conflict whose clause negates the guards along the cycle. When all
// guard literals of an edge but one are true and its head already reaches its
// tail, the last literal is forced false (theory propagation). Such edges are
// found when their guard gets down to one literal (a search bounded by the
// topological order) and, after each enabling u->v, by a bounded look-ahead
// over the live edges (one unassigned literal left) near it, whose own search
// trees give the reason path.
//
// Backtracking is cheap: enabled edges are removed in stack order and the
// topological order is left as it is, since an order valid for a set of edges
// stays valid for any subset.
package theory

import (
	"slices"

	"doppel/internal/slicesx"
	"doppel/sat"
)

// Stats counts the theory's work.
type Stats struct {
	Conflicts      int64 // cycles found
	Propagations   int64 // literals implied by the theory
	Enabled        int64 // edge enablings (known edges included)
	Reorders       int64 // nodes repositioned by Pearce–Kelly
	Searches       int64 // reachability searches made for propagation
	Visited        int64 // nodes visited by those searches
	LookAhead      int64 // literals implied by the look-ahead (included in Propagations)
	LookAheadNodes int64 // nodes visited by the look-ahead's searches (forward and backward)
}

// Graph is the acyclicity theory. Build it with NewGraph and AddEdge, call
// Init, then hand it to the solver with SetTheory.
type Graph struct {
	// Propagation enables theory propagation (on by default).
	Propagation bool
	// SearchLimit bounds the nodes one propagation reachability search may
	// visit; a search that hits it gives up (no implication, still sound).
	SearchLimit int
	// NeighbourLimit bounds, after each edge enabling u->v, the nodes explored
	// forward from v and backward from u to find guarded edges that the new
	// edge turned into cycle closers (0 disables that look-ahead).
	NeighbourLimit int
	// ForwardLimit bounds the nodes of the look-ahead's forward part (from v;
	// 0 or more than NeighbourLimit: NeighbourLimit).
	ForwardLimit int
	// Stop, when set, is asked every stopEvery known edges Init inserts (on a large
	// problem whose start order disagrees with them, Pearce–Kelly's reorders take
	// seconds); true stops Init, which sets Stopped: the graph is then unusable.
	Stop    func() bool
	Stopped bool
	// OnCycle, when set, sees every cycle the theory meets: each conflict's, and each
	// implication's (the edge it turns off, then the path that would close it), as edge
	// ids. The slice is the theory's: copy what is kept.
	OnCycle func(edges []int32)

	Stats Stats

	nodes int

	// Edges, flat. Guards are deduplicated literals in guardLits[guardStart[e]:guardStart[e+1]].
	from, to   []int32
	guardStart []int32
	guardLits  []sat.Lit

	// Per literal (indexed by sat.Lit), the edges whose guard contains it
	// (CSR, built by Init).
	watchStart []int32
	watchEdges []int32

	// Static out-adjacency of guarded edges per node (CSR, built by Init), for
	// the look-ahead after an enabling.
	guardedOutStart []int32
	guardedOut      []int32

	// remaining[e] is the number of guard literals of e not yet seen true.
	remaining []int32
	// With propagation on (tracking): falseLits[e] is the number of guard
	// literals of e seen false. A guarded edge is live when it is one
	// unassigned literal from enabled (remaining 1, falseLits 0). liveEdges
	// is guardedOut with each node's live edges first: x's are
	// liveEdges[guardedOutStart[x]:][:liveOut[x]], and livePos[e] is e's
	// index there. The look-ahead scans only those.
	tracking  bool
	falseLits []int32
	liveOut   []int32
	liveEdges []int32
	liveTo    []int32 // liveTo[i] = to[liveEdges[i]]: the look-ahead reads heads without a random access
	livePos   []int32
	enabled   []bool

	// Pearce–Kelly order: ord[node] = position, nodeAt[position] = node.
	ord    []int32
	nodeAt []int32

	// Adjacency of enabled edges (edge ids); enabling appends, backtracking pops.
	out, in [][]int32
	// outTo[x][k] = to[out[x][k]] and inFrom[x][k] = from[in[x][k]]: the
	// searches read the neighbour without a random access to to/from.
	outTo, inFrom [][]int32

	// Undo log of enabled guarded edges, with the trail position that enabled them.
	enabledLog    []int32
	enabledLogPos []int32

	// Trail literals processed so far (seenLits[i] is trail position i).
	seenLits []sat.Lit

	// Edges to check for propagation once the trail is processed.
	pending []int32

	// Reasons of implied literals, in trail order.
	reasons    []reason
	reasonPath []int32
	reasonOf   []int32 // per variable: index into reasons (validated on use)

	// Scratch for searches.
	markF, markB []uint32 // per node visit stamps
	stampF       uint32
	stampB       uint32
	parent       []int32  // per node: edge by which a search reached it
	parentB      []int32  // per node: edge by which the look-ahead's (or reorder's) backward search reached it
	distF, distB []int32  // per node: reorder's breadth-first distance from v / to u (valid under the stamps)
	headMark     []uint32 // per node, stamped with stampB: a look-ahead candidate's head
	queue        []int32
	backList     []int32
	candidates   []int32 // look-ahead: edges that would close a cycle if u's backward search finds their head
	posScratch   []int32
	nodeScratch  []int32
	litMark      []uint32 // per literal stamp, for deduplicating clauses
	litStamp     uint32
	cycle        []int32 // last cycle found (LastCycle)
	onCycleBuf   []int32 // an implication's cycle, for OnCycle
	path         []int32 // path found by reaches
	inited       bool
	solver       *sat.Solver // during Propagate
	implied      bool        // a literal was implied since the flag was cleared
	knownCycle   bool
	initPending  bool
	numLits      int
	clauseBuffer []sat.Lit
	startOrder   []int32 // SetInitialOrder's, if any
}

type reason struct {
	lit       sat.Lit // the implied literal
	pos       int32   // its trail position
	edge      int32   // the edge whose last guard literal it negates
	pathStart int32   // path (edge ids) from the edge's head to its tail
	pathEnd   int32
}

// NewGraph returns a graph over nodes 0..nodes-1 with no edges.
func NewGraph(nodes int) *Graph {
	if nodes < 0 {
		nodes = 0
	}
	g := &Graph{
		Propagation:    true,
		SearchLimit:    4096,
		NeighbourLimit: 128,
		ForwardLimit:   16,
		nodes:          nodes,
		guardStart:     []int32{0},
		ord:            make([]int32, nodes),
		nodeAt:         make([]int32, nodes),
		out:            make([][]int32, nodes),
		in:             make([][]int32, nodes),
		outTo:          make([][]int32, nodes),
		inFrom:         make([][]int32, nodes),
		markF:          make([]uint32, nodes),
		markB:          make([]uint32, nodes),
		parent:         make([]int32, nodes),
		parentB:        make([]int32, nodes),
		distF:          make([]int32, nodes),
		distB:          make([]int32, nodes),
		headMark:       make([]uint32, nodes),
	}
	for i := range nodes {
		g.ord[i] = int32(i)
		g.nodeAt[i] = int32(i)
	}
	return g
}

// Nodes returns the number of nodes.
func (g *Graph) Nodes() int { return g.nodes }

// Edges returns the number of edges.
func (g *Graph) Edges() int { return len(g.from) }

// AddEdge adds the edge from->to enabled when every literal of guard is true
// and returns its id. The guard is copied (duplicate literals dropped). Call
// before Init. It returns -1 if a node is out of range or Init was called.
func (g *Graph) AddEdge(from, to int, guard []sat.Lit) int {
	if g.inited || from < 0 || to < 0 || from >= g.nodes || to >= g.nodes {
		return -1
	}
	for _, l := range guard {
		if l < 0 {
			return -1
		}
	}
	start := len(g.guardLits)
	for _, l := range guard {
		if !slices.Contains(g.guardLits[start:], l) {
			g.guardLits = append(g.guardLits, l)
		}
		if int(l)+2 > g.numLits {
			g.numLits = int(l|1) + 1
		}
	}
	g.from = append(g.from, int32(from))
	g.to = append(g.to, int32(to))
	g.guardStart = append(g.guardStart, int32(len(g.guardLits)))
	return len(g.from) - 1
}

// Reserve makes room for edges more edges with guardLits guard literals in all, before
// they are added (millions of edges otherwise grow the slices by doubling).
func (g *Graph) Reserve(edges, guardLits int) {
	g.from = slicesx.Reserve(g.from, edges)
	g.to = slicesx.Reserve(g.to, edges)
	g.guardStart = slicesx.Reserve(g.guardStart, edges)
	g.guardLits = slicesx.Reserve(g.guardLits, guardLits)
}

// Edge returns an edge's endpoints and guard (deduplicated; do not modify).
func (g *Graph) Edge(id int) (from, to int, guard []sat.Lit) {
	if id < 0 || id >= len(g.from) {
		return -1, -1, nil
	}
	return int(g.from[id]), int(g.to[id]), g.guard(int32(id))
}

func (g *Graph) guard(e int32) []sat.Lit {
	return g.guardLits[g.guardStart[e]:g.guardStart[e+1]]
}

// Init must be called after all AddEdge calls and before solving. It inserts
// the known (unguarded) edges; if they already form a cycle it returns that
// cycle's edge ids and the problem is unsatisfiable outright (do not solve:
// Propagate would then report an empty conflict clause).
func (g *Graph) Init() (cycle []int) {
	if g.inited {
		if g.knownCycle {
			return g.LastCycle()
		}
		return nil
	}
	g.inited = true
	m := len(g.from)
	g.remaining = make([]int32, m)
	g.enabled = make([]bool, m)
	g.litMark = make([]uint32, g.numLits)
	g.reasonOf = make([]int32, g.numLits/2+1)

	// Watch lists, CSR.
	g.watchStart = make([]int32, g.numLits+1)
	for _, l := range g.guardLits {
		g.watchStart[l+1]++
	}
	for i := 1; i <= g.numLits; i++ {
		g.watchStart[i] += g.watchStart[i-1]
	}
	g.watchEdges = make([]int32, len(g.guardLits))
	fill := slices.Clone(g.watchStart[:g.numLits])
	for e := range m {
		for _, l := range g.guard(int32(e)) {
			g.watchEdges[fill[l]] = int32(e)
			fill[l]++
		}
	}

	// Static adjacency of guarded edges, CSR.
	g.guardedOutStart = make([]int32, g.nodes+1)
	for e := range m {
		if g.guardStart[e+1] > g.guardStart[e] {
			g.guardedOutStart[g.from[e]+1]++
		}
	}
	for i := 1; i <= g.nodes; i++ {
		g.guardedOutStart[i] += g.guardedOutStart[i-1]
	}
	g.guardedOut = make([]int32, g.guardedOutStart[g.nodes])
	fillOut := slices.Clone(g.guardedOutStart[:g.nodes])
	for e := range m {
		if g.guardStart[e+1] > g.guardStart[e] {
			g.guardedOut[fillOut[g.from[e]]] = int32(e)
			fillOut[g.from[e]]++
		}
	}

	if g.startOrder != nil {
		for pos, x := range g.startOrder {
			g.ord[x] = int32(pos)
			g.nodeAt[pos] = x
		}
	} else {
		g.initialOrder()
	}
	g.tracking = g.Propagation && g.NeighbourLimit > 0
	if g.tracking {
		g.falseLits = make([]int32, m)
		g.liveOut = make([]int32, g.nodes)
		g.liveEdges = slices.Clone(g.guardedOut)
		g.liveTo = make([]int32, len(g.liveEdges))
		g.livePos = make([]int32, m)
		for i, e := range g.liveEdges {
			g.livePos[e] = int32(i)
			g.liveTo[i] = g.to[e]
		}
	}
	for e := range m {
		n := g.guardStart[e+1] - g.guardStart[e]
		g.remaining[e] = n
		if n == 1 && g.tracking {
			g.setLive(int32(e))
		}
		if g.Stop != nil && e%stopEvery == stopEvery-1 && g.Stop() {
			g.Stopped = true
			return nil
		}
		if n == 0 {
			if !g.insert(int32(e)) {
				g.knownCycle = true
				return g.LastCycle()
			}
			g.enabled[e] = true
			g.Stats.Enabled++
		}
	}
	g.initPending = true
	return nil
}

// stopEvery: Init asks Stop once per this many edges.
const stopEvery = 4096

// SetInitialOrder gives the order of nodes Pearce–Kelly starts from (a permutation
// of 0..Nodes()-1), instead of one derived from all edges. A caller that knows which
// edges the search will probably enable (its phases) passes a topological order of
// those, so that enabling them rarely has to reorder. Call before Init.
func (g *Graph) SetInitialOrder(order []int32) {
	if len(order) != g.nodes {
		panic("theory: SetInitialOrder needs a permutation of all nodes")
	}
	seen := make([]bool, g.nodes)
	for _, x := range order {
		if x < 0 || int(x) >= g.nodes || seen[x] {
			panic("theory: SetInitialOrder needs a permutation of all nodes")
		}
		seen[x] = true
	}
	g.startOrder = order
}

// initialOrder starts the topological order as a reverse DFS postorder of all
// edges, guarded ones included: any permutation is a valid start for
// Pearce–Kelly, and this one already agrees with every edge of a DAG-ish graph,
// so enablings rarely have to reorder.
func (g *Graph) initialOrder() {
	n := g.nodes
	outStart := make([]int32, n+1)
	for _, u := range g.from {
		outStart[u+1]++
	}
	for i := 1; i <= n; i++ {
		outStart[i] += outStart[i-1]
	}
	outTo := make([]int32, len(g.from))
	next := slices.Clone(outStart[:n]) // fill cursor, then DFS edge cursor
	for e, u := range g.from {
		outTo[next[u]] = g.to[e]
		next[u]++
	}
	copy(next, outStart[:n])
	visited := make([]bool, n)
	pos := int32(n)
	var stack []int32
	for root := range int32(n) {
		if visited[root] {
			continue
		}
		visited[root] = true
		stack = append(stack[:0], root)
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			if next[x] < outStart[x+1] {
				w := outTo[next[x]]
				next[x]++
				if !visited[w] {
					visited[w] = true
					stack = append(stack, w)
				}
				continue
			}
			stack = stack[:len(stack)-1]
			pos--
			g.ord[x] = pos
			g.nodeAt[pos] = x
		}
	}
}

// LastCycle returns the edge ids of the last cycle found (a conflict, or the
// known cycle reported by Init), in path order ending with the closing edge.
func (g *Graph) LastCycle() []int {
	c := make([]int, len(g.cycle))
	for i, e := range g.cycle {
		c[i] = int(e)
	}
	return c
}

// Order returns a topological order of all nodes consistent with the enabled
// edges (after a Sat answer: with the model's edges).
func (g *Graph) Order() []int {
	o := make([]int, g.nodes)
	for i, n := range g.nodeAt {
		o[i] = int(n)
	}
	return o
}

// Propagate implements sat.Theory.
func (g *Graph) Propagate(s *sat.Solver) []sat.Lit {
	if !g.inited {
		if g.Init() != nil {
			return []sat.Lit{}
		}
	}
	if g.knownCycle {
		return []sat.Lit{}
	}
	if g.initPending {
		// Single-literal guards are "one literal left" from the start.
		g.initPending = false
		if g.Propagation {
			for e := range g.remaining {
				if g.remaining[e] == 1 {
					g.pending = append(g.pending, int32(e))
				}
			}
		}
	}
	g.solver = s
	defer func() { g.solver = nil }()
	for {
		g.implied = false
		if len(s.Trail()) < len(g.seenLits) {
			// The trail was cut without Backtrack: forget the lost positions.
			g.Backtrack(len(s.Trail()))
		}
		// The look-ahead may imply literals (growing the trail) as it goes;
		// they are processed in this loop too.
		for n := 0; len(g.seenLits) < len(s.Trail()); n++ {
			// A first propagation can enable thousands of edges, each insertion a
			// Pearce–Kelly reorder (seconds in all on a 30K-transaction problem):
			// the solver's deadline is checked every 16 literals. The literals left
			// wait for the next call; the state stays that of a trail prefix.
			if n&15 == 15 && s.OutOfTime() {
				s.Interrupt()
				return nil
			}
			pos := len(g.seenLits)
			if conflict := g.processLit(pos, s.Trail()[pos]); conflict != nil {
				g.pending = g.pending[:0]
				return conflict
			}
		}
		if !g.propagatePending() || !g.implied {
			return nil
		}
	}
}

// processLit handles the literal at trail position pos: counts it in the
// guards that contain it and enables the edges whose guards are now true. On a
// conflict the position is undone entirely, so the state stays that of a
// trail prefix whatever the solver does next.
func (g *Graph) processLit(pos int, l sat.Lit) []sat.Lit {
	g.seenLits = append(g.seenLits, l)
	if int(l) >= g.numLits || l < 0 {
		return nil
	}
	ws := g.watchEdges[g.watchStart[l]:g.watchStart[l+1]]
	if g.tracking {
		for _, e := range ws {
			if g.remaining[e] == 1 && g.falseLits[e] == 0 {
				g.setDead(e)
			}
			g.remaining[e]--
			if g.remaining[e] == 1 && g.falseLits[e] == 0 {
				g.setLive(e)
				g.pending = append(g.pending, e)
			}
		}
		n := l.Not()
		for _, e := range g.watchEdges[g.watchStart[n]:g.watchStart[n+1]] {
			if g.remaining[e] == 1 && g.falseLits[e] == 0 {
				g.setDead(e)
			}
			g.falseLits[e]++
		}
	} else {
		for _, e := range ws {
			g.remaining[e]--
			if g.remaining[e] == 1 && g.Propagation {
				g.pending = append(g.pending, e)
			}
		}
	}
	for _, e := range ws {
		if g.remaining[e] != 0 || g.enabled[e] {
			continue
		}
		if !g.insert(e) {
			g.Stats.Conflicts++
			if g.OnCycle != nil {
				g.OnCycle(g.cycle)
			}
			conflict := g.cycleClause()
			g.undoTo(pos)
			return conflict
		}
		g.enabled[e] = true
		g.enabledLog = append(g.enabledLog, e)
		g.enabledLogPos = append(g.enabledLogPos, int32(pos))
		g.Stats.Enabled++
		if g.Propagation && g.NeighbourLimit > 0 {
			g.lookAhead(e)
		}
	}
	return nil
}

// cycleClause returns the negated guard literals of g.cycle, deduplicated.
func (g *Graph) cycleClause() []sat.Lit {
	g.nextLitStamp()
	clause := make([]sat.Lit, 0, 2*len(g.cycle))
	for _, e := range g.cycle {
		clause = g.appendNegGuard(clause, e, -1)
	}
	return clause
}

// appendNegGuard appends the negations of e's guard literals (except skip)
// not yet marked in the current literal stamp.
func (g *Graph) appendNegGuard(clause []sat.Lit, e int32, skip sat.Lit) []sat.Lit {
	for _, l := range g.guard(e) {
		if l == skip {
			continue
		}
		n := l.Not()
		if g.litMark[n] != g.litStamp {
			g.litMark[n] = g.litStamp
			clause = append(clause, n)
		}
	}
	return clause
}

func (g *Graph) nextLitStamp() {
	g.litStamp++
	if g.litStamp == 0 {
		clear(g.litMark)
		g.litStamp = 1
	}
}

func (g *Graph) nextStampF() {
	g.stampF++
	if g.stampF == 0 {
		clear(g.markF)
		g.stampF = 1
	}
}

func (g *Graph) nextStampB() {
	g.stampB++
	if g.stampB == 0 {
		clear(g.markB)
		clear(g.headMark)
		g.stampB = 1
	}
}

// insert adds edge e to the enabled adjacency, restoring the topological
// order with Pearce–Kelly. If e closes a cycle it is not added, g.cycle holds
// the shortest cycle through e (path from e's head to its tail, then e) and
// insert returns false.
func (g *Graph) insert(e int32) bool {
	u, v := g.from[e], g.to[e]
	if u == v {
		g.cycle = append(g.cycle[:0], e)
		return false
	}
	if g.ord[u] > g.ord[v] {
		if !g.reorder(e, u, v) {
			return false
		}
	}
	g.out[u] = append(g.out[u], e)
	g.in[v] = append(g.in[v], e)
	g.outTo[u] = append(g.outTo[u], v)
	g.inFrom[v] = append(g.inFrom[v], u)
	return true
}

// reorderScanFactor: reorder scans the positions between the edge's ends
// instead of sorting the affected nodes when that range is at most this many
// times their number. A variable so that a test can force either way.
var reorderScanFactor = 8

// reorderShiftFactor: once one side of reorder's search is complete, the other is
// completed (and both move, as in Pearce–Kelly) only while it grows by at most the
// range between the edge's ends divided by this; beyond, the complete side moves alone
// (shiftAfter, shiftBefore: one pass over the range). A variable so that a test can
// force either way (0: never shift).
var reorderShiftFactor = 16

// reorder handles the insertion of u->v with ord[u] > ord[v]. The forward set F
// (reached from v over nodes with ord < ord[u]) and the backward set B (reaching u
// over nodes with ord > ord[v]) meet exactly when the edge closes a cycle. Both grow
// breadth-first, a whole level of the smaller frontier at a time, so a cycle is found
// after about twice the smaller side's share of the path; the first level with a
// meeting, scanned to its end, holds a shortest cycle. When one side is complete
// without meeting the other there is no cycle, and moving that side alone past the
// other end restores the order: F right after u, or B right before v. Pearce–Kelly
// moves both, so it must find both, and on real-time-ordered graphs one of them is
// often most of the window (a late node's predecessors) while the other is a node or
// two (an :info transaction's commit): 30M of 34M nodes moved on a 46K-node problem.
func (g *Graph) reorder(e, u, v int32) bool {
	ub, lb := g.ord[u], g.ord[v]
	g.nextStampF()
	g.nextStampB()
	fwd := append(g.queue[:0], v)
	back := append(g.backList[:0], u)
	g.markF[v], g.markB[u] = g.stampF, g.stampB
	g.distF[v], g.distB[u] = 0, 0
	fHead, bHead := 0, 0
	best, meetEdge := int32(-1), int32(-1)
	for fHead < len(fwd) && bHead < len(back) && best < 0 {
		if len(fwd)-fHead <= len(back)-bHead {
			end := len(fwd)
			for ; fHead < end; fHead++ {
				x := fwd[fHead]
				for k, w := range g.outTo[x] {
					if g.markB[w] == g.stampB {
						if d := g.distF[x] + 1 + g.distB[w]; best < 0 || d < best {
							best, meetEdge = d, g.out[x][k]
						}
					} else if g.ord[w] < ub && g.markF[w] != g.stampF {
						g.markF[w] = g.stampF
						g.parent[w] = g.out[x][k]
						g.distF[w] = g.distF[x] + 1
						fwd = append(fwd, w)
					}
				}
			}
		} else {
			end := len(back)
			for ; bHead < end; bHead++ {
				x := back[bHead]
				for k, w := range g.inFrom[x] {
					if g.markF[w] == g.stampF {
						if d := g.distF[w] + 1 + g.distB[x]; best < 0 || d < best {
							best, meetEdge = d, g.in[x][k]
						}
					} else if g.ord[w] > lb && g.markB[w] != g.stampB {
						g.markB[w] = g.stampB
						g.parentB[w] = g.in[x][k]
						g.distB[w] = g.distB[x] + 1
						back = append(back, w)
					}
				}
			}
		}
	}
	g.queue, g.backList = fwd, back
	if best >= 0 {
		g.meetCycle(v, u, meetEdge, e)
		return false
	}
	// No cycle (F and B are disjoint). Complete the other side for Pearce–Kelly only
	// while it stays small against the range between the ends; past that, moving the
	// complete side alone (one pass over the range) is the cheaper way.
	limit := -1
	if reorderShiftFactor > 0 {
		limit = len(fwd) + len(back) + int(ub-lb)/reorderShiftFactor
	}
	for ; fHead < len(fwd); fHead++ {
		if limit >= 0 && len(fwd)+len(back) > limit {
			g.queue = fwd
			g.shiftBefore(lb, ub) // B is complete
			g.Stats.Reorders += int64(ub - lb + 1)
			return true
		}
		x := fwd[fHead]
		for k, w := range g.outTo[x] {
			if g.ord[w] < ub && g.markF[w] != g.stampF {
				g.markF[w] = g.stampF
				g.parent[w] = g.out[x][k]
				fwd = append(fwd, w)
			}
		}
	}
	for ; bHead < len(back); bHead++ {
		if limit >= 0 && len(fwd)+len(back) > limit {
			g.backList = back
			g.shiftAfter(lb, ub) // F is complete
			g.Stats.Reorders += int64(ub - lb + 1)
			return true
		}
		x := back[bHead]
		for _, w := range g.inFrom[x] {
			if g.ord[w] > lb && g.markB[w] != g.stampB {
				g.markB[w] = g.stampB
				back = append(back, w)
			}
		}
	}
	g.queue, g.backList = fwd, back

	// Reassign the affected positions: backward set first, then forward set,
	// each keeping its relative order. Both sets lie within ord[v]..ord[u];
	// when they fill a good part of that range, one scan over it yields both
	// in order without sorting (large reorders otherwise spend most of their
	// time in the sort).
	nodes := g.nodeScratch[:0]
	g.posScratch = g.posScratch[:0]
	if k := len(fwd) + len(back); int(ub-lb) <= reorderScanFactor*k {
		for p := lb; p <= ub; p++ {
			x := g.nodeAt[p]
			if g.markB[x] == g.stampB || g.markF[x] == g.stampF {
				g.posScratch = append(g.posScratch, p)
				if g.markB[x] == g.stampB {
					nodes = append(nodes, x)
				}
			}
		}
		for p := lb; p <= ub; p++ {
			if x := g.nodeAt[p]; g.markF[x] == g.stampF && g.markB[x] != g.stampB {
				nodes = append(nodes, x)
			}
		}
	} else {
		for i, x := range fwd {
			fwd[i] = g.ord[x]
		}
		for i, x := range back {
			back[i] = g.ord[x]
		}
		slices.Sort(fwd)
		slices.Sort(back)
		for _, p := range back {
			nodes = append(nodes, g.nodeAt[p])
		}
		for _, p := range fwd {
			nodes = append(nodes, g.nodeAt[p])
		}
		// Merge the two sorted position lists.
		i, j := 0, 0
		for i < len(back) || j < len(fwd) {
			if j == len(fwd) || (i < len(back) && back[i] < fwd[j]) {
				g.posScratch = append(g.posScratch, back[i])
				i++
			} else {
				g.posScratch = append(g.posScratch, fwd[j])
				j++
			}
		}
	}
	for k, x := range nodes {
		p := g.posScratch[k]
		g.ord[x] = p
		g.nodeAt[p] = x
	}
	g.nodeScratch = nodes[:0]
	g.Stats.Reorders += int64(len(nodes))
	return true
}

// shiftAfter moves the forward set (marked with stampF, within positions lb..ub-1)
// right after u at ub, keeping every node's relative order: the others in lb..ub move
// down over the gaps.
func (g *Graph) shiftAfter(lb, ub int32) {
	moved := g.nodeScratch[:0]
	w := lb
	for p := lb; p <= ub; p++ {
		x := g.nodeAt[p]
		if g.markF[x] == g.stampF {
			moved = append(moved, x)
			continue
		}
		g.nodeAt[w], g.ord[x] = x, w
		w++
	}
	for _, x := range moved {
		g.nodeAt[w], g.ord[x] = x, w
		w++
	}
	g.nodeScratch = moved[:0]
}

// shiftBefore moves the backward set (marked with stampB, within positions lb+1..ub)
// right before v at lb, keeping every node's relative order.
func (g *Graph) shiftBefore(lb, ub int32) {
	moved := g.nodeScratch[:0]
	w := ub
	for p := ub; p >= lb; p-- {
		x := g.nodeAt[p]
		if g.markB[x] == g.stampB {
			moved = append(moved, x)
			continue
		}
		g.nodeAt[w], g.ord[x] = x, w
		w--
	}
	for _, x := range moved {
		g.nodeAt[w], g.ord[x] = x, w
		w--
	}
	g.nodeScratch = moved[:0]
}

// meetCycle sets g.cycle to the cycle of reorder's meeting edge m = x->y, x in the
// forward tree from v and y in the backward tree towards u: v ~> x, m, y ~> u, then
// closing (u->v).
func (g *Graph) meetCycle(v, u, m, closing int32) {
	g.buildCycle(v, g.from[m], m)
	for y := g.to[m]; y != u; {
		f := g.parentB[y]
		g.cycle = append(g.cycle, f)
		y = g.to[f]
	}
	g.cycle = append(g.cycle, closing)
}

// buildCycle sets g.cycle to the parent path from start to end, then closing.
func (g *Graph) buildCycle(start, end, closing int32) {
	g.cycle = g.cycle[:0]
	for x := end; x != start; {
		f := g.parent[x]
		g.cycle = append(g.cycle, f)
		x = g.from[f]
	}
	slices.Reverse(g.cycle)
	g.cycle = append(g.cycle, closing)
}

// lookAhead runs after enabling e = u->v: a guarded edge x->y with v ~> x and
// y ~> u now closes a cycle if enabled. Explore a few nodes forward from v,
// collecting the edges x->y one literal from enabled that could close one
// (ord[y] <= ord[u], since y ~> u); only if there are some, search backward
// from u for their heads, over nodes ordered after the lowest head (every
// path y ~> u climbs the order: the Pearce–Kelly window), until every head is
// found. The two search trees hold the path y ~> u -> v ~> x, so the last
// literal is implied false at once, without a search of its own. The work
// (edges looked at) is bounded too, since hub nodes can have huge degrees.
//
// The forward part is the dear one (nothing bounds it by the order: on
// real-time-ordered histories v reaches most later transactions) and the cheap
// one to cut: the implications it leads to are mostly 1-2 edges from v, while
// their backward parts are long. So it stops at ForwardLimit nodes, the
// windowed backward part at NeighbourLimit.
func (g *Graph) lookAhead(e int32) {
	u, v := g.from[e], g.to[e]
	limit := g.NeighbourLimit
	flimit := g.ForwardLimit
	if flimit <= 0 || flimit > limit {
		flimit = limit
	}
	ordU := g.ord[u]
	// Forward from v (parent[w] is the edge that reached w).
	work := 8 * flimit
	g.nextStampF()
	g.markF[v] = g.stampF
	fwd := append(g.queue[:0], v)
	candidates := g.candidates[:0]
	minOrd := ordU
	for i := 0; i < len(fwd) && work > 0; i++ {
		x := fwd[i]
		start := g.guardedOutStart[x]
		liveTo := g.liveTo[start:][:g.liveOut[x]]
		if len(liveTo) > work {
			liveTo = liveTo[:work]
		}
		work -= len(liveTo)
		for j, y := range liveTo {
			if oy := g.ord[y]; oy <= ordU {
				candidates = append(candidates, g.liveEdges[start+int32(j)])
				minOrd = min(minOrd, oy)
			}
		}
		for k, w := range g.outTo[x] {
			if len(fwd) >= flimit || work <= 0 {
				break
			}
			work--
			if g.markF[w] != g.stampF {
				g.markF[w] = g.stampF
				g.parent[w] = g.out[x][k]
				fwd = append(fwd, w)
			}
		}
	}
	g.queue = fwd
	g.candidates = candidates
	g.Stats.LookAheadNodes += int64(len(fwd))
	if len(candidates) == 0 {
		return
	}
	// Backward from u over nodes ordered at or after minOrd, marked in markB;
	// parentB[w] is w's edge towards u. headMark (same stamp) marks the
	// candidates' heads still to find.
	g.nextStampB()
	heads := 0
	for _, f := range candidates {
		if y := g.to[f]; g.headMark[y] != g.stampB {
			g.headMark[y] = g.stampB
			heads++
		}
	}
	g.markB[u] = g.stampB
	if g.headMark[u] == g.stampB {
		heads--
	}
	work = 8 * limit
	back := append(g.backList[:0], u)
	for i := 0; i < len(back) && len(back) < limit && work > 0 && heads > 0; i++ {
		x := back[i]
		for k, w := range g.inFrom[x] {
			work--
			if g.ord[w] >= minOrd && g.markB[w] != g.stampB {
				g.markB[w] = g.stampB
				g.parentB[w] = g.in[x][k]
				back = append(back, w)
				if g.headMark[w] == g.stampB {
					heads--
				}
				if len(back) >= limit || work <= 0 || heads == 0 {
					break
				}
			}
		}
	}
	g.backList = back
	g.Stats.LookAheadNodes += int64(len(back))
	for _, f := range candidates {
		if g.markB[g.to[f]] != g.stampB {
			continue
		}
		last := g.lastLiteral(f) // again: an implication may have settled it
		if last < 0 {
			continue
		}
		g.Stats.LookAhead++
		// Path from f's head y to its tail x: y ~> u, e, v ~> x.
		pathStart := int32(len(g.reasonPath))
		for y := g.to[f]; y != u; {
			pf := g.parentB[y]
			g.reasonPath = append(g.reasonPath, pf)
			y = g.to[pf]
		}
		g.reasonPath = append(g.reasonPath, e)
		mid := len(g.reasonPath)
		for y := g.from[f]; y != v; {
			pf := g.parent[y]
			g.reasonPath = append(g.reasonPath, pf)
			y = g.from[pf]
		}
		slices.Reverse(g.reasonPath[mid:])
		g.imply(f, last, pathStart)
	}
}

// setLive moves guarded edge e into its tail's live edges.
func (g *Graph) setLive(e int32) {
	x := g.from[e]
	g.swapLive(g.livePos[e], g.guardedOutStart[x]+g.liveOut[x])
	g.liveOut[x]++
}

// setDead moves live edge e out of its tail's live edges.
func (g *Graph) setDead(e int32) {
	x := g.from[e]
	g.liveOut[x]--
	g.swapLive(g.livePos[e], g.guardedOutStart[x]+g.liveOut[x])
}

func (g *Graph) swapLive(i, j int32) {
	a, b := g.liveEdges[i], g.liveEdges[j]
	g.liveEdges[i], g.liveEdges[j] = b, a
	g.liveTo[i], g.liveTo[j] = g.liveTo[j], g.liveTo[i]
	g.livePos[a], g.livePos[b] = j, i
}

// lastLiteral returns the one literal of e's guard that is unassigned when all
// the others are true, or -1 (a guard over variables the solver does not have
// never holds).
func (g *Graph) lastLiteral(e int32) sat.Lit {
	s := g.solver
	numVars := s.NumVars()
	last := sat.Lit(-1)
	for _, l := range g.guard(e) {
		if int(l.Var()) >= numVars {
			return -1
		}
		switch s.Value(l) {
		case sat.LTrue:
		case sat.LUndef:
			if last >= 0 {
				return -1
			}
			last = l
		default:
			return -1
		}
	}
	return last
}

// imply implies the negation of last, the unassigned literal of e's guard;
// the path from e's head to its tail is g.reasonPath[pathStart:]. last is
// unassigned, so the solver accepts it.
func (g *Graph) imply(e int32, last sat.Lit, pathStart int32) {
	s := g.solver
	g.reasons = append(g.reasons, reason{
		lit:       last.Not(),
		pos:       int32(len(s.Trail())),
		edge:      e,
		pathStart: pathStart,
		pathEnd:   int32(len(g.reasonPath)),
	})
	g.reasonOf[last.Var()] = int32(len(g.reasons) - 1)
	if g.OnCycle != nil {
		g.onCycleBuf = append(append(g.onCycleBuf[:0], e), g.reasonPath[pathStart:]...)
		g.OnCycle(g.onCycleBuf)
	}
	g.Stats.Propagations++
	g.implied = true
	if !s.Imply(last.Not()) {
		panic("theory: the solver refused an unassigned literal")
	}
}

// propagatePending checks the queued "one literal left" edges and implies the
// negation of the last literal of those whose head reaches their tail. It returns
// false when it stopped at the solver's deadline.
func (g *Graph) propagatePending() bool {
	for n := 0; len(g.pending) > 0; n++ {
		// A first propagation can hold millions of pending edges, each a bounded
		// search: the solver's deadline is checked every 64 of them (and on entry
		// when many wait, since the solver calls again after implications). What is
		// left stays queued (stale entries are skipped), so stopping is sound.
		if (n&63 == 63 || n == 0 && len(g.pending) > 64) && g.solver.OutOfTime() {
			g.solver.Interrupt()
			return false
		}
		if n == 0 && len(g.pending) >= bulkPendingMin {
			if g.filterPendingBulk(); len(g.pending) == 0 {
				return true
			}
		}
		e := g.pending[len(g.pending)-1]
		g.pending = g.pending[:len(g.pending)-1]
		if g.remaining[e] != 1 || g.enabled[e] {
			continue
		}
		u, v := g.from[e], g.to[e]
		if u != v && g.ord[v] > g.ord[u] {
			continue // v cannot reach u
		}
		last := g.lastLiteral(e)
		if last < 0 {
			continue
		}
		if u != v && !g.reaches(v, u) {
			continue
		}
		// The reason's path v~>u was left in g.path by reaches.
		pathStart := int32(len(g.reasonPath))
		if u != v {
			g.reasonPath = append(g.reasonPath, g.path...)
		}
		g.imply(e, last, pathStart)
	}
	return true
}

// bulkPendingMin is the number of pending edges from which filterPendingBulk may
// answer them all at once; bulkMaxWords bounds the closure's bitsets (words of 64
// columns, all nodes' rows of one block of columns), bulkMaxWork its word operations
// in all. Variables so that tests can make every propagation bulk and split blocks.
var (
	bulkPendingMin = 4096
	bulkMaxWords   = 1 << 22
	bulkMaxWork    = 1 << 28
)

// filterPendingBulk drops the pending edges whose head does not reach their tail,
// answered by one transitive closure over the enabled edges instead of a search per
// edge. The first propagation queues every single-literal guard (over a million on a
// 10K-transaction history with few values) and most of them close no cycle: one
// search each cost 20 s there, the closure a fraction of a second. Rows are bitsets
// over the pending edges' tails (the only targets asked about), filled in reverse
// topological order (ord), in blocks of columns so that memory stays bounded. The
// edges kept go through reaches as before, which finds their reasons' paths. Done
// only when the closure costs less than the searches would; it reports whether it
// was.
func (g *Graph) filterPendingBulk() bool {
	col := g.posScratch[:0]
	if cap(col) < g.nodes {
		col = make([]int32, g.nodes)
	}
	col = col[:g.nodes]
	for i := range col {
		col[i] = -1
	}
	defer func() { g.posScratch = col[:0] }()
	tails := g.nodeScratch[:0]
	kept := g.pending[:0]
	for _, e := range g.pending {
		if g.remaining[e] != 1 || g.enabled[e] {
			continue
		}
		u, v := g.from[e], g.to[e]
		if u != v && g.ord[v] > g.ord[u] {
			continue // v cannot reach u
		}
		kept = append(kept, e)
		if u != v && col[u] < 0 {
			col[u] = int32(len(tails))
			tails = append(tails, u)
		}
	}
	g.pending = kept
	g.nodeScratch = tails[:0]
	if len(tails) == 0 {
		return true
	}
	edges := 0
	for x := range g.out {
		edges += len(g.out[x])
	}
	words := (len(tails) + 63) / 64
	if work := (g.nodes + edges) * words; work > bulkMaxWork || work > len(g.pending)*64 {
		return false // the searches are cheaper (or the closure too big): keep them all
	}
	block := max(1, min(words, bulkMaxWords/g.nodes))
	rows := make([]uint64, g.nodes*block)
	reach := make([]bool, len(g.pending)) // per kept edge: its head reaches its tail
	for first := 0; first < words; first += block {
		w := min(block, words-first)
		lo := first * 64
		for pos := g.nodes - 1; pos >= 0; pos-- {
			x := g.nodeAt[pos]
			row := rows[int(x)*block:][:w]
			clear(row)
			for _, y := range g.outTo[x] {
				yr := rows[int(y)*block:][:w]
				for i := range row {
					row[i] |= yr[i]
				}
				if c := int(col[y]) - lo; c >= 0 && c < w*64 {
					row[c/64] |= 1 << (c % 64)
				}
			}
		}
		for i, e := range g.pending {
			u, v := g.from[e], g.to[e]
			if u == v {
				reach[i] = true
				continue
			}
			if c := int(col[u]) - lo; c >= 0 && c < w*64 && rows[int(v)*block+c/64]&(1<<(c%64)) != 0 {
				reach[i] = true
			}
		}
	}
	kept = g.pending[:0]
	for i, e := range g.pending {
		if reach[i] {
			kept = append(kept, e)
		}
	}
	g.pending = kept
	return true
}

// reaches reports whether from reaches to over enabled edges (to != from), with at
// most SearchLimit nodes visited. It searches breadth-first forward from from, over
// nodes with ord below ord[to]; past reachForwardFirst nodes, both ends search, the
// side with the smaller frontier a level at a time (backward from to over nodes with
// ord above ord[from]: a path lies between them in the topological order). Most
// pending edges close no cycle, and then the search ends when either side runs out.
// On success g.path holds the path's edge ids.
func (g *Graph) reaches(from, to int32) bool {
	g.Stats.Searches++
	lo, hi := g.ord[from], g.ord[to]
	g.nextStampF()
	g.nextStampB()
	g.markF[from] = g.stampF
	g.markB[to] = g.stampB
	fq := append(g.queue[:0], from)
	bq := append(g.backList[:0], to)
	defer func() { g.queue, g.backList = fq[:0], bq[:0] }()
	fi, bi := 0, 0 // the next node to expand on each side
	visited := 0
	meet, via := int32(-1), int32(-1) // the node both reach; the forward edge into it (-1: none)
	for fi < len(fq) && bi < len(bq) && meet < 0 {
		if visited < reachForwardFirst || len(fq)-fi <= len(bq)-bi {
			for end := len(fq); fi < end && meet < 0; fi++ {
				x := fq[fi]
				for k, w := range g.outTo[x] {
					if g.markB[w] == g.stampB {
						meet, via = w, g.out[x][k]
						break
					}
					if g.ord[w] < hi && g.markF[w] != g.stampF {
						if visited++; g.SearchLimit > 0 && visited >= g.SearchLimit {
							return false
						}
						g.markF[w] = g.stampF
						g.parent[w] = g.out[x][k]
						fq = append(fq, w)
						g.Stats.Visited++
					}
				}
			}
		} else {
			for end := len(bq); bi < end && meet < 0; bi++ {
				x := bq[bi]
				for k, w := range g.inFrom[x] {
					if g.markF[w] == g.stampF {
						meet, via = x, g.in[x][k]
						break
					}
					if g.ord[w] > lo && g.markB[w] != g.stampB {
						if visited++; g.SearchLimit > 0 && visited >= g.SearchLimit {
							return false
						}
						g.markB[w] = g.stampB
						g.parentB[w] = g.in[x][k]
						bq = append(bq, w)
						g.Stats.Visited++
					}
				}
			}
		}
	}
	if meet < 0 {
		return false
	}
	// from ~> meet by the forward parents (the last edge: via), meet ~> to by the
	// backward ones.
	g.path = g.path[:0]
	g.parent[meet] = via
	for y := meet; y != from; {
		pf := g.parent[y]
		g.path = append(g.path, pf)
		y = g.from[pf]
	}
	slices.Reverse(g.path)
	for y := meet; y != to; {
		pb := g.parentB[y]
		g.path = append(g.path, pb)
		y = g.to[pb]
	}
	return true
}

// reachForwardFirst: the nodes reaches visits forward alone before the backward side
// joins. Forward alone, a strong-session read uncommitted attribution search (zipf
// keys, 1,000 transactions) spent 36% of its time in reaches, 66K conflicts in 30 s,
// against 640K with both sides from the start; but a hot lost update under
// strong-session read committed (797K conflicts) took 66 s forward alone, 88 s with
// both sides from the start, its searches mostly small.
const reachForwardFirst = 256

// Explain implements sat.Theory: the reason clause of a literal the theory
// implied, l first. It returns nil for a literal the theory did not imply (or
// whose implication was backtracked).
func (g *Graph) Explain(l sat.Lit) []sat.Lit {
	if l < 0 || int(l.Var()) >= len(g.reasonOf) {
		return nil
	}
	i := g.reasonOf[l.Var()]
	if int(i) >= len(g.reasons) || g.reasons[i].lit != l {
		return nil
	}
	r := g.reasons[i]
	g.nextLitStamp()
	g.litMark[l] = g.litStamp
	clause := []sat.Lit{l}
	clause = g.appendNegGuard(clause, r.edge, l.Not())
	for _, e := range g.reasonPath[r.pathStart:r.pathEnd] {
		clause = g.appendNegGuard(clause, e, -1)
	}
	return clause
}

// Backtrack implements sat.Theory: the trail was cut back to length n.
func (g *Graph) Backtrack(n int) {
	if n < 0 {
		n = 0
	}
	for len(g.reasons) > 0 && int(g.reasons[len(g.reasons)-1].pos) >= n {
		g.reasonPath = g.reasonPath[:g.reasons[len(g.reasons)-1].pathStart]
		g.reasons = g.reasons[:len(g.reasons)-1]
	}
	g.pending = g.pending[:0]
	if n < len(g.seenLits) {
		g.undoTo(n)
	}
}

// undoTo forgets trail positions >= n (n < len(seenLits)).
func (g *Graph) undoTo(n int) {
	for k := len(g.enabledLog) - 1; k >= 0 && int(g.enabledLogPos[k]) >= n; k-- {
		e := g.enabledLog[k]
		u, v := g.from[e], g.to[e]
		g.out[u] = g.out[u][:len(g.out[u])-1]
		g.in[v] = g.in[v][:len(g.in[v])-1]
		g.outTo[u] = g.outTo[u][:len(g.outTo[u])-1]
		g.inFrom[v] = g.inFrom[v][:len(g.inFrom[v])-1]
		g.enabled[e] = false
		g.enabledLog = g.enabledLog[:k]
		g.enabledLogPos = g.enabledLogPos[:k]
	}
	for pos := len(g.seenLits) - 1; pos >= n; pos-- {
		l := g.seenLits[pos]
		if int(l) >= g.numLits || l < 0 {
			continue
		}
		if !g.tracking {
			for _, e := range g.watchEdges[g.watchStart[l]:g.watchStart[l+1]] {
				g.remaining[e]++
			}
			continue
		}
		// The reverse of processLit.
		nl := l.Not()
		for _, e := range g.watchEdges[g.watchStart[nl]:g.watchStart[nl+1]] {
			g.falseLits[e]--
			if g.remaining[e] == 1 && g.falseLits[e] == 0 {
				g.setLive(e)
			}
		}
		for _, e := range g.watchEdges[g.watchStart[l]:g.watchStart[l+1]] {
			if g.remaining[e] == 1 && g.falseLits[e] == 0 {
				g.setDead(e)
			}
			g.remaining[e]++
			if g.remaining[e] == 1 && g.falseLits[e] == 0 {
				g.setLive(e)
			}
		}
	}
	g.seenLits = g.seenLits[:n]
}
