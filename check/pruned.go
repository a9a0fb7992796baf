package check

import (
	"fmt"
	"sync/atomic"
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/localsearch"
	"doppel/prune"
	"doppel/sat"
)

// decidePruned decides the serializable-family models the replay did not prove, each on
// a problem narrowed by thresholds (package prune) with the orders the model has. Strict
// serializability goes first whether asked or not: real-time order narrows the most, so
// its problem is the smallest, and a strict-serializable solution proves every model
// (snapshot isolation too). The others follow weakest first, since an anomaly of a
// weaker model is one of the stronger ones. What stays undecided is left out of results.
func (c *checker) decidePruned(in *encode.Inference, names []string, results map[string]*ModelResult) {
	var serial []string
	for _, m := range decideOrder(names) {
		if !models[m].snapshot {
			serial = append(serial, m)
		}
	}
	if len(serial) == 0 {
		c.decideSnapshotNarrowed(in, names, results)
		return
	}
	for _, m := range serial {
		if c.proven[m] {
			results[m] = &ModelResult{Model: m, Valid: Valid}
		}
	}
	settleAll := func() {
		for _, m := range names {
			if results[m] == nil || results[m].Valid == Unknown { // unknown: paused (shareTime)
				results[m] = &ModelResult{Model: m, Valid: Valid}
			}
		}
		clear(c.paused)
	}
	c.beforeSerialSearch = func() { c.runDeferredSnapshot(names, results) }
	defer func() { c.beforeSerialSearch = nil }()
	strict := strictModel
	asked := contains(names, strict)
	if skipStrictWitness && !asked && results[strict] == nil {
		c.strictNarrowTried = true
	} else if results[strict] == nil {
		n := len(c.res.Anomalies)
		lift := func() {}
		if !asked {
			// Only a witness: bounded, the history may be serializable without being strict.
			lift = c.budget.capConflicts(strictWitnessConflicts)
		}
		// Naming a proved violation on a small history decides the problem again (the
		// costly part). A weaker serializable model asked after it names one that
		// counts for strict too, so strict's own naming waits for that (done below
		// only if it names none).
		c.unnamed = nil
		c.deferNaming = asked && len(serial) > 1
		c.witnessOnly = !asked
		var v Validity
		var msg string
		if asked {
			// Its own rounds only take turns with the kept strict search (if any).
			share := c.shareTime(names, results)
			v, msg, _ = c.decideAlternating(in, strict)
			share()
		} else {
			v, msg = c.decideNarrowed(in, strict)
		}
		c.deferNaming, c.witnessOnly = false, false
		lift()
		c.strictRefuted = v == Invalid
		c.strictNarrowTried = !asked && v == Unknown && !c.budget.out()
		if c.keyUnsat {
			return // a key alone proves every model invalid: decided without narrowing
		}
		switch {
		case v == Valid:
			results[strict] = &ModelResult{Model: strict, Valid: Valid}
			settleAll()
			return
		case asked:
			results[strict] = &ModelResult{Model: strict, Valid: v, Message: msg}
		default:
			// Only a witness: its anomaly is not part of the answer.
			c.res.Anomalies = c.res.Anomalies[:n]
		}
	}
	for _, m := range serial {
		if results[m] != nil {
			continue
		}
		if len(c.forbiddenFound(m)) > 0 {
			results[m] = &ModelResult{Model: m, Valid: Invalid}
			continue
		}
		share := c.shareTime(names, results)
		v, msg, strictValid := c.decideAlternating(in, m)
		share()
		if c.keyUnsat {
			clear(results)
			return
		}
		if strictValid {
			settleAll()
			return
		}
		results[m] = &ModelResult{Model: m, Valid: v, Message: msg}
	}
	defer c.resumePaused(in, names, results, settleAll)
	for _, m := range serial {
		if results[m] != nil && results[m].Valid == Invalid {
			if c.serialRefuted == nil {
				c.serialRefuted = map[string]bool{}
			}
			c.serialRefuted[m] = true
		}
	}
	if c.unnamed != nil && len(c.forbiddenFound(strict)) == 0 {
		// No weaker model's anomaly names strict's violation: name it as before (the
		// proof stands whatever this finds).
		pc := c.unnamed
		c.unnamed = nil
		if v, _ := c.decideNarrowed(in, strict); v != Invalid || len(c.forbiddenFound(strict)) == 0 {
			c.addContradiction(strict, pc)
		}
	}
	c.unnamed = nil
	c.decideSnapshotNarrowed(in, names, results)
}

