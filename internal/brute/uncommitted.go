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
		own := map[int32][]int32{}
		for _, op := range h.TxnOps(t) {
			if op.Kind == history.Append {
				own[op.Key] = append(own[op.Key], op.Value)
			}
			if op.Kind != history.Read || !op.Known {
				continue
			}
			r := h.ReadValues[op.Start:op.End]
			if o := own[op.Key]; len(r) < len(o) || !equal(r[len(r)-len(o):], o) {
				continue // internal: not attributable, ignored as by every per-read model
			}
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
	for sub := uint64(0); ; sub = (sub - optional) & optional {
		if uncommittedAcyclic(h, spec, ok|sub, appends, longest) {
			return true
		}
		if sub == optional {
			return false
		}
	}
}

// uncommittedAcyclic: for these committed transactions, some choice per key of L and
// its attribution leaves the graph acyclic.
func uncommittedAcyclic(h *history.History, spec uncommittedSpec, committed uint64, appends [][]uAppend, longest [][][]int32) bool {
	n := len(h.Txns)
	var base [64]uint64 // adjacency: base[a] has bit b for an edge a → b
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			if a == b || committed&(1<<a) == 0 || committed&(1<<b) == 0 {
				continue
			}
			if (spec.process && processBefore(h, a, b)) || (spec.realtime && realTimeBefore(h, a, b)) {
				base[a] |= 1 << b
			}
		}
	}
	// Per key, the distinct edge sets its attributions give.
	var options [][][64]uint64
	for x := range appends {
		sets := map[[64]uint64]bool{}
		var list [][64]uint64
		add := func(e [64]uint64) {
			if !sets[e] {
				sets[e] = true
				list = append(list, e)
			}
		}
		if len(longest[x]) == 0 {
			continue // no ww edges: no observed predecessor
		}
		for _, l := range longest[x] {
			used := make([]bool, len(appends[x]))
			at := make([]int, len(l))
			var place func(p int)
			place = func(p int) {
				if p == len(l) {
					var e [64]uint64
					edge := func(a, b int) {
						if a != b && committed&(1<<a) != 0 && committed&(1<<b) != 0 {
							e[a] |= 1 << b
						}
					}
					for q := 1; q < len(l); q++ {
						edge(appends[x][at[q-1]].txn, appends[x][at[q]].txn)
					}
					last := appends[x][at[len(l)-1]].txn
					for i, a := range appends[x] {
						if !used[i] {
							edge(last, a.txn)
						}
					}
					add(e)
					return
				}
				for i, a := range appends[x] {
					if !used[i] && a.val == l[p] {
						used[i], at[p] = true, i
						place(p + 1)
						used[i] = false
					}
				}
			}
			place(0)
		}
		options = append(options, list)
	}
	var combine func(k int, g [64]uint64) bool
	combine = func(k int, g [64]uint64) bool {
		if k == len(options) {
			return acyclicMatrix(g, n)
		}
		for _, e := range options[k] {
			next := g
			for a := 0; a < n; a++ {
				next[a] |= e[a]
			}
			if combine(k+1, next) {
				return true
			}
		}
		return false
	}
	return combine(0, base)
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
