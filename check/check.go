package check

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/ordersearch"
	"doppel/prune"
	"doppel/sat"
	"doppel/theory"
	"doppel/uncommitted"
)

// Check decides h under each model of opts. An error means bad options, never a
// property of the history.
func Check(h *history.History, opts Options) (Result, error) {
	names, err := validateModels(opts.Models)
	if err != nil {
		return Result{}, err
	}
	c := &checker{h: h, opts: opts, proven: map[string]bool{}}
	c.budget = newBudget(opts, &c.res.Stats.Conflicts)
	c.budget.states = &c.res.Stats.SearchStates
	c.budget.mem = startMemWatch(opts.MaxMemory)
	defer c.budget.mem.stop()
	defer c.dropAhead()
	return c.run(names), nil
}

type checker struct {
	h    *history.History
	opts Options
	p    *encode.Problem
	res  Result
	// edges: data edges of the problem, then process, then real-time ones.
	edges []encode.Edge
	// siGuards holds the guards of edges only snapshot isolation has.
	siGuards []encode.Lit
	// pairs are the pairs of possibly-unobserved writers that lazily oriented views
	// order with a variable (check/view.go, orientLazy), found by refinement for the
	// problem pairsOf; pairSet holds the same.
	pairs   []unobsPair
	pairSet map[unobsPair]bool
	pairsOf *encode.Problem
	// varRefs locates what each variable of varRefsView's problem means, for
	// explanations (indexVars).
	varRefs     []varRef
	varRefsView *view
	// spare is the storage of the last solver a model's decision built, which the next
	// one takes over (sat.Solver.Recycle); nil outside solve.
	spare *sat.Solver
	// c.edges is data edges, then process edges, then real-time ones.
	nData, nDataProcess int
	dataCyclic          bool            // the known data edges alone have a cycle
	proven              map[string]bool // models a verified serial replay proved
	strictEdges         []encode.Edge   // strictView's edges when c.edges lacks the orders
	strictTried         bool            // strictWitness ran; strictSat: it found a solution
	strictSat           bool
	// strictRefuted: strict serializability is proven violated (its narrowing, asked or
	// as a witness), so no search for a strict solution is made for weaker models. A
	// fact of the history: kept across problems.
	strictRefuted bool
	// strictNarrowTried: strict serializability's narrowed problem was searched for a
	// witness (bounded) without a verdict. Its solutions are all the strict ones, so
	// the weaker models' searches look for none on their own, wider problems.
	strictNarrowTried bool
	strictFound       bool // decideAlternating found a strict-serializable solution
	// keptStrict: proveByReplay's strict search within windows, which ran out of work
	// without an order; the later stages give it turns (turnKept). Nil: none, or it
	// ended.
	keptStrict *keptStrictSearch
	// narrowings keeps each model's narrowing (prune.Run on the one inference it was
	// run on), for the rounds of decideAlternating: narrowing is deterministic.
	narrowings map[narrowingKey]*prune.Result
	// ahead: a narrowing running beside a search (narrowAhead); nil: none.
	ahead *aheadNarrowing
	// stagesDone, set during decideAlternating's rounds, counts per model the leading
	// bounded solver stages (and strictWitness's, under strictWitnessStages) that ended at
	// their own bound without a verdict: a later round rebuilds the same problem, where
	// they would end the same, so it skips them.
	stagesDone map[string]int
	// paused: per model, where decideAlternating's rounds stopped at the model's share
	// of the time (decidePruned), for them to go on from there.
	paused map[string]*pausedRounds
	// strongPlainTried: strongWitnessFirst's search without windows ran.
	strongPlainTried bool
	// localRuns counts the runs of the rounds' local search (their seeds and Luby lengths).
	localRuns int
	// lnsLast is the last neighbourhood search around the local search's best order.
	lnsLast lnsSearched
	// onCycle, when set, sees the cycles the acyclicity theory meets (the hybrid witness).
	onCycle func(cycle []int32)
	// naming: the problem is decided again only to name a violation the narrowing
	// proved (bounded by namingConflicts).
	naming bool
	// budget is the limits, consulted by every phase; once spent, every model not yet
	// decided is unknown.
	budget *budget
	// anomalyModel, when set, is the model every anomaly found now holds for: the
	// problem was built within windows narrowed for it.
	anomalyModel string
	keyUnsat     bool // pruning met a key with no segmentation at all
	// keyUnsatNamed: and its diagnosis named an anomaly every model forbids, so no
	// problem needs building.
	keyUnsatNamed bool
	staticOrder   []sat.Var // timeOrder's, for the current problem
	// tiling is the append-adjacency theory's layout for the current problem (each
	// solver gets a Fresh copy).
	tiling *theory.Segments
	// counting is the supply-counting theory's layout likewise (nil: none).
	counting *theory.Counting
	// matching: Hall's condition over the cells (theory.Matching), built once, as counting.
	matching *theory.Matching
	// perRead: the current problem is built on the per-read inference (anomalies found
	// now hold for every model); otherwise on the one-base one.
	perRead bool
	// pinsLooked: pinnedCycles ran on the one-base inference; pinSerial and
	// pinSnapshot are what it found (refuteByPins, proveByReplay).
	pinsLooked, pinSerial, pinSnapshot bool
	// valuePinsLooked: the inference on which proveByReplay, stuck, looked at the
	// pins with the value pins; valuePinned: they closed a cycle (pinSerial and
	// pinSnapshot then say what they found), which refuteByPins reports after it.
	valuePinsLooked *encode.Inference
	valuePinned     bool
	pinCycle        string // the type of the cycle refuteByPins reported
	// perReadIn is the per-read inference once built; perReadTried: its replay ran.
	perReadIn *encode.Inference
	// singleIn is the per-read inference with the G-cursor pins, once built: the
	// problem of the models that forbid G-single (decideWeak).
	singleIn *encode.Inference
	// findingModel, when set, is the model the findings of the inference decided now
	// hold for (addFinding): the G-cursor pins' inference's, consistent view and up.
	findingModel string
	// perReadWin: per model, the windows of narrowing's per-read level (proveByOrderCount).
	perReadWin   map[string]*encode.Windows
	perReadTried bool
	// guidedRepairFailed: the inference on which provePerReadGuidedRepair's replay got
	// stuck (the whole repaired pass then does not run it again).
	guidedRepairFailed *encode.Inference
	// ruOneBaseIn: the one-base inference read uncommitted's serial replay ran on, asked
	// alone (replayUncommitted); ruWitnessTried: its strict narrowed witness ran.
	ruOneBaseIn    *encode.Inference
	ruSerialTried  bool               // read uncommitted's full serial attempts ran (replayUncommitted)
	ruRelaxedTried bool               // read uncommitted's relaxed serial witness ran (ruRelaxedWitness)
	placedTried    bool               // losersPlaced ran
	ruIndex        *uncommitted.Index // read uncommitted's index, built once (uncommittedIndex)
	// relaxedSolverOnly: relaxedRounds runs no replay or serial search, only its solver,
	// and lostLeftOut does not run (for testing that path alone); relaxedLeftOutOnly:
	// lostLeftOut runs and relaxedRounds does not.
	relaxedSolverOnly, relaxedLeftOutOnly bool
	// rcMemos keeps each model's failed states of the search over the processes' orders
	// between its turns (searchProcessOrders).
	rcMemos        map[rcMemoKey]*ordersearch.Memo
	relaxedFailed  bool          // the relaxed witness found no order read committed's lists pass (relaxedBeforeWitnesses)
	ruLost         []Anomaly     // the lost updates read uncommitted's path found for its witness (ruLostUpdateWitness)
	ruLostLooked   bool          // ruFindLost looked for them
	ruRelaxedTime  time.Duration // and took this long
	ruWitnessTried bool
	// onSerialOrder, when set, sees every serial order verifyOrder accepts (the
	// relaxed witness's checker: ruRelaxedTry).
	onSerialOrder func(order []int32)
	// oneBaseIn is the one-base inference of run, for a serial witness of weak models
	// (serialWitnessForWeak).
	oneBaseIn *encode.Inference
	// order is the models asked for, in the caller's order; uncommittedNames the
	// read-uncommitted ones among them, decided last on their own (finish).
	order            []string
	uncommittedNames []string
	// deferNaming: a violation the narrowing proves for strict serializability on a
	// small history is not named yet (unnamed keeps its proof): a weaker model decided
	// next may name it for free (decidePruned).
	deferNaming bool
	// witnessOnly: strict serializability is decided only as a witness for weaker
	// models (not asked), so a violation the narrowing proves is not named.
	witnessOnly bool
	unnamed     *prune.Contradiction
	// deferredSnapshot: the snapshot replays proveByReplay left for after the
	// serializable-family models are decided (runDeferredSnapshot); nil: none.
	deferredSnapshot func()
	// relaxedSnapshot: the snapshot search with relaxed real-time gates, the last
	// snapshot attempt proveByReplay leaves (runRelaxedSnapshot); nil: none.
	relaxedSnapshot func() bool
	// replayQuick: proveByReplay runs its quick pass (no repairs, no snapshot
	// replays; provePerReadFirst); quickSearched: the inference whose strict search
	// that pass ran (not run again on it).
	replayQuick   bool
	quickSearched *encode.Inference
	// sessionWitnessTried: proveBySessionWitness ran (it runs once).
	sessionWitnessTried bool
	// strongWitnessTried: proveByStrongWitness ran (it runs once).
	strongWitnessTried bool
	// beforeSerialSearch runs the deferred snapshot replays (when decidePruned set it):
	// called when a serializable-family model's narrowing did not decide it and its
	// solver is next, so that a snapshot model a cheap replay proves is not left
	// unknown while that search takes the time limit.
	beforeSerialSearch func()
	// serialCycleReads: the reads whose anti-dependencies the serializable-family
	// narrowing's refutations run through (relaxedSnapshotWitness).
	serialCycleReads []relaxedRead
	// serialCuts: the transactions at which those refutations' cycles enter and leave
	// by anti-dependencies (a write skew's two), which a snapshot-isolated execution
	// may split to cut them (hybridNarrowedWitness).
	serialCuts []int32
	// hybridWhole, when set, is the hybrid witness's first set of whole transactions
	// (hybridNarrowedWitness's, whose windows were narrowed for it); nil: all whole.
	hybridWhole []bool
	// exported: the models whose instance --export wrote (or said why it could not).
	exported map[string]bool
	// plainSIWitness: this checker decides strong snapshot isolation within its windows
	// as a witness for plain snapshot isolation (strongSnapshotWitness): the solver's
	// static stages only, without the hybrid witness and the VSIDS stage that lead
	// strong snapshot isolation's own search.
	plainSIWitness bool
	// serialRefuted: the serializable-family models decided not valid, facts of the
	// history shared with witness checkers: serializableWitness looks for no solution
	// of theirs.
	serialRefuted map[string]bool
}