// decideAlternating decides serializable-family model m on its narrowed problem. When
// strict serializability's bounded witness search ended without a verdict, m's search
// and that witness search alternate in rounds of doubling time (from
// alternateFirstSlice), each round rebuilding both problems from their kept narrowings:
// on a valid history of a database that keeps real-time order, the strict problem is far
// smaller (hot keys, 2,000 transactions: 17K variables against 457K for serializable)
// and its search finds the solution the serializable search does not (serializable
// alone: unknown at 60 s on three of four seeds, where strict took 73K-294K conflicts,
// 3.5-18 CPU-s). A strict solution proves every serializable-family model
// (strictValid). Without such a witness in sight the time is shared evenly, so a
// history decided by m's own search costs at most about three times as much; rounds
// that keep doubling keep both searches complete. Each round begins with a turn of the
// strict search kept by proveByReplay (turnKept), if any; m may be strict
// serializability itself, whose rounds then hold only those turns and its own search.
func (c *checker) decideAlternating(in *encode.Inference, m string) (v Validity, msg string, strictValid bool) {
	if c.strictFound {
		return Valid, "", true
	}
	if len(c.serialRefuted) > 0 {
		// A serializable-family model is violated, so strict serializability is too.
		c.strictNarrowTried = false
	}
	withStrict := c.strictNarrowTried && !c.opts.Solver.NoWitness && c.defaultSolver()
	withLocal := c.localSearchApplies(m)
	kept := func() bool { return c.keptStrict != nil && c.keptStrict.in == in }
	// plain decides m without rounds. Where its share of the time (shareTime) stopped
	// it, it is paused as the rounds are, so that resumePaused gives it the time the
	// others leave: it ended unknown with half the time limit unused (a snapshot store's
	// 10K transactions as serializable beside three other models, 10.7 of 20 s).
	plain := func() (Validity, string, bool) {
		v, msg := c.decideNarrowed(in, m)
		if v == Unknown && !c.keyUnsat && !c.budget.out() && c.budget.capPassed() {
			if c.paused == nil {
				c.paused = map[string]*pausedRounds{}
			}
			c.paused[m] = &pausedRounds{slice: alternateFirstSlice, stagesDone: c.stagesDone}
			return Unknown, c.budget.message(m), false
		}
		return v, msg, false
	}
	if !withStrict && !withLocal && !kept() {
		return plain()
	}
	first := alternateFirstSlice
	c.stagesDone = map[string]int{}
	if p := c.paused[m]; p != nil {
		// Going on where its share of the time stopped the rounds (decidePruned).
		delete(c.paused, m)
		first, c.stagesDone = p.slice, p.stagesDone
	}
	defer func() { c.stagesDone = nil }()
	// A short local search first: where it finds an order it takes milliseconds, and
	// it is bounded by work, not time, so a conflict limit does not leave it out.
	if withLocal && first == alternateFirstSlice {
		found, pr := c.localSearch(in, m, 0, localFirstWork, 1000+20*len(c.h.Txns))
		if found != Unknown {
			return found, "", false
		}
		// Little progress (hot keys: a move shifts most reads; 345 unsatisfied reads
		// only fell to 309): no more rounds of it.
		withLocal = pr.Best*4 <= pr.Start*3
		if !withStrict && !withLocal && !kept() {
			return plain()
		}
	}
	for slice := first; ; slice *= 2 {
		if slice > first && c.budget.capPassed() || pauseHook != nil && pauseHook(m) {
			// The model's share of the time is spent (decidePruned): the models
			// after it get theirs, and these rounds go on after them.
			if c.paused == nil {
				c.paused = map[string]*pausedRounds{}
			}
			c.paused[m] = &pausedRounds{slice: slice, stagesDone: c.stagesDone}
			return Unknown, c.budget.message(m), false
		}
		// The kept strict search's turn first, two in the first round: m's problem is
		// wider than strict serializability's (hot keys with :info, 10K: 10.7M
		// variables, 2 GB, where the search needs one or two turns; serializable alone
		// took 22 CPU-s with one).
		if kept() && (c.turnKept() || slice == alternateFirstSlice && c.turnKept()) {
			c.strictFound = true
			return Valid, "", true
		}
		lift := c.budget.capTime(slice)
		v, msg = c.decideNarrowed(in, m)
		lift()
		if v != Unknown || c.keyUnsat || c.budget.out() {
			return v, msg, false
		}
		if withLocal {
			if found, _ := c.localSearch(in, m, max(slice/localSliceDivisor, time.Nanosecond), 0, 0); found != Unknown {
				return found, "", false
			}
		}
		if !withStrict {
			continue
		}
		c.progress("looking for a strict-serializable solution for " + m)
		if alternateHook != nil {
			alternateHook()
		}
		n := len(c.res.Anomalies)
		lift = c.budget.capTime(strictSliceFactor * slice)
		c.witnessOnly = true
		sv, _ := c.decideNarrowed(in, strictModel)
		c.witnessOnly = false
		lift()
		c.res.Anomalies = c.res.Anomalies[:n] // only a witness: no part of the answer
		switch {
		case sv == Valid && !c.keyUnsat:
			c.strictFound = true
			return Valid, "", true
		case sv == Invalid:
			c.strictRefuted, c.strictNarrowTried, withStrict = true, false, false
			if !withLocal {
				v, msg = c.decideNarrowed(in, m)
				return v, msg, false
			}
		case c.keyUnsat || c.budget.out():
			return Unknown, c.budget.message(m), false
		}
	}
}

