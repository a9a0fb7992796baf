package check

import (
	"container/heap"

	"doppel/encode"
	"doppel/history"
)

// schedule tries to replay the history serially, for the serializable family: it runs
// transactions one at a time against per-key positions in the traces, always picking
// the ready transaction that completed first. A transaction is ready when each of its
// reads sees exactly the list installed so far (plus its own appends), each of its
// appends matches the trace at the current position (or lies past the trace), and the
// model's process and real-time predecessors have run. A complete replay is a serial
// order that explains every read; it returns the order, or false when the greedy
// choice gets stuck (the solver then decides).
func (c *checker) schedule(v *view) ([]int32, bool) {
	h, p := c.h, c.p
	in := p.In
	n := int32(len(h.Txns))
	pos := make([]int32, len(h.Keys)) // installed length of each key's list
	done := make([]bool, n)
	// Predecessors from the model's process and real-time edges.
	preds := make([]int32, n)
	var succStart = make([]int32, n+1)
	for i := range v.edges {
		e := &v.edges[i]
		if (e.Kind == encode.Process || e.Kind == encode.Realtime) && e.G0 == e.G1 {
			succStart[e.From+1]++
		}
	}
	for t := int32(0); t < n; t++ {
		succStart[t+1] += succStart[t]
	}
	succ := make([]int32, succStart[n])
	fill := append([]int32(nil), succStart[:n]...)
	for i := range v.edges {
		e := &v.edges[i]
		if (e.Kind == encode.Process || e.Kind == encode.Realtime) && e.G0 == e.G1 {
			succ[fill[e.From]] = e.To
			fill[e.From]++
			if p.Commit[e.From] == encode.Committed {
				preds[e.To]++
			}
		}
	}
	// waiting[k]: transactions blocked until key k's position changes.
	waiting := make([][]int32, len(h.Keys))
	// local: the transaction's view of the keys it touched so far (few: a flat list).
	type keyPos struct{ key, at int32 }
	var local []keyPos
	// check reports whether t can run now; if not, the key it waits on (-1: never).
	check := func(t int32) (bool, int32) {
		if preds[t] > 0 {
			return false, -2
		}
		local = local[:0]
		useful := p.Commit[t] == encode.Committed // an :info one runs only to fill a trace
		for _, op := range h.TxnOps(int(t)) {
			li := -1
			for i := range local {
				if local[i].key == op.Key {
					li = i
					break
				}
			}
			if li < 0 {
				local = append(local, keyPos{op.Key, pos[op.Key]})
				li = len(local) - 1
			}
			at := local[li].at
			L := in.Keys[op.Key].Trace
			if op.Kind == history.Append {
				if at < int32(len(L)) && L[at] != op.Value {
					return false, op.Key
				}
				useful = useful || at < int32(len(L))
				local[li].at = at + 1
				continue
			}
			if h.Txns[t].Status != history.OK || !op.Known {
				continue
			}
			if l := op.End - op.Start; l != at {
				if l < pos[op.Key] {
					return false, -1 // the list is already longer than this read
				}
				return false, op.Key
			}
		}
		if !useful {
			return false, -1
		}
		return true, 0
	}
	// Readers still to run, by (key, length read): appending to a key they still need
	// to see at its current length would strand them, so such appends wait if they can.
	// Flat: key k's lengths 0..len(trace) at readBase[k]...; a position past the trace
	// has no reader (every read is a prefix of the trace).
	readBase := make([]int32, len(h.Keys)+1)
	for k := range in.Keys {
		readBase[k+1] = readBase[k] + int32(len(in.Keys[k].Trace)) + 1
	}
	pending := make([]int32, readBase[len(h.Keys)]+1)
	readKey := func(k, l int32) int32 {
		if l > int32(len(in.Keys[k].Trace)) {
			return int32(len(pending)) - 1 // a slot no read counts in
		}
		return readBase[k] + l
	}
	for t := int32(0); t < n; t++ {
		if p.Commit[t] != encode.Committed || h.Txns[t].Status != history.OK {
			continue
		}
		for _, op := range h.TxnOps(int(t)) {
			if op.Kind == history.Read && op.Known {
				pending[readKey(op.Key, op.End-op.Start)]++
			}
		}
	}
	strands := func(t int32) bool {
		for _, op := range h.TxnOps(int(t)) {
			if op.Kind == history.Append && pending[readKey(op.Key, pos[op.Key])] > 0 {
				// Does anyone but t itself still need this length?
				own := int32(0)
				for _, o := range h.TxnOps(int(t)) {
					if o.Kind == history.Read && o.Known && o.Key == op.Key && o.End-o.Start == pos[op.Key] {
						own++
					}
				}
				if pending[readKey(op.Key, pos[op.Key])] > own {
					return true
				}
			}
		}
		return false
	}
	order := make([]int32, 0, n)
	ready := &txnHeap{}
	var deferred []int32
	// Priority: the middle of the transaction's interval estimates when it took effect.
	prio := func(t int32) int64 {
		tx := &h.Txns[t]
		inv := int64(tx.Invoke)
		if tx.Complete >= 0 {
			if inv < 0 {
				return 2 * int64(tx.Complete)
			}
			return inv + int64(tx.Complete)
		}
		return 2*inv + 1<<40
	}
	queued := make([]bool, n)
	try := func(t int32) {
		if done[t] || queued[t] || p.Commit[t] == encode.NotCommitted {
			return
		}
		ok, key := check(t)
		switch {
		case ok:
			queued[t] = true
			heap.Push(ready, txnPrio{t, prio(t)})
		case key >= 0:
			waiting[key] = append(waiting[key], t)
		}
	}
	for t := int32(0); t < n; t++ {
		try(t)
	}
	for ready.Len() > 0 || len(deferred) > 0 {
		var t int32
		if ready.Len() > 0 {
			t = heap.Pop(ready).(txnPrio).t
			queued[t] = false
			if ok, _ := check(t); !ok { // a position moved since it was queued
				try(t)
				continue
			}
			if strands(t) {
				deferred = append(deferred, t)
				continue
			}
		} else {
			// Only appends that strand a reader are left: run the earliest.
			best := 0
			for i := range deferred {
				if prio(deferred[i]) < prio(deferred[best]) {
					best = i
				}
			}
			t = deferred[best]
			deferred = append(deferred[:best], deferred[best+1:]...)
			if ok, _ := check(t); !ok {
				try(t)
				continue
			}
		}
		done[t] = true
		order = append(order, t)
		if h.Txns[t].Status == history.OK {
			for _, op := range h.TxnOps(int(t)) {
				if op.Kind == history.Read && op.Known {
					pending[readKey(op.Key, op.End-op.Start)]--
				}
			}
		}
		for _, d := range deferred {
			try(d)
		}
		deferred = deferred[:0]
		var moved []int32
		for _, op := range h.TxnOps(int(t)) {
			if op.Kind == history.Append {
				pos[op.Key]++
				moved = append(moved, op.Key)
			}
		}
		for _, k := range moved {
			ws := waiting[k]
			waiting[k] = nil
			for _, w := range ws {
				try(w)
			}
		}
		for _, s := range succ[succStart[t]:succStart[t+1]] {
			if p.Commit[t] == encode.Committed {
				preds[s]--
			}
			if preds[s] == 0 {
				try(s)
			}
		}
	}
	// Every committed transaction ran, and every trace was installed.
	for t := int32(0); t < n; t++ {
		if p.Commit[t] == encode.Committed && !done[t] {
			return nil, false
		}
	}
	for k := range in.Keys {
		if pos[k] < int32(len(in.Keys[k].Trace)) {
			return nil, false
		}
	}
	return order, true
}

