package prune

import (
	"math/bits"
	"slices"
)

// Incremental passes. A key's bounds are a function of the graph alone (the longest
// paths from its thresholds, forward and backward), and from one round to the next the
// graph changes only in the edges of the writers whose windows narrowed. So the bounds
// of a batch's last passes are kept, and when few edges changed since, its next passes
// revisit only the ends of the changed edges and, transitively, the nodes a neighbour of
// which got a new bound, in topological order: the same bounds as passes over the whole
// graph, at the cost of the part that moved. Kept bounds take 8 bytes per node and key,
// so they are kept only when that fits in maxKeptBytes.

// maxKeptBytes bounds the memory of the kept bounds.
const maxKeptBytes = 256 << 20

// fullPasses, set by tests, turns the incremental passes off (every pass over the whole
// graph) to compare both.
var fullPasses = false

// incFraction: incremental passes when at most one node in incFraction is the end of a
// changed edge; more, and they would revisit most of the graph at a higher cost per node
// than whole passes.
var incFraction = int64(8)

// incState is what the incremental passes keep between rounds.
type incState struct {
	// gen counts the graphs built; between graph g-1 and graph g, the edges added or
	// removed go into the nodes intoChanged[g-1] and out of outChanged[g-1].
	gen                     int
	intoChanged, outChanged [][]int32
	// prevLo, prevHi: each writer's window in the last graph built.
	prevLo, prevHi []int32
	// ranks[g-1]: each node's rank in graph g.
	ranks [][]int32
	// Keys are passed in fixed groups of up to lanes (groupOf: per key, -1 for none),
	// so that a group's bounds are kept as its batch computes them, lanes interleaved:
	// node v's at ranks[layout-1][v]*lanes; nil when none. They are the bounds of graph
	// keptGen.
	groupOf         []int32
	groups          [][]int32
	best, least     [][]int32
	keptGen, layout []int
	// By rank, the edges into each rank (inOff) and their sources' ranks (inFrom).
	inOff, inFrom []int32
	passes        int // incremental passes run (batches), for tests
}

// incInit turns the incremental passes on when their memory fits.
func (p *pruner) incInit() {
	if fullPasses {
		return
	}
	keys := 0
	for k := range p.in.Keys {
		if p.thetaBase[k] >= 0 {
			keys++
		}
	}
	if int64(keys+lanes)*int64(p.nodes)*8 > maxKeptBytes {
		return
	}
	p.inc = &incState{groupOf: make([]int32, len(p.in.Keys)),
		prevLo: make([]int32, len(p.in.Writers)), prevHi: make([]int32, len(p.in.Writers))}
	for k := range p.inc.groupOf {
		p.inc.groupOf[k] = -1
	}
}

// incGraph records, for the graph just built and ranked, the nodes whose edges changed
// since the last one, the ranks, and the edges into each rank.
func (p *pruner) incGraph() {
	inc := p.inc
	if inc == nil {
		return
	}
	inc.gen++
	var into, out []int32
	var old, cur []edge
	for w := range p.in.Writers {
		w := int32(w)
		if !p.live(w) && !p.maybe(w) {
			continue
		}
		lo, hi := p.win.Lo[w], p.win.Hi[w]
		if inc.gen > 1 && (lo != inc.prevLo[w] || hi != inc.prevHi[w]) {
			old = p.writerEdges(old[:0], w, inc.prevLo[w], inc.prevHi[w])
			cur = p.writerEdges(cur[:0], w, lo, hi)
			for _, e := range old {
				if !slices.Contains(cur, e) {
					into, out = append(into, e.to), append(out, e.from)
				}
			}
			for _, e := range cur {
				if !slices.Contains(old, e) {
					into, out = append(into, e.to), append(out, e.from)
				}
			}
		}
		inc.prevLo[w], inc.prevHi[w] = lo, hi
	}
	inc.intoChanged, inc.outChanged = append(inc.intoChanged, into), append(inc.outChanged, out)
	inc.ranks = append(inc.ranks, slices.Clone(p.rank))
	if inc.inOff == nil {
		inc.inOff = make([]int32, p.nodes+1)
	}
	clear(inc.inOff)
	for _, t := range p.rTo {
		inc.inOff[t+1]++
	}
	for r := int32(0); r < p.nodes; r++ {
		inc.inOff[r+1] += inc.inOff[r]
	}
	inc.inFrom = slices.Grow(inc.inFrom[:0], len(p.rTo))[:len(p.rTo)]
	fill := slices.Clone(inc.inOff[:p.nodes])
	for r := int32(0); r < p.nodes; r++ {
		for j := p.rOff[r]; j < p.rOff[r+1]; j++ {
			t := p.rTo[j]
			inc.inFrom[fill[t]] = r
			fill[t]++
		}
	}
}

