package check

import (
	"cmp"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/parallel"
)

// proveByReplay decides what it can without building the problem. A serial replay
// (schedule) guided by process and real-time order, checked by verifySerial, proves
// every serializable-family model and snapshot isolation (a serial order is also a
// snapshot-isolated execution: give each transaction the snapshot right before its
// commit). Failing that, an unguided replay proves the models that need no order, and
// a snapshot-isolation replay (siSchedule, checked by verifySI) that model. A check of
// snapshot isolation alone starts with its own replay. The models it proves are in
// c.proven.
func (c *checker) proveByReplay(in *encode.Inference, names []string) {
	h := c.h
	commit := commitsOf(h)
	// The order edges guide the replays even where no model needs them: a transaction
	// considered only after those that completed before it was invoked mostly runs on
	// its first try (at 1M transactions, 4.9 s against 10.3 s unguided).
	// A lost update leaves nothing to repair (and repairs cost a few replays); asked
	// only once a replay got stuck.
	lost := 0 // pinnedTwice, once asked: 1 true, -1 false
	lostUpdate := func() bool {
		if lost == 0 {
			lost = -1
			if pinnedTwice(h, in) {
				lost = 1
			}
		}
		return lost > 0
	}
	repair := func() bool { return !c.opts.Solver.NoRepair && !c.replayQuick && !lostUpdate() }
	// Pinned blocks alone may already close a cycle no serial (or snapshot) order
	// escapes: then no such replay is tried (see pinnedCycles).
	noReplay := func(snapshot bool) bool {
		if !c.pinsLooked {
			c.pinsLooked = true
			c.pinSerial, c.pinSnapshot = pinnedCycles(h, in, c.budget.stop, false)
		}
		if snapshot {
			return c.pinSnapshot
		}
		return c.pinSerial
	}
	// stuck is noReplay once a greedy replay got stuck, before the repairs and
	// searches: the value pins (valuePins) count then too. Looked at only then: with
	// every block of unique values pinned the graph costs 0.6 s at 100K transactions,
	// which the greedy replay of a valid history never needs; at 10K, where a snapshot
	// store's write skews are pinned by values only, the searches took 1–3.5 s.
	stuck := func(snapshot bool) bool {
		if noReplay(snapshot) {
			return true
		}
		if c.valuePinsLooked != in && !c.budget.out() {
			c.valuePinsLooked = in
			if serial, snap := pinnedCycles(h, in, c.budget.stop, true); serial {
				c.pinSerial, c.pinSnapshot, c.valuePinned = true, snap, true
			}
		}
		return noReplay(snapshot)
	}
	var guide []encode.Edge
	guideEdges := func() []encode.Edge {
		if guide == nil && !c.budget.out() {
			guide = orderGuide(in, commit)
		}
		return guide
	}
	// attempt replays serially, guided by the order edges or not (and, with unordered,
	// ranked by that serial order: scheduleRanked), and verifies the order under the
	// orders the models need; it returns the verified order.
	attempt := func(withGuide, process, realtime bool, unordered []int32) ([]int32, bool) {
		if c.budget.out() || noReplay(false) || onlyStrictSearch {
			return nil, false
		}
		c.progress("replaying serially")
		var edges []encode.Edge
		if withGuide {
			edges = guideEdges()
			if c.budget.out() { // cut short: no replay on a part of them
				return nil, false
			}
		}
		var order []int32
		var ok bool
		if unordered != nil {
			var n int
			order, ok, n = scheduleRanked(h, in, commit, edges, unordered, repair(), c.budget.stop)
			c.res.Stats.Repairs += n
		} else {
			// Ready transactions by the middle of their interval, then by their
			// completion (databases mostly serialize at commit: SQLite's histories
			// need it).
			order, ok = schedule(h, in, commit, edges, false, c.budget.stop)
			if !ok && !c.budget.out() {
				order, ok = schedule(h, in, commit, edges, true, c.budget.stop)
			}
			if !ok && !c.budget.out() && !stuck(false) && repair() {
				// Stuck on a wrong choice among writers of the same values: undo it, again.
				var n int
				order, ok, n = scheduleRepaired(h, in, commit, edges, false, nil, c.budget.stop)
				c.res.Stats.Repairs += n
			}
		}
		if !ok {
			return nil, false
		}
		c.progress("verifying a serial replay")
		if err := c.verifyOrder(in, order, process, realtime); err == errStopped {
			return nil, false
		} else if err != nil {
			// The replay's bookkeeping disagrees with the plain re-execution: a bug, but
			// the solver still decides soundly.
			c.res.Stats.ReplayRejected++
			return nil, false
		}
		return order, true
	}
	prove := func(process, realtime bool) {
		for _, m := range names {
			if (process || !models[m].process) && (realtime || !models[m].realtime) && !c.proven[m] {
				c.proven[m] = true
				c.res.Stats.Witnessed++
				c.res.Stats.Replayed++
			}
		}
	}
	// The snapshot replays run at most once each (guided, unguided): with models that
	// are all snapshot ones they come first and again at the end, and the same
	// inputs fail the same way (on othergen's snapshot store with :info at 10K the
	// repeat was 40% of the replays' time).
	var siTried [2]bool
	var acceptSI func(events []siEvent) bool
	// snapshotLeftWithoutRealtime: a snapshot or per-read model without real-time order
	// is asked and not proven (the one an execution that leaves real-time order may
	// still prove).
	snapshotLeftWithoutRealtime := func() bool {
		for _, m := range names {
			if (models[m].snapshot || models[m].perRead) && !models[m].realtime && !c.proven[m] {
				return true
			}
		}
		return false
	}
	// repairSI runs the snapshot replay with repairs, then the repaired replay that
	// starts and commits separately (guided too: with :info transactions the guided
	// replay mostly gets stuck where one took a position its own read order needed
	// elsewhere).
	repairSI := func(edges []encode.Edge) ([]siEvent, bool) {
		events, ok, n := scheduleSnapshot(h, in, commit, edges, false, true, c.budget.stop)
		c.res.Stats.Repairs += n
		if !ok && !c.budget.out() {
			events, ok, n = siScheduleRepaired(h, in, commit, edges, false, false, nil, c.budget.stop)
			c.res.Stats.Repairs += n
		}
		return events, ok
	}
	// With only snapshot models asked, the unguided replay's repairs wait for the
	// serial attempts (see the allSnapshot branch below); unguidedRepairsLeft once
	// skipped.
	deferUnguidedRepairs := allSnapshot(names) && !noDeferSIRepairs
	var unguidedRepairsLeft bool
	// With only snapshot models asked, the guided and unguided snapshot searches
	// first get a quarter of their work (snapshotFirstShare) before the serial
	// attempts; one that ran out of it gets the whole bound after them, before the
	// relaxed gates (searchesLeft, its gates). On serializable hot keys with :info at 10K
	// both ran their 20M units out before the strict search proved the history (0.5 s
	// of snapshot isolation's 1.4-1.9 s); on 15 snapshot-isolated histories of five
	// families the searches that proved one used at most 3.4M of their 20M.
	var searchesLeft []snapGates
	// snapshotLeft: a snapshot or per-read model is asked and not proven.
	snapshotLeft := func() bool {
		for _, m := range names {
			if (models[m].snapshot || models[m].perRead) && !c.proven[m] {
				return true
			}
		}
		return false
	}
	trySI := func(withGuide bool) bool {
		want := snapshotLeft()
		tried := &siTried[0]
		if withGuide {
			tried = &siTried[1]
		}
		if !want || *tried || c.replayQuick || c.budget.out() || noReplay(true) || onlyStrictSearch {
			return false
		}
		*tried = true
		if onSIReplay != nil {
			onSIReplay(withGuide)
		}
		c.progress("replaying under snapshot isolation")
		var edges []encode.Edge
		if withGuide {
			edges = guideEdges()
			if c.budget.out() { // cut short: no replay on a part of them
				return false
			}
		}
		// A serial replay whose transactions may read an older state first (a
		// serializable history with a write skew), then start and commit events.
		events, ok, _ := scheduleSnapshot(h, in, commit, edges, false, false, c.budget.stop)
		if !ok && !c.budget.out() {
			events, ok = siSchedule(h, in, commit, edges, false, false, c.budget.stop)
		}
		if !ok && !c.budget.out() {
			events, ok = siSchedule(h, in, commit, edges, true, false, c.budget.stop)
		}
		if !ok && !c.opts.Solver.NoSerialSearch && !c.opts.Solver.NoSnapshotSearch && !c.budget.out() && len(h.Txns) <= maxSerialSearchTxns && !stuck(true) {
			// Stuck on a wrong choice among writers of the same values: search the
			// choices (searchSnapshot), within real-time order where the replay
			// followed it, before the repairs (on othergen's snapshot store with :info
			// at 10K, 0.2 CPU-s where the repairs took 0.7-1.8 and failed).
			c.progress("searching a snapshot-isolated execution")
			work := snapshotSearchWork(len(h.Txns))
			if deferUnguidedRepairs {
				work = max(work/snapshotFirstShare, 1)
			}
			var out bool
			events, ok, out = searchSnapshotWork(h, in, commit, snapGates{on: withGuide}, work, c.budget.stop)
			if ok {
				c.res.Stats.Searched++
			}
			if out && deferUnguidedRepairs {
				searchesLeft = append(searchesLeft, snapGates{on: withGuide})
			}
		}
		if !ok && !withGuide && deferUnguidedRepairs {
			// Left for after the serial attempts (relaxedSnapshot): see there.
			unguidedRepairsLeft = true
			return false
		}
		if !ok && !c.budget.out() && repair() {
			events, ok = repairSI(edges)
		}
		// Snapshots older than the guide allows (a lagging replica's): a reader the
		// guide holds back starts where a commit would strand it. Only for a model
		// asked without real-time order, the one such an execution may still prove.
		older := withGuide && snapshotLeftWithoutRealtime()
		if !ok && older && !c.budget.out() {
			events, ok = siSchedule(h, in, commit, edges, false, true, c.budget.stop)
		}
		if !ok && older && !c.budget.out() && repair() {
			var n int
			events, ok, n = siScheduleRepaired(h, in, commit, edges, false, true, nil, c.budget.stop)
			c.res.Stats.Repairs += n
		}
		return ok && acceptSI(events)
	}
	// acceptSI verifies a snapshot-isolated execution and proves the models it shows.
	acceptSI = func(events []siEvent) bool {
		c.progress("verifying a snapshot isolation replay")
		if err := verifySIStop(h, in, events, false, false, c.budget.stop); err == errStopped {
			return false
		} else if err != nil {
			c.res.Stats.ReplayRejected++
			return false
		}
		c.res.Stats.Witnessed++
		c.res.Stats.Replayed++
		// The execution proves every snapshot model whose orders it keeps, and the
		// per-read ones below them (a snapshot isolated execution has no G0, G1c).
		// The orders are checked only where a model asked needs them.
		for _, orders := range [][2]bool{{false, false}, {true, false}, {true, true}} {
			var asked []string
			for _, m := range names {
				if spec := models[m]; (spec.snapshot || spec.perRead) && spec.process == orders[0] && spec.realtime == orders[1] {
					asked = append(asked, m)
				}
			}
			if len(asked) == 0 {
				continue
			}
			if verifySIOrders(h, events, orders[0], orders[1]) != nil {
				break
			}
			for _, m := range asked {
				c.proven[m] = true
			}
		}
		return true
	}
	// The snapshot search with relaxed real-time gates (snapshotGates) comes last of
	// the snapshot attempts, after the serial ones (c.relaxedSnapshot): it costs more
	// where it fails (on a serializable hot-key store with :info at 10K, checked for
	// snapshot isolation alone, 7 CPU-s before the serial search found the order), and
	// is needed where snapshots lag (not serializable, so the serial attempts fail).
	var relaxedGates func() bool // the relaxed real-time gates' searches, below
	c.relaxedSnapshot = func() bool {
		if unguidedRepairsLeft && snapshotLeft() && !c.budget.out() && !c.replayQuick {
			unguidedRepairsLeft = false
			c.progress("replaying under snapshot isolation with repairs")
			if events, ok := repairSI(nil); ok {
				return acceptSI(events)
			}
		}
		// The first searches that ran out of their share, with the whole bound, before
		// the relaxed gates: 20M units each (~0.25 s at 10K) against several times
		// that per gate (a snapshot store with :info at 5K, 50 keys, values 1..2:
		// the gates ran past 20 s where the guided search with its whole bound
		// finds the execution in 0.1 s).
		left := searchesLeft
		searchesLeft = nil
		for _, g := range left {
			if !snapshotLeft() || c.replayQuick || c.budget.out() {
				break
			}
			c.progress("searching a snapshot-isolated execution again, with more work")
			if events, ok := searchSnapshot(h, in, commit, g, snapshotSearchWork(len(h.Txns)), c.budget.stop); ok {
				c.res.Stats.Searched++
				return acceptSI(events)
			}
		}
		return relaxedGates()
	}
	relaxedGates = func() bool {
		if noRelaxedGates || !snapshotLeftWithoutRealtime() || c.replayQuick || c.budget.out() || stuck(true) || onlyStrictSearch || c.opts.Solver.NoSerialSearch ||
			c.opts.Solver.NoSnapshotSearch || len(h.Txns) > maxSerialSearchTxns || !siTried[0] {
			return false
		}
		c.progress("searching a snapshot-isolated execution with relaxed real-time gates")
		// Each gate with relaxedGateWork times the bound; then, once all failed, those
		// that ran out of work again with relaxedGateMoreWork times it. The gates that
		// reach far past the first closed gate (snapshotClaimFar) come only after
		// those second searches: each node walks that far (snapshots 30 commits old
		// with :info at 5K, found by a second search: 2.1 s, 3.2 with the far gate
		// first).
		type attempt struct {
			gates snapGates
			times int64
		}
		var attempts, far []attempt
		for _, g := range snapshotGates(h) {
			if g.ahead > snapshotClaimAhead {
				far = append(far, attempt{g, relaxedGateWork})
			} else {
				attempts = append(attempts, attempt{g, relaxedGateWork})
			}
		}
		for i := 0; i < len(attempts); i++ {
			a := attempts[i]
			events, ok, out := searchSnapshotWork(h, in, commit, a.gates, a.times*snapshotSearchWork(len(h.Txns)), c.budget.stop)
			if c.budget.out() {
				return false
			}
			if ok {
				c.res.Stats.Searched++
				return acceptSI(events)
			}
			if out && a.times < relaxedGateMoreWork {
				attempts = append(attempts, attempt{a.gates, relaxedGateMoreWork})
			}
			if i == len(attempts)-1 {
				attempts, far = append(attempts, far...), nil
			}
		}
		return false
	}
	if allSnapshot(names) {
		// Its own replay also covers serializable histories; one that proves snapshot
		// isolation but not the orders a stronger model asked needs (an older snapshot
		// before a process predecessor's commit) leaves them to the serial replay.
		// The unguided replay's repairs wait for the serial attempts: on serializable
		// hot keys with :info at 10K they failed in 0.7 s before the strict search
		// proved the history, and on 164 snapshot-isolated histories of eight families
		// (lagging and :info stores, doppel gen's and othergen's) no repair proved one
		// (the search before them, or the guided replay, did).
		_ = trySI(true) || trySI(false)
		if c.allProven(names) {
			return
		}
	}
	// A strict-serializable order proves every serializable-family model.
	if _, ok := attempt(true, true, true, nil); ok {
		prove(true, true)
		return
	}
	// Stuck among concurrent writers of the same values: search the choices within
	// real-time order (not on a lost update, nor above maxSerialSearchTxns, as the
	// search without orders below). Its order proves every model asked: with
	// real-time order asked it runs here; without, after the unguided replay (which
	// needs no order) got stuck too. So it decides serializable and snapshot isolation
	// alone on the write-heavy hot-key family (the solver needed 6-13 CPU-s at 2K or
	// found nothing in 60 s, nor at 10K in 30 s); where the history is serializable
	// but not strict serializable, its gates mostly leave few states (family E at 1K:
	// 30-900 nodes, under 10 ms).
	strictSearched := c.quickSearched == in
	searchStrictOrder := func() bool {
		left := false
		for _, m := range names {
			left = left || !c.proven[m]
		}
		if !left || strictSearched || c.opts.Solver.NoSerialSearch || c.budget.out() || stuck(false) ||
			len(h.Txns) > maxSerialSearchTxns || lostUpdate() {
			return false
		}
		strictSearched = true
		if c.replayQuick {
			c.quickSearched = in
		}
		c.progress("searching a strict-serializable order")
		c.narrowAhead(in, strictModel)
		order, found := c.searchStrictFirst(in, commit)
		if found {
			c.dropAhead()
		}
		if !found && !c.opts.Solver.NoPrune && !c.budget.out() {
			// Again within strict serializability's windows, where the search
			// wanders: :info transactions that never committed but fit the traces
			// ("decoys") fill positions committed writers need, which the search
			// finds out only far below (ss store with 2% :info, 10K: no order in 300M
			// units; within the windows, which pin almost every committed writer's
			// block, found in ~1M after a 0.3-0.5 s narrowing). The narrowing is
			// kept for strict serializability's own decision.
			pr := c.narrowing(in, strictModel)
			if pr.Contradiction == nil && !pr.KeyUnsat && !c.budget.out() {
				order, found = c.searchStrictWithin(in, commit, pr.Win)
			}
		}
		if !found {
			return false
		}
		c.progress("verifying a searched strict-serializable order")
		if err := c.verifyOrder(in, order, true, true); err != nil {
			if err != errStopped {
				c.res.Stats.ReplayRejected++
			}
			return false
		}
		c.res.Stats.Searched++
		prove(true, true)
		return true
	}
	if realtimeLeft(names, c.proven) && searchStrictOrder() {
		return
	}
	unordered, ok := attempt(false, false, false, nil)
	if !ok && searchStrictOrder() { // without real-time order asked: see above
		return
	}
	// Not where two transactions are pinned at one position (a lost update: no serial
	// order exists; at 100K transactions the search's set-up alone cost 3.5 CPU-s), nor
	// on histories too large for its budget to matter (maxSerialSearchTxns).
	if !ok && unorderedLeft(names, c.proven) && !c.opts.Solver.NoSerialSearch && !c.budget.out() && !stuck(false) &&
		len(h.Txns) <= maxSerialSearchTxns && !lostUpdate() {
		// Stuck on a wrong choice among writers of the same values: search the choices,
		// forward with an eighth of its budget, then from the end, then forward with
		// the whole budget. Before that costliest try, serializability's narrowing
		// may show there is no order to find (noSerialOrder): on a history that is
		// not serializable the whole budget is spent (1.5 CPU-s at 5K transactions).
		c.progress("searching a serial order")
		nodes := serialSearchNodes(len(h.Txns))
		order, found := searchSerial(h, in, commit, max(nodes/8, 1), c.budget.stop)
		if !found && !c.budget.out() {
			// From the end: it finds the orders the forward search misses where a
			// transaction must run far after its midpoint (searchSerialBackward).
			c.progress("searching a serial order from its end")
			order, found = searchSerialBackward(h, in, commit, backSearchWork(len(h.Txns)), c.budget.stop)
		}
		// A strict search kept where it ran out of work (searchStrictWithin) gets its
		// first turn before serializability's narrowing: a strict order proves every
		// model, and without real-time order that narrowing can be slow (hot keys
		// with :info at 10K, seed 19: 7.6 s, where the turn found the order in 0.8 s;
		// the trio 13.1 -> 4.1 s).
		if !found && !c.budget.out() && c.turnKept() {
			return
		}
		if !found && !c.budget.out() && !c.noSerialOrder(in) {
			c.progress("searching a serial order")
			order, found = searchSerial(h, in, commit, nodes, c.budget.stop)
		}
		if found {
			c.progress("verifying a searched serial order")
			if err := c.verifyOrder(in, order, false, false); err == nil {
				unordered, ok = order, true
				c.res.Stats.Searched++
			} else if err != errStopped {
				c.res.Stats.ReplayRejected++
			}
		}
	}
	if ok {
		prove(false, false)
		// The models with orders again, the guided replay now following the unguided
		// one's order where the orders allow (scheduleRanked): where it got stuck among
		// writers of the same values, the narrowing of strict serializability would
		// decide, at several times the cost.
		left := false
		for _, m := range names {
			left = left || !c.proven[m]
		}
		if left {
			if _, ok := attempt(true, true, true, unordered); ok {
				prove(true, true)
			}
		}
		return
	}
	// Not serializable, or the greedy choice got stuck: snapshot isolation may still
	// have a replay of its own. When a serializable-family model is still to decide,
	// its narrowing comes first (decidePruned): it mostly proves a serial order where
	// the replays got stuck among duplicate values, and that settles snapshot isolation
	// too, so the snapshot replays (with their repairs: 0.7 CPU-s of a 10K
	// duplicate-heavy history's 2) run only when it does not (runDeferredSnapshot).
	if c.replayQuick {
		return
	}
	if c.serialLeft(names) && !c.opts.Solver.NoPrune {
		c.deferredSnapshot = func() { _ = trySI(true) || trySI(false) }
		return
	}
	_ = trySI(true) || trySI(false)
}

