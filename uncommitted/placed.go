package uncommitted

import (
	"slices"

	"doppel/history"
	"doppel/internal/placement"
)

// ProveByOrderPlaced is ProveByOrder for an order in which some open keys' appends do
// not show one of their longest reads: a lost update's loser, whose append no read
// shows, runs where its process puts it, so the writers after it on its key are one
// position off. Each such key's positions are then placed anew (placeKey), every other
// key's attribution being the order's; the whole attribution counts only when
// verifyAttribution accepts it. maxStates bounds each key's failed states; stop is
// polled. stuck reports a key with no placement at all given the others (its search
// exhausted, the rest's graph acyclic): the loser reaches, through the order's other
// keys and the model's orders, writers it must precede.
//
// mayLeave (per transaction; nil: none) names the writers placeKey may leave out of a
// key whose last position it keeps for an uncommitted append: a lost update's members.
func (x *Index) ProveByOrderPlaced(order []int32, process, realtime bool, mayLeave []bool, maxStates int, stop func() bool) (proved, stuck bool) {
	if len(x.Findings) > 0 {
		return false, false // a read shows more than was appended: no attribution at all
	}
	attr, rank, ok := x.orderAttribution(order)
	if !ok {
		return false, false
	}
	skip := make([]bool, len(x.open))
	var misplaced []int
	for i, a := range attr {
		if a.li < 0 {
			skip[i] = true
			misplaced = append(misplaced, i)
		}
	}
	for _, i := range misplaced {
		// The keys placed so far count; those still to place do not.
		d, ok := x.attributionGraphSkip(process, realtime, attr, skip)
		if !ok {
			return false, false
		}
		a, ok, exhausted := x.placeKey(d, i, rank, mayLeave, maxStates, stop)
		if !ok {
			return false, exhausted
		}
		attr[i], skip[i] = a, false
	}
	return x.verifyAttribution(process, realtime, attr), false
}