// orderAssignment turns a serial order into values of the problem's variables: each
// key's blocks in the order's sequence.
func (c *checker) orderAssignment(order []int32, vals []bool) {
	p, in := c.p, c.p.In
	ran := make([]bool, len(c.h.Txns))
	for _, t := range order {
		ran[t] = true
	}
	pos := make([]int32, len(in.Keys))
	chosen := make(map[int32]bool)
	for _, t := range order {
		for _, w := range in.TxnWriters(t) {
			k := in.Writers[w].Key
			if pl := &p.Plans[k]; pl.State == encode.KeyOpen && pos[k] < int32(len(in.Keys[k].Trace)) {
				for i, cand := range pl.Cands {
					if cand.Pos == pos[k] && cand.Writer == w {
						vals[p.SegVar[k][i]] = true
					}
				}
			}
			if pos[k] < int32(len(in.Keys[k].Trace)) {
				chosen[w] = true
			}
			pos[k] += in.Writers[w].End - in.Writers[w].Start
		}
	}
	for t, cv := range p.CommitVar {
		if cv >= 0 {
			vals[cv] = ran[t]
		}
	}
	for k := range p.Plans {
		for _, w := range p.Plans[k].Unobserved {
			if u, ok := p.UnobservedVar(int32(k), w); ok {
				vals[u] = ran[in.Writers[w].Txn] && !chosen[w]
			}
		}
	}
}

type txnPrio struct {
	t    int32
	prio int64
}

type txnHeap []txnPrio

func (h txnHeap) Len() int           { return len(h) }
func (h txnHeap) Less(i, j int) bool { return h[i].prio < h[j].prio }
func (h txnHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *txnHeap) Push(x any)        { *h = append(*h, x.(txnPrio)) }
func (h *txnHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
