package check

import (
	"slices"

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
// completion: it may have committed at any time after its invoke).
func ruRelaxedHistory(h *history.History) *history.History {
	hr := *h
	hr.Ops = slices.Clone(h.Ops)
	hr.Txns = slices.Clone(h.Txns)
	longest := make([]int32, len(h.Keys)) // per key, the read kept (an index into Ops), -1 none
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
				longest[op.Key] = i
			}
		}
	}
	for i := range hr.Ops {
		if op := &hr.Ops[i]; op.Kind == history.Read && longest[op.Key] != int32(i) {
			op.Known = false
		}
	}
	for t := range hr.Txns {
		if tx := &hr.Txns[t]; tx.Status == history.Fail {
			tx.Status, tx.Complete = history.Info, -1
		}
	}
	return &hr
}

// ruRelaxedWitness tries, once, to prove the read-uncommitted models names by a serial
// order of ruRelaxedHistory: a checker of its own decides strict serializability there
// by its serial replays and searches (proveByReplay), then on the narrowed problem
// with capped conflicts, and each order it verifies (a solver's solution as
// modelOrder's topological order) is shown to x.ProveByOrder under every form, which
// proves in c.proven those it accepts. It is x's Witness, asked after the
// longest-reads witness and the serial search; it reports whether model m is proved.
func (c *checker) ruRelaxedWitness(x *uncommitted.Index, names []string, m string) bool {
	if c.ruRelaxedTried || c.opts.Solver.NoWitness || c.budget.out() {
		return c.proven[m]
	}
	c.ruRelaxedTried = true
	sub, ready := c.witnessChecker()
	if !ready {
		return false
	}
	c.progress("replaying serially with reads relaxed (a witness for read uncommitted)")
	hr := ruRelaxedHistory(c.h)
	sub.h = hr
	ir := encode.InferStop(hr, c.budget.stop)
	if ir == nil || !ir.CheckValuesStop(c.budget.stop) || len(ir.Findings) > 0 {
		return false // a kept read no serial order of hr explains (or the limits ran out)
	}
	// Strict serializability's, whatever form was asked: real-time order narrows the
	// replays and the solver most (the aborted-read family at 5,000: 1,295 conflicts
	// against no solution in 20,000 for serializability's), and the order is checked
	// under each form's own orders.
	const target = "strict-serializable"
	found := false
	sub.onSerialOrder = func(order []int32) {
		for _, n := range names {
			if !c.proven[n] && x.ProveByOrder(order, models[n].process, models[n].realtime) {
				c.proven[n], found = true, true
			}
		}
	}
	sub.proveByReplay(ir, []string{target})
	if !found && !c.budget.out() {
		// Where the replays get lost among the duplicates, the narrowed problem with
		// capped conflicts: the solver's solutions are shown as orders too (modelOrder).
		c.progress("narrowing for " + target + " with reads relaxed (a witness for read uncommitted)")
		lift := sub.budget.capConflicts(strictWitnessConflicts)
		sub.decideNarrowed(ir, target)
		lift()
		c.res.Stats.PruneSeconds += sub.res.Stats.PruneSeconds
	}
	c.addWitnessStats(sub, found)
	return c.proven[m]
}