// noRelaxedGates (tests) leaves out the snapshot searches with relaxed real-time gates.
var noRelaxedGates bool

// snapshotFirstShare: with only snapshot models asked, the first snapshot searches get
// this share of their work (see searchesLeft in proveByReplay); a variable for tests.
var snapshotFirstShare int64 = 4

// noDeferSIRepairs (tests) runs the unguided snapshot replay's repairs in its turn
// even where only snapshot models are asked.
var noDeferSIRepairs bool

// onSIReplay, when set (by tests), sees each run of the snapshot replays.
var onSIReplay func(withGuide bool)

// serialSearchNodes bounds searchSerial's choice points in proveByReplay for a
// history of n transactions: 2,000 at 1K (half a CPU-second at most), falling with
// the square of n, since a node costs time linear in n (the closure and the
// precedence graph) and a larger history mostly has more wrong choices than a bounded
// search undoes (at 10K: 20 nodes; at 200 it found no order on the E family and cost a
// k10v2 history the narrowing proves 0.9 CPU-s).
func serialSearchNodes(n int) int {
	if n > maxSerialSearchTxns {
		return 0
	}
	n = max(n, 1)
	return max(16, int(min(int64(1<<20), 2_000_000_000/(int64(n)*int64(n)))))
}

// backSearchWork bounds searchSerialBackward's work (transactions examined, ~60 ns
// each): where it finds an order it backtracks little, at a cost near n²/8 (its key's
// candidates are walked with the ones placed: 130K at 1K transactions, 490K at 2K,
// 1.9M at 4K); twice that, within 512K..4M (~0.25 s: on histories with no serial
// order it is spent in full, 0.1-0.2 s of a 2K snapshot-isolated one's 1.1 s).
func backSearchWork(n int) int64 {
	return min(max(int64(n)*int64(n)/4, 1<<19), 4<<20)
}

