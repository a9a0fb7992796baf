package check

import (
	"slices"
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/uncommitted"
)

// The relaxed serial witness of read uncommitted (DESIGN.md, "Read uncommitted", "The
// relaxed serial witness"). A database that shows aborted or intermediate appends
// (what read uncommitted allows) leaves the serial replays nothing to prove: their
// inference finds the aborted reads, and the read-uncommitted searches over orders and
// attributions get lost among the failed transactions' appends of duplicate values
// (2,000 transactions, 5% :fail: unknown at 20 s). Yet read uncommitted's graph needs
// only the ww edges of one longest read per key; so the serial machinery runs on a
// relaxed history where every read but one longest read of each key is unknown and
// every :fail transaction may have committed (:info), and an order it finds counts
// only when the read-uncommitted index turns it into an attribution of the real
// history and verifies it (uncommitted.Index.ProveByOrder).

// ruRelaxedHistory returns a copy of h (micro-ops and transactions copied, the rest
// shared) where only one longest known read of an :ok transaction per key stays known
// (the first of the greatest length) and every :fail transaction is :info (no
// completion: it may have committed at any time after its invoke). With apart, each
// kept read is instead the one read of a transaction of its own, right after its
// reader (:ok, its reader's interval, no process; event positions spread out to make
// room), every other read is left out (and the transactions that only read), and orig
// maps hr's transactions to h's (-1: such a read's): read uncommitted's longest reads
// are one per key, not a moment every key of one transaction shares.
func ruRelaxedHistory(h *history.History, apart bool) (hr *history.History, orig []int32) {
	longest := make([]int32, len(h.Keys)) // per key, the read kept (an index into Ops), -1 none
	reader := make([]int32, len(h.Keys))  // and its transaction
	for k := range longest {
		longest[k] = -1
	}
	for t := range h.Txns {
		tx := &h.Txns[t]
		if tx.Status != history.OK {
			continue
		}
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			if op.Kind != history.Read || !op.Known {
				continue
			}
			if j := longest[op.Key]; j < 0 || op.End-op.Start > h.Ops[j].End-h.Ops[j].Start {
				longest[op.Key], reader[op.Key] = i, int32(t)
			}
		}
	}
	// mayCommit makes a :fail transaction :info.
	mayCommit := func(tx *history.Txn) {
		if tx.Status == history.Fail {
			tx.Status, tx.Complete = history.Info, -1
		}
	}
	hr = new(history.History)
	*hr = *h
	if !apart {
		hr.Ops = slices.Clone(h.Ops)
		hr.Txns = slices.Clone(h.Txns)
		for i := range hr.Ops {
			if op := &hr.Ops[i]; op.Kind == history.Read && longest[op.Key] != int32(i) {
				op.Known = false
			}
		}
		for t := range hr.Txns {
			mayCommit(&hr.Txns[t])
		}
		return hr, nil
	}
	byReader := map[int32][]int32{}
	for k, i := range longest {
		if i >= 0 {
			byReader[reader[k]] = append(byReader[reader[k]], i)
		}
	}
	hr.Txns = make([]history.Txn, 0, len(h.Txns)+len(byReader))
	hr.Ops = make([]history.MicroOp, 0, len(h.Ops))
	orig = make([]int32, 0, cap(hr.Txns))
	// Event positions spread out: a kept read's transaction takes the ones right after
	// its reader's invoke and completion (no two events share a position, and real-time
	// order between h's transactions is unchanged; the replays' order by midpoint puts
	// it where the database read it).
	spread := int32(1)
	for _, is := range byReader {
		spread = max(spread, int32(len(is))+1)
	}
	at := func(p, j int32) int32 {
		if p < 0 {
			return p
		}
		return spread*p + j
	}
	hr.Events = int(spread) * (h.Events + 1)
	for t := range h.Txns {
		tx := h.Txns[t]
		mayCommit(&tx)
		inv, comp := tx.Invoke, tx.Complete
		tx.Invoke, tx.Complete = at(inv, 0), at(comp, 0)
		// Its appends only: a transaction that only read is left out (its reads are
		// unknown here, and read uncommitted has no edge to it).
		start := int32(len(hr.Ops))
		for _, op := range h.TxnOps(t) {
			if op.Kind == history.Append {
				hr.Ops = append(hr.Ops, op)
			}
		}
		if tx.OpStart, tx.OpEnd = start, int32(len(hr.Ops)); tx.OpEnd > start {
			hr.Txns, orig = append(hr.Txns, tx), append(orig, int32(t))
		}
		for j, i := range byReader[int32(t)] {
			n := int32(len(hr.Ops))
			hr.Ops = append(hr.Ops, h.Ops[i])
			hr.Txns = append(hr.Txns, history.Txn{Status: history.OK, Process: -1, Invoke: at(inv, int32(j)+1), Complete: at(comp, int32(j)+1),
				Index: -1, Line: tx.Line, OpStart: n, OpEnd: n + 1})
			orig = append(orig, -1)
		}
	}
	return hr, orig
}

