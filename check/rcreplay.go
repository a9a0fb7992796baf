package check

import (
	"container/heap"
	"fmt"
	"slices"

	"doppel/encode"
	"doppel/history"
)

// A replay for the per-read models (read committed): their graph has ww and wr edges
// only, so a commit order in which every key's blocks are installed in trace order and
// every read sees a prefix already committed (ending at a block boundary; right up to
// the reader's own block when the read shows its own appends) is a topological order
// of some attribution's ww and wr edges: a proof. Reads need not see the latest state,
// which is what makes histories that are neither serializable nor snapshot isolated
// (lost updates, non-repeatable reads) replayable here. Like every replay it counts only
// after verifyPerRead, an independent re-execution, accepts it.

// perReadSchedule commits transactions greedily, the earliest ready one first (by
// interval midpoint or completion), each as soon as its appends are next in their keys'
// traces without crossing a read's end, and its reads are satisfied; a transaction
// that is not ready waits on the key that blocks it. :info transactions commit only if
// they become ready; the others are dropped (not committed). It reports false when a
// committed transaction never became ready.
func perReadSchedule(h *history.History, in *encode.Inference, byMidpoint bool, stop func() bool) ([]int32, bool) {
	n := len(h.Txns)
	pos := make([]int32, len(in.Keys))
	boundary := make([][]bool, len(in.Keys)) // boundary[k][p]: a block ends at p (p <= trace length)
	for k := range in.Keys {
		boundary[k] = make([]bool, len(in.Keys[k].Trace)+1)
		boundary[k][0] = true
	}
	readsOf := make([][]int32, n)
	cut := make([][]bool, len(in.Keys)) // cut[k][p]: some read ends at p: no block crosses it
	for k := range in.Keys {
		cut[k] = make([]bool, len(in.Keys[k].Trace)+1)
	}
	for i := range in.Reads {
		r := &in.Reads[i]
		readsOf[r.Txn] = append(readsOf[r.Txn], int32(i))
		if q := r.Len - r.Own; q >= 0 && q < int32(len(cut[r.Key])) {
			cut[r.Key][q] = true
		}
	}
	// blockedOn reports the key t waits for, or -1 if t can commit now. With pinned, t
	// also waits until every key it read has exactly what it read (as in a serial
	// order): read committed allows committing it later, but committing it early, on a
	// duplicate value, would steal another writer's position.
	blockedOn := func(t int32, pinned bool) int32 {
		for _, w := range in.TxnWriterIDs[in.TxnWriterStart[t]:in.TxnWriterStart[t+1]] {
			k := in.Writers[w].Key
			L := in.Keys[k].Trace
			vals := in.Vals(w)
			p := pos[k]
			for i, v := range vals {
				q := p + int32(i)
				if q < int32(len(L)) && (L[q] != v || i > 0 && cut[k][q]) {
					return k
				}
			}
		}
		for _, ri := range readsOf[t] {
			r := &in.Reads[ri]
			q := r.Len - r.Own
			switch {
			case r.Own > 0 && pos[r.Key] != q, // its own block starts right after what it saw
				r.Own == 0 && (q > pos[r.Key] || q >= int32(len(boundary[r.Key])) || !boundary[r.Key][q]),
				pinned && r.Own == 0 && q != pos[r.Key]:
				return r.Key
			}
		}
		return -1
	}
	ids := make([]int32, 0, n)
	for t := range h.Txns {
		if h.Txns[t].Status != history.Fail {
			ids = append(ids, int32(t))
		}
	}
	byCompletion(h, ids, byMidpoint)
	waiting := make([][]int32, len(in.Keys))
	done := make([]bool, n)
	order := make([]int32, 0, len(ids))
	commit := func(t int32) []int32 {
		done[t] = true
		order = append(order, t)
		var woken []int32
		for _, w := range in.TxnWriterIDs[in.TxnWriterStart[t]:in.TxnWriterStart[t+1]] {
			k := in.Writers[w].Key
			pos[k] += in.Writers[w].End - in.Writers[w].Start
			if pos[k] < int32(len(boundary[k])) {
				boundary[k][pos[k]] = true
			}
			woken = append(woken, waiting[k]...)
			waiting[k] = waiting[k][:0]
		}
		return woken
	}
	// Ready candidates by rank (the order of ids): the earliest ready transaction
	// commits first, as in the serial replay.
	rank := make([]int32, n)
	for i, t := range ids {
		rank[t] = int32(i)
	}
	cand := &rankHeap{rank: rank}
	queued := make([]bool, n)
	push := func(t int32) {
		if !queued[t] && !done[t] {
			queued[t] = true
			heap.Push(cand, t)
		}
	}
	for _, t := range ids {
		push(t)
	}
	steps := 0
	for {
		for cand.Len() > 0 {
			if steps++; stop != nil && steps%stopEvery == 0 && stop() {
				return nil, false
			}
			t := heap.Pop(cand).(int32)
			queued[t] = false
			if done[t] {
				continue
			}
			if k := blockedOn(t, true); k >= 0 {
				waiting[k] = append(waiting[k], t)
				continue
			}
			for _, w := range commit(t) {
				push(w)
			}
		}
		// Stuck: commit the first transaction that read committed allows, then go on
		// pinned again.
		relaxed := int32(-1)
		for _, t := range ids {
			if steps++; stop != nil && steps%stopEvery == 0 && stop() {
				return nil, false
			}
			if !done[t] && blockedOn(t, false) < 0 {
				relaxed = t
				break
			}
		}
		if relaxed < 0 {
			break
		}
		for k := range waiting {
			waiting[k] = waiting[k][:0]
		}
		commit(relaxed)
		for _, t := range ids {
			push(t)
		}
	}
	for _, t := range ids {
		if !done[t] && h.Txns[t].Status == history.OK {
			return nil, false
		}
	}
	return order, true
}