// strictSearchWork bounds searchStrict's work (transactions examined or run, ~25 ns
// each; see serialSearch.work). A node costs its frontier (the transactions not run
// whose real-time gate is open: ~30-60 on the write-heavy hot-key family, which
// needed 50-65 units a node), not the history's size, so the bound does not fall
// with n: 30M units cost ~0.75 CPU-s wherever the search finds nothing (the hot-key
// family needed 0.5M-4.7M at 2K, 3.6M-10.0M at 10K, 14.7M at 30K).
func strictSearchWork() int64 {
	return strictFirstWork
}

// strictFirstWork is strictSearchWork's bound (a variable: tests make it small, so that
// the turns between solver rounds have the search to continue).
var strictFirstWork int64 = 30_000_000

// noStrictTurns (tests) leaves the strict search out of the solver's rounds.
var noStrictTurns bool

// onlyStrictSearch (tests) leaves out every replay but the strict search
// (searchStrictOrder), the replays within windows too (replayWithin), as if they got
// stuck.
var onlyStrictSearch bool

// realtimeLeft reports whether a serializable-family model of names with real-time
// order (strict serializability) is not proven yet.
func realtimeLeft(names []string, proven map[string]bool) bool {
	for _, m := range names {
		if spec := models[m]; spec.realtime && !spec.snapshot && !spec.perRead && !proven[m] {
			return true
		}
	}
	return false
}