func (c *checker) run(names []string) Result {
	h := c.h
	c.order = names
	// Read uncommitted's models are decided last (in finish), on their own, unless a
	// model decided valid implies them.
	if c.uncommittedNames, names = uncommittedFirst(names); len(names) == 0 {
		return c.finish()
	}
	// Lost updates are facts about values (every attribution has them): found once,
	// they count for the models that forbid them.
	c.progress("looking for lost updates")
	lost, ok := lostUpdatesStop(h, c.budget.stop)
	if !ok {
		return c.cutShort(nil, names)
	}
	c.res.Anomalies = append(c.res.Anomalies, lost...)
	if len(lost) > 0 {
		// Read uncommitted's models come last, and on a lost update the others'
		// searches can take the whole limit (hot keys of two values, 2,000
		// transactions, --model all: its strong forms unknown at 60 s); the losers
		// placed anew prove them first, in a fraction of a second where they hold;
		// and read committed's strong forms, whose searches get as lost.
		c.losersPlaced(append(slices.Clone(c.uncommittedNames), names...))
	}
	var in *encode.Inference // the one-base inference
	if allPerRead(names) && !c.opts.Solver.NoWitness && c.allReplayable(names) {
		// The read-by-read replay proves what a serial or snapshot one would, and also
		// histories only the per-read models allow (a lost update): first, on its own
		// inference.
		t1, inferred := time.Now(), c.res.Stats.InferSeconds
		in = c.provePerReadFirst(names)
		c.res.Stats.SolveSeconds += time.Since(t1).Seconds() - (c.res.Stats.InferSeconds - inferred)
		if c.allProven(names) {
			if c.opts.Solver.ExportPrefix != "" {
				c.perRead = true
				c.exportAfterReplay(c.perReadIn, names)
			}
			return c.replayResult(names)
		}
	}
	if in == nil {
		t0 := time.Now()
		c.progress("inferring dependencies")
		in = encode.InferStop(h, c.budget.stop)
		c.res.Stats.InferSeconds += time.Since(t0).Seconds()
	}
	if in == nil || c.budget.out() {
		return c.cutShort(in, names)
	}
	if len(in.Findings) == 0 {
		// A cycle the pins give is in every attribution: the models that forbid it need
		// no replay and no search.
		c.progress("looking for cycles of placed blocks")
		t1 := time.Now()
		c.refuteByPins(in)
		c.res.Stats.PruneSeconds += time.Since(t1).Seconds()
	}
	if len(in.Findings) == 0 && !c.opts.Solver.NoWitness && !skipReplays && len(lost) == 0 {
		// Most histories are valid: a serial replay proves it without building the
		// problem. (Findings are anomalies every model forbids: nothing to prove then.
		// Nor where a lost update was found: no serial order and no snapshot-isolated
		// execution has one, whatever the model asked; snapshot isolation alone, on
		// histories with a lost update injected, searched for an execution until the
		// time limit, 31 s at 1,000 transactions, where serializability's pins refuted
		// them at once. The per-read models, which allow it, have replays of their own.)
		c.progress("replaying serially")
		t1 := time.Now()
		c.proveByReplay(in, names)
		if c.deferredSnapshot == nil {
			c.runRelaxedSnapshot()
		}
		c.res.Stats.SolveSeconds += time.Since(t1).Seconds()
		if c.valuePinned && c.pinCycle == "" && !c.allProven(names) && !c.budget.out() {
			// The replays got stuck where value pins close a cycle: its anomaly.
			c.progress("looking for cycles of placed blocks")
			t2 := time.Now()
			c.refuteByPins(in)
			c.res.Stats.PruneSeconds += time.Since(t2).Seconds()
		}
		if c.allProven(names) {
			if c.opts.Solver.ExportPrefix != "" {
				// The replay decided without the encoding; the user asked for it anyway.
				c.exportAfterReplay(in, names)
			}
			return c.replayResult(names)
		}
		if c.budget.out() {
			return c.cutShort(in, names)
		}
	}
	c.progress("checking each key's values")
	if !in.CheckValuesStop(c.budget.stop) {
		return c.cutShort(in, names)
	}
	c.oneBaseIn = in
	results := map[string]*ModelResult{}
	// The per-read models (read committed) are decided on their own inference, after
	// the others, unless one of those or a replay implies them.
	var strong, weak []string
	for _, m := range names {
		switch {
		case models[m].perRead:
			weak = append(weak, m)
		case c.pinCycle != "" && forbids(m, c.pinCycle):
			results[m] = &ModelResult{Model: m, Valid: Invalid} // refuteByPins
			c.res.Stats.PinRefuted++
		default:
			strong = append(strong, m)
		}
	}
	if len(strong) > 0 && len(in.Findings) == 0 && !c.opts.Solver.NoPrune {
		c.decidePruned(in, strong, results)
	}
	var left []string
	for _, m := range strong {
		if results[m] == nil {
			left = append(left, m)
		}
	}
	switch {
	case len(left) > 0 && c.keyUnsatNamed:
		for _, m := range left {
			results[m] = &ModelResult{Model: m, Valid: Invalid}
		}
	case len(left) > 0 && !c.decide(in, left, nil, "", results):
		return c.cutShort(in, names)
	}
	c.runDeferredSnapshot(weak, results)
	if !c.decideWeak(weak, results) {
		return c.cutShort(in, names)
	}
	if c.opts.Solver.ExportPrefix != "" {
		c.exportRest(in, strong, weak)
	}
	for _, m := range names {
		mr := results[m]
		switch {
		case (mr == nil || mr.Valid == Unknown) && c.proven[m] && len(c.forbiddenFound(m)) == 0:
			// A verified order found as the limits ran out (a turn of the strict
			// search), after the phase that would have recorded it gave up.
			mr = &ModelResult{Model: m, Valid: Valid}
		case mr == nil: // the limits ran out before this model's turn
			mr = &ModelResult{Model: m, Valid: Unknown, Message: c.budget.message(m)}
		}
		mr.AnomalyTypes = c.forbiddenFound(m)
		if mr.Valid == Unknown && len(mr.AnomalyTypes) > 0 {
			mr.Valid, mr.Message = Invalid, ""
		}
		c.res.Models = append(c.res.Models, *mr)
	}
	return c.finish()
}

