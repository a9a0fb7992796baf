package check

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"doppel/encode"
	"doppel/sat"
	"doppel/theory"
)

// explainConflicts bounds the search for each case of an UNSAT explanation.
const explainConflicts = 20000

// maxShownAttributions bounds how many attributions an UNSAT explanation walks through.
const maxShownAttributions = 8

// newSolver loads the problem's clauses into a fresh solver, with the view's extra
// variables; nil when the limits ran out meanwhile (millions of clauses take seconds).
// hall adds Hall's condition over the trace positions (theory.Matching).
func (c *checker) newSolver(v *view, hall bool) *sat.Solver {
	p := c.p
	s := sat.New()
	if c.spare != nil {
		s, c.spare = c.spare.Recycle(), nil
	}
	s.Reserve(int(p.NumVars+v.extraVars), len(p.ClauseEnd), len(p.Clauses))
	for i := int32(0); i < p.NumVars+v.extraVars; i++ {
		if i&(1<<13-1) == 0 && c.budget.out() {
			return nil
		}
		s.NewVar()
	}
	lits := make([]sat.Lit, 0, 8)
	for i := range p.ClauseEnd {
		if i&(1<<13-1) == 0 && c.budget.out() {
			return nil
		}
		lits = lits[:0]
		for _, l := range p.Clause(i) {
			lits = append(lits, sat.Lit(l))
		}
		s.AddClause(lits...)
	}
	if t := p.Tiling; t != nil {
		if c.tiling == nil {
			c.tiling = theory.NewSegments(t, int(p.NumVars), nil)
			if !c.opts.Solver.NoCounting {
				c.counting = theory.NewCounting(t, int(p.NumVars))
			}
		}
		var th sat.Theory = c.tiling.Fresh()
		if c.counting != nil {
			// Counting after the tiling: it reads the candidates the tiling ruled out.
			th = theory.NewBoth(th, c.counting.Fresh(), s.NumVars())
		}
		if hall && !c.opts.Solver.NoMatching {
			// Hall's condition last: it only detects, over what the others left.
			if c.matching == nil {
				c.matching = theory.NewMatching(t, int(p.NumVars))
			}
			if c.matching != nil {
				th = theory.NewBoth(th, c.matching.Fresh(), s.NumVars())
			}
		}
		s.SetTheory(th)
	}
	return s
}

// countTiling adds the append-adjacency theory's implications in s (if attached) to
// the result's counters.
func (c *checker) countTiling(s *sat.Solver) {
	var walk func(t sat.Theory)
	walk = func(t sat.Theory) {
		switch t := t.(type) {
		case *theory.Both:
			walk(t.First)
			walk(t.Second)
		case *theory.Segments:
			c.res.Stats.TilingProps += t.Stats.Propagations
		case *theory.Counting:
			c.res.Stats.CountProps += t.Stats.Propagations
		case *theory.Matching:
			c.res.Stats.HallConflicts += t.Stats.Conflicts
		}
	}
	walk(s.Theory())
}

// setTheory attaches the acyclicity theory g to s, beside the append-adjacency theory
// newSolver attached (if any), which propagates first.
func setTheory(s *sat.Solver, g *theory.Graph) {
	if t := s.Theory(); t != nil {
		s.SetTheory(theory.NewBoth(t, g, s.NumVars()))
		return
	}
	s.SetTheory(g)
}

// bound makes s honour the time limit: the solver reads the clock at conflicts and
// every so many decisions, and a timer interrupts it at the deadline (one decision can
// take milliseconds of theory propagation on a big graph). The caller must call the
// returned function when done with s.
func (c *checker) bound(s *sat.Solver) (release func()) {
	removeHook := c.budget.mem.onExceed(s.Interrupt)
	deadline := c.budget.solverDeadline()
	if deadline.IsZero() {
		return removeHook
	}
	s.SetDeadline(deadline)
	t := time.AfterFunc(time.Until(deadline), s.Interrupt)
	return func() { t.Stop(); removeHook() }
}

// siLikelyRefuted reports whether a one-base model without orders (serializable,
// repeatable read) was already found not valid by a cycle snapshot isolation forbids
// too (G0, G1c, G-single, G-nonadjacent): the hybrid witness, a search for a solution that
// snapshot isolation's write skews need, would then most likely search in vain, as
// it did for 5–9 CPU-s on 2,000-transaction histories with an injected G-single and
// lists of 500 values (its views as large as the problem). Only which search runs
// depends on it: the solver after it decides either way.
func (c *checker) siLikelyRefuted() bool {
	for i := range c.res.Anomalies {
		a := &c.res.Anomalies[i]
		if a.uncommitted || a.Model != "" && (models[a.Model].perRead || models[a.Model].snapshot || models[a.Model].process || models[a.Model].realtime) {
			continue
		}
		switch a.Type {
		case "G0", "G1c", "G-single", "G-nonadjacent":
			return true
		}
	}
	return false
}