// incBatches splits keys into the batches of their groups (new groups for keys without
// one, in order), in the order of their first key.
func (p *pruner) incBatches(keys []int32) [][]int32 {
	inc := p.inc
	var fresh []int32
	for _, k := range keys {
		if inc.groupOf[k] < 0 {
			fresh = append(fresh, k)
		}
	}
	for lo := 0; lo < len(fresh); lo += lanes {
		g := fresh[lo:min(lo+lanes, len(fresh))]
		for _, k := range g {
			inc.groupOf[k] = int32(len(inc.groups))
		}
		inc.groups = append(inc.groups, slices.Clone(g))
		inc.best = append(inc.best, nil)
		inc.least = append(inc.least, nil)
		inc.keptGen = append(inc.keptGen, 0)
		inc.layout = append(inc.layout, 0)
	}
	var out [][]int32
	seen := make([]bool, len(inc.groups))
	for _, k := range keys {
		if g := inc.groupOf[k]; !seen[g] {
			seen[g] = true
			out = append(out, inc.groups[g])
		}
	}
	return out
}

// incGroup returns the group of a batch's keys.
func (p *pruner) incGroup(keys []int32) int32 { return p.inc.groupOf[keys[0]] }

// incWorth reports whether group g has kept bounds and few enough nodes changed since
// for incremental passes.
func (p *pruner) incWorth(g int32) bool {
	inc := p.inc
	if inc.best[g] == nil {
		return false
	}
	n := 0
	for gen := inc.keptGen[g] + 1; gen <= inc.gen; gen++ {
		n += len(inc.intoChanged[gen-1]) + len(inc.outChanged[gen-1])
	}
	return int64(n)*incFraction <= int64(p.nodes)
}

// incKeep keeps the bounds of a group's passes over the whole graph: ls's arrays become
// the group's, and ls takes the group's old ones (or new ones), which the next whole
// passes initialize.
func (p *pruner) incKeep(g int32, ls *laneScratch) {
	inc := p.inc
	if inc.best[g] == nil {
		inc.best[g], inc.least[g] = make([]int32, len(ls.best)), make([]int32, len(ls.least))
	}
	ls.best, inc.best[g] = inc.best[g], ls.best
	ls.least, inc.least[g] = inc.least[g], ls.least
	inc.keptGen[g], inc.layout[g] = inc.gen, inc.gen
}

