package check

import (
	"slices"
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/prune"
)

// A serial witness for the per-read models on histories that are not serializable
// because of what read committed allows (DESIGN.md, "A relaxed serial witness"): a
// lost update rules out every serial order (two blocks pinned right after one list), a
// G-single or a write skew closes a cycle through anti-dependencies, so
// serialWitnessForWeak cannot help, and on long lists of few values the read-by-read
// replay gets lost among the duplicates long before the anomaly (a dense
// 1000-transaction history: stuck after 111) and the per-read problem is too large to
// decide. Read committed needs no read to be exact (a read may show an older committed
// list, and a read before the transaction's own append places no block), so the serial
// machinery (replays, narrowing, repairs) runs on the history with some reads left
// unknown, where it mostly finds a serial order at once; the order counts only when
// verifyPerRead re-executes it against the real history (every read a committed prefix
// ending at a block end; the models' process and real-time order).

// relaxedRead is a read micro-op (an index into h.Ops) and its transaction.
type relaxedRead struct{ op, txn int32 }

// relaxedReads lists the read micro-ops of the lost updates' losers: per lost update
// (transactions whose first read of a key before their first append to it showed one
// list), every member's reads of the key before its first append, except those of the
// member whose first appended value is the one in's trace of the key shows right after
// that list (the winner, whose read stays exact; the first such member when several
// are).
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
// shared) in which the reads are not known; with detach their transactions are also
// detached from process and real-time order (no process, no invoke, no completion): a
// lost update's loser whose block a serial order puts past the trace would otherwise
// hold back its successors in those orders, which read committed does not have. The
// orders the models asked have are checked on the real history (verifyOrders).
func relaxedHistory(h *history.History, reads []relaxedRead, detach bool) *history.History {
	hr := *h
	hr.Ops = append([]history.MicroOp(nil), h.Ops...)
	hr.Txns = append([]history.Txn(nil), h.Txns...)
	for _, r := range reads {
		hr.Ops[r.op].Known = false
		if detach {
			tx := &hr.Txns[r.txn]
			tx.Process, tx.Invoke, tx.Complete = -1, -1, -1
		}
	}
	return &hr
}

// maxRelaxRounds bounds the rounds of relaxedWitness (each one narrowing, a few replays).
const maxRelaxRounds = 4

// relaxedSolveConflicts bounds each of relaxedRounds's solver runs.
const relaxedSolveConflicts = 2000

// relaxedWitness tries to prove the per-read models of left that a read-by-read replay
// can prove (replayable) by a serial order of a relaxed history: the lost updates'
// losers' reads (relaxedReads), then, round by round, the reads whose anti-dependencies
// close the serial narrowing's contradiction, are left unknown, and the serial replays
// (anywhere, then within the narrowed windows) run on that history. An order counts
// for a model only when verifyPerRead's re-execution of the real history accepts it,
// with the model's orders. First with the relaxed transactions detached from the
// orders (read committed), then, for the models with process order still left,
// attached. in is the per-read inference of c.h. It returns the models still left.
func (c *checker) relaxedWitness(in *encode.Inference, left []string, results map[string]*ModelResult) []string {
	c.relaxedPerRead(in, c.oneBaseIn, c.lostUpdatesFound(), left)
	return c.takeProven(left, results)
}

// relaxedBeforeWitnesses runs the relaxed witness (relaxedPerRead) for the models of
// names without process order, where c.h has lost updates, before the witnesses'
// searches: those get lost looking for a read-committed order (1M failed states under
// real-time order on a lost update among 5K transactions on 10 keys of two values, 1%
// :info: 3.4 of the check's 4.2 s), where the relaxed one leaves the losers' reads to
// the verification and finds the order on the rest (0.7 s in all). The forms with
// process order are left for later: a lost update's loser mostly refutes them there
// (the order count), and trying them here cost 1.2-5.4 s on sweep histories where it
// did. Where it proves nothing, the later call is skipped (relaxedFailed): no order
// passed read committed's lists, so none can pass the orders too. in is the per-read
// inference, oneBase the one-base one.
func (c *checker) relaxedBeforeWitnesses(in, oneBase *encode.Inference, names []string) {
	lost := c.lostUpdatesFound()
	var plain []string
	for _, m := range names {
		if !models[m].process && !c.proven[m] {
			plain = append(plain, m)
		}
	}
	// oneBase's findings (the serializable models' value checks: a lost update's pinned
	// blocks) say nothing about the per-read models, as in relaxedPerRead.
	if len(lost) == 0 || len(plain) == 0 || oneBase == nil || c.budget.out() {
		return
	}
	if ran, lists := c.relaxedPerRead(in, oneBase, lost, plain); ran && !lists && !c.budget.out() {
		c.relaxedFailed = true
	}
}

