package check

import (
	"slices"

	"doppel/encode"
	"doppel/history"
)

// Pinned cycles: under the one-base models a committed transaction that reads a key
// and appends to it has its block right after what it read (a pin), in every
// attribution; so has a block holding a value no other writer of the key appends, at
// that value's place in the trace (a value pin). Pins alone give edges that every
// attribution has: a read that ends before a pinned block reaches its writer by an
// anti-dependency (then write dependencies), and a pinned block inside a read reaches
// the reader by write and read dependencies. A cycle of such edges rules out every serial order, and one with no
// two adjacent anti-dependencies every snapshot-isolated execution, so no replay of
// that kind can succeed: proveByReplay skips those replays and their repairs (at 100K
// transactions with an injected G-single, 3–4 s of replays and repairs that could not
// succeed). The models are then decided as before, by the narrowing or the search,
// which also explain the cycle.

// pinnedCycles reports whether the edges given by pins close a cycle (serial) and a
// cycle with no two adjacent anti-dependencies (snapshot); with values, the value pins
// count too. It asks stop (when not nil) every few thousand keys, and reports no cycle
// when told to give up (0.35 s at 1M without values).
func pinnedCycles(h *history.History, in *encode.Inference, stop func() bool, values bool) (serial, snapshot bool) {
	g, ok := buildPinGraph(h, in, stop, false, values)
	if !ok {
		return false, false
	}
	return g.cyclic(false), g.cyclic(true)
}

// buildPinGraph collects the edges pins give (see pinnedCycles; with values, the value
// pins' too); with why, each edge also keeps what shows it (its key, the read and the
// pins), for an explanation. It reports false when stop told it to give up.
func buildPinGraph(h *history.History, in *encode.Inference, stop func() bool, why, values bool) (*pinGraph, bool) {
	n := int32(len(h.Txns))
	g := &pinGraph{n: n, why: why}
	var pins []pin
	var vp valuePinScratch
	var drop []bool
	// blockLen[t]: transaction t's appends to the key at hand (stamped per key in
	// blockAt): flat, not a map cleared per key (at 100K transactions on 20K keys the
	// map took 0.3 s).
	blockLen, blockAt := make([]int32, n), make([]int32, n)
	stamp := int32(0)
	for k := range in.Keys {
		if stop != nil && k%4096 == 4095 && stop() {
			return nil, false
		}
		key := &in.Keys[k]
		if key.Bad {
			continue
		}
		pins = pins[:0]
		for _, ri := range key.Reads {
			r := &in.Reads[ri]
			if r.Writes && !r.Version && h.Txns[r.Txn].Status == history.OK {
				pins = append(pins, pin{txn: r.Txn, pos: r.Len - r.Own, read: ri})
			}
		}
		if len(pins) == 0 && !values {
			continue
		}
		stamp++
		for _, wi := range key.Writers {
			w := &in.Writers[wi]
			blockLen[w.Txn], blockAt[w.Txn] = w.End-w.Start, stamp
		}
		lenOf := func(t int32) int32 {
			if blockAt[t] != stamp {
				return 0
			}
			return blockLen[t]
		}
		if values {
			pins = valuePins(in, key, pins, &vp)
		}
		if len(pins) == 0 {
			continue
		}
		slices.SortFunc(pins, func(a, b pin) int {
			if a.pos != b.pos {
				return int(a.pos - b.pos)
			}
			if a.txn != b.txn {
				return int(a.txn - b.txn)
			}
			return int(a.read - b.read)
		})
		// A transaction's reads of the key share one base: one pin each.
		pins = slices.CompactFunc(pins, func(a, b pin) bool { return a.txn == b.txn && a.pos == b.pos })
		if values {
			// A value pin whose block overlaps another pinned block (no attribution
			// has both) is dropped, so that value pins only add edges: between two
			// read pins it would break their chain.
			drop = drop[:0]
			for i, p := range pins {
				drop = append(drop, p.read <= -2 && (i > 0 && pins[i-1].pos+lenOf(pins[i-1].txn) > p.pos ||
					i+1 < len(pins) && p.pos+lenOf(p.txn) > pins[i+1].pos))
			}
			kept := pins[:0]
			for i, p := range pins {
				if !drop[i] {
					kept = append(kept, p)
				}
			}
			pins = kept
		}
		// A position two transactions are pinned at (a lost update) orders neither:
		// such pins give no edges here.
		alone := func(i int) bool {
			return (i == 0 || pins[i-1].pos != pins[i].pos) && (i == len(pins)-1 || pins[i+1].pos != pins[i].pos)
		}
		for i := range pins {
			pins[i].end = pins[i].pos + lenOf(pins[i].txn)
			if i > 0 && alone(i-1) && alone(i) && pins[i-1].pos+lenOf(pins[i-1].txn) <= pins[i].pos {
				// ww, through the blocks between
				g.add(pins[i-1].txn, pins[i].txn, encode.WW, int32(k), -1, pins[i-1].read, pins[i].read)
			}
		}
		for _, ri := range key.Reads {
			r := &in.Reads[ri]
			if r.Version || h.Txns[r.Txn].Status != history.OK {
				continue
			}
			u, l := r.Txn, r.Len-r.Own
			// The first pinned block at or after the read's end: not in the read.
			j, _ := slices.BinarySearchFunc(pins, l, func(p pin, l int32) int { return int(p.pos - l) })
			if j < len(pins) && alone(j) && pins[j].txn != u && r.Own == 0 {
				g.add(u, pins[j].txn, encode.RW, int32(k), ri, -1, pins[j].read)
			}
			// The last pinned block that ends inside the read (before j; blocks are
			// disjoint, so only pins[j-1] may cross the read's end), in it.
			for i := j - 1; i >= max(0, j-2); i-- {
				if pins[i].end <= l {
					if alone(i) && pins[i].txn != u {
						g.add(pins[i].txn, u, encode.WR, int32(k), ri, pins[i].read, -1)
					}
					break
				}
			}
		}
	}
	return g, true
}