// solve decides a model on view v when some keys leave choices: CDCL over the
// segmentation choices with the acyclicity theory over the view's edges.
func (c *checker) solve(m string, v *view) (Validity, string) {
	t0 := time.Now()
	defer func() {
		c.res.Stats.SolveSeconds += time.Since(t0).Seconds()
		c.spare = nil // its memory is not held past the model's decision
	}()
	if v.split && !c.opts.Solver.NoWitness {
		c.progress("deciding " + m + ": looking for a serializable solution")
		if c.serializableWitness(m) || !c.budget.out() && !c.siLikelyRefuted() && !c.plainSIWitness && c.hybridWitness(m) {
			c.res.Stats.Witnessed++
			return Valid, ""
		}
	}
	if !v.split && !models[m].perRead && !c.opts.Solver.NoWitness && c.defaultSolver() && (m == strictModel || !c.strictNarrowTried) {
		c.progress("deciding " + m + ": looking for a strict-serializable solution")
		if c.strictWitness() {
			c.res.Stats.Witnessed++
			return Valid, ""
		}
	}
	if c.budget.out() {
		return Unknown, c.budget.message(m)
	}
	c.progress("deciding " + m + ": guessing a solution")
	guess, ok := c.witness(v)
	if v.split && !v.oriented && !(ok && !c.opts.Solver.NoWitness) && !c.budget.out() {
		c.progress("deciding " + m + ": ordering unobserved writers")
		if v = c.siView(m, true); v == nil {
			return Unknown, c.budget.message(m)
		}
		guess, ok = c.witness(v)
	}
	if ok && !c.opts.Solver.NoWitness {
		c.res.Stats.Witnessed++
		return Valid, ""
	}
	if c.budget.out() {
		return Unknown, c.budget.message(m)
	}
	// A portfolio unless the user chose a configuration: first a depth-first-like
	// search (variables in key and position order, phases from the guess, the theory only
	// detecting cycles) for a bounded number of conflicts — on histories the replay got
	// stuck on it needs a few dozen conflicts where VSIDS with theory propagation needs
	// thousands —, then the same order with theory propagation (dearer per conflict on
	// big graphs, far fewer conflicts on long lists of few values: a MariaDB history
	// 18.7K conflicts / 7.6 s against 100K / 19 s), then VSIDS with theory propagation.
	o := c.opts.Solver
	configs := []solverConfig{{heuristic: o.Heuristic, restarts: o.Restarts, propagate: !o.NoTheoryPropagation}}
	if o.Heuristic == "" && o.Restarts == "" && !o.NoTheoryPropagation {
		configs = []solverConfig{
			{heuristic: "static", propagate: false, conflicts: portfolioConflicts},
			{heuristic: "static", propagate: true, conflicts: 2 * portfolioConflicts},
			{propagate: true},
		}
		// A bounded VSIDS stage leads (so the static stages still get their turn), not
		// when only naming a proved violation: there the static order names it in a
		// few conflicts, and 2,000 of VSIDS took 2 CPU-s against 0.3. It leads
		//   - once strict serializability is refuted: such a history mostly comes from a
		//     database weaker than serializable (snapshot isolation), where the static
		//     order, following the guess key by key, finds neither a solution nor a
		//     refutation in its 75K conflicts and VSIDS mostly decides in a few dozen;
		//   - on start and commit events with process order (strong-session or strong
		//     snapshot isolation): both static stages went through their conflicts in
		//     vain (10K snapshot-behaviour transactions, zipf keys of two values, 5%
		//     :info, seed 19: 29 CPU-s, or unknown at 60 s), where VSIDS alone decided in
		//     839-1,629 conflicts (3.8 CPU-s).
		if !c.naming && !c.plainSIWitness && (c.strictRefuted && !v.split || v.split && models[m].process) {
			configs = append([]solverConfig{{propagate: true, conflicts: vsidsLeadConflicts, decisions: vsidsLeadDecisions}}, configs...)
		}
	}
	for i := range configs {
		configs[i].hall = configs[i].conflicts == 0 && configs[i].decisions == 0
	}
	c.runBeforeSerialSearch()
	status := sat.Unknown
	for i, cfg := range configs {
		if i < c.stagesDone[m] {
			continue // ended at its own bound in an earlier round (decideAlternating)
		}
		before := c.res.Stats
		stage := "deciding " + m + ": solver"
		if len(configs) > 1 {
			stage += fmt.Sprintf(" stage %d of %d", i+1, len(configs))
		}
		var done bool
		status, done = c.solveLazy(v, &guess, cfg, stage)
		if done {
			return Invalid, ""
		}
		if status == sat.Unknown && c.stagesDone != nil && c.stagesDone[m] == i && c.endedOwnBound(before, cfg.conflicts, cfg.decisions) {
			c.stagesDone[m] = i + 1
		}
		if status != sat.Unknown || c.budget.out() {
			break
		}
	}
	switch status {
	case sat.Sat:
		return Valid, ""
	case sat.Unsat:
		c.progress("explaining why " + m + " fails")
		return Invalid, c.explainUnsat(m, v, guess)
	}
	if !c.budget.out() {
		// Every stage but the last has a bound of its own, the last only the limits.
		return Unknown, m + ": the solver stopped without a verdict"
	}
	return Unknown, c.budget.message(m)
}

// solveLazy runs one configuration of the portfolio on v; on a lazily oriented view
// (check/view.go), again after each solution whose unobserved writers overlapped, with
// their pairs oriented and the solution as phases (*guess), within the configuration's
// conflicts in all. Sat only for a solution whose unobserved writers are ordered.
func (c *checker) solveLazy(v *view, guess *[]bool, cfg solverConfig, stage string) (sat.Status, bool) {
	left := cfg.conflicts
	for {
		n, ok := c.budget.limit(left)
		if !ok {
			return sat.Unknown, false
		}
		run := cfg
		run.conflicts = n
		c.progress(stage)
		before := c.res.Stats.Conflicts
		status, done := c.solveWith(v, *guess, run)
		if done || status != sat.Sat || !v.lazy || c.spare == nil {
			return status, done
		}
		vals := solverModel(c.spare)
		switch c.refineUnobserved(v, vals) {
		case ordered:
			return sat.Sat, false
		case stuck:
			c.res.Warnings = append(c.res.Warnings, "internal error: a solution's unobserved writers could not be ordered; verdict withheld")
			return sat.Unknown, false
		}
		// The solution as phases, the new orientation variables false.
		*guess = append(vals, make([]bool, int(c.p.NumVars+v.extraVars)-len(vals))...)
		if left > 0 {
			if left -= c.res.Stats.Conflicts - before; left <= 0 {
				return sat.Unknown, false
			}
		}
		if c.budget.out() {
			return sat.Unknown, false
		}
		stage = strings.TrimSuffix(stage, ", unobserved writers ordered") + ", unobserved writers ordered"
	}
}

