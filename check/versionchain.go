package check

import (
	"slices"

	"doppel/encode"
	"doppel/history"
)

// stripMerged returns h without the appends that its version reads miss (each version
// read's transaction's earlier appends to the read key become reads whose result is
// not known, which the inference leaves out), or nil when in has no version read. A
// database that merged such an append into an equal value another transaction had just
// appended (dup-noop) installed nothing for it: h without it is the history the
// database ran, which the read-by-read replay mostly explains at once.
func stripMerged(h *history.History, in *encode.Inference) *history.History {
	var ops []history.MicroOp
	for i := range in.Reads {
		rd := &in.Reads[i]
		if !rd.Version {
			continue
		}
		if ops == nil {
			ops = append([]history.MicroOp(nil), h.Ops...)
		}
		tx := &h.Txns[rd.Txn]
		for j := tx.OpStart; j < rd.Op; j++ {
			if ops[j].Kind == history.Append && ops[j].Key == rd.Key {
				ops[j] = history.MicroOp{Kind: history.Read, Key: rd.Key}
			}
		}
	}
	if ops == nil {
		return nil
	}
	h2 := *h
	h2.Ops = ops
	return &h2
}

// mergedChains looks for a read-by-read order of h where order2, a verified order of
// stripMerged(h), leaves out the blocks its version reads miss (merged: writer ids of
// in). Read committed forbids only cycles of ww and wr edges, so an attribution of
// every block to a position proves it once those edges are acyclic; order2 gives one
// for all the others. A merged block goes where a block of the same values stands;
// that block and those of the same values after it move one such place on, the last
// past the trace (a chain, as if the database had installed the merged append after
// all, each later equal append one place further); or the merged block goes past the
// trace itself. Chains are tried one merged block at a time, each kept when its edges
// are acyclic (those of the merged blocks not placed yet left out); a topological
// order of the final attribution is returned, for verifyPerReadLists to accept, or
// nil. Where no chain places a merged block, earlierMove tries moving a displaced
// transaction without reads earlier on all its keys. stop ends the search.
func mergedChains(h *history.History, in *encode.Inference, order2 []int32, merged []int32, stop func() bool) []int32 {
	nk := len(in.Keys)
	// seq[k]: key k's blocks in list order (writer ids); the trace's are those whose
	// start is below its length.
	seq := make([][]int32, nk)
	skip := make([]bool, len(in.Writers))
	for _, w := range merged {
		skip[w] = true
	}
	for _, t := range order2 {
		for _, w := range in.TxnWriters(t) {
			if !skip[w] {
				seq[in.Writers[w].Key] = append(seq[in.Writers[w].Key], w)
			}
		}
	}
	placed := make([]bool, len(in.Writers))
	for w := range placed {
		placed[w] = !skip[w]
	}
	g := newChainGraph(h, in, order2)
	// Each check rebuilds the whole graph: in all, at most maxChainWork reads and
	// blocks, so that many merged appends on a long history do not take the solver's
	// time (the stop hook alone would let them).
	perCheck := len(in.Reads) + len(in.Writers) + 1
	budget := max(maxChainWork/perCheck, 2*maxChainChecks)
	for _, m := range merged {
		k := in.Writers[m].Key
		vals := in.Vals(m)
		n := int32(len(in.Keys[k].Trace))
		// The blocks of m's values inside the trace, by position.
		var same []int32 // indices into seq[k]
		p := int32(0)
		for i, w := range seq[k] {
			if p < n && slices.Equal(in.Vals(w), vals) {
				same = append(same, int32(i))
			}
			p += in.Writers[w].End - in.Writers[w].Start
		}
		// m takes the place of same[j]; the block it displaces moves on to one of the
		// next mergedHop places of its values, displacing that one, and so on, until one
		// goes past the trace. Each partial chain is checked with the displaced block
		// left out (fewer edges: a cycle then is one in every completion). Last: m past
		// the trace itself.
		cur := slices.Clone(seq[k])
		seq[k] = cur
		checks := 0
		var extend func(o int32, i int) bool
		extend = func(o int32, i int) bool {
			if checks, budget = checks+1, budget-1; checks > maxChainChecks || budget < 0 || stop != nil && stop() {
				return false
			}
			seq[k] = append(cur, o)
			placed[o] = true
			if g.acyclic(seq, placed) {
				return true
			}
			placed[o] = false
			seq[k] = cur
			for i2 := i + 1; i2 < len(same) && i2 <= i+mergedHop; i2++ {
				o2 := cur[same[i2]]
				cur[same[i2]] = o
				placed[o], placed[o2] = true, false
				checks, budget = checks+1, budget-1
				if g.acyclic(seq, placed) && extend(o2, i2) {
					return true
				}
				cur[same[i2]] = o2
				placed[o], placed[o2] = false, true
			}
			return false
		}
		found := false
		placed[m] = true
		for j := 0; j < len(same) && !found && checks <= maxChainChecks && budget >= 0; j++ {
			o := cur[same[j]]
			cur[same[j]] = m
			placed[o] = false
			checks, budget = checks+1, budget-1
			if found = g.acyclic(seq, placed) && extend(o, j); !found {
				cur[same[j]] = o
				placed[o] = true
				seq[k] = cur
			}
		}
		if !found {
			seq[k] = append(cur, m)
			found = g.acyclic(seq, placed)
		}
		if !found {
			// m takes the place of a block whose transaction has no reads: that
			// transaction moves earlier on all its keys at once.
			seq[k] = cur
			checks = 0
			try := func() bool {
				if checks, budget = checks+1, budget-1; checks > maxChainChecks || budget < 0 || stop != nil && stop() {
					return false
				}
				return g.acyclic(seq, placed)
			}
			for j := range same {
				if found = earlierMove(g, seq, placed, m, same, j, try); found || checks > maxChainChecks || budget < 0 {
					break
				}
			}
		}
		if !found {
			placed[m] = false
		}
		if !found {
			return nil
		}
	}
	return g.order(seq, placed)
}