// pin is a block placed by its writer's read: it starts at pos, ends before end, and
// read (an index into Inference.Reads) is the read that places it; or placed by a
// value (valuePins): read is then valuePinRef(p), p the trace position of that value.
type pin struct{ txn, pos, end, read int32 }

// valuePinRef encodes "placed by the value at trace position p" in a pin's read (and a
// pin edge's pinFrom or pinTo); valuePinPos decodes it (-1: a read, not a value).
func valuePinRef(p int32) int32 { return -2 - p }

func valuePinPos(ref int32) int32 {
	if ref <= -2 {
		return -2 - ref
	}
	return -1
}

// valuePinScratch is valuePins' memory, flat arrays over value and transaction ids
// stamped per key (a key's own work stays linear in its writers and trace, however
// many keys there are).
type valuePinScratch struct {
	stamp int32
	// Per value: stamped when a writer of the key appends it; how many do (2: two or
	// more, or twice in one block: its offset is not known); the writer id, if one.
	vStamp, vCount, vSole []int32
	// Per transaction: readPin (stamped: a read of the key pins it already); at
	// (stamped in atStamp): where its values place its block (-1: nowhere).
	readPin, atStamp, at []int32
}

// valuePins adds to pins (the key's read pins) the blocks a value places: a value at
// trace position p that only one writer of the key appends, and that writer only once,
// must be that writer's, so its block starts at p minus the value's offset in it, in
// every attribution (unique values pin every read block; at 10K transactions of two
// micro-ops a snapshot store's G2-item was left to the searches, 1–3.5 s). A
// transaction that a read already pins keeps that pin only, and one whose values
// disagree on where its block starts gets none.
func valuePins(in *encode.Inference, key *encode.Key, pins []pin, s *valuePinScratch) []pin {
	if len(key.Trace) == 0 || len(key.Writers) == 0 {
		return pins
	}
	if s.vStamp == nil {
		nv, nt := len(in.H.Values), len(in.H.Txns)
		s.vStamp, s.vCount, s.vSole = make([]int32, nv), make([]int32, nv), make([]int32, nv)
		s.readPin, s.atStamp, s.at = make([]int32, nt), make([]int32, nt), make([]int32, nt)
	}
	s.stamp++
	st := s.stamp
	for _, p := range pins {
		s.readPin[p.txn] = st
	}
	for _, wi := range key.Writers {
		w := &in.Writers[wi]
		vals := in.WriterVals[w.Start:w.End]
		for _, v := range vals {
			// A second append of v, by another writer or this one, leaves it unplaced.
			if s.vStamp[v] != st {
				s.vStamp[v], s.vCount[v], s.vSole[v] = st, 1, wi
			} else {
				s.vCount[v] = 2
			}
		}
	}
	reads := len(pins)
	for p, v := range key.Trace {
		if s.vStamp[v] != st || s.vCount[v] != 1 {
			continue
		}
		w := &in.Writers[s.vSole[v]]
		t := w.Txn
		if s.readPin[t] == st {
			continue
		}
		pos := int32(p) - int32(slices.Index(in.WriterVals[w.Start:w.End], v))
		switch {
		case s.atStamp[t] != st:
			s.atStamp[t], s.at[t] = st, pos
		case s.at[t] != pos:
			s.at[t] = -1
		}
		if pos >= 0 {
			pins = append(pins, pin{txn: t, pos: pos, read: valuePinRef(int32(p))})
		}
	}
	// Drop the pins of a writer whose values disagree on where its block starts.
	kept := pins[:reads]
	for _, q := range pins[reads:] {
		if s.at[q.txn] >= 0 {
			kept = append(kept, q)
		}
	}
	return kept
}