// serializableWitness looks for a serializable solution, which is also a snapshot
// isolated one: the serializable problem is much smaller than the split graph with its
// first-committer-wins orientations, and most histories that are snapshot isolated
// are serializable too. Bounded: a history that is not serializable is left to the
// snapshot isolation search.
func (c *checker) serializableWitness(m string) bool {
	// The serializable-family model with m's orders: its solutions are m's.
	serial := "serializable"
	switch spec := models[m]; {
	case spec.realtime:
		serial = "strict-serializable"
	case spec.process:
		serial = "strong-session-serializable"
	}
	if c.serialRefuted[serial] || serial == "strict-serializable" && c.strictRefuted {
		return false // proven violated: a search for its solution cannot succeed
	}
	sv := c.serialView(serial)
	guess, ok := c.witness(sv)
	if ok {
		return true
	}
	n, ok := c.budget.limit(serializableWitnessConflicts)
	if !ok {
		return false
	}
	status, _ := c.solveWith(sv, guess, solverConfig{heuristic: "static", conflicts: n})
	return status == sat.Sat
}

// strictWitness looks for a strict-serializable solution, which satisfies every
// serializable-family model: real-time order prunes the search (a MariaDB history:
// serializable 226K conflicts / 33 s, strict 44K / 7.5 s). Bounded (the first two stages
// of the portfolio, smaller), since the history may be serializable without being
// strict; remembered, so that several models share it.
func (c *checker) strictWitness() bool {
	if c.strictRefuted {
		// Proven violated: a search for a strict solution cannot succeed (on a
		// snapshot-isolated history checked as serializable it took most of the time).
		return false
	}
	if c.strictTried {
		return c.strictSat
	}
	c.strictTried = true
	// The strict search that proveByReplay kept, if it has had no turn yet, gets its
	// first two before the solver's stages (its order is strict serializable too):
	// serializable alone on hot keys with :info at 10K spent 6.5 s in these stages,
	// where the search's first turn found the order in 0.3 s.
	if c.keptStrict != nil && c.keptStrict.turn == 0 && (c.turnKept() || c.turnKept()) {
		c.strictSat = true
		return true
	}
	sv := c.strictView()
	if c.budget.out() {
		return false
	}
	guess, ok := c.witness(sv)
	if ok {
		c.strictSat = true
		return true
	}
	for i, cfg := range []solverConfig{
		{heuristic: "static", propagate: false, conflicts: strictFirstConflicts},
		{heuristic: "static", propagate: true, conflicts: strictWitnessConflicts},
	} {
		if i > 0 {
			c.runBeforeSerialSearch()
		}
		if i < c.stagesDone[strictWitnessStages] {
			continue // ended at its own bound in an earlier round (decideAlternating)
		}
		own := cfg.conflicts
		n, ok := c.budget.limit(cfg.conflicts)
		if !ok {
			return false
		}
		cfg.conflicts = n
		before := c.res.Stats
		status, _ := c.solveWith(sv, guess, cfg)
		if status == sat.Sat {
			c.strictSat = true
			return true
		}
		if status == sat.Unknown && c.stagesDone != nil && c.stagesDone[strictWitnessStages] == i && c.endedOwnBound(before, own, 0) {
			c.stagesDone[strictWitnessStages] = i + 1
		}
	}
	return false
}

// strictWitnessStages keys strictWitness's stages in stagesDone.
const strictWitnessStages = "strict witness"

// endedOwnBound reports whether a solver stage that returned unknown, run with the
// counters before and its own bounds (conflicts own, decisions; 0: none), stopped at
// one of them rather than at a limit or a cap (a cap below own stops it short of own).
func (c *checker) endedOwnBound(before Stats, own, decisions int64) bool {
	if c.budget.out() {
		return false
	}
	if decisions > 0 && c.res.Stats.Decisions-before.Decisions >= decisions {
		return true
	}
	return own > 0 && c.res.Stats.Conflicts-before.Conflicts >= own
}

// strictWitnessConflicts bounds strictWitness's search.
const strictWitnessConflicts = 20000

// defaultSolver reports whether the user left the solver configuration to the portfolio.
func (c *checker) defaultSolver() bool {
	o := c.opts.Solver
	return o.Heuristic == "" && o.Restarts == "" && !o.NoTheoryPropagation
}

// strictFirstConflicts bounds strictWitness's first stage (static order, no theory
// propagation).
const strictFirstConflicts = strictWitnessConflicts / 4

// strictSearchFirst reports whether serializable-family model m, narrowed without a
// contradiction, is strict serializability, whose search begins with strictWitness's
// first stage, bounded: the deferred snapshot replays (beforeSerialSearch) then wait
// for it, since a strict-serializable solution proves snapshot isolation too, and on
// duplicate-heavy valid histories those replays, stuck, cost about a fifth of the check
// (10K transactions, 10 keys of two values: 0.29 of 1.5 CPU-s) where that stage finds a
// solution in a few hundred conflicts. Not when the user's conflict limit would end the
// search within that stage: the replays would then not run at all.
func (c *checker) strictSearchFirst(m string) bool {
	if m != "strict-serializable" || c.strictRefuted || c.opts.Solver.NoWitness || !c.defaultSolver() {
		return false
	}
	left := c.budget.conflictsLeft()
	return left < 0 || left > strictFirstConflicts
}