// maxSerialSearchTxns: above it serialSearchNodes' formula gives fewer than two nodes
// (only its floor would be left), less than the search's set-up is worth.
const maxSerialSearchTxns = 32_000

// unorderedLeft reports whether a serializable-family model of names without process
// or real-time order (serializable) is not proven yet.
func unorderedLeft(names []string, proven map[string]bool) bool {
	for _, m := range names {
		if spec := models[m]; !spec.process && !spec.realtime && !spec.snapshot && !spec.perRead && !proven[m] {
			return true
		}
	}
	return false
}

// serialLeft reports whether a serializable-family model of names (no snapshot, not
// per read) is not proven yet.
func (c *checker) serialLeft(names []string) bool {
	for _, m := range names {
		if !models[m].snapshot && !models[m].perRead && !c.proven[m] {
			return true
		}
	}
	return false
}

// runDeferredSnapshot runs the snapshot replays proveByReplay left for after the
// serializable-family models' narrowing, when some model of names that they may prove
// (snapshot isolation, per read) is neither decided in results nor implied valid by
// a model that is.
func (c *checker) runDeferredSnapshot(names []string, results map[string]*ModelResult) {
	if c.deferredSnapshot == nil || c.keyUnsat || c.budget.out() {
		return
	}
	for _, m := range names {
		if (models[m].snapshot || models[m].perRead) && results[m] == nil && !c.proven[m] &&
			!impliedValid(m, results) && len(c.forbiddenFound(m)) == 0 {
			run := c.deferredSnapshot
			c.deferredSnapshot = nil
			t0 := time.Now()
			run()
			c.runRelaxedSnapshot()
			c.res.Stats.SolveSeconds += time.Since(t0).Seconds()
			return
		}
	}
}