// shareTime caps the solver runs of the model decided next at its share of the time
// left, where models after it are still undecided: the time left over the models left
// (itself included). Without it a serializable-family model took the whole limit in its
// rounds while the models after it, snapshot isolation decided alone in 1.7 CPU-s, never
// had a turn (the independent generator's snapshot store checked as serializable +
// strict + snapshot isolation: unknown on all but strict). decideAlternating pauses its
// rounds at the cap; resumePaused goes on with them once the others are decided.
func (c *checker) shareTime(names []string, results map[string]*ModelResult) (lift func()) {
	left := 0
	for _, m := range names {
		if results[m] == nil && !c.proven[m] {
			left++
		}
	}
	if left <= 1 || c.budget.deadline.IsZero() {
		return func() {}
	}
	if shareOverride > 0 {
		return c.budget.capTime(shareOverride)
	}
	return c.budget.capTime(time.Until(c.budget.deadline) / time.Duration(left))
}

// shareOverride, when set (tests), is every share shareTime gives.
var shareOverride time.Duration

// resumePaused goes on with the rounds of the models that shareTime paused (unknown at
// their share), in the order they were decided, with the time left; a strict solution
// found there settles every model (settle).
func (c *checker) resumePaused(in *encode.Inference, names []string, results map[string]*ModelResult, settle func()) {
	for _, m := range decideOrder(names) {
		mr := results[m]
		if c.paused[m] == nil || mr == nil || mr.Valid != Unknown {
			continue
		}
		if c.budget.out() || c.keyUnsat {
			mr.Message = c.budget.message(m)
			continue
		}
		if len(c.forbiddenFound(m)) > 0 {
			mr.Valid, mr.Message = Invalid, ""
			continue
		}
		v, msg, strictValid := c.decideAlternating(in, m)
		mr.Valid, mr.Message = v, msg
		if strictValid {
			settle()
			return
		}
	}
	clear(c.paused)
}

// pausedRounds is where decideAlternating's rounds for a model stopped when its share
// of the time passed: the next round's slice and the stages that ended at their own
// bounds.
type pausedRounds struct {
	slice      time.Duration
	stagesDone map[string]int
}

// localSearchApplies reports whether decideAlternating's rounds include a local
// search for a serial order on m: a model whose only question is a serial order
// without process or real-time order (serializable), on the default solver, in a
// history of at most maxLocalSearchTxns transactions.
func (c *checker) localSearchApplies(m string) bool {
	spec := models[m]
	return !spec.process && !spec.realtime && !spec.snapshot && !spec.perRead &&
		!c.opts.Solver.NoLocalSearch && !c.opts.Solver.NoWitness && c.defaultSolver() &&
		len(c.h.Txns) <= maxLocalSearchTxns
}

// localSearch runs localsearch.SerialOrder for at most d, work and moves (each when >
// 0; at least one must be), within the limits, and reports Valid when it found an order
// verifySerial accepts (such an order proves every model without process or real-time
// order: c.proven), Invalid when the neighbourhood search around its best order
// refuted m (proveLocalLNS), and how far it got. A round's search (d > 0) restarts with a new
// seed after runs of localRestartUnit moves times the Luby sequence, continued from
// round to round, until d is spent: a run that has not found an order is often stuck
// for good (family E at 360 transactions: 30% of runs of 20K moves find one, 34% of
// runs of 40K, 2 of 10 runs of 200K), though on others longer runs find more (1,000
// transactions, seed 1: 6 of 20 runs of 40K, 8 of 16 of 80K). Luby's lengths lose at
// most a logarithmic factor against the best fixed length, whatever it is.
func (c *checker) localSearch(in *encode.Inference, m string, d time.Duration, work int64, moves int) (Validity, localsearch.Progress) {
	c.progress("looking for a serial order by local search")
	deadline := time.Now().Add(d)
	stop := func() bool { return c.budget.out() || d > 0 && !time.Now().Before(deadline) }
	commit := commitsOf(c.h)
	var best localsearch.Progress
	var order, bestOrder []int32
	var seed uint64 // the first run's 0; a round's runs count on from c.localRuns
	for run := 0; ; run++ {
		if d > 0 {
			moves = localRestartUnit(len(c.h.Txns)) * int(sat.Luby(c.localRuns))
			c.localRuns++
			seed = uint64(c.localRuns)
		}
		var pr localsearch.Progress
		var ok bool
		var last []int32
		order, ok = localsearch.SerialOrder(c.h, in, commit, localsearch.Options{MaxWork: work, MaxMoves: moves, Seed: seed, Stop: stop, Progress: &pr, Best: &last, BestWithin: lnsMaxBroken})
		if run == 0 || pr.Best < best.Best {
			best = pr
			bestOrder = last
		}
		if ok {
			break
		}
		if d == 0 || stop() {
			if d > 0 && c.budget.out() || lnsOff || bestOrder == nil || best.Best > lnsMaxBroken {
				return Unknown, best
			}
			// Few reads left unsatisfied: the neighbourhood of the best order, within
			// the round's time again (or, before the first round, a bound of conflicts).
			conflicts := int64(lnsFirstConflicts)
			lift := func() {}
			if d > 0 {
				conflicts, lift = lnsRoundConflicts, c.budget.capTime(d)
			} else if left := c.budget.conflictsLeft(); left >= 0 {
				// Under a conflict limit, at most half of what is left: the model's
				// own search is next.
				if conflicts = min(conflicts, left/2); conflicts == 0 {
					return Unknown, best
				}
			}
			found := c.proveLocalLNS(in, bestOrder, m, conflicts)
			lift()
			return found, best
		}
	}
	c.progress("verifying a serial order found by local search")
	if c.acceptLocalOrder(in, order) {
		return Valid, best
	}
	return Unknown, best
}

