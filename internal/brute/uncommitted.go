package brute

import "doppel/history"

// Read uncommitted (Elle's PL-1) and its strong-session and strong forms, from the
// definition in DESIGN.md ("Read uncommitted"), by enumeration: every set of
// committed :info transactions, per key every distinct longest read as L and every
// injective map of L's positions to appends of that key and value (of any
// transaction), Elle's ww edges among committed writers, process and real-time order
// among committed transactions.
const (
	ReadUncommitted              = "read-uncommitted"
	StrongSessionReadUncommitted = "strong-session-read-uncommitted"
	StrongReadUncommitted        = "strong-read-uncommitted"
)

type uncommittedSpec struct{ process, realtime bool }

var uncommittedModels = map[string]uncommittedSpec{
	ReadUncommitted:              {},
	StrongSessionReadUncommitted: {process: true},
	StrongReadUncommitted:        {process: true, realtime: true},
}

// uAppend is one append: its transaction and value.
type uAppend struct {
	txn int
	val int32
}

func checkUncommitted(h *history.History, spec uncommittedSpec) bool {
	n := len(h.Txns)
	keys := len(h.Keys)
	for _, op := range h.Ops {
		keys = max(keys, int(op.Key)+1)
	}
	appends := make([][]uAppend, keys)
	for t := 0; t < n; t++ {
		for _, op := range h.TxnOps(t) {
			if op.Kind == history.Append {
				appends[op.Key] = append(appends[op.Key], uAppend{t, op.Value})
			}
		}
	}
	// duplicate-elements (and garbage): a read shows a value more often than the key
	// was appended that value by anyone.
	longest := make([][][]int32, keys)
	for t := 0; t < n; t++ {
		if h.Txns[t].Status != history.OK {
			continue
		}
		for _, op := range h.TxnOps(t) {
			if op.Kind != history.Read || !op.Known {
				continue
			}
			// A read that misses the transaction's own appends (internal) still shows a
			// state of the key: it counts, and it may be the longest read.
			r := h.ReadValues[op.Start:op.End]
			for _, v := range r {
				shown, appended := 0, 0
				for _, w := range r {
					if w == v {
						shown++
					}
				}
				for _, a := range appends[op.Key] {
					if a.val == v {
						appended++
					}
				}
				if shown > appended {
					return false
				}
			}
			ls := longest[op.Key]
			switch {
			case len(r) == 0:
			case len(ls) == 0 || len(r) > len(ls[0]):
				longest[op.Key] = [][]int32{r}
			case len(r) == len(ls[0]):
				dup := false
				for _, l := range ls {
					dup = dup || equal(l, r)
				}
				if !dup {
					longest[op.Key] = append(ls, r)
				}
			}
		}
	}
	var ok, optional uint64
	for t := 0; t < n; t++ {
		switch h.Txns[t].Status {
		case history.OK:
			ok |= 1 << t
		case history.Info:
			optional |= 1 << t
		}
	}
	type keyData struct {
		appends []uAppend
		ls      [][]int32
		txns    []int // each transaction appending to the key, once
	}
	var keysRead []keyData
	for x := range appends {
		if len(longest[x]) == 0 {
			continue // no ww edges: no observed predecessor
		}
		kd := keyData{appends: appends[x], ls: longest[x]}
		for t := 0; t < n; t++ {
			for _, a := range appends[x] {
				if a.txn == t {
					kd.txns = append(kd.txns, t)
					break
				}
			}
		}
		keysRead = append(keysRead, kd)
	}
	for sub := uint64(0); ; sub = (sub - optional) & optional {
		committed := ok | sub
		var g [64]uint64
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				if a != b && committed&(1<<a) != 0 && committed&(1<<b) != 0 &&
					((spec.process && processBefore(h, a, b)) || (spec.realtime && realTimeBefore(h, a, b))) {
					g[a] |= 1 << b
				}
			}
		}
		// Keys one after another, positions of L one after another: each position
		// takes a transaction with an append of that value left (appends of one
		// value by one transaction are interchangeable). An edge is added only
		// between committed, different writers; a graph with a cycle stays cyclic
		// whatever is added, so the branch stops there.
		var key func(k int, g [64]uint64) bool
		key = func(k int, g [64]uint64) bool {
			if k == len(keysRead) {
				return true
			}
			kd := keysRead[k]
			left := map[uAppend]int{}
			for _, a := range kd.appends {
				left[a]++
			}
			for _, l := range kd.ls {
				var place func(p, prev int, g [64]uint64) bool
				place = func(p, prev int, g [64]uint64) bool {
					add := func(a, b int) bool {
						if a != b && committed&(1<<a) != 0 && committed&(1<<b) != 0 {
							g[a] |= 1 << b
							return acyclicMatrix(g, n)
						}
						return true
					}
					if p == len(l) {
						for a, c := range left {
							if c > 0 && !add(prev, a.txn) {
								return false
							}
						}
						return key(k+1, g)
					}
					for _, t := range kd.txns {
						a := uAppend{t, l[p]}
						if left[a] == 0 {
							continue
						}
						g2 := g
						if p > 0 {
							saved := g
							if !add(prev, t) {
								g = saved
								continue
							}
							g2, g = g, saved
						}
						left[a]--
						found := place(p+1, t, g2)
						left[a]++
						if found {
							return true
						}
					}
					return false
				}
				if place(0, -1, g) {
					return true
				}
			}
			return false
		}
		if key(0, g) {
			return true
		}
		if sub == optional {
			return false
		}
	}
}

// acyclicMatrix: the graph on n nodes (adjacency bit rows) has no cycle (no self loop
// either).
func acyclicMatrix(g [64]uint64, n int) bool {
	var removed uint64
	for changed := true; changed; {
		changed = false
		for a := 0; a < n; a++ {
			if removed&(1<<a) == 0 && g[a]&^removed == 0 {
				removed |= 1 << a // no edge to a node left: a sink
				changed = true
			}
		}
	}
	return removed == (uint64(1)<<n)-1 || (n == 64 && removed == ^uint64(0))
}