// lostUpdatesFound returns the lost updates found in c.h: its anomalies so far, else
// those read uncommitted's path found for its witness (ruLost; not reported, read
// uncommitted allows them).
func (c *checker) lostUpdatesFound() []Anomaly {
	var lost []Anomaly
	for _, a := range c.res.Anomalies {
		if a.Type == "lost-update" {
			lost = append(lost, a)
		}
	}
	if len(lost) == 0 {
		return c.ruLost
	}
	return lost
}

// relaxedPerRead is relaxedWitness on the one-base inference oneBase of c.h, with lost
// its lost updates; what it proves goes into c.proven. It reports whether it ran, and
// whether some order passed read committed's lists (the models' orders aside).
func (c *checker) relaxedPerRead(in, oneBase *encode.Inference, lost []Anomaly, left []string) (ran, lists bool) {
	if c.relaxedFailed {
		return false, false
	}
	var want []string
	process := false
	for _, m := range left {
		if c.replayable(m) && !c.proven[m] {
			want = append(want, m)
			process = process || models[m].process
		}
	}
	// oneBase's findings (a key the one-base models cannot tile, diagnosed when they
	// were decided) say nothing about the per-read models: the relaxed history's own
	// inference is asked, and the verification decides.
	if len(want) == 0 || oneBase == nil || c.opts.Solver.NoWitness || c.budget.out() {
		return false, false
	}
	t0, prune0 := time.Now(), c.res.Stats.PruneSeconds
	relax := relaxedReads(c.h, oneBase, lost)
	// Attached only after a detached order that read committed accepts but the orders
	// did not: otherwise (the history is not even read committed, or no serial order
	// of the relaxed one was found) the more constrained pass would fail too, and on a
	// long history each round costs an inference and two narrowings.
	// accept proves the models of want whose orders order keeps, when every read of
	// the real history is a committed prefix there; it reports whether every one is
	// proved, and lists whether some order passed the lists (the orders aside).
	accept := func(order []int32) bool {
		at, err := verifyPerReadLists(c.h, in, order)
		if err != nil {
			return false // a relaxed read is no committed prefix there: no witness
		}
		lists = true
		return c.proveOrdered(at, want)
	}
	switch {
	case c.lostLeftOut(relax, accept) || c.relaxedLeftOutOnly:
	case !c.relaxedRounds(oneBase, relax, true, true, accept) && lists && process:
		c.relaxedRounds(oneBase, relax, false, true, accept)
	}
	c.res.Stats.SolveSeconds += time.Since(t0).Seconds() - (c.res.Stats.PruneSeconds - prune0)
	return true, lists
}

