// Package uncommitted decides read uncommitted (Elle's PL-1) and its strong-session and
// strong forms exactly with duplicate values (DESIGN.md, "Read uncommitted"): no read
// shows a value more often than the key was appended it by anyone, and some
// attribution of each key's longest read to appends leaves Elle's ww edges (with
// process and real-time order for the strong forms) among committed transactions
// acyclic. Leaving every :info transaction uncommitted is always best (an uncommitted
// writer gives no edge and bridges none), so the nodes are the :ok transactions.
package uncommitted

import (
	"slices"
	"sort"

	"doppel/history"
	"doppel/internal/placement"
)

// Verdict of a decision.
type Verdict int8

const (
	Valid Verdict = iota
	Invalid
	Unknown // the caller's stop said so before the search ended
)

// Kind of an edge.
type Kind uint8

const (
	WW Kind = iota
	Process
	Realtime
)

func (k Kind) String() string {
	switch k {
	case WW:
		return "ww"
	case Process:
		return "process"
	}
	return "realtime"
}

// Step is one edge of a cycle between transactions. For ww, Key is the key and Value
// the appended value of To's that follows From's (or -1 when To's append is not in the
// longest read and follows its last value, PrevValue).
type Step struct {
	From, To         int32
	Kind             Kind
	Key              int32
	PrevValue, Value int32
}

// Finding is a read showing value Value of key Key more often (Shown) than it was
// appended (Appended): duplicate-elements, or garbage-read when never appended.
type Finding struct {
	Type            string
	Txn, Key, Value int32
	Shown, Appended int
}

// Result of Decide.
type Result struct {
	Verdict  Verdict
	Findings []Finding
	// Cycle is a cycle met: among fixed edges (Fixed: it is in every attribution), or
	// the first one the search met (an example; the search found every attribution
	// cyclic).
	Cycle []Step
	Fixed bool
	// ByCaller: valid as Decide's beforeSearch proved it (the search did not run).
	ByCaller bool
	// ByWitness: valid as the longest-reads witness proved it (LongestReads).
	ByWitness bool
	// Serial: the serial search's proof (Invalid, no cycle to show: no order of the
	// writers keeps the model's order and runs every key).
	Serial *SerialProof
	Steps  int // search steps taken, for statistics
}

// CycleType names a cycle as Elle does: G0, or G0-process / G0-realtime when it needs
// such an edge.
func CycleType(c []Step) string {
	t := "G0"
	for _, s := range c {
		switch {
		case s.Kind == Realtime:
			return "G0-realtime"
		case s.Kind == Process:
			t = "G0-process"
		}
	}
	return t
}

type edge struct {
	to        int32
	kind      Kind
	key       int32
	prev, val int32
}

type decider struct {
	h        *history.History
	n        int       // transactions; nodes n.. are real-time events
	adj      [][]edge  // by node
	radj     [][]int32 // by node: the tails of its incoming edges, in push order
	ord      []int32   // a topological order of the edges present (Pearce–Kelly)
	comps    []int32   // the completion positions the real-time event nodes stand for
	from     []int32   // scratch: DFS parent node
	fromEdge []edge    // scratch: the edge taken into a node
	stamp    []uint32  // scratch: visited marks
	epoch    uint32
	stack    []int32
	stop     func() bool
	steps    int
	stopped  bool
	cycle    []Step
}

type kvt struct {
	key, val, txn int32
}