// runRelaxedSnapshot runs the snapshot search with relaxed gates proveByReplay left
// (relaxedSnapshot), once.
func (c *checker) runRelaxedSnapshot() {
	if run := c.relaxedSnapshot; run != nil && !c.budget.out() {
		c.relaxedSnapshot = nil
		run()
	}
}

// allSnapshot reports whether every model asked is a snapshot isolation one.
func allSnapshot(names []string) bool {
	for _, m := range names {
		if !models[m].snapshot {
			return false
		}
	}
	return len(names) > 0
}

// stopEvery is how many steps of a replay pass between two questions to its stop hook
// (a step is about a microsecond at most).
const stopEvery = 4096

// stopped reports whether the replay's stop hook says to give up, asking it every
// stopEvery steps.
func (r *replay) stopped() bool {
	r.steps++
	return r.stop != nil && r.steps%stopEvery == 0 && r.stop()
}

// replayReads re-executes order on the keys k with k % parts == part: appends must
// match the trace where they land inside it, and each :ok read must equal, value by
// value, the list installed before it.
func replayReads(h *history.History, in *encode.Inference, order []int32, part, parts int32, quit *atomic.Bool) error {
	pos := make([]int32, len(in.Keys))
	for i, t := range order {
		if i&(stopEvery-1) == 0 && quit.Load() {
			return errStopped
		}
		reads := h.Txns[t].Status == history.OK
		ops := h.TxnOps(int(t))
		for i := range ops {
			op := &ops[i]
			if op.Key%parts != part {
				continue
			}
			L := in.Keys[op.Key].Trace
			if op.Kind == history.Append {
				if p := pos[op.Key]; p < int32(len(L)) && L[p] != op.Value {
					return fmt.Errorf("transaction %d appends at position %d a value other than the trace's", t, p)
				}
				pos[op.Key]++
				continue
			}
			if !reads || !op.Known {
				continue
			}
			vals := h.ReadList(op)
			if int32(len(vals)) != pos[op.Key] || len(vals) > len(L) {
				return fmt.Errorf("transaction %d reads %d values where %d are installed", t, len(vals), pos[op.Key])
			}
			for j, v := range vals {
				if L[j] != v {
					return fmt.Errorf("transaction %d reads a value not installed", t)
				}
			}
		}
	}
	return nil
}