// decide builds the problem within win (nil: unnarrowed) and decides the models names
// on it, weakest first, into results. With win, the problem holds only for the model
// windowModel (the narrowing is sound for it and stronger ones): every anomaly found on
// it is that model's. It reports false when the limits ran out before the encoding was
// complete.
func (c *checker) decide(in *encode.Inference, names []string, win *encode.Windows, windowModel string, results map[string]*ModelResult) bool {
	t0 := time.Now()
	c.resetProblem()
	c.anomalyModel = windowModel
	defer func() { c.anomalyModel = "" }()
	c.progress("building the encoding")
	c.p = encode.BuildWith(in, encode.BuildOptions{Win: win, Stop: c.budget.stop,
		NativeTiling: !c.opts.Solver.ClausalTiling && c.opts.Solver.ExportPrefix == ""})
	if c.p == nil {
		c.res.Stats.InferSeconds += time.Since(t0).Seconds()
		return false
	}
	p := c.p
	c.addOrderEdges(names)
	c.res.Stats.InferSeconds += time.Since(t0).Seconds()
	c.fillStats()

	// Findings hold in every attribution (keys diagnosed without windows): every model.
	// Each build diagnoses its keys again: report each finding once.
	for _, f := range in.Findings {
		if !c.hasFinding(f) {
			c.addFinding(f)
		}
	}

	t1 := time.Now()
	si := map[string]*view{}
	if !c.budget.out() {
		c.progress("searching for cycles")
		c.knownCycles(&view{nodes: p.Nodes, edges: c.edges, hubFrom: p.HubBase})
	}
	for _, m := range names {
		spec := models[m]
		if !spec.snapshot || !c.dataCyclic && c.proven[m] || c.budget.out() {
			continue
		}
		c.progress("building the " + m + " graph")
		si[m] = c.siView(m, false)
		// A cycle of the split graph collapses to one of data and order edges, so
		// without orders only then can snapshot isolation have known cycles of its own.
		if si[m] != nil && (c.dataCyclic || spec.process) && !c.budget.out() {
			c.progress("searching for cycles under " + m)
			c.knownCycles(si[m])
		}
	}
	c.res.Stats.ExplainSeconds += time.Since(t1).Seconds()
	if c.opts.Solver.ExportPrefix != "" && win == nil {
		c.exportAll(names)
	}

	open := p.NumVars > 0 || c.hasGuards()
	for _, m := range decideOrder(names) {
		v := si[m]
		if !models[m].snapshot {
			v = c.serialView(m)
		}
		mr := &ModelResult{Model: m, Valid: Valid}
		results[m] = mr
		if models[m].perRead && !c.budget.out() {
			// Its cycles without anti-dependencies, which the search over all edges
			// may have named by a cycle through one.
			c.knownCycles(v)
		}
		switch {
		case len(c.forbiddenFound(m)) > 0:
			mr.Valid = Invalid
		case c.proven[m]:
			// A verified serial replay. (A forbidden anomaly above would contradict it.)
		case len(p.UnsatKeys) > 0:
			// Exactness first: a key without segmentation is a violation even if the
			// diagnosis found no named anomaly.
			mr.Valid = Invalid
		case len(p.WindowUnsatKeys) > 0:
			// Pruning checks every key's tiling within its windows, so this is a bug there;
			// the windows still prove it for the model they were narrowed for.
			mr.Valid = Invalid
			c.addWindowUnsat(p.WindowUnsatKeys[0])
		case impliedValid(m, results):
		case c.budget.out():
			// A phase before was cut short (known cycles may be missing) or the
			// limits are spent: nothing more can be decided.
			mr.Valid, mr.Message = Unknown, c.budget.message(m)
		case models[m].single:
			// Even a problem without choices: the known-cycle search bounds its
			// G-single tries.
			c.progress("deciding " + m)
			mr.Valid, mr.Message = c.solveSingle(m)
		case open || v != nil && v.split && c.siPairs():
			c.progress("deciding " + m)
			mr.Valid, mr.Message = c.solve(m, v)
		case mr.Valid == Valid && c.onSerialOrder != nil && v != nil && !v.split:
			// No choice left and no cycle: the graph's own order is the solution's
			// (a witness checker's caller verifies it as it does the solver's).
			c.verifyOrder(p.In, c.modelOrder(nil, v), false, false)
		}
	}
	// A model found not valid must name an anomaly it forbids. When nothing does (the
	// solver's proof by cases found no attribution at all), a key alone has no
	// segmentation with distinct writers: name it. (Only without windows: within them,
	// a key's failure is the windows' model's, not every model's.)
	for _, m := range names {
		if win == nil && results[m].Valid == Invalid && len(c.forbiddenFound(m)) == 0 {
			n := len(p.In.Findings)
			if p.ExplainOpenKeys() || c.diagnoseUnsatKeys() {
				for _, f := range p.In.Findings[n:] {
					if !c.hasFinding(f) {
						c.addFinding(f)
					}
				}
			}
			break
		}
	}
	return true
}