// Index is what the three read-uncommitted models share, whatever orders they add: the
// findings, the ww edges of the fixed keys and the keys left open. Built once per
// history from flat arrays by key, value and transaction (maps by (key, value, txn)
// cost more than everything else together on 100,000 transactions).
type Index struct {
	h        *history.History
	Findings []Finding
	fixFrom  []int32 // the fixed keys' ww edges: fixFrom[i] → fixEdge[i], by key
	fixEdge  []edge
	open     []*openKey
	// NoSerial: Decide skips the serial search and the longest-reads witness (so that
	// tests reach the search over attributions).
	NoSerial bool
	// NoSolver: Decide searches the attributions by backtracking (search.go) alone;
	// SolverOnly: with the solver (solve.go) alone, without the backtracking search's
	// first steps. For tests.
	NoSolver, SolverOnly bool
	// Conflicts, when set, is the caller's count of solver conflicts: the solver over
	// attributions adds its own (so that the caller's limit on them holds here too).
	Conflicts *int64
	// ConflictsLeft, when set, is how many more conflicts the caller's limit allows
	// (negative: no limit); the solver's chunks stop there.
	ConflictsLeft func() int64
	// States, when set, is the caller's count of failed states of the searches over
	// orders (the runs and serial searches): a limit may stop them before any solver
	// conflict, and the caller's message then says how far they got.
	States *int64
	// strongRefuted: the strong form was decided not valid; strongSpent: the most
	// conflicts its solver ran without a model. The weaker forms' first try of its
	// encoding (strongFirstConflicts) is skipped when either says it finds nothing:
	// the solver is deterministic, so a run as long as one already made ends the same.
	strongRefuted bool
	strongSpent   int64
	// Progress, if set, is told each stage Decide starts (so that a limit reached
	// names the stage it was reached in).
	Progress func(stage string)
	// Witness, if set, is asked once the longest-reads witness, the serial search and
	// a first pass of the runs search decided nothing: true when the caller proved the
	// model (by an order ProveByOrder accepted).
	Witness func() bool
}

func (x *Index) progress(stage string) {
	if x.Progress != nil {
		x.Progress(stage)
	}
}

// Open reports how many keys have a choice of attribution (searched, unless the
// history is decided without it).
func (x *Index) Open() int { return len(x.open) }

// appendRec is one append, in its key's bucket.
type appendRec struct {
	txn, val int32
	ok       bool
}

// valueGroup is one value's appends to a key: the uncommitted ones (:info, :fail)
// counted, the :ok ones as oks[okStart:okEnd] (distinct transactions with counts).
type valueGroup struct {
	unc            int32
	okStart, okEnd int32
}

type txnCount struct{ txn, n int32 }

