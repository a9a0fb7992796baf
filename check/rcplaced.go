package check

import (
	"slices"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/placement"
)

// Read committed's losers placed anew (DESIGN.md, "A relaxed serial witness", "The
// strong forms: the losers placed anew"): the strong forms of read committed keep a lost update's loser where its
// process puts it, so the relaxed witness's move (the loser commits last, its block
// past the trace) breaks process order, and on keys of few values the searches look
// for the one order that keeps the loser in line among every placement of the
// duplicates (hot keys of two values, 1,000 transactions with 5% :info:
// strong-session read committed unknown at 30 s). A serial order of the history with
// the losers' appends to their key left out (losersPlaced) is a commit order of every
// other key; read committed's graph (ww ∪ wr and the model's orders) needs no single
// order across keys, so each lost key's version order is built anew against the graph
// of the others, and a topological order of the whole graph goes to verifyPerRead.

// perReadPlacer builds placePerRead's graph: nodes are the transactions, then one per
// completion position (real-time order as a chain of completions).
type perReadPlacer struct {
	h    *history.History
	in   *encode.Inference // per read
	rank []int32           // per transaction: its position in the order, -1 not committed
	n    int
	adj  [][]int32
	// writers[k]: key k's committed writers (indices into in.Writers), by rank.
	writers [][]int32
}

// placePerRead turns order (a serial order, of committed transactions of h, that spells
// every key's trace but some) into a commit order of h for read committed's graph with
// process order (and real-time order with realtime): the keys whose writers in order
// do not spell their trace, or whose reads do not end where a block ends, are placed
// anew one by one (placeKey) against the graph of the others; then a topological
// order of the whole graph is returned, for verifyPerRead to accept or not. stuck
// reports a key with no placement given the others (its search exhausted within
// maxStates failed states).
func placePerRead(h *history.History, in *encode.Inference, order []int32, process, realtime bool, maxStates int, stop func() bool) (commit []int32, ok, stuck bool) {
	n := len(h.Txns)
	pl := &perReadPlacer{h: h, in: in, n: n, rank: make([]int32, n)}
	for t := range pl.rank {
		pl.rank[t] = -1
	}
	for i, t := range order {
		if t < 0 || int(t) >= n || pl.rank[t] >= 0 || h.Txns[t].Status == history.Fail {
			return nil, false, false
		}
		pl.rank[t] = int32(i)
	}
	for t := range h.Txns {
		if h.Txns[t].Status == history.OK && pl.rank[t] < 0 {
			return nil, false, false
		}
	}
	pl.writers = make([][]int32, len(in.Keys))
	ats := make([][]int32, len(in.Keys)) // each key's blockOf in the order (nil: misplaced)
	var misplaced []int32
	for k := range in.Keys {
		for _, w := range in.Keys[k].Writers {
			if pl.rank[in.Writers[w].Txn] >= 0 {
				pl.writers[k] = append(pl.writers[k], w)
			}
		}
		slices.SortFunc(pl.writers[k], func(a, b int32) int {
			return int(pl.rank[in.Writers[a].Txn] - pl.rank[in.Writers[b].Txn])
		})
		if ats[k] = pl.blockOf(int32(k), pl.writers[k]); ats[k] == nil {
			misplaced = append(misplaced, int32(k))
		}
	}
	if len(misplaced) == 0 {
		return order, true, false
	}
	if len(misplaced) > maxPlacedKeys {
		return nil, false, false
	}
	pl.orderEdges(process, realtime)
	for k, at := range ats {
		if at != nil {
			pl.keyEdges(int32(k), pl.writers[k], at)
		}
	}
	for _, k := range misplaced {
		seq, ok, exhausted := pl.placeKey(k, maxStates, stop)
		if !ok {
			return nil, false, exhausted
		}
		at := pl.blockOf(k, seq)
		if at == nil {
			return nil, false, false
		}
		pl.keyEdges(k, seq, at)
	}
	topo, acyclic := placement.TopoOrder(len(pl.adj), pl.succ)
	if !acyclic {
		return nil, false, false
	}
	commit = make([]int32, 0, len(order))
	for _, v := range topo {
		if int(v) < n && pl.rank[v] >= 0 {
			commit = append(commit, v)
		}
	}
	return commit, true, false
}

// maxPlacedKeys bounds the keys placePerRead places anew (each one a pass over the
// graph): a lost update or a few, not a history the order does not fit.
const maxPlacedKeys = 16