// earlierMove tries m (on key k, whose blocks of m's values inside the trace are
// seq[k][same[...]], m left out) at the place of same[j], when the block there belongs
// to a transaction T without reads: T has no wr edge into it, so it may move earlier on
// every key it appends to at once, each key closed by a forward chain of equal values:
// T's block goes to an earlier place of its values, the block there moves on to a later
// one (at most earlierDepth times), and so on, until one fills T's old place (on k,
// where m took it, one goes past the trace). Moving on one key alone is usually cyclic,
// so T's blocks on the keys not moved yet give no edges (g.mute) while the earlier
// keys' moves are checked; a block still moving gives none either (on k it is left out,
// elsewhere it waits muted in T's old place). try checks an attribution (false also
// once the budget is spent). On success seq holds the move; otherwise seq, placed and
// g.mute are as they were.
func earlierMove(g *chainGraph, seq [][]int32, placed []bool, m int32, same []int32, j int, try func() bool) bool {
	in := g.in
	k := in.Writers[m].Key
	cur := seq[k]
	o := cur[same[j]]
	t := in.Writers[o].Txn
	for i := range in.Reads {
		if in.Reads[i].Txn == t {
			return false
		}
	}
	var ws []int32 // T's other blocks
	for _, w := range in.TxnWriters(t) {
		if w != o {
			ws = append(ws, w)
		}
	}
	if g.mute == nil {
		g.mute = make([]bool, len(in.Writers))
	}
	for _, w := range ws {
		g.mute[w] = true
	}
	defer func() {
		for _, w := range ws {
			g.mute[w] = false
		}
	}()
	// move places b, the block moving on (from index x of s, a key's places of its
	// values, into c, the key's blocks), for good (into s[end], or past the trace when
	// end < 0) or on to a later place, displacing the next.
	var move func(kk int32, c, s []int32, x int, b int32, end, depth int, next func() bool) bool
	move = func(kk int32, c, s []int32, x int, b int32, end, depth int, next func() bool) bool {
		if end >= 0 {
			g.mute[b] = false
		} else {
			seq[kk], placed[b] = append(c, b), true
		}
		if try() && next() {
			return true
		}
		limit := len(s)
		if end >= 0 {
			g.mute[b], limit = true, end
		} else {
			seq[kk], placed[b] = c, false
		}
		for x2 := x + 1; depth < earlierDepth && x2 < limit; x2++ {
			if kk == k && x2 == j {
				continue
			}
			b2 := c[s[x2]]
			c[s[x2]] = b
			if end >= 0 {
				c[s[end]], g.mute[b], g.mute[b2] = b2, false, true
			} else {
				placed[b], placed[b2] = true, false
			}
			if try() && move(kk, c, s, x2, b2, end, depth+1, next) {
				return true
			}
			c[s[x2]] = b2
			if end >= 0 {
				c[s[end]], g.mute[b], g.mute[b2] = b, true, false
			} else {
				placed[b], placed[b2] = false, true
			}
		}
		return false
	}
	var step func(q int) bool
	step = func(q int) bool {
		if q == 0 {
			// k: m takes o's place, o an earlier place of its values.
			cur[same[j]] = m
			placed[m] = true
			for a := j - 1; a >= 0; a-- {
				b := cur[same[a]]
				cur[same[a]], placed[b], placed[o] = o, false, true
				if try() && move(k, cur, same, a, b, -1, 0, func() bool { return step(1) }) {
					return true
				}
				cur[same[a]], placed[b], placed[o] = b, true, false
			}
			cur[same[j]] = o
			placed[m] = false
			return false
		}
		if q > len(ws) {
			return true
		}
		w := ws[q-1]
		g.mute[w] = false
		if try() && step(q+1) { // w stays
			return true
		}
		kk := in.Writers[w].Key
		c := seq[kk]
		vals := in.Vals(w)
		n := int32(len(in.Keys[kk].Trace))
		var s []int32
		i := -1
		p := int32(0)
		for x, w2 := range c {
			if p < n && slices.Equal(in.Vals(w2), vals) {
				if w2 == w {
					i = len(s)
				}
				s = append(s, int32(x))
			}
			p += in.Writers[w2].End - in.Writers[w2].Start
		}
		for a := i - 1; a >= 0; a-- {
			b := c[s[a]]
			c[s[a]], c[s[i]], g.mute[b] = w, b, true
			if try() && move(kk, c, s, a, b, i, 0, func() bool { return step(q + 1) }) {
				return true
			}
			c[s[a]], c[s[i]], g.mute[b] = b, w, false
		}
		g.mute[w] = true
		return false
	}
	placed[o] = false
	if step(0) {
		return true
	}
	placed[o] = true
	return false
}