// decideWeak decides the per-read models: proved by a replay (or the relaxed serial
// witness), implied by a model decided valid, decided by the serial search (the models
// with process order), refuted by the order count or the thresholds read by read, or on
// the per-read problem (within the per-read windows for
// the models with process order, whole for the others). It reports false when the
// limits ran out before the encoding was complete.
func (c *checker) decideWeak(weak []string, results map[string]*ModelResult) bool {
	var left []string
	for _, m := range weak {
		switch {
		case c.proven[m]:
			results[m] = &ModelResult{Model: m, Valid: Valid}
		case impliedValid(m, results):
			results[m] = &ModelResult{Model: m, Valid: Valid}
		case len(c.forbiddenFound(m)) > 0:
			// A finding of every attribution (a lost update) settles it: no problem
			// needs building for it.
			results[m] = &ModelResult{Model: m, Valid: Invalid}
		default:
			left = append(left, m)
		}
	}
	if len(left) == 0 {
		return true
	}
	in := c.perReadInference()
	if in == nil {
		return false
	}
	t0 := time.Now()
	c.progress("checking each key's values read by read")
	in.CheckValuesStop(c.budget.stop)
	c.res.Stats.InferSeconds += time.Since(t0).Seconds()
	if c.budget.out() {
		return false
	}
	// A read-by-read replay proves read committed's graph acyclic: a proof for the
	// models that forbid nothing more than it can find (no G-single, and lost updates
	// only when there are none).
	var replayable []string
	for _, m := range left {
		if c.replayable(m) {
			replayable = append(replayable, m)
		}
	}
	if perReadClean(in) && !c.opts.Solver.NoWitness && !c.perReadTried && len(replayable) > 0 {
		// The plain replays, then (where a lost update was found) the relaxed witness
		// and the serial search with process order as a witness, before the repairs
		// (as provePerReadFirst).
		t1 := time.Now()
		c.provePerReadPass(in, replayable, false)
		if !c.perReadTried {
			c.relaxedBeforeWitnesses(in, c.oneBaseIn, replayable)
			c.proveBySessionWitness(in, replayable)
			if left = c.takeProven(left, results); len(left) == 0 {
				c.res.Stats.SolveSeconds += time.Since(t1).Seconds()
				return true
			}
			if replayable = slices.DeleteFunc(replayable, func(m string) bool { return c.proven[m] }); len(replayable) > 0 {
				c.provePerRead(in, replayable)
			}
		}
		c.res.Stats.SolveSeconds += time.Since(t1).Seconds()
		if left = c.takeProven(left, results); len(left) == 0 {
			return true
		}
	}
	c.perRead = true
	defer func() { c.perRead = false }()
	// A turn of the kept strict search (its order proves every model) before the
	// searches read by read, which take up to half the time left each (not when
	// exporting: the instance is built whatever decides).
	exporting := c.opts.Solver.ExportPrefix != ""
	if !exporting && c.turnKept() {
		if left = c.takeProven(left, results); len(left) == 0 {
			return true
		}
	}
	if perReadClean(in) {
		// Before the per-read problem, which the strong forms of read committed may
		// need whole: a count of positions under process (real-time) order refutes
		// them without search when a block fits nowhere (a lost update's loser), in
		// a linear pass; then the serial search, an exact decision where no :info
		// transaction appends (an order of the processes' transactions, or none);
		// then the count within the windows of the thresholds read by read, whose
		// narrowing can take the whole time limit at 100,000 transactions.
		refuted := func() bool {
			rest := left[:0:0]
			for _, m := range left {
				if len(c.forbiddenFound(m)) > 0 {
					results[m] = &ModelResult{Model: m, Valid: Invalid}
				} else {
					rest = append(rest, m)
				}
			}
			left = rest
			return len(left) == 0
		}
		t1 := time.Now()
		c.proveByOrderCount(in, left, false)
		c.res.Stats.SolveSeconds += time.Since(t1).Seconds()
		if refuted() {
			return true
		}
		c.proveBySerialSearch(in, left)
		if left = c.takeProven(left, results); len(left) == 0 || refuted() {
			return true
		}
		t1 = time.Now()
		c.proveByOrderCount(in, left, true)
		c.res.Stats.SolveSeconds += time.Since(t1).Seconds()
		if refuted() {
			return true
		}
		// The rest of the serial search's states, where its first turn ran out.
		c.searchProcessOrders(in, left, rcSerialStates(len(c.h.Txns)))
		if left = c.takeProven(left, results); len(left) == 0 || refuted() {
			return true
		}
		// A lost update rules out the serial witness; the relaxed one leaves its
		// losers' reads to the verification.
		if left = c.relaxedWitness(in, left, results); len(left) == 0 {
			return true
		}
		if left = c.serialWitnessForWeak(left, results); len(left) == 0 {
			return true
		}
		if left = c.snapshotWitnessForWeak(left, results); len(left) == 0 {
			return true
		}
	}
	if !exporting && c.turnKept() {
		if left = c.takeProven(left, results); len(left) == 0 {
			return true
		}
	}
	if !exporting {
		// The models narrowed read by read (strong-session and strong read committed)
		// are decided within their windows, which keep every solution of them: a
		// problem of a few blocks per writer, where the whole one has a block at every
		// position showing its values (valid histories the replays miss: 3000
		// transactions on 30 keys, unknown after 20 s on the whole problem, decided in
		// a second). What their verdicts imply settles the others.
		var plain []string
		for _, m := range left {
			if win := c.perReadWin[m]; win != nil {
				if !c.decide(in, []string{m}, win, m, results) {
					return false
				}
				if r := results[m]; r != nil && r.Valid == Invalid && len(c.forbiddenFound(m)) == 0 {
					// Proved within the windows but not named (no attribution lies within
					// them at all, so no cycle to show): decided again on the whole
					// problem, which names it.
					delete(results, m)
					plain = append(plain, m)
				}
				continue
			}
			plain = append(plain, m)
		}
		left = plain[:0]
		for _, m := range plain {
			if impliedValid(m, results) {
				results[m] = &ModelResult{Model: m, Valid: Valid}
			} else {
				left = append(left, m)
			}
		}
		if len(left) == 0 {
			return true
		}
	}
	// The models that forbid G-single on their own inference: the G-cursor pins hold
	// in each of their attributions without a G-single, not in read committed's.
	var singles, rest []string
	for _, m := range left {
		if models[m].single && !c.opts.Solver.NoGCursorPins {
			singles = append(singles, m)
		} else {
			rest = append(rest, m)
		}
	}
	if len(rest) > 0 && !c.decide(in, rest, nil, "", results) {
		return false
	}
	left = singles[:0:0]
	for _, m := range singles {
		switch {
		case impliedValid(m, results):
			results[m] = &ModelResult{Model: m, Valid: Valid}
		case len(c.forbiddenFound(m)) > 0:
			results[m] = &ModelResult{Model: m, Valid: Invalid}
		default:
			left = append(left, m)
		}
	}
	if len(left) == 0 {
		return true
	}
	return c.decideSingle(left, results)
}