// acceptLocalOrder reports whether verifySerial accepts order, found by the local
// search or the neighbourhood search around its best order; such an order proves every
// model without process or real-time order (c.proven).
func (c *checker) acceptLocalOrder(in *encode.Inference, order []int32) bool {
	if err := c.verifyOrder(in, order, false, false); err != nil {
		if err != errStopped {
			c.res.Stats.ReplayRejected++
		}
		return false
	}
	c.res.Stats.LocalSearched++
	for name, spec := range models {
		if !spec.process && !spec.realtime {
			c.proven[name] = true
		}
	}
	return true
}

// localRestartUnit is the unit of the Luby lengths of a round's local search runs
// for a history of n transactions (20K moves at 1,000).
func localRestartUnit(n int) int { return 10_000 + 10*n }

// localFirstWork bounds the local search before the first round (list entries
// scanned: about half a CPU-second), and so do 1,000 + 20 moves per transaction (a
// tiny history's moves cost next to nothing: millions of them fit in that work).
const localFirstWork = 15_000_000

// localSliceDivisor: each round's local search gets the serializable search's slice
// divided by it (the solver stays complete; a history it decides in its first slice
// pays nothing).
const localSliceDivisor = 2

// maxLocalSearchTxns: above it a move (linear in its keys' lists) costs too much for
// the rounds' slices to matter.
const maxLocalSearchTxns = 100_000

// alternateFirstSlice is decideAlternating's first round for m's search (a variable:
// tests make the rounds start at once); the strict witness search gets
// strictSliceFactor times as long.
var alternateFirstSlice = time.Second

const strictSliceFactor = 2

// skipStrictWitness (tests) leaves out decidePruned's first bounded search on strict
// serializability's narrowed problem, as if it ended undecided.
var skipStrictWitness bool

// skipReplays (tests) leaves out the replays before the narrowing, so that tiny
// histories reach the searches after it.
var skipReplays bool

// pauseHook, when set (tests), is asked at each of decideAlternating's rounds whether to
// pause them there, as at the end of the model's share of the time.
var pauseHook func(m string) bool

// alternateHook, when set (tests), sees each strict witness round of decideAlternating.
var alternateHook func()

// strictModel names strict serializability.
const strictModel = "strict-serializable"

// narrowingKey names a kept narrowing: the model and the inference it narrowed.
type narrowingKey struct {
	in *encode.Inference
	m  string
}

// decideSnapshotNarrowed decides snapshot isolation, when asked and not settled, on the
// problem narrowed by thresholds over start and commit events.
func (c *checker) decideSnapshotNarrowed(in *encode.Inference, names []string, results map[string]*ModelResult) {
	c.runDeferredSnapshot(names, results)
	for _, si := range decideOrder(names) {
		if !models[si].snapshot || results[si] != nil {
			continue
		}
		if (c.keyUnsat || c.budget.out()) && !c.proven[si] {
			return
		}
		switch {
		case c.proven[si] || impliedValid(si, results):
			// A verified replay, or a serializable-family model with its orders (every
			// serializable execution is snapshot isolated).
			results[si] = &ModelResult{Model: si, Valid: Valid}
			continue
		case len(c.forbiddenFound(si)) > 0:
			results[si] = &ModelResult{Model: si, Valid: Invalid}
			continue
		case si == "snapshot-isolation" && !c.opts.Solver.NoWitness && (c.relaxedSnapshotWitness() || c.turnKept() || c.turnKept() || c.strictSnapshotWitness(in) || c.hybridNarrowedWitness(in, si) || c.strongSnapshotWitness(in, si)):
			// Two turns of the kept strict search before the witnesses that decide
			// strict serializability's problem or narrow again (strong snapshot
			// isolation's took the whole 30 s on hot keys with :info at 10K, where the
			// search needs one or two turns; the first, 5 s).
			results[si] = &ModelResult{Model: si, Valid: Valid}
			continue
		case si == "strong-session-snapshot-isolation" && !c.opts.Solver.NoWitness && (c.turnKept() || c.turnKept() || c.hybridNarrowedWitness(in, si) || c.strongSnapshotWitness(in, si)):
			// Process order alone narrows start and commit events little: its own
			// problem left the search wandering (10K, write skews: 12-45 CPU-s) where
			// strong snapshot isolation's windows decide it in about what plain
			// snapshot isolation costs.
			results[si] = &ModelResult{Model: si, Valid: Valid}
			continue
		case c.keyUnsat:
			return // a key alone proves every model invalid: decided without narrowing
		}
		v, msg, _ := c.decideAlternating(in, si)
		if c.keyUnsat {
			return
		}
		results[si] = &ModelResult{Model: si, Valid: v, Message: msg}
	}
}