// NewIndex reads h: the reads each key's longest read is taken from, the
// duplicate-elements count, and per key whether its attribution is fixed.
func NewIndex(h *history.History) *Index {
	n := len(h.Txns)
	nkeys, nvals := int32(len(h.Keys)), int32(len(h.Values))
	for i := range h.Ops {
		op := &h.Ops[i]
		nkeys = max(nkeys, op.Key+1)
		if op.Kind == history.Append {
			nvals = max(nvals, op.Value+1)
		}
	}
	for _, v := range h.ReadValues {
		nvals = max(nvals, v+1)
	}
	x := &Index{h: h}
	// The reads that count: every known read of an :ok transaction, one that misses
	// its transaction's own appends (internal) too: it still shows a state of the key
	// (a version read, as Elle's version order takes it in).
	var reads []readRef
	for t := 0; t < n; t++ {
		if h.Txns[t].Status != history.OK {
			continue
		}
		ops := h.TxnOps(t)
		for i := range ops {
			if op := &ops[i]; op.Kind == history.Read && op.Known {
				reads = append(reads, readRef{int32(t), op.Key, h.ReadList(op)})
			}
		}
	}
	x.Findings = countFindings(h, reads, nkeys, nvals)
	if len(x.Findings) > 0 {
		return x
	}
	// The longest reads of each key: the reads bucketed by key.
	readStart := make([]int32, nkeys+1)
	for _, r := range reads {
		readStart[r.key+1]++
	}
	for k := int32(0); k < nkeys; k++ {
		readStart[k+1] += readStart[k]
	}
	readsByKey := make([]int32, len(reads))
	fill := append([]int32(nil), readStart[:nkeys]...)
	for i, r := range reads {
		readsByKey[fill[r.key]] = int32(i)
		fill[r.key]++
	}
	// Appends bucketed by key, in history order.
	appStart := make([]int32, nkeys+1)
	for i := range h.Ops {
		if h.Ops[i].Kind == history.Append {
			appStart[h.Ops[i].Key+1]++
		}
	}
	for k := int32(0); k < nkeys; k++ {
		appStart[k+1] += appStart[k]
	}
	apps := make([]appendRec, appStart[nkeys])
	fill = append(fill[:0], appStart[:nkeys]...)
	for t := 0; t < n; t++ {
		ok := h.Txns[t].Status == history.OK
		for _, op := range h.TxnOps(t) {
			if op.Kind == history.Append {
				apps[fill[op.Key]] = appendRec{int32(t), op.Value, ok}
				fill[op.Key]++
			}
		}
	}
	// Scratch, stamped with the key (k+1) so that nothing is cleared between keys.
	valStamp := make([]int32, nvals)
	valGroup := make([]int32, nvals)
	txnStamp := make([]int32, n)
	txnWriter := make([]int32, n) // index into writers
	var groups []valueGroup
	var oks []txnCount
	var writers []int32
	var totals, used []int32
	var ls [][]int32
	for k := int32(0); k < nkeys; k++ {
		// Longest reads (distinct, non-empty).
		ls = ls[:0]
		for _, ri := range readsByKey[readStart[k]:readStart[k+1]] {
			r := reads[ri].list
			switch {
			case len(r) == 0:
			case len(ls) == 0 || len(r) > len(ls[0]):
				ls = append(ls[:0], r)
			case len(r) == len(ls[0]):
				seen := false
				for _, l := range ls {
					seen = seen || slices.Equal(l, r)
				}
				if !seen {
					ls = append(ls, r)
				}
			}
		}
		if len(ls) == 0 {
			continue
		}
		stamp := k + 1
		ka := apps[appStart[k]:appStart[k+1]]
		// The :ok writers of the key in history order, with their appends to it.
		writers, totals = writers[:0], totals[:0]
		for _, a := range ka {
			if !a.ok {
				continue
			}
			if txnStamp[a.txn] != stamp {
				txnStamp[a.txn], txnWriter[a.txn] = stamp, int32(len(writers))
				writers, totals = append(writers, a.txn), append(totals, 0)
			}
			totals[txnWriter[a.txn]]++
		}
		// By value, then transaction: each value's group.
		slices.SortFunc(ka, func(a, b appendRec) int {
			if a.val != b.val {
				return int(a.val - b.val)
			}
			return int(a.txn - b.txn)
		})
		groups, oks = groups[:0], oks[:0]
		for i, a := range ka {
			if i == 0 || ka[i-1].val != a.val {
				valStamp[a.val], valGroup[a.val] = stamp, int32(len(groups))
				groups = append(groups, valueGroup{okStart: int32(len(oks)), okEnd: int32(len(oks))})
			}
			g := &groups[len(groups)-1]
			switch {
			case !a.ok:
				g.unc++
			case g.okEnd > g.okStart && oks[g.okEnd-1].txn == a.txn:
				oks[g.okEnd-1].n++
			default:
				oks = append(oks, txnCount{a.txn, 1})
				g.okEnd++
			}
		}
		group := func(v int32) valueGroup {
			if valStamp[v] != stamp {
				return valueGroup{} // never appended (a garbage read, found above)
			}
			return groups[valGroup[v]]
		}
		fixed := len(ls) == 1
		for _, v := range ls[0] {
			g := group(v)
			nok := g.okEnd - g.okStart
			fixed = fixed && (nok == 0 || (nok == 1 && g.unc == 0))
		}
		if !fixed {
			o := newOpenKey(h, k, ls, group, oks, writers, totals, func(t int32) int32 { return txnWriter[t] })
			for _, ri := range readsByKey[readStart[k]:readStart[k+1]] {
				o.reads = append(o.reads, reads[ri])
			}
			x.open = append(x.open, o)
			continue
		}
		l := ls[0]
		used = append(used[:0], make([]int32, len(writers))...)
		prev := int32(-1)
		for p, v := range l {
			cur := int32(-1)
			if g := group(v); g.okEnd > g.okStart {
				cur = oks[g.okStart].txn
				used[txnWriter[cur]]++
			}
			if prev >= 0 && cur >= 0 && prev != cur {
				x.fixFrom = append(x.fixFrom, prev)
				x.fixEdge = append(x.fixEdge, edge{to: cur, kind: WW, key: k, prev: l[p-1], val: v})
			}
			prev = cur
		}
		if prev >= 0 {
			for i, w := range writers {
				if w != prev && used[i] < totals[i] {
					x.fixFrom = append(x.fixFrom, prev)
					x.fixEdge = append(x.fixEdge, edge{to: w, kind: WW, key: k, prev: l[len(l)-1], val: -1})
				}
			}
		}
	}
	return x
}