// byCompletion sorts transaction ids by completion position (those that never
// completed last, by invocation).
func byCompletion(h *history.History, ids []int32, byMidpoint bool) {
	key := func(t int32) int64 {
		tx := &h.Txns[t]
		switch {
		case byMidpoint && tx.Complete >= 0 && tx.Invoke >= 0:
			return int64(tx.Complete) + int64(tx.Invoke)
		case byMidpoint && tx.Complete >= 0:
			return 2 * int64(tx.Complete)
		case tx.Complete >= 0:
			return int64(tx.Complete)
		}
		return 1<<40 + int64(tx.Invoke)
	}
	slices.SortStableFunc(ids, func(a, b int32) int { return int(key(a) - key(b)) })
}

// verifyPerRead re-executes order against real lists: every :ok transaction once and no
// :fail one; each transaction's appends extend its keys' lists at its commit; each
// known read that ends with the transaction's own earlier appends (the others are
// ignored, as the per-read models do) shows, before those, a prefix of the list as
// committed so far that ends where some block ended — the whole list when the read
// shows own appends. With process (and realtime), the order also keeps process (and
// real-time) order.
func verifyPerRead(h *history.History, order []int32, process, realtime bool) error {
	at, err := orderPositions(h, order)
	if err != nil {
		return err
	}
	lists := map[int32][]int32{}
	ends := map[int32]map[int]bool{} // block ends per key
	for _, t := range order {
		ops := h.TxnOps(int(t))
		own := map[int32][]int32{}
		for i := range ops {
			op := &ops[i]
			if op.Kind == history.Append {
				own[op.Key] = append(own[op.Key], op.Value)
				continue
			}
			if h.Txns[t].Status != history.OK || !op.Known {
				continue
			}
			r := h.ReadList(op)
			o := own[op.Key]
			q := len(r) - len(o)
			if q < 0 || !slices.Equal(r[q:], o) {
				continue // misses its own write: ignored per read
			}
			L := lists[op.Key]
			switch {
			case len(o) > 0 && q != len(L):
				return fmt.Errorf("transaction %d shows its own appends to a key after %d values, where %d are committed", t, q, len(L))
			case q > len(L) || !slices.Equal(r[:q], L[:q]):
				return fmt.Errorf("transaction %d reads a list that is not a committed prefix", t)
			case q > 0 && !ends[op.Key][q]:
				return fmt.Errorf("transaction %d reads a list that ends inside a block", t)
			}
		}
		for k, vals := range own {
			lists[k] = append(lists[k], vals...)
			if ends[k] == nil {
				ends[k] = map[int]bool{}
			}
			ends[k][len(lists[k])] = true
		}
	}
	return verifyOrders(h, at, process, realtime)
}

// provePerRead tries the per-read replay and reports the models of names it proves.
func (c *checker) provePerRead(in *encode.Inference, names []string) {
	c.progress("replaying read by read")
	order, ok := perReadSchedule(c.h, in, true, c.budget.stop)
	if !ok && !c.budget.out() {
		order, ok = perReadSchedule(c.h, in, false, c.budget.stop)
	}
	if !ok {
		return
	}
	c.progress("verifying a read-by-read replay")
	for _, m := range names {
		spec := models[m]
		if c.proven[m] {
			continue
		}
		if err := verifyPerRead(c.h, order, spec.process, spec.realtime); err != nil {
			if !spec.process && !spec.realtime {
				c.res.Stats.ReplayRejected++ // the replay's bookkeeping disagrees: a bug
			}
			continue
		}
		c.proven[m] = true
		c.res.Stats.Witnessed++
		c.res.Stats.Replayed++
	}
}

// rankHeap is a min-heap of transactions by rank.
type rankHeap struct {
	ts   []int32
	rank []int32
}

func (q *rankHeap) Len() int           { return len(q.ts) }
func (q *rankHeap) Less(i, j int) bool { return q.rank[q.ts[i]] < q.rank[q.ts[j]] }
func (q *rankHeap) Swap(i, j int)      { q.ts[i], q.ts[j] = q.ts[j], q.ts[i] }
func (q *rankHeap) Push(x any)         { q.ts = append(q.ts, x.(int32)) }
func (q *rankHeap) Pop() any {
	t := q.ts[len(q.ts)-1]
	q.ts = q.ts[:len(q.ts)-1]
	return t
}
