package check

import (
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/prune"
)

// A serial witness for the per-read models on a history with lost updates (DESIGN.md,
// "A relaxed serial witness"). A lost update rules out every serial order (two blocks
// pinned right after one list), so serialWitnessForWeak cannot help, and on long lists
// of few values the read-by-read replay gets lost among the duplicates long before
// the lost update (a dense 1000-transaction history: stuck after 111) and the
// per-read problem is too large to decide. Read committed does not pin a block by a
// read before the transaction's own append, so the losers' reads need not be exact:
// the serial machinery (replays, narrowing, repairs) runs on the history with those
// reads left unknown, where it mostly finds a serial order at once, and the order
// counts only when verifyPerRead re-executes it against the real history (every read
// a committed prefix ending at a block end; the models' process and real-time order).

// relaxedRead is a read micro-op (an index into h.Ops) and its transaction.
type relaxedRead struct{ op, txn int32 }

// relaxedReads lists the read micro-ops of the lost updates'
// losers: per lost update (transactions whose first read of a key before their first
// append to it showed one list), every member's reads of the key before its first
// append, except those of the member whose first appended value is the one in's trace
// of the key shows right after that list (the winner, whose read stays exact; the
// first such member when several are).
func relaxedReads(h *history.History, in *encode.Inference, lost []Anomaly) []relaxedRead {
	keyOf := make(map[string]int32, len(h.Keys))
	for k, name := range h.Keys {
		keyOf[name] = int32(k)
	}
	var out []relaxedRead
	for _, a := range lost {
		if a.Type != "lost-update" || a.Model != "" {
			continue
		}
		k, ok := keyOf[a.Key]
		if !ok {
			continue
		}
		var trace []int32
		if int(k) < len(in.Keys) {
			trace = in.Keys[k].Trace
		}
		winner := -1
		for i, ref := range a.Txns {
			ops := h.TxnOps(ref.ID)
			ap := firstOnKey(ops, k, history.Append)
			r := firstOnKey(ops, k, history.Read)
			if ap < 0 || r < 0 || r > ap {
				continue
			}
			if q := int(ops[r].End - ops[r].Start); q < len(trace) && trace[q] == ops[ap].Value {
				winner = i
				break
			}
		}
		for i, ref := range a.Txns {
			if i == winner {
				continue
			}
			tx := &h.Txns[ref.ID]
			ops := h.Ops[tx.OpStart:tx.OpEnd]
			ap := firstOnKey(ops, k, history.Append)
			for j := 0; j < ap; j++ {
				if ops[j].Kind == history.Read && ops[j].Key == k && ops[j].Known {
					out = append(out, relaxedRead{op: tx.OpStart + int32(j), txn: int32(ref.ID)})
				}
			}
		}
	}
	return out
}

// relaxedHistory returns a copy of h (its micro-ops and transactions copied, the rest
// shared) in which the reads ops are not known and their transactions are detached
// from process and real-time order (no process, no invoke, no completion): a loser
// whose block a serial order puts past the trace would otherwise hold back its
// successors in those orders, which read committed does not have. The orders the
// models asked have are checked on the real history (verifyOrders).
func relaxedHistory(h *history.History, reads []relaxedRead) *history.History {
	hr := *h
	hr.Ops = append([]history.MicroOp(nil), h.Ops...)
	hr.Txns = append([]history.Txn(nil), h.Txns...)
	for _, r := range reads {
		hr.Ops[r.op].Known = false
		tx := &hr.Txns[r.txn]
		tx.Process, tx.Invoke, tx.Complete = -1, -1, -1
	}
	return &hr
}

// relaxedWitness tries, for the per-read models of left that a read-by-read replay can
// prove (replayable), a serial order of the history with the lost updates' losers'
// reads left unknown (relaxedReads), and proves each model whose checks
// verifyPerRead's re-execution of the real history accepts. in is the per-read
// inference of c.h. It returns the models still left.
func (c *checker) relaxedWitness(in *encode.Inference, left []string, results map[string]*ModelResult) []string {
	var want []string
	for _, m := range left {
		if c.replayable(m) && !c.proven[m] {
			want = append(want, m)
		}
	}
	var lost []Anomaly
	for _, a := range c.res.Anomalies {
		if a.Type == "lost-update" {
			lost = append(lost, a)
		}
	}
	if len(want) == 0 || len(lost) == 0 || c.oneBaseIn == nil || c.opts.Solver.NoWitness || c.budget.out() {
		return left
	}
	t0 := time.Now()
	defer func() { c.res.Stats.SolveSeconds += time.Since(t0).Seconds() }()
	relax := relaxedReads(c.h, c.oneBaseIn, lost)
	if len(relax) == 0 {
		return left
	}
	c.progress("replaying serially with the lost updates' reads relaxed")
	hr := relaxedHistory(c.h, relax)
	ir := encode.InferStop(hr, c.budget.stop)
	if ir == nil || len(ir.Findings) > 0 || c.budget.out() {
		return left
	}
	// accept proves the models of want whose orders order keeps; it reports whether
	// every one is proved.
	accept := func(order []int32) bool {
		at, err := verifyPerReadLists(c.h, in, order)
		if err != nil {
			return false // the relaxed reads are not committed prefixes there
		}
		all := true
		for _, m := range want {
			spec := models[m]
			if c.proven[m] {
				continue
			}
			if verifyOrders(c.h, at, spec.process, spec.realtime) != nil {
				all = false
				continue
			}
			c.proven[m] = true
			c.res.Stats.Witnessed++
			c.res.Stats.Replayed++
		}
		return all
	}
	commit := commitsOf(hr)
	p := &encode.Problem{In: ir, Commit: commit}
	guide, _ := p.AppendRealtimeEdges(p.ProcessEdges(), c.budget.stop)
	repair := !c.opts.Solver.NoRepair
	// replays runs the serial replays within win (nil: anywhere), guided by edges, by
	// midpoint and by completion, then repaired; it reports whether every model is
	// proved.
	replays := func(edges []encode.Edge, win *encode.Windows) bool {
		for _, byCompletion := range []bool{false, true} {
			if c.budget.out() {
				return false
			}
			if order, ok := scheduleWithin(hr, ir, commit, edges, byCompletion, win, c.budget.stop); ok && accept(order) {
				return true
			}
		}
		if !repair || c.budget.out() {
			return false
		}
		order, ok, n := scheduleRepaired(hr, ir, commit, edges, false, win, c.budget.stop)
		c.res.Stats.Repairs += n
		return ok && accept(order)
	}
	done := replays(guide, nil) || replays(nil, nil)
	if !done && !c.opts.Solver.NoPrune {
		// Within the windows of the serial models' narrowing on the relaxed history:
		// strict serializability's (real time narrows the most) guided, then
		// serializability's unguided.
		for _, lv := range []prune.Level{{Process: true, Realtime: true}, {}} {
			if done || c.budget.out() {
				break
			}
			c.progress("narrowing with the lost updates' reads relaxed")
			t1 := time.Now()
			pr := prune.Run(ir, prune.Options{Level: lv, Deadline: c.budget.deadline, Stop: c.budget.mem.exceeded})
			c.res.Stats.PruneSeconds += time.Since(t1).Seconds()
			if pr.Contradiction != nil || pr.KeyUnsat {
				continue
			}
			edges := guide
			if !lv.Process {
				edges = nil
			}
			done = replays(edges, pr.Win)
		}
	}
	rest := left[:0:0]
	for _, m := range left {
		if c.proven[m] {
			results[m] = &ModelResult{Model: m, Valid: Valid}
		} else {
			rest = append(rest, m)
		}
	}
	return rest
}