// Decide decides h under read uncommitted, with process order when process and
// real-time order too when realtime. stop is polled during the search.
func Decide(h *history.History, process, realtime bool, stop func() bool) Result {
	return NewIndex(h).Decide(process, realtime, stop, nil)
}

// Decide decides the model with process order when process and real-time order too
// when realtime. When keys are open and the fixed edges leave no cycle, beforeSearch
// (if not nil) is asked first: true means the caller proved the model valid another
// way (a verified replay), and the search is skipped. stop is polled during the search.
func (x *Index) Decide(process, realtime bool, stop func() bool, beforeSearch func() bool) Result {
	res := x.decide(process, realtime, stop, beforeSearch)
	if process && realtime && res.Verdict == Invalid {
		x.strongRefuted = true // the weaker forms need not look for its solution
	}
	return res
}

func (x *Index) decide(process, realtime bool, stop func() bool, beforeSearch func() bool) Result {
	var res Result
	if len(x.Findings) > 0 {
		res.Verdict, res.Findings = Invalid, x.Findings
		return res
	}
	d := &decider{h: x.h, n: len(x.h.Txns), stop: stop}
	d.orderEdges(process, realtime)
	for i, from := range x.fixFrom {
		d.push(from, x.fixEdge[i])
	}
	if c := d.findCycle(); c != nil {
		res.Verdict, res.Cycle, res.Fixed = Invalid, c, true
		return res
	}
	if len(x.open) == 0 {
		return res // Valid
	}
	x.progress("proving read uncommitted by the longest reads")
	if !x.NoSerial && x.LongestReads(process, realtime, stop) {
		res.ByWitness = true
		return res // Valid
	}
	if stop != nil && stop() {
		res.Verdict = Unknown
		return res
	}
	if !x.NoSerial {
		// An order of the writers under process order, when the search applies,
		// decides the strong forms exactly; where the search over attributions meets a
		// lost update's loser under process order only key by key, it is lost in a
		// pigeonhole over duplicate values. Without process order asked the order is a
		// witness still (its attribution's graph holds read uncommitted's), and where
		// none exists that proves nothing: the search over attributions follows.
		x.progress("ordering the writers of read uncommitted")
		v, proof, applied := x.serial(process && realtime, stop)
		switch {
		case v == Valid:
			res.ByWitness = !process
			return res
		case v == Invalid && process:
			res.Verdict, res.Serial = Invalid, proof
			return res
		}
		// runsPass runs the runs search (runs.go: uncommitted appends take positions)
		// with first failed states for each of its turns; it reports whether that
		// decided the model (into res).
		runsPass := func(first int) bool {
			x.progress("ordering the writers of read uncommitted around uncommitted appends")
			v, budget := Unknown, first
			if !process {
				budget /= 4 // the unchained search below gets the rest
			}
			if !realtime {
				// The strong form's order is a witness here too, and real-time
				// order narrows its search.
				v = x.runs(true, true, process, realtime, budget, stop)
			}
			if v != Valid {
				v = x.runs(process && realtime, true, process, realtime, budget, stop)
			}
			if v == Unknown && !process {
				// Where no order keeps process order (a lost update's loser
				// before its process's later writers), without it.
				v = x.runs(false, false, process, realtime, first, stop)
			}
			switch v {
			case Valid:
				res.ByWitness = !process
				return true
			case Invalid:
				if c := x.exampleCycle(process, realtime); process && c != nil {
					res.Verdict, res.Cycle = Invalid, c
					return true
				}
			}
			return false
		}
		// The runs search briefly, then the caller's witness, then the runs search in
		// full: where the database installed aborted appends as a serial run, the runs
		// search finds its order at once (aborted reads at 10,000: 152 failed states,
		// where the witness took 28 s); where aborted and intermediate appends of
		// duplicate values among :fail and :info transactions lose it (2,000: unknown
		// after 360K failed states), the witness decides in a second.
		if !applied && (stop == nil || !stop()) && runsPass(runsQuickStates) {
			return res
		}
		if x.Witness != nil && (stop == nil || !stop()) && x.Witness() {
			res.ByWitness = true
			return res // Valid
		}
		if !applied && (stop == nil || !stop()) && runsPass(runsFirstStates) {
			return res
		}
		if stop != nil && stop() {
			res.Verdict = Unknown
			return res
		}
	}
	if beforeSearch != nil && beforeSearch() {
		res.ByCaller = true
		return res
	}
	if stop != nil && stop() {
		// beforeSearch may have spent the limits: no search starts.
		res.Verdict = Unknown
		return res
	}
	x.progress("searching the attributions of read uncommitted")
	d.from = make([]int32, len(d.adj))
	d.fromEdge = make([]edge, len(d.adj))
	d.stamp = make([]uint32, len(d.adj))
	d.initOrder()
	if !x.NoSolver {
		// The backtracking search first, for a few steps: where its first choices
		// (writers by midpoint) are right it ends at once, before the solver's
		// encoding is built. It undoes what it did when it stops.
		d.stop = func() bool { return d.steps >= searchFirstSteps || stop != nil && stop() }
	}
	// searched gives the backtracking search's verdict.
	searched := func(ok bool) Result {
		res.Steps = d.steps
		switch {
		case ok:
			res.Verdict = Valid
		case d.stopped:
			res.Verdict = Unknown
		default:
			res.Verdict, res.Cycle = Invalid, d.cycle
		}
		return res
	}
	ok := false
	if x.SolverOnly {
		d.stopped = true // as if the first steps ran out
	} else {
		ok = d.search(x.open, 0)
	}
	if ok || !d.stopped || x.NoSolver || stop != nil && stop() {
		return searched(ok)
	}
	if !realtime && !x.strongRefuted && x.strongSpent < strongFirstConflicts {
		// The strong form's solution is one of this model's too (its graph holds this
		// one's): real-time order narrows the solver's search, which finds one there
		// where without it the search is lost (aborted reads, 100–150 transactions).
		if v, attr, _ := x.solveOpenWithin(true, true, strongFirstConflicts, stop); v == Valid && x.verifyAttribution(process, realtime, attr) {
			res.ByWitness = true
			return res
		}
		if stop != nil && stop() {
			res.Verdict = Unknown
			return res
		}
	}
	v, _, ran := x.solveOpen(process, realtime, stop)
	if !ran {
		// Too large an encoding: the search goes on, with the caller's stop only.
		d.stop, d.stopped = stop, false
		return searched(d.search(x.open, 0))
	}
	res.Verdict = v
	if v == Invalid {
		res.Cycle = x.exampleCycle(process, realtime)
	}
	return res
}