// narrowing narrows the blocks of in for model m (prune.Run at m's level), once: the
// result is kept for the next caller unless a limit cut it short. One started ahead
// for the same (narrowAhead) is waited for and taken; one for another is dropped
// before this one runs.
func (c *checker) narrowing(in *encode.Inference, m string) *prune.Result {
	key := narrowingKey{in, m}
	if pr, kept := c.narrowings[key]; kept {
		return pr
	}
	c.progress("narrowing for " + m)
	var pr *prune.Result
	var seconds float64
	if a := c.ahead; a != nil && a.key == key {
		<-a.done
		c.ahead = nil
		pr, seconds = a.res, a.seconds
	} else {
		c.dropAhead()
		t0 := time.Now()
		pr = prune.Run(in, c.narrowingOptions(m))
		seconds = time.Since(t0).Seconds()
	}
	c.res.Stats.PruneSeconds += seconds
	if !pr.KeyUnsat {
		c.res.Stats.Pruned += pr.Narrowed
	}
	if !c.budget.out() { // a narrowing cut short by a limit is not kept
		if c.narrowings == nil {
			c.narrowings = map[narrowingKey]*prune.Result{}
		}
		c.narrowings[key] = pr
	}
	return pr
}

// narrowingOptions are prune's options for model m's narrowing under the budget.
func (c *checker) narrowingOptions(m string) prune.Options {
	opts := prune.Options{Level: prune.Level{Process: models[m].process, Realtime: models[m].realtime, Split: models[m].snapshot}}
	opts.Deadline, opts.Stop = c.budget.deadline, c.budget.mem.exceeded
	if models[m].snapshot {
		// Without real time, start and commit events narrow little and slowly: bounded.
		opts.MaxRounds, opts.Work = 3, 300_000_000
	}
	return opts
}

// aheadNarrowing is a narrowing running on another goroutine (narrowAhead) beside a
// search that may make it unneeded.
type aheadNarrowing struct {
	key     narrowingKey
	done    chan struct{} // closed when res is set
	res     *prune.Result
	seconds float64
	cancel  atomic.Bool
}

// narrowAhead starts model m's narrowing of in on another goroutine, where a search
// about to run on this one may find an order without it and, where it does not, the
// narrowing comes next (the strict search within windows). The other core is
// otherwise idle there: on write-heavy hot keys with :info at 10K the strict search
// without windows spends ~0.3 s finding nothing before a ~0.5 s narrowing. The
// narrowing is deterministic, so taking it from there changes no verdict.
func (c *checker) narrowAhead(in *encode.Inference, m string) {
	key := narrowingKey{in, m}
	if _, kept := c.narrowings[key]; kept || c.ahead != nil || c.opts.Solver.NoPrune || noNarrowAhead {
		return
	}
	a := &aheadNarrowing{key: key, done: make(chan struct{})}
	opts := c.narrowingOptions(m)
	mem := opts.Stop
	opts.Stop = func() bool { return a.cancel.Load() || mem() }
	c.ahead = a
	narrowingsAhead.Add(1)
	go func() {
		t0 := time.Now()
		a.res = prune.Run(in, opts)
		a.seconds = time.Since(t0).Seconds()
		narrowingsAhead.Add(-1)
		close(a.done)
	}()
}

// narrowingsAhead counts the narrowings running ahead (tests: none outlives Check).
var narrowingsAhead atomic.Int32

// dropAhead stops a narrowing started ahead that is not needed, and waits for it.
func (c *checker) dropAhead() {
	if a := c.ahead; a != nil {
		a.cancel.Store(true)
		<-a.done
		c.ahead = nil
	}
}

// noNarrowAhead (tests) runs every narrowing where it is needed, none ahead.
var noNarrowAhead bool