// earlierDepth bounds the hops of earlierMove's forward chains.
const earlierDepth = 4

// mergedHop is how many places of its values on a displaced block may move on.
const mergedHop = 3

// maxChainChecks bounds the attributions mergedChains checks per merged block.
const maxChainChecks = 5000

// maxChainWork bounds the reads and blocks mergedChains's checks go through in all
// (about a CPU-second), but never below two merged blocks' worth of checks.
const maxChainWork = 200_000_000

// chainGraph checks attributions given as each key's blocks in list order: their ww
// and wr edges acyclic and every read consistent with them (ending where a block ends,
// a read showing its own appends right before its own block, a read before its own
// append not reaching it). Scratch space is kept between calls.
type chainGraph struct {
	h     *history.History
	in    *encode.Inference
	txns  []int32   // the committed transactions (Kahn's queue takes them in this order)
	endAt [][]int32 // per key, per position up to the trace length: the block ending there (-1 none)
	posOf []int32   // per writer: its block's start
	head  []int32   // per transaction: its first edge (-1 none)
	next  []int32   // per edge: the next of the same source
	to    []int32   // per edge: its target
	indeg []int32
	mute  []bool // per writer (nil: none): its block keeps its place but gives no edge
}

func newChainGraph(h *history.History, in *encode.Inference, txns []int32) *chainGraph {
	g := &chainGraph{h: h, in: in, txns: txns, posOf: make([]int32, len(in.Writers)),
		head: make([]int32, len(h.Txns)), indeg: make([]int32, len(h.Txns)), endAt: make([][]int32, len(in.Keys))}
	for k := range in.Keys {
		g.endAt[k] = make([]int32, len(in.Keys[k].Trace)+1)
	}
	return g
}

func (g *chainGraph) edge(a, b int32) {
	g.next = append(g.next, g.head[a])
	g.to = append(g.to, b)
	g.head[a] = int32(len(g.to) - 1)
	g.indeg[b]++
}

// build fills the edges of the attribution seq (placed: the writers it holds; the
// others are left out); false when some read contradicts it.
func (g *chainGraph) build(seq [][]int32, placed []bool) bool {
	in := g.in
	g.next, g.to = g.next[:0], g.to[:0]
	for _, t := range g.txns {
		g.head[t], g.indeg[t] = -1, 0
	}
	for k, blocks := range seq {
		e := g.endAt[k]
		for i := range e {
			e[i] = -1
		}
		n := int32(len(e) - 1)
		p, prev := int32(0), int32(-1)
		for _, w := range blocks {
			if !placed[w] {
				continue
			}
			g.posOf[w] = p
			p += in.Writers[w].End - in.Writers[w].Start
			if p <= n {
				e[p] = w
			}
			if g.mute != nil && g.mute[w] {
				continue
			}
			t := in.Writers[w].Txn
			if prev >= 0 {
				g.edge(prev, t)
			}
			prev = t
		}
		if p < n {
			return false // the trace is not covered
		}
	}
	for i := range in.Reads {
		rd := &in.Reads[i]
		t := rd.Txn
		if g.h.Txns[t].Status != history.OK {
			continue
		}
		k := rd.Key
		if rd.Version {
			// No edge; it ends where a block ends or inside its own block.
			if rd.Len == 0 || g.endAt[k][rd.Len] >= 0 {
				continue
			}
			if w := in.KeyWriter(t, k); w >= 0 && placed[w] && g.posOf[w] < rd.Len && rd.Len < g.posOf[w]+in.Writers[w].End-in.Writers[w].Start {
				continue
			}
			return false
		}
		base := rd.Len - rd.Own
		if rd.Writes {
			w := in.KeyWriter(t, k)
			if w < 0 {
				return false
			}
			// A block being moved (not placed) is not checked.
			if placed[w] && (g.mute == nil || !g.mute[w]) && (rd.Own > 0 && g.posOf[w] != base || rd.Own == 0 && g.posOf[w] < rd.Len) {
				return false
			}
		}
		if base == 0 {
			continue
		}
		w := g.endAt[k][base]
		if w < 0 || in.Writers[w].Txn == t {
			return false
		}
		if g.mute == nil || !g.mute[w] {
			g.edge(in.Writers[w].Txn, t)
		}
	}
	return true
}