// runsFirstStates bounds the runs search (a few seconds), after which the search over
// attributions goes on; runsQuickStates its first pass, before the caller's witness.
const (
	runsFirstStates = 1 << 17
	runsQuickStates = 1 << 11
)

// strongFirstConflicts bounds the strong form's solver run that the weaker forms try
// first.
const strongFirstConflicts = 60_000

// searchFirstSteps bounds the backtracking search's first run, before the solver's.
const searchFirstSteps = 1 << 16

// byProcess returns txns sorted by process, then invocation, then index: the order the
// process edges take.
func byProcess(h *history.History, txns []int32) []int32 {
	byProc := slices.Clone(txns)
	h.SortByProcess(byProc)
	return byProc
}

// push adds an edge, pop removes the last one pushed from a node; edges are popped in
// the reverse order of their pushes, so the last tail in radj is the edge's own.
func (d *decider) push(from int32, e edge) {
	d.adj[from] = append(d.adj[from], e)
	if d.radj != nil {
		d.radj[e.to] = append(d.radj[e.to], from)
	}
}

func (d *decider) pop(from int32) {
	e := d.adj[from][len(d.adj[from])-1]
	d.adj[from] = d.adj[from][:len(d.adj[from])-1]
	if d.radj != nil {
		d.radj[e.to] = d.radj[e.to][:len(d.radj[e.to])-1]
	}
}