// lostLeftOut tries relaxedWitness's first step on the history without the lost
// updates' losers (those whose reads relax lists): where a loser's append was lost (a
// read-modify-write that wrote back its stale list, so the key's later lists do not
// show it), the rest of the history is mostly serializable, and the loser commits last,
// its block past the trace and its reads older lists, as read committed allows. With
// its read left unknown instead, a serial order must still place its block, and on
// keys of few values the replays and searches try it at every position the value
// repeats before the end (a lost update among 10K transactions on hotspot keys of two
// values, 5% :info: no order in 20 s). Each serial order of the history with the
// losers failed goes to accept with the losers appended; accept verifies it on the real
// history. It reports whether accept took one.
func (c *checker) lostLeftOut(relax []relaxedRead, accept func(order []int32) bool) bool {
	var losers []int32
	for _, r := range relax {
		if !slices.Contains(losers, r.txn) {
			losers = append(losers, r.txn)
		}
	}
	if len(losers) == 0 || c.relaxedSolverOnly || skipLostLeftOut || c.budget.out() {
		return false
	}
	c.progress("replaying serially without the lost updates' losers")
	hl := *c.h
	hl.Txns = slices.Clone(c.h.Txns)
	for _, t := range losers {
		hl.Txns[t].Status = history.Fail
	}
	il := encode.InferStop(&hl, c.budget.stop)
	if il == nil || len(il.Findings) > 0 || c.budget.out() {
		return false
	}
	// Its serializable replays and searches, by a checker of its own: the strict
	// search within the narrowed windows (:info transactions near their invokes) is
	// what finds the order on :info-heavy histories.
	sub, ready := c.witnessCheckerOn(&hl)
	if !ready {
		return false
	}
	found := false
	sub.onSerialOrder = func(order []int32) {
		found = found || accept(append(slices.Clip(order), losers...))
	}
	sub.proveByReplay(il, []string{"serializable"})
	c.res.Stats.PruneSeconds += sub.res.Stats.PruneSeconds
	c.addWitnessStats(sub, found)
	return found
}

// skipLostLeftOut, set by tests, keeps lostLeftOut from running (to test the paths
// after it on histories it proves).
var skipLostLeftOut bool

// relaxedRounds runs relaxedWitness's rounds on the one-base inference oneBase of c.h
// from the reads relax, the relaxed transactions detached from the orders or not,
// until accept takes a serial order of the relaxed history; it reports whether one
// did. Without narrow, only the first round's replays run (no narrowing, no further
// reads relaxed).
func (c *checker) relaxedRounds(oneBase *encode.Inference, relax []relaxedRead, detach, narrow bool, accept func(order []int32) bool) bool {
	h := c.h
	relax = slices.Clone(relax)
	relaxed := map[int32]bool{}
	for _, r := range relax {
		relaxed[r.op] = true
	}
	// The narrowing levels: strict serializability's first (real time narrows the most),
	// then, detached, serializability's (read committed has no order), else strong
	// session serializability's.
	levels := []prune.Level{{Process: true, Realtime: true}, {}}
	if !detach {
		levels[1] = prune.Level{Process: true}
	}
	for round := 0; round < maxRelaxRounds && !c.budget.out(); round++ {
		hr, ir := h, oneBase
		if len(relax) > 0 {
			c.progress("replaying serially with reads relaxed")
			hr = relaxedHistory(h, relax, detach)
			if ir = encode.InferStop(hr, c.budget.stop); ir == nil || len(ir.Findings) > 0 || c.budget.out() {
				return false
			}
		}
		commit := commitsOf(hr)
		p := &encode.Problem{In: ir, Commit: commit}
		process := p.ProcessEdges()
		guide := append(slices.Clip(process), encode.RealtimeGuide())
		// replays runs the serial replays within win (nil: anywhere), guided by edges,
		// by midpoint and by completion, then repaired; it reports whether every model
		// is proved.
		replays := func(edges []encode.Edge, win *encode.Windows) bool {
			if c.relaxedSolverOnly {
				return false
			}
			for _, byCompletion := range []bool{false, true} {
				if c.budget.out() {
					return false
				}
				if order, ok := scheduleWithin(hr, ir, commit, edges, byCompletion, win, c.budget.stop); ok && accept(order) {
					return true
				}
			}
			if c.budget.out() {
				return false
			}
			if !c.opts.Solver.NoRepair {
				order, ok, n := scheduleRepaired(hr, ir, commit, edges, false, win, c.budget.stop)
				c.res.Stats.Repairs += n
				if ok && accept(order) {
					return true
				}
			}
			// Unordered and anywhere: the serial-order search where the replays got stuck
			// (accept verifies what it finds on the real history).
			nodes := serialSearchNodes(len(hr.Txns)) / 8
			if edges != nil || win != nil || nodes == 0 || c.opts.Solver.NoSerialSearch || c.budget.out() {
				return false
			}
			if order, ok := searchSerial(hr, ir, commit, nodes, c.budget.stop); ok && accept(order) {
				return true
			}
			// From the end (searchSerialBackward): it finds the orders where a relaxed
			// loser must run far from where the forward search tries it.
			if c.budget.out() {
				return false
			}
			order, ok := searchSerialBackward(hr, ir, commit, backSearchWork(len(hr.Txns)), c.budget.stop)
			return ok && accept(order)
		}
		// solved decides the serial model of level lv on the relaxed history hr within win
		// by a checker of its own, its conflicts capped: each of its solutions goes to
		// accept as the topological order of its graph (modelOrder). Where the replays
		// and searches get lost among the duplicates, a few dozen conflicts find one.
		solved := func(lv prune.Level, win *encode.Windows) bool {
			sub, ready := c.witnessCheckerOn(hr)
			if !ready || c.budget.out() {
				return false
			}
			m := "serializable"
			switch {
			case lv.Realtime:
				m = "strict-serializable"
			case lv.Process:
				m = "strong-session-serializable"
			}
			found := false
			sub.onSerialOrder = func(order []int32) { found = found || accept(order) }
			c.progress("deciding " + m + " with reads relaxed")
			lift := sub.budget.capConflicts(relaxedSolveConflicts)
			sub.decide(ir, []string{m}, win, m, map[string]*ModelResult{})
			lift()
			c.addWitnessStats(sub, found)
			return found
		}
		// With nothing relaxed the history is the real one, whose serial replays ran.
		if len(relax) > 0 && (replays(guide, nil) || replays(nil, nil)) {
			return true
		}
		if c.opts.Solver.NoPrune || !narrow {
			return false
		}
		var fresh []relaxedRead
		for _, lv := range levels {
			if c.budget.out() {
				return false
			}
			c.progress("narrowing with reads relaxed")
			t1 := time.Now()
			pr := prune.Run(ir, prune.Options{Level: lv, Deadline: c.budget.deadline, Stop: c.budget.mem.exceeded})
			c.res.Stats.PruneSeconds += time.Since(t1).Seconds()
			if pr.KeyUnsat {
				return false
			}
			if pr.Contradiction == nil {
				edges := guide
				switch {
				case !lv.Process:
					edges = nil
				case !lv.Realtime:
					edges = process
				}
				if replays(edges, pr.Win) || solved(lv, pr.Win) {
					return true
				}
				continue
			}
			// The reads whose anti-dependencies the cycle runs through: read committed
			// has none, so the next round leaves them unknown.
			for _, st := range pr.Contradiction.Steps {
				if st.Read >= 0 && !relaxed[st.Read] {
					relaxed[st.Read] = true
					fresh = append(fresh, relaxedRead{op: st.Read, txn: st.From})
				}
			}
			if len(fresh) > 0 {
				break
			}
		}
		if len(fresh) == 0 {
			return false
		}
		relax = append(relax, fresh...)
	}
	return false
}

