// Package placement holds what the searches that place a lost key's writers anew
// share (read uncommitted's uncommitted.Index.placeKey, read committed's
// check.perReadPlacer.placeKey): which of the key's writers each node of an acyclic
// graph reaches, the writers that must come before each writer, and the failed states
// of a depth-first search over the writers placed so far.
package placement

import (
	"encoding/binary"
	"slices"
	"sort"

	"doppel/history"
)

// Completions returns the completion positions of the transactions txns of h, sorted:
// OrderEdges's real-time nodes n, n+1, ... stand for them, one each.
func Completions(h *history.History, txns []int32) []int32 {
	var comps []int32
	for _, t := range txns {
		if c := h.Txns[t].Complete; c >= 0 {
			comps = append(comps, c)
		}
	}
	slices.Sort(comps)
	return comps
}

// OrderEdges calls add for the edges of the models' orders among the transactions
// txns of h (nodes 0..n-1): process order between consecutive transactions of one
// process in byProc (txns in the caller's process order; nil: none), then real-time
// order through a chain of the completion nodes (node n+i stands for comps[i], from
// Completions; none: no real-time order): each transaction to its completion's node,
// the node of the last completion before its invoke to it. realtime says which order
// an edge is.
func OrderEdges(h *history.History, txns, byProc, comps []int32, n int, add func(from, to int32, realtime bool)) {
	for i := 1; i < len(byProc); i++ {
		a, b := byProc[i-1], byProc[i]
		if p := h.Txns[a].Process; p >= 0 && p == h.Txns[b].Process {
			add(a, b, false)
		}
	}
	if len(comps) == 0 {
		return
	}
	for i := 1; i < len(comps); i++ {
		add(int32(n+i-1), int32(n+i), true)
	}
	for _, t := range txns {
		tx := &h.Txns[t]
		if tx.Complete >= 0 {
			i := sort.Search(len(comps), func(i int) bool { return comps[i] >= tx.Complete })
			add(t, int32(n+i), true)
		}
		if tx.Invoke >= 0 {
			// from the last completion before the invoke
			if i := sort.Search(len(comps), func(i int) bool { return comps[i] >= tx.Invoke }) - 1; i >= 0 {
				add(int32(n+i), t, true)
			}
		}
	}
}

// TopoOrder returns a topological order of the graph of n nodes whose successors succ
// lists (Kahn's), or false when it has a cycle.
func TopoOrder(n int, succ func(v int32, visit func(u int32))) ([]int32, bool) {
	indeg := make([]int32, n)
	for v := range n {
		succ(int32(v), func(u int32) { indeg[u]++ })
	}
	order := make([]int32, 0, n)
	for v := range n {
		if indeg[v] == 0 {
			order = append(order, int32(v))
		}
	}
	for j := 0; j < len(order); j++ {
		succ(order[j], func(u int32) {
			if indeg[u]--; indeg[u] == 0 {
				order = append(order, u)
			}
		})
	}
	return order, len(order) == n
}

// Reach returns, for each of n nodes, a bitset of words words: the items it reaches
// in the acyclic graph whose topological order is topo and whose successors succ
// lists (item(u) >= 0 names node u's item, -1 none). One pass in reverse topological
// order.
func Reach(n int, topo []int32, words int, succ func(v int32, visit func(u int32)), item func(u int32) int) []uint64 {
	reach := make([]uint64, n*words)
	for j := len(topo) - 1; j >= 0; j-- {
		v := topo[j]
		rv := reach[int(v)*words : int(v+1)*words]
		succ(v, func(u int32) {
			ru := reach[int(u)*words : int(u+1)*words]
			for x := range rv {
				rv[x] |= ru[x]
			}
			if i := item(u); i >= 0 {
				rv[i/64] |= 1 << (i % 64)
			}
		})
	}
	return reach
}

// Has reports whether bitset set holds i.
func Has(set []uint64, i int) bool { return set[i/64]&(1<<(i%64)) != 0 }

// Preds returns, for each of the items (node(i) is item i's node), the bitset of the
// items that reach it (reach from Reach); false when an item reaches itself.
func Preds(reach []uint64, words, items int, node func(i int) int32) ([]uint64, bool) {
	preds := make([]uint64, items*words)
	for j := 0; j < items; j++ {
		v := int(node(j))
		r := reach[v*words : (v+1)*words]
		for i := 0; i < items; i++ {
			if Has(r, i) {
				if i == j {
					return nil, false
				}
				preds[i*words+j/64] |= 1 << (j % 64)
			}
		}
	}
	return preds, true
}

// Ready reports whether every item of preds (an item's predecessors) is in placed.
func Ready(preds, placed []uint64) bool {
	for x := range placed {
		if preds[x]&^placed[x] != 0 {
			return false
		}
	}
	return true
}

// Failed remembers the failed states of a depth-first placement: the items placed (a
// bitset) and the position reached, which decide everything after them.
type Failed struct {
	states map[string]bool
	buf    []byte
}

// Key names the state of placed and position p.
func (f *Failed) Key(placed []uint64, p int) string {
	f.buf = f.buf[:0]
	for _, b := range placed {
		f.buf = binary.LittleEndian.AppendUint64(f.buf, b)
	}
	return string(binary.LittleEndian.AppendUint32(f.buf, uint32(p)))
}

// Has reports whether the state named key failed.
func (f *Failed) Has(key string) bool { return f.states[key] }

// Add records the state named key as failed.
func (f *Failed) Add(key string) {
	if f.states == nil {
		f.states = map[string]bool{}
	}
	f.states[key] = true
}