// verifySerial re-executes order serially and reports the first way it fails to
// explain the history: every :ok transaction runs exactly once, no :fail one runs,
// each :ok read returns exactly the list installed before it (with the transaction's
// own earlier appends), and, when asked, each process's transactions run in their
// order and a transaction completed before another was invoked runs first. It uses
// each key's trace only as a reference list (reads are compared with it value by
// value), so it does not trust the inference.
func verifySerial(h *history.History, in *encode.Inference, order []int32, process, realtime bool) error {
	return verifySerialStop(h, in, order, process, realtime, nil)
}

// errStopped is a verification given up because its stop hook said so: neither an
// acceptance nor a rejection.
var errStopped = errors.New("check: the verification was stopped")

// verifyOrder is verifySerialStop on c.h under c's limits; an order it accepts is also
// shown to c.onSerialOrder, when set (ruRelaxedWitness's checker turns it into a
// read-uncommitted attribution of another history).
func (c *checker) verifyOrder(in *encode.Inference, order []int32, process, realtime bool) error {
	err := verifySerialStop(c.h, in, order, process, realtime, c.budget.stop)
	if err == nil && c.onSerialOrder != nil {
		c.onSerialOrder(order)
	}
	return err
}

// verifySerialStop is verifySerial that asks stop (when not nil) every few
// milliseconds whether to give up, and then returns errStopped: at a million
// transactions it takes seconds.
func verifySerialStop(h *history.History, in *encode.Inference, order []int32, process, realtime bool, stop func() bool) error {
	at, err := orderPositions(h, order)
	if err != nil {
		return err
	}
	if err := inHalves(func(part, parts int32, quit *atomic.Bool) error { return replayReads(h, in, order, part, parts, quit) }, stop); err != nil {
		return err
	}
	if stop != nil && len(order) >= stopEvery && stop() { // the orders' sort: half a second at 1M
		return errStopped
	}
	return verifyOrders(h, at, process, realtime)
}