// runBeforeSerialSearch runs the deferred snapshot replays (beforeSerialSearch) before
// a search not bounded by strictWitness's first stage, once.
func (c *checker) runBeforeSerialSearch() {
	if f := c.beforeSerialSearch; f != nil {
		c.beforeSerialSearch = nil
		f()
	}
}

// serializableWitnessConflicts bounds serializableWitness's search.
const serializableWitnessConflicts = 2000

// vsidsLeadConflicts bounds the VSIDS stage that leads the portfolio when strict
// serializability is refuted; vsidsLeadDecisions bounds it too, since on long lists of
// two values VSIDS made ~12,000 decisions per conflict (family E's 3-key projections:
// 5,000 conflicts took minutes, where the static stage after it decides in ~100).
const (
	vsidsLeadConflicts = 5000
	vsidsLeadDecisions = 1_000_000
)

// portfolioConflicts bounds the first, depth-first-like search of the portfolio.
const portfolioConflicts = 25000

// solverConfig is one solver run of the portfolio.
type solverConfig struct {
	heuristic, restarts string
	propagate           bool
	conflicts           int64 // 0: no bound of its own
	decisions           int64 // 0: no bound of its own
	// run, when set, runs the search instead of one Solve call (the neighbourhood
	// search's calls under assumptions); the conflict and decision bounds are set.
	run func(s *sat.Solver) sat.Status
	// hall: with Hall's condition over the trace positions (theory.Matching). Only
	// the stages bounded by the limits alone have it: on long refutations of lost
	// updates it saves a third of the time (BENCHMARKS.md, 2026-12-07), where in the
	// bounded stages it cost more per conflict than it saved.
	hall bool
}

// solveWith runs one configuration; done reports that the known edges are already
// cyclic (reported by knownCycles). Unknown: the configuration's own bound or the
// limits (then c.budget is spent) were reached.
func (c *checker) solveWith(v *view, guess []bool, cfg solverConfig) (sat.Status, bool) {
	if solveHook != nil {
		solveHook(c, v)
	}
	s := c.newSolver(v, cfg.hall)
	if s == nil {
		return sat.Unknown, false
	}
	defer func() { c.spare = s }()
	for i, val := range guess {
		s.SetPhase(sat.Var(i), val)
	}
	g := theory.NewGraph(v.nodes)
	g.Propagation = cfg.propagate
	g.Reserve(len(v.edges), 2*len(v.edges))
	guard := make([]sat.Lit, 0, 4)
	for i := range v.edges {
		e := &v.edges[i]
		guard = guard[:0]
		for _, l := range c.guard(e) {
			guard = append(guard, sat.Lit(l))
		}
		g.AddEdge(int(e.From), int(e.To), guard)
	}
	if c.onCycle != nil {
		g.OnCycle = c.onCycle
		// The hybrid witness splits transactions where the cycles the theory meets
		// (implications' included) can be cut, so the look-ahead's bounds steer it: with
		// the default ForwardLimit a hot 200-transaction write skew (seed 1 of
		// TestHotWriteSkewSnapshotIsolated) was unknown within 30,000 conflicts, valid in
		// 8,167 with the wide forward part it was tuned with.
		g.ForwardLimit = g.NeighbourLimit
	}
	// Start Pearce–Kelly from a topological order of the edges the phases enable, so
	// that a search following them rarely reorders.
	phased := c.holdsUnder(guess)
	if c.budget.out() {
		return sat.Unknown, false
	}
	g.SetInitialOrder(newGraph(v.nodes, v.edges, phased).reversePostorder(phased))
	if c.budget.out() {
		return sat.Unknown, false
	}
	g.Stop = c.budget.stop
	if cyc := g.Init(); cyc != nil {
		return sat.Unsat, true
	}
	if g.Stopped {
		return sat.Unknown, false
	}
	setTheory(s, g)
	so := sat.DefaultOptions()
	if cfg.heuristic != "" {
		so.Heuristic = cfg.heuristic
	}
	if cfg.restarts != "" {
		so.Restarts = cfg.restarts
	}
	so.ChronoLevels = c.opts.Solver.ChronoLevels
	s.SetOptions(so)
	if so.Heuristic == "static" {
		s.SetStaticOrder(c.timeOrder(v))
	}
	if cfg.conflicts > 0 {
		s.SetConflictLimit(cfg.conflicts)
	}
	s.SetDecisionLimit(cfg.decisions)
	release := c.bound(s)
	var status sat.Status
	if cfg.run != nil {
		status = cfg.run(s)
	} else {
		status = s.Solve()
	}
	release()
	st := s.Stats()
	c.res.Stats.Decisions += st.Decisions
	c.res.Stats.Conflicts += st.Conflicts
	c.res.Stats.Propagations += st.Propagations
	c.res.Stats.TheoryProps += g.Stats.Propagations
	c.countTiling(s)
	c.res.Stats.Learned += st.Learned
	c.res.Stats.Chrono += st.Chrono
	if status != sat.Sat {
		return status, false
	}
	vals := solverModel(s)
	if !c.modelHolds(vals, v) {
		// Never a verdict the model does not support: a solver or theory bug shows
		// as an unknown with a warning, not as "valid".
		c.res.Warnings = append(c.res.Warnings, "internal error: the solver's model failed verification; verdict withheld")
		return sat.Unknown, false
	}
	if c.onSerialOrder != nil && !v.split {
		c.verifyOrder(c.p.In, c.modelOrder(vals, v), false, false)
	}
	return status, false
}