// orderEdges adds process order (consecutive :ok transactions of a process by
// invocation) and real-time order through a chain of completion events: A → event of
// A's completion → later events → B when B was invoked after it.
func (d *decider) orderEdges(process, realtime bool) {
	h := d.h
	var oks []int32
	for t := range h.Txns {
		if h.Txns[t].Status == history.OK {
			oks = append(oks, int32(t))
		}
	}
	var comps, byProc []int32
	if realtime {
		comps = placement.Completions(h, oks)
	}
	if process {
		byProc = byProcess(h, oks)
	}
	d.adj = make([][]edge, d.n+len(comps))
	d.comps = comps
	placement.OrderEdges(h, oks, byProc, comps, d.n, func(from, to int32, rt bool) {
		kind := Process
		if rt {
			kind = Realtime
		}
		d.push(from, edge{to: to, kind: kind, key: -1})
	})
}

// findCycle looks for a cycle in the graph by an iterative DFS and returns it, or nil.
func (d *decider) findCycle() []Step {
	nn := len(d.adj)
	color := make([]uint8, nn)
	parent := make([]int32, nn)
	parentEdge := make([]edge, nn)
	next := make([]int32, nn) // next edge index to try
	for s := 0; s < nn; s++ {
		if color[s] != 0 {
			continue
		}
		stack := []int32{int32(s)}
		color[s] = 1
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			if int(next[u]) == len(d.adj[u]) {
				color[u] = 2
				stack = stack[:len(stack)-1]
				continue
			}
			e := d.adj[u][next[u]]
			next[u]++
			switch color[e.to] {
			case 0:
				color[e.to] = 1
				parent[e.to], parentEdge[e.to] = u, e
				stack = append(stack, e.to)
			case 1: // back edge u → e.to: the cycle e.to → … → u → e.to
				var rev []Step
				rev = append(rev, d.step(u, e))
				for x := u; x != e.to; x = parent[x] {
					rev = append(rev, d.step(parent[x], parentEdge[x]))
				}
				for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
					rev[i], rev[j] = rev[j], rev[i]
				}
				return d.shorten(rev)
			}
		}
	}
	return nil
}

// shortenTries bounds the breadth-first searches shorten runs (each costs a pass over
// the graph).
const shortenTries = 16

// shorten returns a shortest cycle through one of up to shortenTries transactions of
// cycle c (a depth-first search's cycle can run through thousands of transactions
// where a few close one), compressed as compress does.
func (d *decider) shorten(c []Step) []Step {
	best := d.compress(c)
	var nodes []int32
	for _, s := range c {
		if int(s.From) < d.n {
			nodes = append(nodes, s.From)
		}
	}
	stride := max(1, len(nodes)/shortenTries)
	nn := len(d.adj)
	parent := make([]int32, nn)
	parentEdge := make([]edge, nn)
	seen := make([]int32, nn) // the try (1-based) that reached the node
	var queue []int32
	for i := 0; i < len(nodes) && len(best) > 1; i += stride {
		v, try := nodes[i], int32(i+1)
		queue = append(queue[:0], v)
		seen[v] = try
		var cyc []Step
		for head := 0; head < len(queue) && cyc == nil; head++ {
			u := queue[head]
			for _, e := range d.adj[u] {
				if e.to == v { // u → v closes a shortest cycle through v
					cyc = []Step{d.step(u, e)}
					for x := u; x != v; x = parent[x] {
						cyc = append(cyc, d.step(parent[x], parentEdge[x]))
					}
					slices.Reverse(cyc)
					break
				}
				if seen[e.to] != try {
					seen[e.to] = try
					parent[e.to], parentEdge[e.to] = u, e
					queue = append(queue, e.to)
				}
			}
		}
		if cyc != nil {
			if cc := d.compress(cyc); len(cc) < len(best) {
				best = cc
			}
		}
	}
	return best
}