// singleNamingTxns bounds the histories whose G-single violation, proved within the
// windows without a cycle to show, is decided again on the whole problem to name it:
// at 300 dup-noop transactions that took 1-2 CPU-s, at 2,000 (270K variables) 8,000
// conflicts in 30 s without a case shown, after the windows had proved it.
const singleNamingTxns = 500

// gcursorModel is the weakest model the G-cursor pins are sound for: every anomaly
// found on their inference holds for it and the models whose graphs contain its.
const gcursorModel = "consistent-view"

// decideSingle decides the models that forbid G-single (names) on the per-read
// inference with the G-cursor pins. It reports false when the limits ran out before
// the encoding was complete.
func (c *checker) decideSingle(names []string, results map[string]*ModelResult) bool {
	if c.singleIn == nil {
		c.progress("inferring dependencies read by read, with the G-cursor pins")
		t0 := time.Now()
		c.singleIn = encode.InferSingleStop(c.h, c.budget.stop)
		if c.singleIn != nil {
			c.singleIn.CheckValuesStop(c.budget.stop)
		}
		c.res.Stats.InferSeconds += time.Since(t0).Seconds()
	}
	if c.singleIn == nil || c.budget.out() {
		return false
	}
	c.findingModel = gcursorModel
	defer func() { c.findingModel = "" }()
	var win *encode.Windows
	if !c.opts.Solver.NoPrune {
		// The thresholds in two layers (prune.Level.Single): paths with at most one
		// rw edge, and the G-cursor pins. A contradiction is a proof; the windows keep
		// every attribution these models allow.
		c.progress("narrowing for the models that forbid G-single")
		t0 := time.Now()
		pr := prune.Run(c.singleIn, prune.Options{Level: prune.Level{Single: true},
			Deadline: c.budget.deadline, Stop: c.budget.mem.exceeded}) // Stop is asked from two goroutines
		c.res.Stats.PruneSeconds += time.Since(t0).Seconds()
		if c.budget.out() {
			return false
		}
		switch {
		case pr.KeyUnsat:
			// A key with no segmentation: the whole problem diagnoses and names it.
		case pr.Contradiction != nil:
			pc := *pr.Contradiction
			if len(pc.Txns) == 0 && pc.Key >= 0 {
				// A key no live writer can fill: its writers are the evidence.
				for _, w := range c.singleIn.Keys[pc.Key].Writers {
					if c.singleIn.Writers[w].Status != history.Fail {
						pc.Txns = append(pc.Txns, c.singleIn.Writers[w].Txn)
					}
				}
			}
			if len(pc.Txns) > 8 && len(pc.Steps) == 0 {
				pc.Txns = pc.Txns[:8] // a tiling's: its text gives every writer's window
			}
			c.addContradiction(gcursorModel, &pc)
			for _, m := range names {
				results[m] = &ModelResult{Model: m, Valid: Invalid}
			}
			return true
		default:
			win = pr.Win
		}
	}
	if win == nil {
		return c.decide(c.singleIn, names, nil, gcursorModel, results)
	}
	if !c.decide(c.singleIn, names, win, gcursorModel, results) {
		return false
	}
	// Proved within the windows but not named (no attribution lies within them, so no
	// cycle to show). The windows keep every attribution these models allow, so the
	// verdict stands; on a small history the whole problem, bounded, names the cycles,
	// else (or when that runs out) the windows' proof is the evidence.
	var unnamed []string
	for _, m := range names {
		if r := results[m]; r != nil && r.Valid == Invalid && len(c.forbiddenFound(m)) == 0 {
			unnamed = append(unnamed, m)
		}
	}
	if len(unnamed) == 0 {
		return true
	}
	if len(c.h.Txns) <= singleNamingTxns && !c.budget.out() {
		n := len(c.res.Anomalies)
		lift := c.budget.capConflicts(explainConflicts)
		whole := map[string]*ModelResult{}
		c.decide(c.singleIn, unnamed, nil, gcursorModel, whole)
		lift()
		left := unnamed[:0:0]
		for _, m := range unnamed {
			if r := whole[m]; r == nil || r.Valid != Invalid || len(c.forbiddenFound(m)) == 0 {
				left = append(left, m)
			}
		}
		if unnamed = left; len(unnamed) > 0 {
			c.res.Anomalies = c.res.Anomalies[:n]
		}
	}
	if len(unnamed) > 0 {
		c.addAnomaly(Anomaly{Type: "G-single", Model: gcursorModel, Txns: c.refutationTxns(gcursorModel),
			Explanation: "no attribution of the duplicated values to appends without a cycle of at most one anti-dependency lies within the windows narrowing found for the models that forbid G-single (which keep every such attribution): the solver proved it there; the cycles of each attribution were not shown (the history is too long, or the limits ran out)"})
	}
	return true
}