// modelOrder returns a serial order of a solution vals of a view that is not split: the
// transactions it commits, in a topological order of the edges it enables.
func (c *checker) modelOrder(vals []bool, v *view) []int32 {
	holds := c.holdsUnder(vals)
	n := int32(len(c.h.Txns))
	var order []int32
	for _, t := range newGraph(v.nodes, v.edges, holds).reversePostorder(holds) {
		if t < n && (c.p.Commit[t] == encode.Committed || c.p.CommitVar[t] >= 0 && vals[c.p.CommitVar[t]]) {
			order = append(order, t)
		}
	}
	return order
}

// solveHook, when set (by tests), sees each problem handed to the solver.
var solveHook func(c *checker, v *view)

// solverModel is the solver's last model, one value per variable.
func solverModel(s *sat.Solver) []bool {
	vals := make([]bool, s.NumVars())
	for i := range vals {
		vals[i] = s.ModelValue(sat.PosLit(sat.Var(i)))
	}
	return vals
}

// modelHolds verifies a Sat answer independently of the solver: the assignment
// satisfies every clause of the problem and leaves the view's graph acyclic.
func (c *checker) modelHolds(vals []bool, v *view) bool {
	if len(vals) < int(c.p.NumVars)+int(v.extraVars) || !c.satisfies(vals) {
		return false
	}
	holds := c.holdsUnder(vals)
	return len(newGraph(v.nodes, v.edges, holds).sccs(func(int32) bool { return true }, holds)) == 0
}

// explainUnsat proves the violation by cases: it takes an attribution of the duplicated
// values (a solution of the Boolean part alone), shows the cycle it closes, rules out
// every attribution with the same choices on that cycle, and repeats. When the
// Boolean part runs out of solutions, the cycles shown cover every attribution. The
// violation is already proven: when the limits run out the explanation is cut short
// (and says so), and the returned note says so for the model when no case was found.
func (c *checker) explainUnsat(m string, v *view, guess []bool) (note string) {
	if c.opts.VerdictOnly {
		return ""
	}
	// The Boolean part alone is easy, but VSIDS from scratch wanders on millions of
	// variables: follow the guess in variable order, and bound each case's search.
	s := c.newSolver(v, false)
	if s == nil {
		c.addUnnamedRefutation(m, v)
		return c.explanationCut(m)
	}
	defer func() { c.spare = s }()
	defer c.countTiling(s)
	defer c.bound(s)()
	for i, val := range guess {
		s.SetPhase(sat.Var(i), val)
	}
	so := sat.DefaultOptions()
	so.Heuristic = "static"
	so.ChronoLevels = c.opts.Solver.ChronoLevels
	s.SetOptions(so)
	// solveCase searches one case within its own bound (0: none) and the limits.
	solveCase := func(own int64) sat.Status {
		n, ok := c.budget.limit(own)
		if !ok {
			return sat.Unknown
		}
		return c.solveCounted(s, n)
	}
	var parts []string
	var cases []Case
	var first []int32
	firstCase, firstChoices := 0, "" // the case first's steps come from, and its choices
	typ := ""
	var scratch bfsScratch
	complete := false
	txns := map[int32]bool{}
	a := Anomaly{}
	for n := 0; n < maxShownAttributions; n++ {
		status := solveCase(explainConflicts)
		if status == sat.Unknown && first == nil && !c.budget.out() {
			// The verdict needs at least one case: search bounded only by the limits.
			status = solveCase(0)
		}
		if status == sat.Unknown {
			break
		}
		if status != sat.Sat {
			complete = true
			break
		}
		// The key-order chains only shortcut paths of consecutive blocks: the cycle
		// shown goes through those blocks.
		holds := func(e *encode.Edge) bool {
			if e.Chain {
				return false
			}
			for _, l := range c.guard(e) {
				if !s.ModelValue(sat.Lit(l)) {
					return false
				}
			}
			return true
		}
		g := newGraph(v.nodes, v.edges, holds)
		comps := g.sccs(func(int32) bool { return true }, holds)
		if len(comps) == 0 {
			break // cannot happen when the full problem is UNSAT
		}
		inComp := make([]bool, g.n)
		for _, x := range comps[0] {
			inComp[x] = true
		}
		cycle := g.path(comps[0][0], comps[0][0], func(x int32) bool { return inComp[x] }, holds, &scratch)
		// The anomaly is named by the most permissive kind of cycle among the cases:
		// the claim that holds in every attribution.
		newFirst := false
		if t := c.classify(v, cycle); first == nil || cycleRank(t) > cycleRank(typ) {
			first, typ, newFirst = cycle, t, true
		}
		var why, choices []string
		var block []sat.Lit
		cs := Case{N: n + 1}
		seenLit := map[encode.Lit]bool{}
		ss := c.steps(v, cycle)
		for _, st := range ss {
			why = append(why, c.explain(st))
			cs.Steps = append(cs.Steps, c.stepOf(st, ""))
			txns[st.from] = true
		}
		// The guards of every edge of the cycle: a step through a position's hubs
		// keeps only one of its edges, and a case must rule out only attributions
		// that close its cycle.
		for _, id := range cycle {
			for _, l := range c.guard(&v.edges[id]) {
				if !seenLit[l] {
					seenLit[l] = true
					block = append(block, sat.Lit(l^1))
					choices = append(choices, c.describeLit(v, l))
					cs.Choices = append(cs.Choices, c.choiceOf(v, l))
				}
			}
		}
		c.withImplied(&cs, ss)
		cases = append(cases, cs)
		parts = append(parts, caseText(cs))
		if newFirst {
			firstCase, firstChoices = n+1, strings.Join(choices, " and ")
		}
		if len(block) == 0 || !s.AddClause(block...) {
			complete = true
			break
		}
	}
	if first == nil {
		if c.budget.out() {
			c.addUnnamedRefutation(m, v)
			return c.explanationCut(m)
		}
		return ""
	}
	a.Type, a.Model = typ, m
	// The steps are one case's: each holds in that attribution, so it says which.
	cond := ""
	if firstChoices != "" {
		cond = fmt.Sprintf("In case %d (if %s): ", firstCase, firstChoices)
	}
	for _, st := range c.steps(v, first) {
		a.Steps = append(a.Steps, c.stepOf(st, cond))
	}
	for _, st := range c.steps(v, first) {
		if txns[st.from] {
			a.Txns = append(a.Txns, c.txnRef(st.from))
			delete(txns, st.from)
		}
	}
	for t := range txns {
		a.Txns = append(a.Txns, c.txnRef(t))
	}
	end := fmt.Sprintf("Why these %d cases cover every attribution: after each case the solver forbade its choices together (at least one of them must differ), and with all %d cases forbidden no attribution was left (the solver proved it): every attribution makes the choices of one of the cases, and closes its cycle. Choices marked \"fixed\" were never forbidden: %s", len(cases), len(cases), impliedWhy)
	if len(cases) == 1 {
		end = "Why this case covers every attribution: with its choices forbidden together, no attribution was left (the solver proved it): every attribution makes these choices, and closes this cycle."
	}
	switch {
	case !complete && c.budget.spent:
		end = fmt.Sprintf("(The explanation was cut short by the %s after %d cases; the solver proved that every other attribution closes a cycle too.)",
			c.budget.spentWhy, len(parts))
	case !complete:
		end = fmt.Sprintf("(Only the first %d cases are shown; the solver proved that every other attribution closes a cycle too.)", len(parts))
	}
	a.Cases, a.CasesCover = cases, end
	a.Explanation = fmt.Sprintf("Duplicate values leave several ways to attribute them to appends; under %s each closes a cycle. Positions count from 1.\n", m) +
		strings.Join(parts, "\n") + "\n" + end
	c.addAnomaly(a)
	return ""
}