// decideNarrowed narrows the blocks for model m and decides m on the narrowed problem.
func (c *checker) decideNarrowed(in *encode.Inference, m string) (Validity, string) {
	if c.budget.out() {
		return Unknown, c.budget.message(m) // the narrowing's setup alone takes a while
	}
	pr := c.narrowing(in, m)
	if pr.KeyUnsat {
		c.keyUnsat = true
		if len(c.h.Txns) > smallHistory {
			// A key alone proves every model invalid: name it, without building the
			// problem of every other key (on a small history the whole problem is
			// decided instead, which also shows the cycles).
			n := len(in.Findings)
			in.Diagnose(pr.UnsatKey)
			for _, f := range in.Findings[n:] {
				if !c.hasFinding(f) {
					c.addFinding(f)
				}
			}
			c.keyUnsatNamed = len(c.forbiddenFoundAll()) > 0
		}
		return Unknown, ""
	}
	if pr.Contradiction != nil {
		c.res.proofs = append(c.res.proofs, proof{model: m, txns: pr.Contradiction.Txns})
		if !models[m].snapshot {
			c.addSerialCycleReads(pr.Contradiction)
		}
	}
	if pr.Contradiction == nil && !c.opts.Solver.NoWitness && c.replayWithin(in, m, pr.Win) {
		return Valid, ""
	}
	if pr.Contradiction != nil && c.witnessOnly {
		// Strict serializability tried only as a witness for weaker models: its
		// violation is not part of the answer, so naming it (deciding the problem again,
		// 60 s on a dense 1,500-transaction history) would be wasted.
		return Invalid, ""
	}
	if pr.Contradiction != nil && c.deferNaming && len(c.h.Txns) <= smallHistory {
		c.unnamed = pr.Contradiction // decidePruned names it later, when needed
		return Invalid, ""
	}
	// With a contradiction, the windows up to it are sound, so the problem within them
	// has no solution: deciding it (bounded) names the anomaly as Elle does, from its
	// cycles; the thresholds' own proof stands when that runs out.
	n := len(c.res.Anomalies)
	named := func() bool { return c.named(m) }
	if pr.Contradiction != nil && len(c.h.Txns) > smallHistory {
		// On a long history the thresholds' proof is the evidence: a cycle of facts
		// checkable one by one, where the problem within the windows (barely narrowed
		// when the proof comes early) would cost far more to decide again.
		c.addContradiction(m, pr.Contradiction)
		return Invalid, ""
	}
	lift := func() {}
	if pr.Contradiction != nil {
		lift = c.budget.capConflicts(namingConflicts)
		c.naming = true
		defer func() { c.naming = false }()
	}
	if pr.Contradiction == nil && c.beforeSerialSearch != nil && !c.strictSearchFirst(m) {
		c.beforeSerialSearch()
	}
	results := map[string]*ModelResult{}
	if !c.decide(in, []string{m}, pr.Win, m, results) || results[m] == nil {
		lift()
		return Unknown, c.budget.message(m)
	}
	if r := results[m]; r.Valid != Invalid && pr.Contradiction == nil {
		lift()
		return r.Valid, r.Message
	}
	if (results[m].Valid != Invalid || !named()) && !c.budget.out() {
		// Not named within the windows (they rule out a whole key, or every attribution
		// of one): on a small history, the problem without them (bounded too) shows the
		// cycles themselves.
		c.res.Anomalies = c.res.Anomalies[:n]
		if pr.Contradiction == nil {
			lift = c.budget.capConflicts(explainConflicts)
		}
		clear(results)
		if len(c.h.Txns) <= smallHistory {
			c.decide(in, []string{m}, nil, m, results)
		}
	}
	lift()
	if results[m] != nil && results[m].Valid == Invalid && named() {
		return Invalid, ""
	}
	c.res.Anomalies = c.res.Anomalies[:n]
	if pr.Contradiction != nil {
		c.addContradiction(m, pr.Contradiction)
	} else {
		c.addNoAttribution(m)
	}
	return Invalid, ""
}

// addNoAttribution reports model m's refutation on its narrowed problem where no cycle
// names it.
func (c *checker) addNoAttribution(m string) {
	c.res.Anomalies = append(c.res.Anomalies, Anomaly{Type: prune.NoAttributionType(models[m].snapshot, models[m].process, models[m].realtime), Model: m, oneBase: true, Txns: c.refutationTxns(m),
		Explanation: "no attribution of the duplicated values to appends is consistent with the order the reads and " + m + "'s orders impose (proved on the problem narrowed by thresholds; the history is too long to show the cycles of each attribution)"})
}

// nameRefutation names a refutation of model m found on its narrowed problem by a
// search that is not the model's own (the neighbourhood search around the local
// search's best order). On a small history the model's own decision names it, as it
// would have without that search (within namingConflicts: the violation is known to be
// there); else, or when that does not name it, it is no attribution at all.
func (c *checker) nameRefutation(in *encode.Inference, m string) {
	n := len(c.res.Anomalies)
	if len(c.h.Txns) <= smallHistory && !c.budget.out() {
		lift := c.budget.capConflicts(namingConflicts)
		v, _ := c.decideNarrowed(in, m)
		lift()
		if v == Invalid || len(c.forbiddenFound(m)) > 0 {
			return // decideNarrowed names what it refutes
		}
		c.res.Anomalies = c.res.Anomalies[:n]
	}
	c.addNoAttribution(m)
}

// named reports whether an anomaly names a violation of m that the reads alone show
// (not a window's or an uncommitted read's).
func (c *checker) named(m string) bool {
	for _, a := range c.res.Anomalies {
		if !a.windowUnsat && !a.uncommitted && (a.Model == "" || graphWithin(a.Model, m)) && forbids(m, a.Type) {
			return true
		}
	}
	return false
}

// addContradiction reports a proof by thresholds as model m's anomaly.
func (c *checker) addContradiction(m string, pc *prune.Contradiction) {
	a := Anomaly{Type: pc.Type, Model: m, Explanation: pc.Text, narrowed: true}
	if pc.Key >= 0 {
		a.Key = c.h.Keys[pc.Key]
	}
	seen := map[int32]bool{}
	for _, t := range pc.Txns {
		if !seen[t] {
			seen[t] = true
			a.Txns = append(a.Txns, c.txnRef(t))
		}
	}
	if len(a.Txns) == 0 && pc.Key >= 0 {
		// A key that no live writer can fill (its writers all ruled out): its readers
		// and writers are the evidence.
		in := c.oneBaseIn
		if c.perRead && c.perReadIn != nil {
			in = c.perReadIn
		}
		if in != nil {
			a.Txns = c.keyTxns(in, []int32{pc.Key})
		}
	}
	for _, s := range pc.Steps {
		st := Step{From: int(s.From), To: int(s.To), FromIndex: c.h.Txns[s.From].Index, ToIndex: c.h.Txns[s.To].Index,
			Kind: s.Kind, Why: s.Why, AMop: -1, BMop: -1}
		if s.Key >= 0 {
			st.Key = c.h.Keys[s.Key]
		}
		a.Steps = append(a.Steps, st)
	}
	c.addAnomaly(a)
}