// pinGraph holds edges between transactions, each marked anti-dependency or not: 9
// bytes an edge, not check's graph over encode.Edge (32 bytes), since at 1M
// transactions there are up to two per read and fresh memory is what costs there.
type pinGraph struct {
	n        int32
	from, to []int32
	rw       []bool
	// With why, per edge: its kind and key, the read that observes (wr, rw; else -1)
	// and the reads that pin its writers (from's for ww and wr, to's for ww and rw).
	why            bool
	kind           []encode.EdgeKind
	key, read      []int32
	pinFrom, pinTo []int32
}

func (g *pinGraph) add(a, b int32, kind encode.EdgeKind, k, read, pinFrom, pinTo int32) {
	g.from, g.to, g.rw = append(g.from, a), append(g.to, b), append(g.rw, kind == encode.RW)
	if g.why {
		g.kind, g.key, g.read = append(g.kind, kind), append(g.key, k), append(g.read, read)
		g.pinFrom, g.pinTo = append(g.pinFrom, pinFrom), append(g.pinTo, pinTo)
	}
}

// cyclic reports whether the graph has a cycle: of any edges (split false), or of the
// split graph of snapshot isolation (split true: transaction t is start node 2t and
// commit node 2t+1, start → commit; an anti-dependency goes start → commit, every
// other edge commit → start), whose cycles are those with no two adjacent
// anti-dependencies. Kahn's algorithm over the nodes with edges.
func (g *pinGraph) cyclic(split bool) bool {
	if len(g.from) == 0 {
		return false
	}
	nodes := g.n
	if split {
		nodes *= 2
	}
	edge := func(i int) (int32, int32) {
		a, b := g.from[i], g.to[i]
		if !split {
			return a, b
		}
		if g.rw[i] {
			return 2 * a, 2*b + 1
		}
		return 2*a + 1, 2 * b
	}
	m := len(g.from)
	if split {
		m += int(g.n)
	}
	// Adjacency in CSR form: the data edges, then start → commit of each transaction.
	deg := make([]int32, nodes+1)
	indeg := make([]int32, nodes)
	count := func(a, b int32) { deg[a+1]++; indeg[b]++ }
	for i := range g.from {
		count(edge(i))
	}
	if split {
		for t := int32(0); t < g.n; t++ {
			count(2*t, 2*t+1)
		}
	}
	for v := int32(1); v <= nodes; v++ {
		deg[v] += deg[v-1]
	}
	adj := make([]int32, m)
	fill := slices.Clone(deg[:nodes])
	put := func(a, b int32) { adj[fill[a]] = b; fill[a]++ }
	for i := range g.from {
		put(edge(i))
	}
	if split {
		for t := int32(0); t < g.n; t++ {
			put(2*t, 2*t+1)
		}
	}
	queue := make([]int32, 0, nodes)
	for v := int32(0); v < nodes; v++ {
		if indeg[v] == 0 {
			queue = append(queue, v)
		}
	}
	for i := 0; i < len(queue); i++ {
		v := queue[i]
		for _, w := range adj[deg[v]:deg[v+1]] {
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	return int32(len(queue)) < nodes
}