// blockOf returns, per position of key k's trace (and one past it), the index into
// seq of the writer whose block covers it (-1 past seq), when seq's blocks in sequence
// spell the trace and every read of k ends where a block ends (a read showing its own
// appends: where its transaction's block starts); else nil.
func (pl *perReadPlacer) blockOf(k int32, seq []int32) []int32 {
	in := pl.in
	L := in.Keys[k].Trace
	at := make([]int32, len(L)+1)
	p := 0
	starts := make([]int32, len(seq)) // each block's start
	for i, w := range seq {
		starts[i] = int32(p)
		wr := &in.Writers[w]
		for _, v := range in.WriterVals[wr.Start:wr.End] {
			if p < len(L) {
				if L[p] != v {
					return nil
				}
				at[p] = int32(i)
			}
			p++
		}
	}
	if p < len(L) {
		return nil
	}
	at[len(L)] = -1
	isEnd := make([]bool, len(L)+1) // a block ends there (or nothing was appended yet)
	isEnd[0] = true
	for i := range seq {
		if e := starts[i]; e <= int32(len(L)) {
			isEnd[e] = true
		}
	}
	if p <= len(L) {
		isEnd[p] = true
	}
	for _, r := range in.Keys[k].Reads {
		rd := &in.Reads[r]
		if rd.Version || pl.rank[rd.Txn] < 0 {
			continue
		}
		q := rd.Len - rd.Own
		if q > int32(len(L)) {
			return nil
		}
		if rd.Own > 0 {
			i := slices.IndexFunc(seq, func(w int32) bool { return in.Writers[w].Txn == rd.Txn })
			if i < 0 || starts[i] != q {
				return nil
			}
			continue
		}
		if !isEnd[q] || q > 0 && in.Writers[seq[at[q-1]]].Txn == rd.Txn {
			return nil // inside a block, or its own block read before it was appended
		}
	}
	return at
}

// orderEdges adds process order (with process) and real-time order (with realtime)
// between the committed transactions, as verifyOrders reads them.
func (pl *perReadPlacer) orderEdges(process, realtime bool) {
	h := pl.h
	var ids, comps, byProc []int32
	for t := range h.Txns {
		if pl.rank[t] >= 0 {
			ids = append(ids, int32(t))
		}
	}
	if realtime {
		comps = placement.Completions(h, ids)
	}
	if process {
		byProc = slices.Clone(ids)
		encode.SortProcessOrder(h, byProc)
	}
	pl.adj = make([][]int32, pl.n+len(comps))
	placement.OrderEdges(h, ids, byProc, comps, pl.n, func(from, to int32, _ bool) {
		pl.adj[from] = append(pl.adj[from], to)
	})
}

// keyEdges adds key k's edges under the placement seq (its writers in version order,
// those past the trace after every one that shows in it), whose blocks blockOf gave
// as at: ww between consecutive writers of the trace, from the trace's last writer to
// each writer past it (one pinned right after the trace first), and wr from the writer
// whose block ends where a read ends to its reader.
func (pl *perReadPlacer) keyEdges(k int32, seq, at []int32) {
	in := pl.in
	txn := func(i int32) int32 { return in.Writers[seq[i]].Txn }
	L := in.Keys[k].Trace
	last := int32(-1) // the index into seq of the trace's last block
	if len(L) > 0 {
		last = at[len(L)-1]
	}
	for i := int32(1); i <= last; i++ {
		pl.adj[txn(i-1)] = append(pl.adj[txn(i-1)], txn(i))
	}
	// Past the trace: one pinned at the trace's end comes first (blockOf put it
	// there), the rest after it in any order.
	first := last
	if last+1 < int32(len(seq)) && pl.pinnedAt(k, txn(last+1)) == int32(len(L)) {
		first = last + 1
	}
	for i := last + 1; i < int32(len(seq)); i++ {
		from := last
		if i > first {
			from = first
		}
		if from >= 0 {
			pl.adj[txn(from)] = append(pl.adj[txn(from)], txn(i))
		}
	}
	for _, r := range in.Keys[k].Reads {
		rd := &in.Reads[r]
		if rd.Version || rd.Own > 0 || rd.Len == 0 || pl.rank[rd.Txn] < 0 {
			continue
		}
		w := txn(at[rd.Len-1])
		pl.adj[w] = append(pl.adj[w], rd.Txn)
	}
}

// succ visits node v's successors in the graph.
func (pl *perReadPlacer) succ(v int32, visit func(int32)) {
	for _, u := range pl.adj[v] {
		visit(u)
	}
}

// pinnedAt returns where transaction t's reads of key k that show its own appends put
// its block (-1: none does).
func (pl *perReadPlacer) pinnedAt(k, t int32) int32 {
	in := pl.in
	for _, r := range in.Keys[k].Reads {
		if rd := &in.Reads[r]; rd.Txn == t && !rd.Version && rd.Own > 0 {
			return rd.Len - rd.Own
		}
	}
	return -1
}

