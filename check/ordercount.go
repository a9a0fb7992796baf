package check

import (
	"fmt"
	"slices"
	"strings"

	"doppel/encode"
	"doppel/history"
)

// An order count: a proof, key by key and without search, that a per-read model with
// process (and real-time) order has no acyclic attribution, for histories whose
// trouble is one transaction whose block fits nowhere: a lost update's loser, whose
// append is in no list, must go after what it read but before every block of its
// process (real-time) successors, and the positions in between hold other values.
// The per-read problem leaves that to the solver as a pigeonhole over duplicate
// values, which at 100K transactions it cannot build (and at 1K cannot refute).
//
// In every acyclic attribution, for a committed writer w of key x (its block starting
// at position pos(w), 1-based, or past the trace):
//   - pos(w) > q for each read of x by w before its own appends that saw q values
//     (else a future read or a ww/wr cycle), and pos(w) = q + 1 for one after them;
//   - pos(w) > q when a transaction a that read q values of x (not counting its own
//     appends) precedes w in process (real-time) order: the writer of the block q
//     ends with →wr a → w, and w's block inside those q values would close a cycle;
//   - pos(w) ≥ pos(a) + len(a) when a committed writer a of x precedes w so (a's block
//     before w's, else w →ww* a → w);
//   - pos(w) is a position where the trace shows w's values, or past the trace.
// Those give a lower bound lo(w) per writer, in one sweep over the invokes and
// completions of the key's transactions (a bound past the trace propagates: a
// successor of an unobserved writer is unobserved too). Each position of the trace
// holds the append of a writer whose block starts at or before it, so for each value
// v with trace positions p_1 < p_2 < …, at least j appends of v by writers with
// lo ≤ p_j are needed (:info writers, which may have committed, counted with no
// bound; :fail ones never). A shortfall holds in every attribution: the model is not
// valid. Nothing is claimed otherwise (the count is only a necessary condition).