// namingConflicts bounds deciding again, to name it from cycles, a violation the
// narrowing already proved: where that names it at all it took at most 121 conflicts on
// dense 500- to 2,000-transaction histories (10 sessions, 3 values), and where it did
// not, 20,000 conflicts took 10 to 25 CPU-s before the thresholds' cycle was reported
// anyway.
const namingConflicts = 2000

// smallHistory bounds the transactions of a history on which a violation proved by
// thresholds is decided again on the problem (within the windows, then without), to
// name it from the cycles of its attributions as Elle names them.
const smallHistory = 2000

// addWindowUnsat reports a key with no segmentation within the windows.
func (c *checker) addWindowUnsat(k int32) {
	c.res.Anomalies = append(c.res.Anomalies, Anomaly{Type: "G2-item", Model: c.anomalyModel, Key: c.h.Keys[k], windowUnsat: true, oneBase: !c.perRead,
		Explanation: fmt.Sprintf("key %s cannot be split into whole appends once each is placed where the other keys' reads allow", c.h.Keys[k])})
}

// replayWithin replays serially with every block inside its window (guided by process
// and real-time order, then, for a model without them, unguided), verified like every
// replay; it reports whether that proved model m.
func (c *checker) replayWithin(in *encode.Inference, m string, win *encode.Windows) bool {
	if onlyStrictSearch {
		return false
	}
	h := c.h
	commit := commitsOf(h)
	guide := orderGuide(in, commit)
	// accepted counts a replay that its verifier accepted (err nil) as a proof.
	accepted := func(err error) bool {
		if err != nil {
			c.res.Stats.ReplayRejected++
			return false
		}
		c.res.Stats.Witnessed++
		c.res.Stats.Replayed++
		return true
	}
	try := func(edges []encode.Edge, process, realtime bool) bool {
		for _, byCompletion := range []bool{false, true} {
			if order, ok := scheduleWithin(h, in, commit, edges, byCompletion, win, c.budget.stop); ok &&
				accepted(c.verifyOrder(in, order, process, realtime)) {
				return true
			}
		}
		if c.opts.Solver.NoRepair {
			return false
		}
		order, ok, n := scheduleRepaired(h, in, commit, edges, false, win, c.budget.stop)
		c.res.Stats.Repairs += n
		return ok && accepted(c.verifyOrder(in, order, process, realtime))
	}
	spec := models[m]
	if spec.snapshot {
		// A start/commit replay within the windows, verified by verifySI; serial
		// replays were tried before narrowing.
		for _, edges := range [][]encode.Edge{guide, nil} {
			for _, byCompletion := range []bool{false, true} {
				s := newSIReplay(h, in, commit, edges)
				s.byCompletion, s.stop, s.win = byCompletion, c.budget.stop, win
				if events, ok := s.run(); ok && accepted(verifySI(h, in, events, spec.process, spec.realtime)) {
					return true
				}
			}
		}
		return false
	}
	return try(guide, spec.process, spec.realtime) || !spec.process && !spec.realtime && try(nil, false, false)
}

// strictSnapshotWitness decides strict serializability on its narrowed problem, only as
// a witness for snapshot isolation asked without a serializable-family model (with one,
// decidePruned has done so already): a strict-serializable execution is a snapshot
// isolated one, and real time narrows the blocks the most, where the split graph of a
// write-heavy history leaves the snapshot search wandering (hot keys, 1,000
// transactions: unknown at 30 s as snapshot isolation, valid in a few CPU-s so).
// Bounded as the witness of decidePruned; a violation found is no part of the answer.
func (c *checker) strictSnapshotWitness(in *encode.Inference) bool {
	if c.strictRefuted || c.budget.out() {
		return false
	}
	const strict = strictModel
	n := len(c.res.Anomalies)
	lift := c.budget.capConflicts(strictWitnessConflicts)
	c.witnessOnly = true
	v, _ := c.decideNarrowed(in, strict)
	c.witnessOnly = false
	lift()
	c.strictRefuted = v == Invalid
	c.strictNarrowTried = v == Unknown && !c.budget.out()
	c.res.Anomalies = c.res.Anomalies[:n]
	return v == Valid && !c.keyUnsat
}