// inHalves runs replay on the keys k with k % 2 == 0 and those with k % 2 == 1 in two
// goroutines and returns the first error. Keys are independent, and re-executing them
// is memory-bound (a key's position and trace are a cache miss per operation). With
// stop, the calling goroutine asks it every few milliseconds (it need not be safe
// for concurrent use) and, once it says so, raises quit, which the replays poll, and
// returns errStopped.
func inHalves(replay func(part, parts int32, quit *atomic.Bool) error, stop func() bool) error {
	var errs [2]error
	if parallel.Run(2, func(i int, quit *atomic.Bool) { errs[i] = replay(int32(i), 2, quit) }, stop) {
		return errStopped
	}
	return cmp.Or(errs[0], errs[1])
}

// orderPositions gives each transaction its position in order + 1 (0: not in it), and
// checks that order is one a replay may run: each transaction at most once, no :fail
// one, every :ok one.
func orderPositions(h *history.History, order []int32) ([]int32, error) {
	at := make([]int32, len(h.Txns))
	for i, t := range order {
		if t < 0 || int(t) >= len(h.Txns) || at[t] != 0 {
			return nil, fmt.Errorf("transaction %d appears twice or is out of range", t)
		}
		if h.Txns[t].Status == history.Fail {
			return nil, fmt.Errorf("failed transaction %d runs", t)
		}
		at[t] = int32(i) + 1
	}
	for t := range h.Txns {
		if h.Txns[t].Status == history.OK && at[t] == 0 {
			return nil, fmt.Errorf("committed transaction %d does not run", t)
		}
	}
	return at, nil
}