// serialWitnessForWeak tries, before the per-read problem, to prove the models left by
// a stronger one: strict serializability (which implies every per-read model), else
// serializability (those without process or real-time order), each on its narrowed
// problem with capped conflicts, by a checker of its own (narrowedWitness, as read
// uncommitted's). A per-read problem is larger than a serial one (each read its
// own base), and where the replays got stuck the narrowing mostly still proves a serial
// order at once: read committed was unknown where serializable took 0.3 s. It returns
// the models still left.
func (c *checker) serialWitnessForWeak(left []string, results map[string]*ModelResult) []string {
	in := c.oneBaseIn
	if in == nil || len(in.Findings) > 0 || c.opts.Solver.NoWitness || c.opts.Solver.NoPrune || c.budget.out() {
		return left
	}
	for _, strong := range []string{"strict-serializable", "serializable"} {
		var implied bool
		for _, m := range left {
			implied = implied || graphWithin(m, strong) && forbidsWithin(m, strong)
		}
		if !implied {
			continue
		}
		if !c.narrowedWitness(in, strong, "a witness for the weaker models") {
			continue
		}
		rest := left[:0:0]
		for _, m := range left {
			if graphWithin(m, strong) && forbidsWithin(m, strong) {
				c.proven[m] = true
				results[m] = &ModelResult{Model: m, Valid: Valid}
			} else {
				rest = append(rest, m)
			}
		}
		left = rest
		if len(left) == 0 || strong == "serializable" {
			break
		}
	}
	return left
}

// snapshotWitnessForWeak proves the models left that snapshot isolation implies
// (consistent view, forward consistent view and update serializable: Elle's
// list-append reports no G-SIb nor G-update) by a check of snapshot isolation of its
// own, with its whole pipeline (replays, narrowing of start and commit events,
// solver), when it was not asked. On a snapshot-isolated store's history (10 keys of
// two values, 10K transactions) consistent view and update serializable alone stayed
// unknown at 30 s, while snapshot isolation alone is valid in about a second. Bounded
// by half the time left and strictWitnessConflicts; its conflicts count toward the
// limits. Found not valid, it decides nothing.
func (c *checker) snapshotWitnessForWeak(left []string, results map[string]*ModelResult) []string {
	const si = "snapshot-isolation"
	var implied []string
	for _, m := range left {
		if graphWithin(m, si) && forbidsWithin(m, si) {
			implied = append(implied, m)
		}
	}
	// Asked too, snapshot isolation was decided before (decideOrder): valid, it
	// settled them already (impliedValid); else this check would find no more.
	if len(implied) == 0 || slices.Contains(c.order, si) || c.opts.Solver.NoWitness || c.budget.out() || c.witnessOnly {
		return left
	}
	opts := c.opts
	opts.Models, opts.Progress, opts.Start = []string{si}, nil, time.Now()
	if !c.budget.deadline.IsZero() {
		opts.Timeout = time.Until(c.budget.deadline) / 2
	}
	opts.MaxConflicts = strictWitnessConflicts
	if n := c.budget.conflictsLeft(); n >= 0 {
		opts.MaxConflicts = min(opts.MaxConflicts, n)
	}
	if opts.MaxConflicts == 0 {
		return left
	}
	c.progress("checking snapshot isolation as a witness for the weaker models")
	res, err := Check(c.h, opts)
	if err != nil {
		return left
	}
	c.res.Stats.Conflicts += res.Stats.Conflicts
	c.res.Stats.Decisions += res.Stats.Decisions
	if res.Valid != Valid {
		return left
	}
	c.res.Stats.Witnessed++
	if snapshotWitnessHook != nil {
		snapshotWitnessHook(implied)
	}
	rest := left[:0:0]
	for _, m := range left {
		if slices.Contains(implied, m) {
			c.proven[m] = true
			results[m] = &ModelResult{Model: m, Valid: Valid}
		} else {
			rest = append(rest, m)
		}
	}
	return rest
}

// snapshotWitnessHook, when set (tests), sees the models each snapshotWitnessForWeak
// proved.
var snapshotWitnessHook func(proved []string)

// perReadInference returns the per-read inference, built once; nil when the limits ran
// out while it was built.
func (c *checker) perReadInference() *encode.Inference {
	if c.perReadIn == nil {
		c.progress("inferring dependencies read by read")
		t0 := time.Now()
		c.perReadIn = encode.InferPerReadStop(c.h, c.budget.stop)
		c.res.Stats.InferSeconds += time.Since(t0).Seconds()
	}
	return c.perReadIn
}