// ruRelaxedTry is one model's turn of ruRelaxedWitness, by a checker of its own on hr
// (ir its inference; orig maps its transactions to c.h's, nil: the same); with narrow,
// the narrowed problem too, where the replays found no order.
func (c *checker) ruRelaxedTry(x *uncommitted.Index, names []string, hr *history.History, orig []int32, ir *encode.Inference, target string, narrow bool) {
	sub, ready := c.witnessCheckerOn(hr)
	if !ready {
		return
	}
	found := false
	sub.onSerialOrder = func(order []int32) {
		if orig != nil {
			mapped := make([]int32, 0, len(order))
			for _, t := range order {
				if o := orig[t]; o >= 0 {
					mapped = append(mapped, o)
				}
			}
			order = mapped
		}
		for _, n := range names {
			if !c.proven[n] && x.ProveByOrder(order, models[n].process, models[n].realtime) {
				c.proven[n], found = true, true
			}
		}
	}
	sub.proveByReplay(ir, []string{target})
	if narrow && !found && !c.budget.out() {
		// Where the replays get lost among the duplicates, the narrowed problem with
		// capped conflicts: the solver's solutions are shown as orders too (modelOrder).
		c.progress("narrowing for " + target + " with reads relaxed (a witness for read uncommitted)")
		lift := sub.budget.capConflicts(strictWitnessConflicts)
		sub.decideNarrowed(ir, target)
		lift()
	}
	c.res.Stats.PruneSeconds += sub.res.Stats.PruneSeconds // its replays narrow too
	c.addWitnessStats(sub, found)
}

// ruRelaxedWitness tries, once, to prove the read-uncommitted models names by a serial
// order of ruRelaxedHistory: a checker of its own decides strict serializability there
// by its serial replays and searches (proveByReplay), then on the narrowed problem with
// capped conflicts; then, for forms without real-time order left, the weakest one's
// serializable model on the history with the longest reads apart, by the replays and
// searches only. Each order it verifies (a solver's solution as modelOrder's
// topological order) is shown to x.ProveByOrder under every form, which proves in
// c.proven those it accepts. It is x's Witness, asked after the longest-reads witness,
// the serial search and a first pass of the runs search; it reports whether model m is
// proved.
func (c *checker) ruRelaxedWitness(x *uncommitted.Index, names []string, m string) bool {
	if c.ruRelaxedTried || c.opts.Solver.NoWitness || c.budget.out() {
		return c.proven[m]
	}
	c.ruRelaxedTried = true
	t0 := time.Now()
	defer func() { c.ruRelaxedTime = time.Since(t0) }()
	c.progress("replaying serially with reads relaxed (a witness for read uncommitted)")
	// relaxed infers ruRelaxedHistory(apart); nil when a kept read no serial order
	// explains (or the limits ran out).
	relaxed := func(apart bool) (*history.History, []int32, *encode.Inference) {
		hr, orig := ruRelaxedHistory(c.h, apart)
		ir := encode.InferStop(hr, c.budget.stop)
		if ir == nil || !ir.CheckValuesStop(c.budget.stop) || len(ir.Findings) > 0 {
			return nil, nil, nil
		}
		return hr, orig, ir
	}
	// Strict serializability's first, whatever form was asked: real-time order narrows
	// the replays and the solver most (the aborted-read family at 5,000: 1,295
	// conflicts against no solution in 20,000 for serializability's), and the order is
	// checked under each form's own orders. Then, for a form without real-time order
	// still unproved, the serializable model with its orders: a lost update's loser
	// runs after every writer of its key's longest read, real time or not (100
	// transactions: the solver over attributions had no verdict after 7M conflicts).
	c.losersPlaced(names)
	if hr, orig, ir := relaxed(false); hr != nil && !c.allProven(names) {
		c.ruRelaxedTry(x, names, hr, orig, ir, "strict-serializable", true)
	}
	weakest := ""
	for _, n := range names {
		switch spec := models[n]; {
		case c.proven[n] || spec.realtime:
		case !spec.process:
			weakest = "serializable"
		case weakest == "":
			weakest = "strong-session-serializable"
		}
	}
	if weakest != "" && !c.budget.out() {
		// The longest reads apart, in no order: real time does not narrow here.
		if hr, orig, ir := relaxed(true); hr != nil {
			c.ruRelaxedTry(x, names, hr, orig, ir, weakest, false)
		}
	}
	return c.proven[m]
}