// explanationCut is the note of a model whose violation the solver proved but whose
// explanation the limits cut short before a first case.
func (c *checker) explanationCut(m string) string {
	return fmt.Sprintf("%s: the solver proved that no order explains the history; its explanation was cut short (the %s was reached while %s, after %d conflicts and %.2fs)",
		m, c.budget.spentWhy, c.budget.spentPhase, c.budget.spentConfl, c.budget.spentAfter.Seconds())
}

// describeLit says what a guard literal chooses, in the history's terms.
func (c *checker) describeLit(v *view, l encode.Lit) string {
	name, _ := c.varMeaning(v, l>>1)
	if l&1 == 1 {
		return "not (" + name + ")"
	}
	return name
}

// Kinds of varRef: what a variable of the problem chooses.
const (
	varNone       uint8 = iota
	varPosition         // a writer's block at a candidate position: key, candidate
	varUnobserved       // a writer's append in no list: key, writer
	varCommitted        // an :info transaction committed: transaction
	varOrder            // an order of two writers, or commit before start: edge of the view
)

// varRef locates what a variable means; the words are made only for the variables an
// explanation names (a dense history has millions of variables and names a few dozen).
type varRef struct {
	kind uint8
	a, b int32
}

// indexVars records, for the problem's variables that guards use, where their meaning
// is (nameVar makes the words). Later kinds override earlier ones, as the guards of
// the view's edges are what a step names.
func (c *checker) indexVars(v *view) {
	p := c.p
	refs := make([]varRef, p.NumVars+v.extraVars)
	for k := range p.SegVar {
		for i, sv := range p.SegVar[k] {
			refs[sv] = varRef{varPosition, int32(k), int32(i)}
		}
		for _, w := range p.Plans[k].Unobserved {
			if u, ok := p.UnobservedVar(int32(k), w); ok {
				refs[u] = varRef{varUnobserved, int32(k), w}
			}
		}
	}
	for t, cv := range p.CommitVar {
		if cv >= 0 {
			refs[cv] = varRef{kind: varCommitted, a: int32(t)}
		}
	}
	for i := range v.edges {
		e := &v.edges[i]
		if e.G0 < 0 && e.Pos < 0 {
			g := c.guard(e)
			if o := g[len(g)-1]; o&1 == 0 {
				refs[o>>1] = varRef{kind: varOrder, a: int32(i)}
			}
		}
	}
	c.varRefs, c.varRefsView = refs, v
}