// relaxedSnapshotWitness looks for a snapshot-isolated execution of a history the
// serializable-family narrowing refuted (a write skew), where the snapshot replays got
// lost among duplicate values long before the anomaly: the reads whose
// anti-dependencies the refutation's cycle runs through (serialCycleReads) are left
// unknown, as for read committed's relaxed witness, the serial machinery finds a
// serial order of that relaxed history, and each transaction then starts at the
// latest state whose lists its reads all show (snapshotEventsOf). The events count
// only when verifySI accepts them on the real history.
func (c *checker) relaxedSnapshotWitness() bool {
	if c.oneBaseIn == nil || len(c.serialCycleReads) == 0 || c.opts.Solver.NoWitness || c.budget.out() {
		return false
	}
	t0, prune0 := time.Now(), c.res.Stats.PruneSeconds
	defer func() {
		c.res.Stats.SolveSeconds += time.Since(t0).Seconds() - (c.res.Stats.PruneSeconds - prune0)
	}()
	accept := func(order []int32) bool {
		events, ok := snapshotEventsOf(c.h, order)
		// Not counted as a rejected replay when verifySI refuses: the serial order of
		// another history need not have a snapshot-isolated reading of this one.
		if !ok || verifySIStop(c.h, c.oneBaseIn, events, false, false, c.budget.stop) != nil {
			return false
		}
		c.res.Stats.Witnessed++
		c.res.Stats.Replayed++
		return true
	}
	// The replays of the relaxed history only: where they do not find an order, its
	// narrowing (unbounded, or within snapshot isolation's bounds) cost 1-6 CPU-s at
	// 10K (write skew, seeds 9, 27, 41) and the next witness still had to decide.
	return c.relaxedRounds(c.oneBaseIn, c.serialCycleReads, true, false, accept)
}