// provePerReadFirst runs the read-by-read replay before any other, for a check of
// per-read models only: its plain replays first; then, where they got stuck, the
// serial replays without their repairs and the strict search (proveByReplay's quick
// pass: a serial order proves every per-read model, and on a serializable history of
// few keys and values the per-read repairs took 4.9 CPU-s at 10K where the search
// found an order in 0.05), and a turn of the strict search when it ran out of work;
// then the serial search with process order as a witness
// (proveBySessionWitness); then the per-read repairs. It returns the one-base
// inference when it built one.
func (c *checker) provePerReadFirst(names []string) *encode.Inference {
	rin := c.perReadInference()
	if rin == nil || !perReadClean(rin) || c.budget.out() {
		return nil
	}
	// The value checks before the replays: where a read shows an aborted append (a
	// duplicate-elements finding) the replays prove nothing, and spent seconds
	// finding that out (the aborted-read family at 10,000: 4.0 → 1.2 CPU-s); on a
	// valid 100K history they cost 0.05 of 2 CPU-s.
	if !rin.CheckValuesStop(c.budget.stop) || !perReadClean(rin) || c.budget.out() {
		return nil
	}
	c.provePerReadPass(rin, names, false)
	if c.allProven(names) || c.perReadTried {
		return nil
	}
	c.progress("inferring dependencies")
	t0 := time.Now()
	in := encode.InferStop(c.h, c.budget.stop)
	c.res.Stats.InferSeconds += time.Since(t0).Seconds()
	if in == nil || c.budget.out() {
		return nil
	}
	// Where a lost update was found no serial order exists (the replays and the strict
	// search within its windows spent 6.6 s on a lost update among 2K transactions on
	// hotspot keys of two values before the relaxed witness proved it in 0.3 s).
	if len(in.Findings) == 0 && !skipReplays && len(c.lostUpdatesFound()) == 0 && c.quickSerialAttempts(in, names) {
		return in
	}
	if c.provePerReadGuidedRepair(rin, names); c.allProven(names) || c.budget.out() {
		return in
	}
	if c.relaxedBeforeWitnesses(rin, in, names); c.allProven(names) || c.budget.out() {
		return in
	}
	if c.proveBySessionWitness(rin, names); c.allProven(names) || c.budget.out() {
		return in
	}
	c.provePerReadPass(rin, names, true)
	return in
}

// quickSerialAttempts runs the serial attempts on the one-base inference in in their
// quick form, then two turns of the strict search they kept, if any (its order proves
// every model), as the per-read models' paths have them before their witnesses and
// repairs read by read: on hot keys with :info at 10K those took 17-18 CPU-s to prove
// read committed, where the search needs one or two turns (seed 2: its two first
// turns, 1 s and 2 s, within the :info horizon). It reports whether every model of
// names is proven, or the limits ran out.
func (c *checker) quickSerialAttempts(in *encode.Inference, names []string) bool {
	c.replayQuick = true
	c.proveByReplay(in, names)
	c.replayQuick = false
	if c.allProven(names) || c.budget.out() {
		return true
	}
	return c.turnKept() || c.turnKept()
}

// allProven reports whether a verified order proved every model of names.
func (c *checker) allProven(names []string) bool {
	for _, m := range names {
		if !c.proven[m] {
			return false
		}
	}
	return true
}

// perReadClean reports whether the per-read inference in found nothing the per-read
// models forbid: no finding, or only internal ones (reads that miss their own
// transaction's appends, kept as version reads, which the read-by-read replay, its
// verification, the order count and the serial search each handle; a model that
// forbids internal is never decided on this inference).
func perReadClean(in *encode.Inference) bool {
	for _, f := range in.Findings {
		if f.Type != "internal" {
			return false
		}
	}
	return true
}

// replayable reports whether a verified read-by-read replay proves per-read model m:
// m forbids no G-single, and lost updates only when none was found.
func (c *checker) replayable(m string) bool {
	return !models[m].single && (!forbids(m, "lost-update") || len(c.forbiddenFound(m)) == 0)
}

// allReplayable reports whether a read-by-read replay proves every model of names.
func (c *checker) allReplayable(names []string) bool {
	for _, m := range names {
		if !c.replayable(m) {
			return false
		}
	}
	return true
}

// allPerRead reports whether every model asked is a per-read one.
func allPerRead(names []string) bool {
	for _, m := range names {
		if !models[m].perRead {
			return false
		}
	}
	return len(names) > 0
}

// resetProblem forgets the previous problem's graph state before another is built.
func (c *checker) resetProblem() {
	c.p, c.edges, c.siGuards, c.varRefs, c.varRefsView = nil, nil, nil, nil, nil
	c.nData, c.nDataProcess = 0, 0
	c.dataCyclic = false
	c.strictEdges, c.strictTried, c.strictSat = nil, false, false
	c.staticOrder = nil
	c.tiling = nil
	c.counting = nil
	c.matching = nil
}

// addOrderEdges makes c.edges the problem's data edges, then the process and real-time
// edges the models need.
func (c *checker) addOrderEdges(names []string) {
	p := c.p
	var needProcess, needRealtime bool
	for _, m := range names {
		needProcess = needProcess || models[m].process
		needRealtime = needRealtime || models[m].realtime
	}
	var process, realtime []encode.Edge
	if needProcess {
		process = p.ProcessEdges()
	}
	if needRealtime {
		realtime = p.RealtimeEdges()
	}
	// Extend the problem's edge list in place rather than copying it (it is the
	// biggest structure); p.Edges stays the data-edge prefix.
	c.nData, c.nDataProcess = len(p.Edges), len(p.Edges)+len(process)
	c.edges = append(append(p.Edges, process...), realtime...)
	p.Edges = c.edges[:c.nData:c.nData]
}

// cutShort is the result when the limits ran out before the known edges were searched
// for cycles: the inference's findings (anomalies in every attribution) still count,
// models a verified replay proved stay valid, and the others are unknown. It starts no
// check the inference has not run yet: the value checks (CheckValues) cost seconds at a
// million keys, and a spent limit means no more work; their findings count only when
// they ran before the limit. in is nil when the inference itself was cut short: a part
// of it proves nothing.
func (c *checker) cutShort(in *encode.Inference, names []string) Result {
	h := c.h
	s := &c.res.Stats
	s.Transactions, s.Operations, s.Keys = len(h.Txns), len(h.Ops), len(h.Keys)
	if in != nil {
		for _, f := range in.Findings {
			c.addFinding(f)
		}
	}
	if c.opts.Solver.ExportPrefix != "" {
		c.warnf("export: nothing written: the %s was reached while %s, before the encoding was complete", c.budget.spentWhy, c.budget.spentPhase)
	}
	for _, m := range names {
		mr := ModelResult{Model: m, Valid: Unknown, AnomalyTypes: c.forbiddenFound(m)}
		switch {
		case len(mr.AnomalyTypes) > 0:
			mr.Valid = Invalid
		case c.proven[m]:
			mr.Valid = Valid
		default:
			mr.Message = c.budget.message(m)
		}
		c.res.Models = append(c.res.Models, mr)
	}
	return c.finish()
}