// placeKey places open key i's longest read anew given d, the graph of every other
// key's attribution and the model's orders (it must be acyclic). Key i's :ok writers
// each install their appends to it as one block; a position may instead take an
// uncommitted append of its value. With the key's writers placed in list order, the
// graph stays acyclic iff no writer reaches (in d) one placed before it, so the
// placement is a sequence of writers each of whose d-predecessors among them is
// already placed, spelling the read (a writer left out then reaches none placed, so
// the edges from the read's last writer to it close no cycle either). A depth-first
// search over such sequences, the writers tried in rank order (the order's sequence),
// failed states (the writers placed and the position) remembered. exhausted: d is
// acyclic and the search ended without a placement and within its bounds.
//
// The last position goes to an uncommitted append of its value where one is left:
// then L's last writer is not committed, so no edge leads from it to the writers left
// out (Elle's edge from the last writer to every appender L does not show), and the
// edges are those of a committed last writer less some. Where such an append is kept
// for the end, a writer of mayLeave that stops the rest (a lost update's loser, which
// precedes in real time the writers after it) may also be left out, costing no edge:
// the search tries that after the writers and the uncommitted appends, for at most
// leaveOutTries writers a state, maxLeftOut in all and as many appends as L has no
// room for. Without it, a loser the order runs in line is placed somewhere on its key
// and every later writer of its value one position off, which real-time order forbids
// (2,000 transactions on 20 keys of three values with 5% :info: strong read
// uncommitted unknown at 30 s, now proved in 0.1 s).
func (x *Index) placeKey(d *decider, i int, rank []int32, mayLeave []bool, maxStates int, stop func() bool) (a keyAttribution, ok, exhausted bool) {
	h := x.h
	o := x.open[i]
	nw := len(o.writers)
	words := (nw + 63) / 64
	widx := make(map[int32]int, nw)
	for w, t := range o.writers {
		widx[t] = w
	}
	// Each writer's block: its appends to the key, in program order.
	blocks := make([][]int32, nw)
	wild := map[int32]int32{} // value → uncommitted appends of it
	for t := range h.Txns {
		for _, op := range h.TxnOps(t) {
			if op.Kind != history.Append || op.Key != o.key {
				continue
			}
			if w, ok := widx[int32(t)]; ok && h.Txns[t].Status == history.OK {
				blocks[w] = append(blocks[w], op.Value)
			} else {
				wild[op.Value]++
			}
		}
	}
	// preds[w]: the writers that reach writer w in d (bitsets), from the writers each
	// node reaches, in reverse topological order.
	succ := func(v int32, visit func(int32)) {
		for _, e := range d.adj[v] {
			visit(e.to)
		}
	}
	topo, acyclic := placement.TopoOrder(len(d.adj), succ)
	if !acyclic {
		return keyAttribution{}, false, false
	}
	reach := placement.Reach(len(d.adj), topo, words, succ, func(u int32) int {
		if w, ok := widx[u]; ok && int(u) < d.n {
			return w
		}
		return -1
	})
	preds, ok := placement.Preds(reach, words, nw, func(w int) int32 { return o.writers[w] })
	if !ok {
		return keyAttribution{}, false, false // a writer on a cycle of d
	}
	byRank := make([]int, nw) // writers, earliest in the order first
	for w := range byRank {
		byRank[w] = w
	}
	slices.SortStableFunc(byRank, func(a, b int) int {
		ra, rb := rank[o.writers[a]], rank[o.writers[b]]
		if ra < 0 {
			ra = int32(len(h.Txns))
		}
		if rb < 0 {
			rb = int32(len(h.Txns))
		}
		return int(ra - rb)
	})
	spare := -len(o.ls[0]) // appends L has no room for (every longest read is as long)
	for _, b := range blocks {
		spare += len(b)
	}
	for _, c := range wild {
		spare += int(c)
	}
	states, stopped := 0, false
	for li, l := range o.ls {
		placed := make([]uint64, words)
		at := make([]int32, 0, len(l))
		usedWild := map[int32]int32{}
		last := int32(-1) // the last position's value
		if len(l) > 0 {
			last = l[len(l)-1]
		}
		leftOut, leftWriters := 0, 0 // appends and writers left out
		var failed placement.Failed
		var dfs func(p int) bool
		dfs = func(p int) bool {
			if p == len(l) {
				return true
			}
			if states >= maxStates || stop != nil && states&255 == 0 && stop() {
				stopped = true
				return false
			}
			state := failed.Key(placed, p+(len(l)+1)*leftOut) // placed holds those left out too
			if failed.Has(state) {
				return false
			}
			if p == len(l)-1 && usedWild[last] < wild[last] {
				usedWild[last]++
				at = append(at, -1)
				return true
			}
			for _, w := range byRank {
				if placement.Has(placed, w) || len(blocks[w]) == 0 {
					continue
				}
				b := blocks[w]
				n := min(len(b), len(l)-p)
				if !placement.Ready(preds[w*words:(w+1)*words], placed) || !slices.Equal(b[:n], l[p:p+n]) {
					continue
				}
				placed[w/64] |= 1 << (w % 64)
				for range n {
					at = append(at, o.writers[w])
				}
				if dfs(p + n) {
					return true
				}
				at = at[:len(at)-n]
				placed[w/64] &^= 1 << (w % 64)
			}
			keep := int32(0) // the last position's, once a writer is left out
			if leftOut > 0 && l[p] == last {
				keep = 1
			}
			if v := l[p]; usedWild[v] < wild[v]-keep {
				usedWild[v]++
				at = append(at, -1)
				if dfs(p + 1) {
					return true
				}
				at = at[:len(at)-1]
				usedWild[v]--
			}
			if mayLeave != nil && usedWild[last] < wild[last] && leftWriters < maxLeftOut {
				tried := 0
				for _, w := range byRank {
					if tried == leaveOutTries {
						break
					}
					if !mayLeave[o.writers[w]] || placement.Has(placed, w) || len(blocks[w]) == 0 || leftOut+len(blocks[w]) > spare ||
						!placement.Ready(preds[w*words:(w+1)*words], placed) {
						continue
					}
					tried++
					placed[w/64] |= 1 << (w % 64)
					leftOut += len(blocks[w])
					leftWriters++
					if dfs(p) {
						return true
					}
					leftWriters--
					leftOut -= len(blocks[w])
					placed[w/64] &^= 1 << (w % 64)
				}
			}
			states++
			failed.Add(state) // placed is as it was on entry
			return false
		}
		if dfs(0) {
			return keyAttribution{li: li, at: at}, true, false
		}
		if stopped {
			return keyAttribution{}, false, false
		}
	}
	return keyAttribution{}, false, true
}

// leaveOutTries bounds the writers placeKey tries leaving out at a state (a variable
// for the test that shows the search needs it).
var leaveOutTries = 4

// maxLeftOut bounds the writers placeKey leaves out: a lost update's loser or two,
// not a search over every subset of the appends L has no room for (a key of 705
// positions with 41 appends more took all 16K states for nothing).
const maxLeftOut = 2