// topo returns a topological order of the committed transactions, or nil on a cycle.
func (g *chainGraph) topo() []int32 {
	queue := make([]int32, 0, len(g.txns))
	for _, t := range g.txns {
		if g.indeg[t] == 0 {
			queue = append(queue, t)
		}
	}
	for i := 0; i < len(queue); i++ {
		for e := g.head[queue[i]]; e >= 0; e = g.next[e] {
			b := g.to[e]
			if g.indeg[b]--; g.indeg[b] == 0 {
				queue = append(queue, b)
			}
		}
	}
	if len(queue) != len(g.txns) {
		return nil
	}
	return queue
}

func (g *chainGraph) acyclic(seq [][]int32, placed []bool) bool {
	return g.build(seq, placed) && g.topo() != nil
}

func (g *chainGraph) order(seq [][]int32, placed []bool) []int32 {
	if !g.build(seq, placed) {
		return nil
	}
	return g.topo()
}

// mergedWriters returns the writers whose blocks in's version reads miss, or nil when
// one of them also appends after its version read (stripMerged keeps those appends:
// its block is not one stripMerged removes whole).
func mergedWriters(h *history.History, in *encode.Inference) []int32 {
	var ws []int32
	for i := range in.Reads {
		rd := &in.Reads[i]
		if !rd.Version {
			continue
		}
		var w int32 = -1
		for _, x := range in.TxnWriters(rd.Txn) {
			if in.Writers[x].Key == rd.Key {
				w = x
			}
		}
		if w < 0 {
			return nil
		}
		tx := &h.Txns[rd.Txn]
		for j := rd.Op + 1; j < tx.OpEnd; j++ {
			if h.Ops[j].Kind == history.Append && h.Ops[j].Key == rd.Key {
				return nil
			}
		}
		if !slices.Contains(ws, w) {
			ws = append(ws, w)
		}
	}
	return ws
}

// proveMergedChains proves the models of names (per-read ones that forbid no more
// than read committed's cycles, given the findings) when in's version reads miss
// appends a database merged away (dup-noop): the read-by-read replay of the history
// without them (stripMerged) mostly runs through at once, and mergedChains then places
// them. It runs after the replays of the history itself failed.
func (c *checker) proveMergedChains(in *encode.Inference, names []string) {
	merged := mergedWriters(c.h, in)
	if len(merged) == 0 || c.budget.out() {
		return
	}
	for t := range c.h.Txns {
		if c.h.Txns[t].Status == history.Info && len(in.TxnWriters(int32(t))) > 0 {
			return // an optional writer may fill a place a chain needs: not handled
		}
	}
	c.progress("replaying read by read without the merged appends")
	h2 := stripMerged(c.h, in)
	in2 := encode.InferPerReadStop(h2, c.budget.stop)
	if in2 == nil || !perReadClean(in2) || c.budget.out() {
		return
	}
	// Unguided first, then guided by process and real-time order (as provePerRead):
	// each gives other chains.
	guides := [][]encode.Edge{nil}
	guides = append(guides, orderGuide(in2, commitsOf(h2)))
	var first []int32 // the first replay's order, for the neighbourhood search
	for _, guide := range guides {
		if c.budget.out() {
			return
		}
		order2, ok, n := perReadReplays(h2, in2, guide, !c.opts.Solver.NoRepair, c.budget.stop, c.budget.out)
		c.res.Stats.Repairs += n
		if !ok {
			continue
		}
		if first == nil {
			first = order2
		}
		c.progress("placing the merged appends")
		order := mergedChains(c.h, in, order2, merged, c.budget.stop)
		if order == nil {
			continue
		}
		c.progress("verifying a read-by-read replay")
		at, err := verifyPerReadLists(c.h, in, order)
		if err != nil {
			c.res.Stats.ReplayRejected++ // mergedChains's graph disagrees with the verification: a bug
			continue
		}
		c.proveOrdered(at, names)
		return
	}
	if c.opts.Solver.MergedLNS && first != nil && !c.budget.out() {
		if at := c.proveMergedLNS(in, first, merged); at != nil {
			c.proveOrdered(at, names)
		}
	}
}