// realtimeEvents lays out the history's invoke and completion positions of the
// transactions ran keeps: +(t+1) at t's invoke, -(t+1) at its completion (:ok only: an
// :info transaction never completed), 0 elsewhere. Sweeping it checks real-time order.
func realtimeEvents(h *history.History, ran func(t int) bool) []int32 {
	maxPos := int32(-1)
	for t := range h.Txns {
		maxPos = max(maxPos, h.Txns[t].Invoke, h.Txns[t].Complete)
	}
	ev := make([]int32, maxPos+1)
	for t := range h.Txns {
		tx := &h.Txns[t]
		if !ran(t) {
			continue
		}
		if tx.Invoke >= 0 {
			ev[tx.Invoke] = int32(t) + 1
		}
		if tx.Complete >= 0 && tx.Status == history.OK {
			ev[tx.Complete] = -(int32(t) + 1)
		}
	}
	return ev
}

// verifyOrders checks that the positions at (1 + position, 0: absent) keep process
// order and real-time order, when asked.
func verifyOrders(h *history.History, at []int32, process, realtime bool) error {
	if process {
		var ids []int32
		for t := range h.Txns {
			if at[t] != 0 && h.Txns[t].Process >= 0 {
				ids = append(ids, int32(t))
			}
		}
		encode.SortProcessOrder(h, ids)
		for i := 1; i < len(ids); i++ {
			a, b := ids[i-1], ids[i]
			if h.Txns[a].Process == h.Txns[b].Process && at[a] > at[b] {
				return fmt.Errorf("transactions %d and %d run against their process order", a, b)
			}
		}
	}
	if realtime {
		latest := int32(0)
		for _, e := range realtimeEvents(h, func(t int) bool { return at[t] != 0 }) {
			switch {
			case e > 0:
				if at[e-1] <= latest {
					return fmt.Errorf("transaction %d runs before a transaction that completed before it was invoked", e-1)
				}
			case e < 0:
				latest = max(latest, at[-e-1])
			}
		}
	}
	return nil
}

// commitsOf is what a replay may run: :ok transactions must, :info ones may.
func commitsOf(h *history.History) []encode.Commit {
	commit := make([]encode.Commit, len(h.Txns))
	for t := range h.Txns {
		switch h.Txns[t].Status {
		case history.OK:
			commit[t] = encode.Committed
		case history.Info:
			commit[t] = encode.MayCommit
		}
	}
	return commit
}

// orderGuide is what a replay guided by process and real-time order follows: process
// order as edges, real-time order without its edges (a replay keeps it through gates).
func orderGuide(in *encode.Inference, commit []encode.Commit) []encode.Edge {
	p := &encode.Problem{In: in, Commit: commit} // order edges need only these
	return append(p.ProcessEdges(), encode.RealtimeGuide())
}

// noSerialOrder reports whether serializability's narrowing (kept for the model's own
// decision) already proves that no serial order exists, so that the searches for one
// can be skipped: on a history that is not serializable they spend their whole budget
// (othergen's snapshot-isolated store at 5K transactions: 1.5 CPU-s, against 0.05 for
// the narrowing that refutes it).
func (c *checker) noSerialOrder(in *encode.Inference) bool {
	if c.opts.Solver.NoPrune || c.budget.out() {
		return false
	}
	pr := c.narrowing(in, "serializable")
	return pr.KeyUnsat || pr.Contradiction != nil
}