// warnf records something the user asked for that could not be done in full (for
// stderr); it does not change a verdict.
func (c *checker) warnf(format string, args ...any) {
	c.res.Warnings = append(c.res.Warnings, fmt.Sprintf(format, args...))
}

// replayResult is the result when a serial replay proved every model.
func (c *checker) replayResult(names []string) Result {
	h := c.h
	s := &c.res.Stats
	s.Transactions, s.Operations, s.Keys = len(h.Txns), len(h.Ops), len(h.Keys)
	for _, m := range names {
		c.res.Models = append(c.res.Models, ModelResult{Model: m, Valid: Valid, AnomalyTypes: []string{}})
	}
	return c.finish()
}

// finish sets the overall verdict from the models'.
func (c *checker) finish() Result {
	c.mergeUncommitted()
	// The sizes of the history, whichever stage decided (a window replay after
	// narrowing decides without building the problem that fillStats describes).
	s := &c.res.Stats
	s.Transactions, s.Operations, s.Keys = len(c.h.Txns), len(c.h.Ops), len(c.h.Keys)
	c.res.Valid = Valid
	for _, mr := range c.res.Models {
		if mr.Valid == Invalid {
			c.res.Valid = Invalid
		} else if mr.Valid == Unknown && c.res.Valid == Valid {
			c.res.Valid = Unknown
			c.res.Message = mr.Message
		}
	}
	for i := range c.res.Models {
		mr := &c.res.Models[i]
		mr.Anomalies = []int{}
		for j := range c.res.Anomalies {
			if CountsFor(&c.res.Anomalies[j], mr.Model) {
				mr.Anomalies = append(mr.Anomalies, j)
			}
		}
	}
	c.res.AnomalyTypes = []string{}
	for _, a := range c.res.Anomalies {
		if !contains(c.res.AnomalyTypes, a.Type) {
			c.res.AnomalyTypes = append(c.res.AnomalyTypes, a.Type)
		}
	}
	sort.Strings(c.res.AnomalyTypes)
	c.summarize()
	if c.res.Anomalies == nil {
		c.res.Anomalies = []Anomaly{}
	}
	return c.res
}

// progress starts a phase: the budget names it if the limits run out in it, and the
// user's display shows it.
func (c *checker) progress(phase string) {
	c.budget.phase = phase
	if c.opts.Progress != nil {
		c.opts.Progress(phase)
	}
}

// forbiddenFound lists the anomaly types found so far that model m forbids.
func (c *checker) forbiddenFound(m string) []string {
	types := []string{}
	for i := range c.res.Anomalies {
		a := &c.res.Anomalies[i]
		if !a.countsFor(m) {
			continue
		}
		if forbids(m, a.Type) && !contains(types, a.Type) {
			types = append(types, a.Type)
		}
	}
	sort.Strings(types)
	return types
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (c *checker) hasGuards() bool {
	for i := range c.p.Edges {
		if c.p.Edges[i].G1 > c.p.Edges[i].G0 {
			return true
		}
	}
	return false
}

// fillStats describes the problem just built (the last one, when the narrowing and
// the naming build several): its counts replace the previous build's.
func (c *checker) fillStats() {
	h, p := c.h, c.p
	s := &c.res.Stats
	s.Transactions = len(h.Txns)
	s.Operations = len(h.Ops)
	s.Keys = len(h.Keys)
	s.KeysFixed, s.KeysOpen, s.GuardedEdges = 0, 0, 0
	for _, pl := range p.Plans {
		switch pl.State {
		case encode.KeyFixed, encode.KeyUnread:
			s.KeysFixed++
		case encode.KeyOpen:
			s.KeysOpen++
		}
	}
	s.Edges = len(c.edges)
	for i := range c.edges {
		if c.edges[i].G1 > c.edges[i].G0 {
			s.GuardedEdges++
		}
	}
	s.Variables = int(p.NumVars)
	s.Clauses = len(p.ClauseEnd)
}

// txnRef describes transaction t for a report.
func (c *checker) txnRef(t int32) TxnRef { return NewTxnRef(c.h, t) }

// forbiddenFoundAll lists the anomaly types found so far that every model forbids.
func (c *checker) forbiddenFoundAll() []string {
	var types []string
	for _, a := range c.res.Anomalies {
		if a.Model != "" || a.uncommitted {
			continue
		}
		all := true
		for m := range models {
			if models[m].uncommitted {
				continue // decided on their own, before the others
			}
			all = all && (models[m].perRead || forbids(m, a.Type)) // the one-base models
		}
		if all {
			types = append(types, a.Type)
		}
	}
	return types
}

// hasFinding reports whether finding f is among the anomalies already: each build of
// the problem diagnoses its keys again.
func (c *checker) hasFinding(f encode.Finding) bool {
	for i := range c.res.Anomalies {
		a := &c.res.Anomalies[i]
		if a.uncommitted || a.Type != f.Type || a.Explanation != f.Text {
			continue
		}
		switch {
		case a.Model == "":
			if a.oneBase && c.perRead {
				a.oneBase = false // found on both inferences: it holds for every model
			}
			return true
		case a.Model == gcursorModel && c.findingModel == gcursorModel:
			return true
		case a.Model == gcursorModel && c.perRead:
			a.Model = "" // found per read without the G-cursor pins too: every model
			return true
		}
	}
	return false
}

func (c *checker) addFinding(f encode.Finding) {
	// Found on the one-base inference, only the facts about values alone hold per read.
	baseFree := f.Type == "incompatible-order" || f.Type == "garbage-read" || f.Type == "G1a"
	a := Anomaly{Type: f.Type, Explanation: f.Text, oneBase: !c.perRead && !baseFree, Model: c.findingModel}
	if f.Key >= 0 {
		a.Key = c.h.Keys[f.Key]
	}
	for _, t := range f.Txns {
		a.Txns = append(a.Txns, c.txnRef(t))
	}
	c.res.Anomalies = append(c.res.Anomalies, a)
}

// takeProven records each model of left a witness proved as valid in results, and
// returns the others.
func (c *checker) takeProven(left []string, results map[string]*ModelResult) []string {
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
