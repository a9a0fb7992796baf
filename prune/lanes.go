package prune

// lanes is how many keys one batched pass serves: each traversal of the graph's
// edges (the memory traffic that dominates) updates the bounds of all of them.
const lanes = 8

// laneScratch is the scratch of a batched pass, node-major: entry r*lanes+i is rank r
// for the batch's i-th key.
type laneScratch struct {
	best, least, app []int32
	// own bounds of the keys' gaps: fwd at the gap after crossing q (q), bwd at the
	// gap before crossing q (q); -1 elsewhere.
	fwd, bwd []int32
	// viaF, viaB (only to explain): the edge that gave each bound, -1 for none.
	viaF, viaB []int32
	// per key of the batch: narrowed windows (writer, lo, hi) and the contradiction.
	narrow  [lanes][]int32
	contraV [lanes]int32
}

func (p *pruner) newLaneScratch() *laneScratch {
	n := int(p.nodes) * lanes
	ls := &laneScratch{best: make([]int32, n), least: make([]int32, n), app: make([]int32, n),
		fwd: make([]int32, n), bwd: make([]int32, n)}
	for i := range ls.fwd {
		ls.fwd[i], ls.bwd[i] = -1, -1
	}
	return ls
}

// setKeys loads (or, with clear, unloads) the batch's keys into ls.
func (p *pruner) setKeys(keys []int32, ls *laneScratch, clear bool) {
	in := p.in
	L := int32(lanes)
	for i, k := range keys {
		li := int32(i)
		b := p.thetaBase[k]
		n := int32(len(in.Keys[k].Trace))
		for _, w := range in.Keys[k].Writers {
			if t := in.Writers[w].Txn; p.committed[t] {
				v := p.blockLen(w)
				if clear {
					v = 0
				}
				ls.app[p.rank[p.commitN(t)]*L+li] = v
				if p.half > 0 {
					ls.app[p.rank[p.commitN(t)+p.half]*L+li] = v
				}
			}
		}
		for q := int32(0); q <= n+1; q++ {
			f, bw := q, q
			if clear {
				f, bw = -1, -1
			}
			ls.bwd[p.rank[b+2*q]*L+li] = bw
			ls.fwd[p.rank[b+2*q+1]*L+li] = f
			if p.half > 0 {
				ls.bwd[p.rank[b+2*q+p.half]*L+li] = bw
				ls.fwd[p.rank[b+2*q+1+p.half]*L+li] = f
			}
		}
	}
}

// passesBatch runs the forward and backward passes of up to lanes keys in one traversal
// each: the forward pass bounds from below how many values each key has at each node
// (a transaction: before it runs), the backward pass from above (a transaction: after
// it ran, exclusive). Per key it records the windows narrowed, or a contradiction. It
// asks the deadline every pollNodes nodes (one batch can take a second on a big graph)
// and reports false when it expired: then nothing is recorded.
func (p *pruner) passesBatch(keys []int32, ls *laneScratch) bool {
	in := p.in
	L := int32(lanes)
	p.setKeys(keys, ls, false)
	defer p.setKeys(keys, ls, true)
	best, least, app, fwd, bwd := ls.best, ls.least, ls.app, ls.fwd, ls.bwd
	viaF, viaB := ls.viaF, ls.viaB
	for i := range best {
		best[i], least[i] = -1, inf
	}
	if viaF != nil {
		for i := range viaF {
			viaF[i], viaB[i] = -1, -1
		}
	}
	N := p.nodes
	rOff, rTo, rEdge := p.rOff, p.rTo, p.rEdge
	var o [lanes]int32
	for r := int32(0); r < N; r++ {
		if r%pollNodes == pollNodes-1 && p.expired() {
			return false
		}
		base := r * L
		any := false
		for i := int32(0); i < L; i++ {
			bv := best[base+i]
			if q := fwd[base+i]; q > bv {
				bv = q
				best[base+i] = q
				if viaF != nil {
					viaF[base+i] = -1
				}
			}
			if bv < 0 {
				o[i] = -1
				continue
			}
			o[i] = bv + app[base+i]
			any = true
		}
		if !any {
			continue
		}
		for j := rOff[r]; j < rOff[r+1]; j++ {
			ub := rTo[j] * L
			dst := best[ub : ub+L : ub+L]
			for i := range dst {
				if o[i] > dst[i] {
					dst[i] = o[i]
					if viaF != nil {
						viaF[ub+int32(i)] = rEdge[j]
					}
				}
			}
		}
	}
	var l [lanes]int32
	var lv [lanes]int32
	for r := N - 1; r >= 0; r-- {
		if r%pollNodes == 0 && p.expired() {
			return false
		}
		base := r * L
		for i := int32(0); i < L; i++ {
			l[i], lv[i] = inf, -1
			if q := bwd[base+i]; q >= 0 {
				l[i] = q
			}
		}
		for j := rOff[r]; j < rOff[r+1]; j++ {
			ub := rTo[j] * L
			src := least[ub : ub+L : ub+L]
			ap := app[ub : ub+L : ub+L]
			for i := range src {
				if lu := src[i]; lu != inf {
					if x := lu - ap[i]; x < l[i] {
						l[i], lv[i] = x, rEdge[j]
					}
				}
			}
		}
		copy(least[base:base+L], l[:])
		if viaB != nil {
			copy(viaB[base:base+L], lv[:])
		}
	}
	for i, k := range keys {
		ls.narrow[i], ls.contraV[i] = ls.narrow[i][:0], -1
		li := int32(i)
		for layer := int32(0); layer <= p.half && ls.contraV[i] < 0; layer += max(p.half, 1) {
			for v := layer; v < layer+p.nTN; v++ {
				x := p.rank[v]*L + li
				if best[x] >= 0 && least[x] < inf && best[x]+app[x] >= least[x] {
					ls.contraV[i] = v
					break
				}
			}
		}
		if ls.contraV[i] >= 0 {
			continue
		}
		for _, w := range in.Keys[k].Writers {
			c := p.commitN(in.Writers[w].Txn)
			if p.maybe(w) {
				// If it committed, not before what real time put before it.
				if x := p.rank[c]*L + li; best[x] > p.win.Lo[w] {
					ls.narrow[i] = append(ls.narrow[i], w, best[x], p.win.Hi[w])
				}
				continue
			}
			if !p.live(w) || p.pinned[w] {
				continue
			}
			lo, hi := p.win.Lo[w], p.win.Hi[w]
			for _, v := range [2]int32{c, c + p.half} { // with one layer, c twice
				x := p.rank[v]*L + li
				if best[x] > lo {
					lo = best[x]
				}
				if least[x] < inf {
					hi = min(hi, least[x]-p.blockLen(w)-1)
				}
			}
			if lo != p.win.Lo[w] || hi != p.win.Hi[w] {
				ls.narrow[i] = append(ls.narrow[i], w, lo, hi)
			}
		}
	}
	return true
}

// pollNodes is how many nodes a pass visits between two looks at the deadline.
const pollNodes = 4096