// strongSnapshotWitness looks (bounded) for a solution of si (snapshot isolation, or
// strong-session snapshot isolation) among those strong snapshot isolation allows (a
// commit precedes the start of what was invoked after it completed, as most databases
// give): real time narrows the start and commit events as it narrows the
// strict-serializable problem, where si's own orders leave each transaction's start and
// commit almost free. The windows are not sound for si, so only a solution counts:
// a solution of strong snapshot isolation within them is one of si.
func (c *checker) strongSnapshotWitness(in *encode.Inference, si string) bool {
	c.progress("narrowing for strong snapshot isolation")
	t0 := time.Now()
	// Bounded work: only a witness (the graph has two nodes per transaction).
	pr := prune.Run(in, prune.Options{Level: prune.Level{Split: true, Process: true, Realtime: true}, Deadline: c.budget.deadline,
		Stop: c.budget.mem.exceeded, MaxRounds: 3, Work: 300_000_000})
	c.res.Stats.PruneSeconds += time.Since(t0).Seconds()
	if pr.Contradiction != nil || pr.KeyUnsat || c.budget.out() {
		return false
	}
	if c.replayWithin(in, si, pr.Win) {
		return true
	}
	if allowedBlocks(pr.Win) > maxWitnessBlocks {
		return false // narrowed too little (bounded work): building it would cost more than it may save
	}
	// Strong snapshot isolation itself within its windows: its solutions are si's, and
	// its problem is the one the windows were narrowed for (process and real-time order
	// besides si's). Deciding plain snapshot isolation there, the static stages ran out
	// of conflicts on othergen's snapshot store with :info at 10K (unknown at 60 s);
	// with the orders, the static stage without theory propagation finds a solution
	// (6-10 CPU-s). For plain snapshot isolation without the hybrid witness and the
	// VSIDS stage that lead strong snapshot isolation's own search (solve.go): here
	// they found none and cost 1.5-3.5 CPU-s each at 7K-10K.
	return c.witnessWithin(in, "strong-snapshot-isolation", pr.Win, nil, si == "snapshot-isolation")
}

// witnessWithin decides si inside the windows win (not sound for si: only a solution
// counts), bounded, with whole (when not nil) the transactions the hybrid witness keeps
// whole, as a witness for plain snapshot isolation if plainSIWitness (see the field).
// Decided by a checker of its own: what it finds within these windows is no
// evidence about si, and must neither show nor hide any. Anomalies si allows (a write
// skew's G2-item among known edges) do not count against the solution.
func (c *checker) witnessWithin(in *encode.Inference, si string, win *encode.Windows, whole []bool, plainSIWitness bool) bool {
	sub, ready := c.witnessChecker()
	if !ready {
		return false
	}
	sub.hybridWhole, sub.plainSIWitness = whole, plainSIWitness
	lift := sub.budget.capConflicts(strictWitnessConflicts)
	results := map[string]*ModelResult{}
	ok := sub.decide(in, []string{si}, win, si, results) && results[si] != nil && results[si].Valid == Valid &&
		len(sub.forbiddenFound(si)) == 0
	lift()
	c.addWitnessStats(sub, ok)
	return ok
}

// witnessChecker returns a checker of its own for a witness search, sharing c's clock,
// deadline and memory watch and limited to the conflicts c has left; false when none
// are left.
func (c *checker) witnessChecker() (*checker, bool) {
	sub := &checker{h: c.h, opts: c.opts, proven: map[string]bool{}, serialRefuted: c.serialRefuted}
	sub.budget = newBudget(c.opts, &sub.res.Stats.Conflicts)
	sub.budget.states = &sub.res.Stats.SearchStates // as Check wires its own
	sub.budget.start, sub.budget.deadline, sub.budget.mem = c.budget.start, c.budget.deadline, c.budget.mem
	if left := c.budget.conflictsLeft(); left >= 0 {
		if left == 0 {
			return nil, false
		}
		sub.budget.maxConflicts = left
	}
	return sub, true
}

// witnessCheckerOn is witnessChecker deciding h, another history than c's (a relaxed
// one), for the orders it verifies only: what it finds is no evidence about c's
// models, so a refutation is neither named nor explained.
func (c *checker) witnessCheckerOn(h *history.History) (*checker, bool) {
	sub, ready := c.witnessChecker()
	if ready {
		sub.h, sub.witnessOnly, sub.opts.VerdictOnly = h, true, true
	}
	return sub, ready
}

// addWitnessStats adds the search counters of sub, a checker of its own that looked for
// a witness, to c's, and counts the witness when it found one.
func (c *checker) addWitnessStats(sub *checker, found bool) {
	st := &c.res.Stats
	st.Conflicts += sub.res.Stats.Conflicts
	st.Decisions += sub.res.Stats.Decisions
	st.Propagations += sub.res.Stats.Propagations
	st.TheoryProps += sub.res.Stats.TheoryProps
	st.TilingProps += sub.res.Stats.TilingProps
	st.CountProps += sub.res.Stats.CountProps
	st.HallConflicts += sub.res.Stats.HallConflicts
	st.Learned += sub.res.Stats.Learned
	st.Chrono += sub.res.Stats.Chrono
	st.SearchStates += sub.res.Stats.SearchStates
	st.OrientedPairs += sub.res.Stats.OrientedPairs
	if found {
		st.Witnessed++
	}
}

// maxWitnessBlocks bounds the candidate blocks of a problem built only as a witness.
const maxWitnessBlocks = 2_000_000

// allowedBlocks counts the blocks the windows leave where the narrowing tiled a key
// (elsewhere it counts nothing: those keys are few or short).
func allowedBlocks(win *encode.Windows) int {
	n := 0
	for _, a := range win.Allow {
		n += len(a)
	}
	return n
}