func (d *decider) step(from int32, e edge) Step {
	return Step{From: from, To: e.to, Kind: e.kind, Key: e.key, PrevValue: e.prev, Value: e.val}
}

// compress turns a cycle through real-time event nodes into one between transactions
// only: a run A → events… → B is one real-time step A → B.
func (d *decider) compress(c []Step) []Step {
	start := -1
	for i, s := range c {
		if int(s.From) < d.n {
			start = i
			break
		}
	}
	if start < 0 {
		return nil // events alone form no cycle (they are a chain)
	}
	var out []Step
	for i := 0; i < len(c); i++ {
		s := c[(start+i)%len(c)]
		if int(s.From) >= d.n { // inside a run: extend the last step
			out[len(out)-1].To = s.To
			continue
		}
		out = append(out, s)
	}
	return out
}

// tryEdge adds from → e.to unless it closes a cycle (the first cycle met is kept).
func (d *decider) tryEdge(from int32, e edge) bool {
	if d.closes(from, e.to) {
		if d.cycle == nil {
			var rev []Step
			for x := from; x != e.to; x = d.from[x] {
				rev = append(rev, d.step(d.from[x], d.fromEdge[x]))
			}
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			d.cycle = d.compress(append(rev, d.step(from, e)))
		}
		return false
	}
	d.push(from, e)
	return true
}

type readRef struct {
	txn, key int32
	list     []int32
}

// countFindings: reads showing a value more often than the key was appended it by
// anyone (duplicate-elements; garbage-read when never). Key by key with counts in flat
// arrays by value id: map look-ups per read value cost more than the rest together.
func countFindings(h *history.History, reads []readRef, nkeys, nvals int32) []Finding {
	// Appended values and reads, bucketed by key.
	appStart := make([]int32, nkeys+1)
	for _, op := range h.Ops {
		if op.Kind == history.Append {
			appStart[op.Key+1]++
		}
	}
	for k := int32(0); k < nkeys; k++ {
		appStart[k+1] += appStart[k]
	}
	appVals := make([]int32, appStart[nkeys])
	fill := append([]int32(nil), appStart[:nkeys]...)
	for _, op := range h.Ops {
		if op.Kind == history.Append {
			appVals[fill[op.Key]] = op.Value
			fill[op.Key]++
		}
	}
	readStart := make([]int32, nkeys+1)
	for _, r := range reads {
		readStart[r.key+1]++
	}
	for k := int32(0); k < nkeys; k++ {
		readStart[k+1] += readStart[k]
	}
	byKey := make([]int32, len(reads))
	fill = append(fill[:0], readStart[:nkeys]...)
	for i, r := range reads {
		byKey[fill[r.key]] = int32(i)
		fill[r.key]++
	}
	appended := make([]int32, nvals)
	shown := make([]int32, nvals)
	var out []Finding
	for k := int32(0); k < nkeys; k++ {
		if readStart[k] == readStart[k+1] {
			continue
		}
		for _, v := range appVals[appStart[k]:appStart[k+1]] {
			appended[v]++
		}
		for _, ri := range byKey[readStart[k]:readStart[k+1]] {
			r := reads[ri]
			for _, v := range r.list {
				shown[v]++
			}
			for _, v := range r.list {
				if sv, a := shown[v], appended[v]; sv > a {
					typ := "duplicate-elements"
					if a == 0 {
						typ = "garbage-read"
					}
					out = append(out, Finding{Type: typ, Txn: r.txn, Key: k, Value: v, Shown: int(sv), Appended: int(a)})
					shown[v] = -1 << 30 // once per read and value
				}
			}
			for _, v := range r.list {
				shown[v] = 0
			}
		}
		for _, v := range appVals[appStart[k]:appStart[k+1]] {
			appended[v] = 0
		}
	}
	// In the order of the reads (transactions in history order).
	sort.SliceStable(out, func(i, j int) bool { return out[i].Txn < out[j].Txn })
	return out
}