// addSerialCycleReads records the reads whose anti-dependencies a serializable-family
// refutation's cycle runs through (relaxedSnapshotWitness relaxes them), when two of
// them are adjacent on it, as snapshot isolation allows (a write skew): a cycle with
// one anti-dependency (G-single) or none adjacent, it forbids, and relaxing its reads
// only cost narrowings of the whole history (10K, one G-single injected: 5 CPU-s).
func (c *checker) addSerialCycleReads(pc *prune.Contradiction) {
	adjacent := false
	for i, st := range pc.Steps {
		next := pc.Steps[(i+1)%len(pc.Steps)]
		adjacent = adjacent || len(pc.Steps) > 1 && st.Read >= 0 && next.Read >= 0
	}
	if !adjacent {
		return
	}
	for i, st := range pc.Steps {
		if next := pc.Steps[(i+1)%len(pc.Steps)]; st.Read >= 0 && next.Read >= 0 && !slices.Contains(c.serialCuts, next.From) {
			c.serialCuts = append(c.serialCuts, next.From)
		}
		if st.Read >= 0 && !slices.ContainsFunc(c.serialCycleReads, func(r relaxedRead) bool { return r.op == st.Read }) {
			c.serialCycleReads = append(c.serialCycleReads, relaxedRead{op: st.Read, txn: st.From})
		}
	}
}

// snapshotEventsOf turns a serial order (commits in that order) into start and commit
// events: each transaction starts at the latest state, before its commit, whose lists
// its reads all show (by length; verifySI compares the values) and since which no
// other transaction appended to the keys it appends to. It reports false when some
// transaction has no such state.
func snapshotEventsOf(h *history.History, order []int32) ([]siEvent, bool) {
	// lenAt[k][p]: the state (commits so far) at which key k's list became p long.
	lenAt := make([][]int32, len(h.Keys))
	lastWrite := make([]int32, len(h.Keys))
	for k := range lenAt {
		lenAt[k] = []int32{0}
	}
	snapAt := make([]int32, len(order))
	own := map[int32]int32{}
	for i, t := range order {
		lo, hi := int32(0), int32(i)
		clear(own)
		reads := h.Txns[t].Status == history.OK
		for _, op := range h.TxnOps(int(t)) {
			k := op.Key
			if op.Kind == history.Append {
				if own[k] == 0 {
					lo = max(lo, lastWrite[k])
				}
				own[k]++
				continue
			}
			if !reads || !op.Known {
				continue
			}
			q := op.End - op.Start - own[k]
			if q < 0 || q >= int32(len(lenAt[k])) {
				return nil, false
			}
			lo = max(lo, lenAt[k][q])
			if q+1 < int32(len(lenAt[k])) {
				hi = min(hi, lenAt[k][q+1]-1)
			}
		}
		if lo > hi {
			return nil, false
		}
		snapAt[i] = hi
		for k, n := range own {
			for range n {
				lenAt[k] = append(lenAt[k], int32(i)+1)
			}
			lastWrite[k] = int32(i) + 1
		}
	}
	// Starts grouped by the state they show (CSR), then interleaved with the commits.
	startsAt := make([]int32, len(order)+2)
	for i := range order {
		startsAt[snapAt[i]+1]++
	}
	for s := 1; s < len(startsAt); s++ {
		startsAt[s] += startsAt[s-1]
	}
	starts := make([]int32, len(order))
	fill := slices.Clone(startsAt)
	for i, t := range order {
		starts[fill[snapAt[i]]] = t
		fill[snapAt[i]]++
	}
	events := make([]siEvent, 0, 2*len(order))
	for i, t := range order {
		for _, u := range starts[startsAt[i]:startsAt[i+1]] {
			events = append(events, siEvent{u, false})
		}
		events = append(events, siEvent{t, true})
	}
	return events, true
}
