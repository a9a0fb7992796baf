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
	Steps int // search steps taken, for statistics
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

type kv struct{ key, val int32 }
type kvt struct {
	key, val, txn int32
}

// Decide decides h under read uncommitted, with process order when process and
// real-time order too when realtime. stop is polled during the search.
func Decide(h *history.History, process, realtime bool, stop func() bool) Result {
	n := len(h.Txns)
	uncommitted := map[kv]int{} // by :info and :fail transactions
	okAppends := map[kvt]int{}
	okByValue := map[kv][]int32{} // distinct :ok appenders of a key and value
	keyWriters := map[int32][]int32{}
	keyTotal := map[kv]int{} // (key, txn) → the :ok txn's appends to the key
	for t := 0; t < n; t++ {
		ok := h.Txns[t].Status == history.OK
		for _, op := range h.TxnOps(t) {
			if op.Kind != history.Append {
				continue
			}
			k := kv{op.Key, op.Value}
			if !ok {
				uncommitted[k]++
				continue
			}
			if okAppends[kvt{op.Key, op.Value, int32(t)}]++; okAppends[kvt{op.Key, op.Value, int32(t)}] == 1 {
				okByValue[k] = append(okByValue[k], int32(t))
			}
			if keyTotal[kv{op.Key, int32(t)}]++; keyTotal[kv{op.Key, int32(t)}] == 1 {
				keyWriters[op.Key] = append(keyWriters[op.Key], int32(t))
			}
		}
	}
	var res Result
	longest := map[int32][][]int32{}
	var reads []readRef
	for t := 0; t < n; t++ {
		if h.Txns[t].Status != history.OK {
			continue
		}
		for i := range h.TxnOps(t) {
			op := &h.TxnOps(t)[i]
			if op.Kind != history.Read || !op.Known {
				continue
			}
			// Every :ok read counts, one that misses its transaction's own appends
			// (internal) too: it still shows a state of the key (a version read, as
			// Elle's version order takes it in).
			r := h.ReadList(op)
			reads = append(reads, readRef{int32(t), op.Key, r})
			ls := longest[op.Key]
			switch {
			case len(r) == 0:
			case len(ls) == 0 || len(r) > len(ls[0]):
				longest[op.Key] = [][]int32{r}
			case len(r) == len(ls[0]):
				seen := false
				for _, l := range ls {
					seen = seen || slices.Equal(l, r)
				}
				if !seen {
					longest[op.Key] = append(ls, r)
				}
			}
		}
	}
	res.Findings = countFindings(h, reads)
	if len(res.Findings) > 0 {
		res.Verdict = Invalid
		return res
	}

	d := &decider{h: h, n: n, stop: stop}
	d.orderEdges(process, realtime)
	// Fixed keys give their edges now; the others are searched.
	var open []*openKey
	keys := make([]int32, 0, len(longest))
	for k := range longest {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		ls := longest[k]
		fixed := len(ls) == 1
		for _, v := range ls[0] {
			w := okByValue[kv{k, v}]
			fixed = fixed && (len(w) == 0 || (len(w) == 1 && uncommitted[kv{k, v}] == 0))
		}
		if !fixed {
			open = append(open, newOpenKey(h, k, ls, okByValue, uncommitted, okAppends, keyWriters[k], keyTotal))
			continue
		}
		l := ls[0]
		prev := int32(-1)
		used := map[int32]int{}
		for p, v := range l {
			cur := int32(-1)
			if w := okByValue[kv{k, v}]; len(w) == 1 {
				cur = w[0]
				used[cur]++
			}
			if prev >= 0 && cur >= 0 && prev != cur {
				d.push(prev, edge{to: cur, kind: WW, key: k, prev: l[p-1], val: v})
			}
			prev = cur
		}
		if prev >= 0 {
			for _, w := range keyWriters[k] {
				if w != prev && used[w] < keyTotal[kv{k, w}] {
					d.push(prev, edge{to: w, kind: WW, key: k, prev: l[len(l)-1], val: -1})
				}
			}
		}
	}
	if c := d.findCycle(); c != nil {
		res.Verdict, res.Cycle, res.Fixed = Invalid, c, true
		return res
	}
	d.from = make([]int32, len(d.adj))
	d.fromEdge = make([]edge, len(d.adj))
	d.stamp = make([]uint32, len(d.adj))
	if len(open) > 0 {
		d.initOrder()
	}
	ok := d.search(open, 0)
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
	var comps []int32
	if realtime {
		for _, t := range oks {
			if c := h.Txns[t].Complete; c >= 0 {
				comps = append(comps, c)
			}
		}
		sort.Slice(comps, func(i, j int) bool { return comps[i] < comps[j] })
	}
	d.adj = make([][]edge, d.n+len(comps))
	d.comps = comps
	if process {
		byProc := append([]int32(nil), oks...)
		sort.SliceStable(byProc, func(i, j int) bool {
			a, b := &h.Txns[byProc[i]], &h.Txns[byProc[j]]
			if a.Process != b.Process {
				return a.Process < b.Process
			}
			if a.Invoke != b.Invoke {
				return a.Invoke < b.Invoke
			}
			return byProc[i] < byProc[j]
		})
		for i := 1; i < len(byProc); i++ {
			a, b := byProc[i-1], byProc[i]
			if p := h.Txns[a].Process; p >= 0 && p == h.Txns[b].Process {
				d.push(a, edge{to: b, kind: Process, key: -1})
			}
		}
	}
	if realtime && len(comps) > 0 {
		for i := 1; i < len(comps); i++ {
			d.push(int32(d.n+i-1), edge{to: int32(d.n + i), kind: Realtime, key: -1})
		}
		for _, t := range oks {
			tx := &h.Txns[t]
			if tx.Complete >= 0 {
				i := sort.Search(len(comps), func(i int) bool { return comps[i] >= tx.Complete })
				d.push(t, edge{to: int32(d.n + i), kind: Realtime, key: -1})
			}
			if tx.Invoke >= 0 {
				// the last completion before the invoke
				i := sort.Search(len(comps), func(i int) bool { return comps[i] >= tx.Invoke }) - 1
				if i >= 0 {
					d.push(int32(d.n+i), edge{to: t, kind: Realtime, key: -1})
				}
			}
		}
	}
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
				return d.compress(rev)
			}
		}
	}
	return nil
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
func countFindings(h *history.History, reads []readRef) []Finding {
	nkeys, nvals := int32(len(h.Keys)), int32(len(h.Values))
	for _, op := range h.Ops {
		nkeys = max(nkeys, op.Key+1)
		if op.Kind == history.Append {
			nvals = max(nvals, op.Value+1)
		}
	}
	for _, r := range reads {
		for _, v := range r.list {
			nvals = max(nvals, v+1)
		}
	}
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