// placeKey places key k's trace anew given the graph of everything else: a sequence
// of its committed writers whose blocks spell the trace, then the rest past it. With
// the blocks in sequence the graph stays acyclic iff no writer reaches one placed
// before it (through the graph, or through a read: a writer whose block ends where a
// reader's read ends reaches what the reader reaches), so a writer is placed only
// after every writer that reaches it in the graph, and only at or after the end of
// every read whose reader reaches it (its own reads before its appends included: a
// future read). Reads end where blocks end, a read showing its transaction's own
// appends starts that block. A depth-first search over such sequences, the writers
// tried in rank order, failed states (the writers placed, the position) remembered.
// exhausted: the search ended within its bounds without a placement.
func (pl *perReadPlacer) placeKey(k int32, maxStates int, stop func() bool) (seq []int32, ok, exhausted bool) {
	in := pl.in
	ws := pl.writers[k]
	nw := len(ws)
	words := (nw + 63) / 64
	widx := make(map[int32]int, nw)
	for i, w := range ws {
		widx[in.Writers[w].Txn] = i
	}
	topo, acyclic := placement.TopoOrder(len(pl.adj), pl.succ)
	if !acyclic {
		return nil, false, false
	}
	// reach[v]: the writers of k that node v reaches; preds[i]: those that reach
	// writer i.
	reach := placement.Reach(len(pl.adj), topo, words, pl.succ, func(u int32) int {
		if i, ok := widx[u]; ok && int(u) < pl.n {
			return i
		}
		return -1
	})
	preds, ok := placement.Preds(reach, words, nw, func(i int) int32 { return in.Writers[ws[i]].Txn })
	if !ok {
		return nil, false, false
	}
	L := in.Keys[k].Trace
	minStart := make([]int32, nw)
	pin := make([]int32, nw)
	for i := range pin {
		pin[i] = -1
	}
	bound := make([]bool, len(L)+1)
	for _, r := range in.Keys[k].Reads {
		rd := &in.Reads[r]
		if rd.Version || pl.rank[rd.Txn] < 0 {
			continue
		}
		q := rd.Len - rd.Own
		bound[q] = true
		if rd.Own > 0 {
			i, ok := widx[rd.Txn]
			if !ok || pin[i] >= 0 && pin[i] != q {
				return nil, false, false
			}
			pin[i] = q
			continue
		}
		if q == 0 {
			continue
		}
		rr := reach[int(rd.Txn)*words : int(rd.Txn+1)*words]
		for i := 0; i < nw; i++ {
			if placement.Has(rr, i) || in.Writers[ws[i]].Txn == rd.Txn {
				minStart[i] = max(minStart[i], q)
			}
		}
	}
	var pinned []int
	for i := range pin {
		if pin[i] >= 0 {
			if minStart[i] > pin[i] {
				return nil, false, true
			}
			pinned = append(pinned, i)
		}
	}
	vals := func(i int) []int32 { w := &in.Writers[ws[i]]; return in.WriterVals[w.Start:w.End] }
	placed := make([]uint64, words)
	order := make([]int, 0, nw) // indices into ws, in sequence
	var failed placement.Failed
	states, stopped := 0, false
	var dfs func(p int32) bool
	dfs = func(p int32) bool {
		for _, i := range pinned {
			if !placement.Has(placed, i) && pin[i] < p {
				return false // its block can no longer start where its read says
			}
		}
		if p == int32(len(L)) {
			return true
		}
		if states >= maxStates || stop != nil && states&255 == 0 && stop() {
			stopped = true
			return false
		}
		state := failed.Key(placed, int(p))
		if failed.Has(state) {
			return false
		}
		for i := 0; i < nw; i++ {
			b := vals(i)
			if placement.Has(placed, i) || len(b) == 0 || minStart[i] > p || pin[i] >= 0 && pin[i] != p {
				continue
			}
			ready := placement.Ready(preds[i*words:(i+1)*words], placed)
			m := min(int32(len(b)), int32(len(L))-p)
			// No read may end inside the block (a cut one runs past the trace's end).
			inside := slices.Contains(bound[p+1:p+m], true) || m < int32(len(b)) && bound[len(L)]
			if !ready || inside || !slices.Equal(b[:m], L[p:p+m]) {
				continue
			}
			placed[i/64] |= 1 << (i % 64)
			order = append(order, i)
			if dfs(p + m) {
				return true
			}
			order = order[:len(order)-1]
			placed[i/64] &^= 1 << (i % 64)
		}
		states++
		failed.Add(state) // placed is as it was on entry
		return false
	}
	if !dfs(0) {
		return nil, false, !stopped
	}
	// The rest past the trace: one pinned right after it first, then by rank.
	seq = make([]int32, 0, nw)
	for _, i := range order {
		seq = append(seq, ws[i])
	}
	var rest []int32
	for i := 0; i < nw; i++ {
		if !placement.Has(placed, i) {
			if pin[i] == int32(len(L)) {
				seq = append(seq, ws[i])
			} else {
				rest = append(rest, ws[i])
			}
		}
	}
	return append(seq, rest...), true, false
}