// varMeaning says what variable x chooses, in words and structurally.
func (c *checker) varMeaning(v *view, x encode.Lit) (string, Choice) {
	if c.varRefsView != v || len(c.varRefs) != int(c.p.NumVars+v.extraVars) {
		c.indexVars(v)
	}
	p, h, in := c.p, c.h, c.p.In
	r := c.varRefs[x]
	switch r.kind {
	case varPosition:
		k := r.a
		cand := p.Plans[k].Cands[r.b]
		w := in.Writers[cand.Writer]
		vals := in.Vals(cand.Writer)
		ch := Choice{Kind: "position", Txn: h.Txns[w.Txn].Index, Key: h.Keys[k], Position: int(cand.Pos) + 1,
			Window: newWindow(h, in.Keys[k].Trace, int(cand.Pos)+1, int(cand.Pos)+len(vals))}
		for _, x := range vals {
			ch.Values = append(ch.Values, h.Values[x])
		}
		return fmt.Sprintf("%s's %s is at position %d of key %s", encode.TxnName(h, w.Txn),
			encode.ShortList(h, vals), cand.Pos+1, h.Keys[k]), ch
	case varUnobserved:
		wt := in.Writers[r.b].Txn
		return fmt.Sprintf("%s's append to key %s is not in the list", encode.TxnName(h, wt), h.Keys[r.a]),
			Choice{Kind: "unobserved", Txn: h.Txns[wt].Index, Key: h.Keys[r.a]}
	case varCommitted:
		return encode.TxnName(h, r.a) + " committed", Choice{Kind: "committed", Txn: h.Txns[r.a].Index}
	case varOrder:
		e := &v.edges[r.a]
		if !v.split {
			return fmt.Sprintf("%s's append to key %s comes before %s's, after the list", encode.TxnName(h, e.From), h.Keys[e.Key], encode.TxnName(h, e.To)),
				Choice{Kind: "order", Txn: h.Txns[e.From].Index, Other: h.Txns[e.To].Index}
		}
		return fmt.Sprintf("%s committed before %s started", encode.TxnName(h, v.txn(e.From)), encode.TxnName(h, v.txn(e.To))),
			Choice{Kind: "order", Txn: h.Txns[v.txn(e.From)].Index, Other: h.Txns[v.txn(e.To)].Index}
	}
	return fmt.Sprintf("choice %d", x), Choice{}
}

// exportAll writes the solver instance of every model asked for, whatever decides the
// model (replay, known cycles, witness or solver), or warns why it cannot.
func (c *checker) exportAll(names []string) {
	if c.exported == nil {
		c.exported = map[string]bool{}
	}
	for _, m := range names {
		c.exported[m] = true
		base := c.opts.Solver.ExportPrefix + "-" + m
		if c.budget.out() {
			c.warnf("export: %s.cnf not written: the %s was reached while %s", base, c.budget.spentWhy, c.budget.spentPhase)
			continue
		}
		c.progress("exporting the " + m + " instance")
		v := c.serialView(m)
		if models[m].snapshot {
			v = c.siViewFull(m) // the exact instance: every pair of unobserved writers oriented
		}
		var s *sat.Solver
		if v != nil {
			s = c.newSolver(v, false)
		}
		if s == nil {
			c.warnf("export: %s.cnf not written: the %s was reached while %s", base, c.budget.spentWhy, c.budget.spentPhase)
			continue
		}
		if err := c.export(base, s, v); err != nil {
			c.warnf("export: %v", err)
			continue
		}
		if c.p.NumVars+v.extraVars == 0 {
			c.warnf("export: %s: the history leaves no open choice under %s, so %s.cnf has no variables (trivially satisfiable) and every edge of %s.graph is unguarded",
				base, m, base, base)
		}
	}
}

// exportAfterReplay builds the encoding that a replay made unnecessary, to export it.
// The verdicts stand whatever happens here.
func (c *checker) exportAfterReplay(in *encode.Inference, names []string) {
	c.progress("building the encoding (for --export)")
	p := encode.BuildFromStop(in, c.budget.stop)
	if p == nil {
		c.warnf("export: nothing written: the %s was reached while %s, before the encoding was complete", c.budget.spentWhy, c.budget.spentPhase)
		return
	}
	c.p = p
	c.addOrderEdges(names)
	c.exportAll(names)
}

// exportRest exports the instances of the models asked for that were decided without
// the unnarrowed encoding (within a narrowing's windows, by a witness, read by read):
// strong on the one-base inference in, weak on the read-by-read one. The verdicts
// stand whatever happens here.
func (c *checker) exportRest(in *encode.Inference, strong, weak []string) {
	missing := func(names []string) []string {
		var out []string
		for _, m := range names {
			if !c.exported[m] {
				out = append(out, m)
			}
		}
		return out
	}
	if m := missing(strong); len(m) > 0 {
		c.exportAfterReplay(in, m)
	}
	if m := missing(weak); len(m) > 0 {
		if pin := c.perReadInference(); pin != nil {
			c.perRead = true
			c.exportAfterReplay(pin, m)
			c.perRead = false
		}
	}
}