// orderCount looks for a key whose trace the per-read inference in cannot fill under
// process (and, with realtime, real-time) order; it returns the key, the value, the
// position and the writers of that value whose bound is past it, or key -1.
func orderCount(h *history.History, in *encode.Inference, realtime bool, stop func() bool) (key, value, pos int32, late []int32) {
	n := len(h.Txns)
	lo := make([]int32, n)       // per writer txn of the current key: lower bound on its block start
	readQ := make([]int32, n)    // per txn: the longest prefix of the key it read (own appends left out)
	base := make([]int32, n)     // per writer txn: the bound its own reads give
	writerOf := make([]int32, n) // per txn: its :ok writer id on the key, -1 none
	for i := range writerOf {
		writerOf[i] = -1
	}
	procMax := make([]int32, len(h.Processes))
	var touched []int32
	var events []int64 // event position<<32 | txn<<1 | 1 for a completion
	var procs []int32
	type supply struct{ lo, v int32 }
	var sup []supply
	nv := len(h.Values)
	need, have, ptr, end := make([]int32, nv), make([]int32, nv), make([]int32, nv), make([]int32, nv)
	cnt, vStart := make([]int32, nv), make([]int32, nv)
	var at, vals []int32
	for k := range in.Keys {
		if k%64 == 0 && stop != nil && stop() {
			return -1, 0, 0, nil
		}
		key := &in.Keys[k]
		L := key.Trace
		if key.Bad || len(L) == 0 {
			continue
		}
		tn := int32(len(L))
		// at[vStart[v]:vStart[v+1]]: the positions (1-based, increasing) showing v, so
		// that a writer's fit is a binary search, not a scan of the trace.
		for _, v := range L {
			cnt[v]++
		}
		vals = vals[:0]
		var sum int32
		for _, v := range L {
			if cnt[v] > 0 {
				vStart[v], sum, cnt[v] = sum, sum+cnt[v], 0
				vals = append(vals, v)
			}
		}
		at = slices.Grow(at[:0], len(L))[:len(L)]
		for i, v := range L {
			at[vStart[v]+cnt[v]] = int32(i + 1)
			cnt[v]++
		}
		fit := func(wi, from int32) int32 {
			w := &in.Writers[wi]
			wv := in.WriterVals[w.Start:w.End]
			if cnt[wv[0]] == 0 {
				return tn + 1 // its first value is nowhere in the trace
			}
			ps := at[vStart[wv[0]] : vStart[wv[0]]+cnt[wv[0]]]
			i, _ := slices.BinarySearch(ps, from)
			for _, p := range ps[i:] {
				n := min(len(wv), len(L)-int(p)+1)
				if slices.Equal(L[p-1:int(p)-1+n], wv[:n]) {
					return p
				}
			}
			return tn + 1
		}
		touched = touched[:0]
		touch := func(t int32) {
			if readQ[t] == 0 && base[t] == 0 && writerOf[t] < 0 && lo[t] == 0 {
				touched = append(touched, t)
				lo[t] = -1 // marks touched
			}
		}
		for _, ri := range key.Reads {
			r := &in.Reads[ri]
			if h.Txns[r.Txn].Status != history.OK || r.Version {
				continue // a version read gives no edge and places no block
			}
			touch(r.Txn)
			q := r.Len - r.Own
			readQ[r.Txn] = max(readQ[r.Txn], q)
			if r.Writes {
				base[r.Txn] = max(base[r.Txn], q+1)
			}
		}
		sup = sup[:0]
		for _, wi := range key.Writers {
			w := &in.Writers[wi]
			switch w.Status {
			case history.OK:
				touch(w.Txn)
				writerOf[w.Txn] = wi
			case history.Info:
				// It may have committed, anywhere: counted with no bound.
				for _, v := range in.WriterVals[w.Start:w.End] {
					sup = append(sup, supply{1, v})
				}
			}
		}
		// Invokes and completions in event order: an invoke takes the bound of what
		// completed before it (real time) and of its process's earlier transactions.
		events = events[:0]
		for _, t := range touched {
			tx := &h.Txns[t]
			events = append(events, int64(tx.Invoke)<<32|int64(t)<<1)
			if tx.Complete >= 0 {
				events = append(events, int64(tx.Complete)<<32|int64(t)<<1|1)
			}
		}
		slices.Sort(events)
		var rtMax int32
		procs = procs[:0]
		for _, e := range events {
			t := int32(e>>1) & (1<<31 - 1)
			p := h.Txns[t].Process
			if e&1 == 0 {
				if wi := writerOf[t]; wi >= 0 {
					from := max(base[t], 1)
					if realtime {
						from = max(from, rtMax)
					}
					if p >= 0 {
						from = max(from, procMax[p])
					}
					lo[t] = fit(wi, from)
				}
				continue
			}
			c := readQ[t] + 1
			if wi := writerOf[t]; wi >= 0 {
				w := &in.Writers[wi]
				c = max(c, min(lo[t], tn+1)+w.End-w.Start)
			}
			rtMax = max(rtMax, c)
			if p >= 0 {
				if procMax[p] == 0 {
					procs = append(procs, p)
				}
				procMax[p] = max(procMax[p], c)
			}
		}
		for _, t := range touched {
			if wi := writerOf[t]; wi >= 0 {
				w := &in.Writers[wi]
				for _, v := range in.WriterVals[w.Start:w.End] {
					sup = append(sup, supply{lo[t], v})
				}
			}
		}
		slices.SortFunc(sup, func(a, b supply) int {
			if a.v != b.v {
				return int(a.v - b.v)
			}
			return int(a.lo - b.lo)
		})
		// Per value, the j-th position needs j appends of it that can start by then:
		// ptr[v] walks v's supplies (sorted by bound) along the trace.
		for i := range sup {
			if i == 0 || sup[i].v != sup[i-1].v {
				ptr[sup[i].v], end[sup[i].v] = int32(i), int32(i)
			}
			end[sup[i].v]++
		}
		key0, val0, pos0 := int32(-1), int32(0), int32(0)
		for i, v := range L {
			p := int32(i + 1)
			need[v]++
			for ptr[v] < end[v] && sup[ptr[v]].lo <= p {
				ptr[v]++
				have[v]++
			}
			if have[v] < need[v] {
				key0, val0, pos0 = int32(k), v, p
				break
			}
		}
		for _, v := range L {
			need[v], have[v], ptr[v], end[v] = 0, 0, 0, 0
		}
		for _, v := range vals {
			cnt[v] = 0
		}
		for _, s := range sup {
			ptr[s.v], end[s.v] = 0, 0
		}
		if key0 >= 0 {
			for _, t := range touched {
				if wi := writerOf[t]; wi >= 0 && lo[t] > pos0 && slices.Contains(in.WriterVals[in.Writers[wi].Start:in.Writers[wi].End], val0) {
					late = append(late, t)
				}
			}
		}
		for _, t := range touched {
			lo[t], readQ[t], base[t], writerOf[t] = 0, 0, 0, -1
		}
		for _, p := range procs {
			procMax[p] = 0
		}
		if key0 >= 0 {
			return key0, val0, pos0, late
		}
	}
	return -1, 0, 0, nil
}

// proveByOrderCount runs the order count for each per-read model of names with
// process order that nothing found so far refutes, and reports an anomaly for each it
// refutes (counting for that model and those whose graph contains its graph).
func (c *checker) proveByOrderCount(in *encode.Inference, names []string) {
	for _, m := range names {
		spec := models[m]
		if !spec.perRead || spec.single || !spec.process || c.budget.out() || len(c.forbiddenFound(m)) > 0 {
			continue
		}
		c.progress("counting positions under process order")
		k, v, p, late := orderCount(c.h, in, spec.realtime, c.budget.stop)
		if k < 0 {
			continue
		}
		typ, order := "G1c-process", "process"
		if spec.realtime {
			typ, order = "G1c-realtime", "process or real-time"
		}
		a := Anomaly{Type: typ, Model: m, Key: c.h.Keys[k]}
		var names []string
		for i, t := range late {
			if i < 8 {
				a.Txns = append(a.Txns, c.txnRef(t))
				names = append(names, encode.TxnName(c.h, t))
			}
		}
		more := ""
		if len(late) > 8 {
			more = fmt.Sprintf(" and %d more", len(late)-8)
		}
		a.Explanation = fmt.Sprintf("key %s shows %s at position %d more often up to there than appends of it can be: "+
			"each block of %s (%s%s) must start past it, after what the writer or a transaction before it in %s order read or appended, "+
			"so every attribution has a cycle of ww, wr and %s edges",
			c.h.Keys[k], c.h.Values[v], p, c.h.Values[v], strings.Join(names, ", "), more, order, order)
		c.addAnomaly(a)
	}
}