// passesIncremental computes the bounds of a group's keys into ls from their kept
// bounds, and updates those: ls then holds the bounds of every transaction node and of
// the nodes visited (no other node is read). False when the deadline expired (the
// kept bounds, partly updated, are dropped).
func (p *pruner) passesIncremental(keys []int32, ls *laneScratch) bool {
	inc := p.inc
	g := p.incGroup(keys)
	L := int32(lanes)
	N := p.nodes
	best, least, app, fwd, bwd := ls.best, ls.least, ls.app, ls.fwd, ls.bwd
	kb, kl, kr := inc.best[g], inc.least[g], inc.ranks[inc.layout[g]-1]
	words := (N + 63) / 64
	if len(ls.dirtyF) < int(words) {
		ls.dirtyF, ls.dirtyB, ls.loaded = make([]uint64, words), make([]uint64, words), make([]uint64, words)
	}
	dF, dB, loaded := ls.dirtyF[:words], ls.dirtyB[:words], ls.loaded[:words]
	clear(dF)
	clear(dB)
	clear(loaded)
	topo := p.topo
	// load copies rank r's kept bounds into ls, once.
	load := func(r int32) {
		if loaded[r>>6]&(1<<(r&63)) != 0 {
			return
		}
		loaded[r>>6] |= 1 << (r & 63)
		x, y := r*L, kr[topo[r]]*L
		*(*[lanes]int32)(best[x : x+L]) = *(*[lanes]int32)(kb[y : y+L])
		*(*[lanes]int32)(least[x : x+L]) = *(*[lanes]int32)(kl[y : y+L])
	}
	// store sets rank r's bounds in arr (best or least) and in kept, reporting whether
	// they changed.
	store := func(arr, kept []int32, r int32, nv *[lanes]int32) bool {
		cur := (*[lanes]int32)(arr[r*L : r*L+L])
		if *nv == *cur {
			return false
		}
		*cur = *nv
		y := kr[topo[r]] * L
		*(*[lanes]int32)(kept[y : y+L]) = *nv
		return true
	}
	for gen := inc.keptGen[g] + 1; gen <= inc.gen; gen++ {
		for _, v := range inc.intoChanged[gen-1] {
			r := p.rank[v]
			dF[r>>6] |= 1 << (r & 63)
		}
		for _, v := range inc.outChanged[gen-1] {
			r := p.rank[v]
			dB[r>>6] |= 1 << (r & 63)
		}
	}
	expired := func() bool {
		if p.expired() {
			inc.best[g], inc.least[g] = nil, nil
			return true
		}
		return false
	}
	rOff, rTo := p.rOff, p.rTo
	inOff, inFrom := inc.inOff, inc.inFrom
	var nv [lanes]int32
	visits := 0
	// Forward, in topological order: a node's bound from its own threshold and the
	// bounds of the nodes before it.
	for wi := int32(0); wi < words; wi++ {
		for dF[wi] != 0 {
			b := int32(bits.TrailingZeros64(dF[wi]))
			dF[wi] &^= 1 << b
			r := wi<<6 | b
			if visits++; visits%pollNodes == 0 && expired() {
				return false
			}
			load(r)
			base := r * L
			for i := range nv {
				nv[i] = max(-1, fwd[base+int32(i)])
			}
			for j := inOff[r]; j < inOff[r+1]; j++ {
				s := inFrom[j]
				load(s)
				src := best[s*L : s*L+L : s*L+L]
				ap := app[s*L : s*L+L : s*L+L]
				for i := range src {
					if bv := src[i]; bv >= 0 && bv+ap[i] > nv[i] {
						nv[i] = bv + ap[i]
					}
				}
			}
			if store(best, kb, r, &nv) {
				for j := rOff[r]; j < rOff[r+1]; j++ {
					t := rTo[j]
					dF[t>>6] |= 1 << (t & 63)
				}
			}
		}
	}
	// Backward, in reverse order: from its own threshold and the bounds after it.
	for wi := words - 1; wi >= 0; wi-- {
		for dB[wi] != 0 {
			b := int32(63 - bits.LeadingZeros64(dB[wi]))
			dB[wi] &^= 1 << b
			r := wi<<6 | b
			if visits++; visits%pollNodes == 0 && expired() {
				return false
			}
			load(r)
			base := r * L
			for i := range nv {
				nv[i] = inf
				if q := bwd[base+int32(i)]; q >= 0 {
					nv[i] = q
				}
			}
			for j := rOff[r]; j < rOff[r+1]; j++ {
				u := rTo[j]
				load(u)
				src := least[u*L : u*L+L : u*L+L]
				ap := app[u*L : u*L+L : u*L+L]
				for i := range src {
					if lu := src[i]; lu != inf && lu-ap[i] < nv[i] {
						nv[i] = lu - ap[i]
					}
				}
			}
			if store(least, kl, r, &nv) {
				for j := inOff[r]; j < inOff[r+1]; j++ {
					s := inFrom[j]
					dB[s>>6] |= 1 << (s & 63)
				}
			}
		}
	}
	// What the narrowing reads: the transactions' bounds.
	for v := int32(0); v < p.nTN; v++ {
		load(p.rank[v])
	}
	inc.keptGen[g] = inc.gen
	inc.passes++
	return true
}