// export writes a solver instance (DIMACS) and its graph for study, as base.cnf and
// base.graph.
func (c *checker) export(base string, s *sat.Solver, v *view) error {
	f, err := os.Create(base + ".cnf")
	if err != nil {
		return err
	}
	if err := s.WriteDIMACS(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	gf, err := os.Create(base + ".graph")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(gf)
	fmt.Fprintf(w, "c nodes %d; transactions 0..%d; edges: from to kind [DIMACS guard literals]\n", v.nodes, len(c.h.Txns)-1)
	for i := range v.edges {
		e := &v.edges[i]
		fmt.Fprintf(w, "%d %d %s", e.From, e.To, e.Kind)
		for _, l := range c.guard(e) {
			fmt.Fprintf(w, " %s", sat.Lit(l))
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		gf.Close()
		return err
	}
	return gf.Close()
}

// cycleRank orders cycle kinds from the strictest (G0: only ww) to the most permissive
// (G2-item: several anti-dependencies).
func cycleRank(typ string) int {
	for i, base := range []string{"G0", "G1c", "G-single", "G-nonadjacent", "G2-item"} {
		if typ == base || strings.HasPrefix(typ, base+"-") {
			return i
		}
	}
	return -1
}

// timeOrder is the order the static heuristic decides variables in: each block choice
// at the time its writer ran (the middle of its interval), so that the search places
// blocks roughly as the database did, like a replay that can backtrack; the other
// variables (boundaries, unobserved writers, counters) follow in their own order, as
// the block choices mostly imply them.
func (c *checker) timeOrder(v *view) []sat.Var {
	n := int(c.p.NumVars + v.extraVars)
	if len(c.staticOrder) == n {
		return c.staticOrder
	}
	p, in := c.p, c.p.In
	key := make([]int64, n)
	for i := range key {
		key[i] = 1<<62 + int64(i)
	}
	mid := c.h.Midpoint
	if p.Win != nil && p.Win.Rank != nil {
		// The serial order that narrowed the windows: consistent with every read.
		mid = func(t int32) int64 { return int64(p.Win.Rank[t]) }
	}
	for k, vars := range p.SegVar {
		for i, x := range vars {
			key[x] = mid(in.Writers[p.Plans[k].Cands[i].Writer].Txn)<<20 | int64(p.Plans[k].Cands[i].Pos&(1<<20-1))
		}
		for _, w := range p.Plans[k].Unobserved {
			if u, ok := p.UnobservedVar(int32(k), w); ok {
				key[u] = mid(in.Writers[w].Txn)<<20 | (1<<20 - 1)
			}
		}
	}
	for t, x := range p.CommitVar {
		if x >= 0 {
			key[x] = mid(int32(t)) << 20
		}
	}
	order := make([]sat.Var, n)
	for i := range order {
		order[i] = sat.Var(i)
	}
	slices.SortStableFunc(order, func(a, b sat.Var) int { return cmp.Compare(key[a], key[b]) })
	c.staticOrder = order
	return order
}

// diagnoseUnsatKeys names, as ExplainOpenKeys does, the open keys whose own clauses
// have no solution, deciding each with the solver where ExplainOpenKeys's bounded
// search gave up (a pigeonhole over duplicate values takes it millions of steps). A
// key's clauses are a connected part of the problem's: keys share only the variables of
// :info transactions' commits, which are left free (a clause on them alone is left
// out), so "no solution" is about the key alone, whatever the other keys say. It
// reports whether it added a finding; the limits bound it.
func (c *checker) diagnoseUnsatKeys() bool {
	p := c.p
	in := p.In
	n := int(p.NumVars)
	shared := make([]bool, n)
	for _, cv := range p.CommitVar {
		if cv >= 0 {
			shared[cv] = true
		}
	}
	// Union-find over the variables that are not shared, joined by clauses.
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(x int32) int32
	find = func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for i := range p.ClauseEnd {
		root := int32(-1)
		for _, l := range p.Clause(i) {
			if x := l >> 1; !shared[x] {
				if r := find(x); root < 0 {
					root = r
				} else if r != root {
					parent[r] = root
				}
			}
		}
	}
	if t := p.Tiling; t != nil {
		// A key's candidates are tied together by its tiling.
		// (Candidates' variables are never shared: only commit variables are.)
		for _, vars := range p.SegVar {
			for _, v := range vars {
				if a, b := find(v), find(vars[0]); a != b {
					parent[a] = b
				}
			}
		}
	}
	before := len(in.Findings)
	for k := range p.SegVar {
		if len(p.SegVar[k]) == 0 || in.Keys[k].Bad || c.budget.out() {
			continue
		}
		root := find(p.SegVar[k][0])
		// The part must be key k's alone (another key's variables in it would make
		// "no solution" a claim about both).
		alone := true
		for j := range p.SegVar {
			if j != k && len(p.SegVar[j]) > 0 && find(p.SegVar[j][0]) == root {
				alone = false
				break
			}
		}
		if !alone {
			continue
		}
		s := sat.New()
		for range n {
			s.NewVar()
		}
		lits := make([]sat.Lit, 0, 8)
		for i := range p.ClauseEnd {
			lits = lits[:0]
			in := false
			for _, l := range p.Clause(i) {
				if x := l >> 1; !shared[x] && find(x) == root {
					in = true
				}
				lits = append(lits, sat.Lit(l))
			}
			if in {
				s.AddClause(lits...)
			}
		}
		if t := p.Tiling; t != nil {
			s.SetTheory(theory.NewSegments(t, n, func(i int) bool {
				v := t.Var[i]
				return !shared[v] && find(v) == root
			}))
		}
		release := c.bound(s)
		status := sat.Unknown
		if lim, ok := c.budget.limit(0); ok {
			status = c.solveCounted(s, lim)
		}
		release()
		if status == sat.Unsat {
			in.Diagnose(int32(k))
		}
	}
	return len(in.Findings) > before
}

// solveCounted runs s for at most limit conflicts and adds what the run cost to the
// result's counters (one solver may be resumed many times: only the difference counts).
func (c *checker) solveCounted(s *sat.Solver, limit int64) sat.Status {
	s.SetConflictLimit(limit)
	before := s.Stats()
	status := s.Solve()
	after := s.Stats()
	c.res.Stats.Conflicts += after.Conflicts - before.Conflicts
	c.res.Stats.Decisions += after.Decisions - before.Decisions
	c.res.Stats.Propagations += after.Propagations - before.Propagations
	c.res.Stats.Learned += after.Learned - before.Learned
	c.res.Stats.Chrono += after.Chrono - before.Chrono
	return status
}
