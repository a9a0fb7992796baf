package check

import (
	"math/bits"
	"slices"

	"doppel/encode"
	"doppel/sat"
)

// A large-neighbourhood search around the local search's best serial order. Where the
// local search gives up on a history whose keys hold few values (family E: snapshot-
// behaviour histories checked as serializable), its best order mostly leaves one to
// three reads unsatisfied. The order is an attribution (each writer takes the next
// places of its key: mergedBase) that is right almost everywhere; the wrong choices
// among writers of equal values lie before the broken reads, sometimes hundreds of
// transactions before them. So the neighbourhood is found by the solver, not fixed in
// advance: on the model's narrowed problem, every writer more than lnsBand places away
// from a broken transaction (an unsatisfied read, a block of the wrong values) is
// assumed at its base's place; a failure under assumptions names some of them in its
// final conflict, and the lnsDropMax nearest to a broken transaction are let go, until
// a solution, a failure without assumptions, or the conflict bound. Keeping most
// writers fixed is what makes it fast: with a band of 16, 64 and 256 places all others
// fixed outright, family E 1K seeds 5, 11 and 12 had no solution within 64 and were
// unknown at 256 (the solver on 5-12K variables); letting go every writer a final
// conflict names let go 300-600 of 800 (the acyclicity theory's conflicts are long),
// and the search was as hard as the whole. It only proves: a solution is a serial
// order for verifySerial to accept.

// lnsBand: writers of transactions within this many places of a broken one start free.
const lnsBand = 16

// lnsOff (tests) leaves the neighbourhood search out.
var lnsOff bool

// lnsBandOverride and lnsLevelUnitOverride, when not negative (tests), are the band
// and the level unit.
var lnsBandOverride, lnsLevelUnitOverride = int32(-1), int32(-1)

// lnsLevels: the assumed writers are put in this many solver levels by their distance
// from the nearest broken transaction, the farthest first: less than twice the unit
// (twice the band) places in the last level, less than four times in the one before,
// and so on. The final conflicts let the nearest go first, so the levels of the
// farther ones stand from call to call (sat.SolveLevels): at 10,000 transactions a
// call took 60 ms with two levels (kept beyond 256 places, and the rest), most of it
// making the 2,900 assumptions of the second again.
const lnsLevels = 8

// lnsDropMax: the assumptions a final conflict lets go at a time, nearest first.
const lnsDropMax = 8

// lnsMaxBroken: above this many unsatisfied reads in the best order, no neighbourhood
// search (hot keys: the local search stays at hundreds).
const lnsMaxBroken = 8

// lnsFirstConflicts bounds the neighbourhood search after the short local search before
// the model's first round; lnsRoundConflicts after a round's, where the round's local
// search time mostly ends it first (family E 1K seeds 18 and 26 were found at 28 s,
// unknown at 40 s with 20,000).
const (
	lnsFirstConflicts = 1_000
	lnsRoundConflicts = 100_000
)

// lnsSearched is a neighbourhood search's order and the writers its final conflicts
// let go. A search around the same order (a later round whose local search found no
// better one) starts with those free: it goes on where the last one stopped instead of
// letting them go again, conflict by conflict (family E 10K: the first 2 s of each
// round's search again).
type lnsSearched struct {
	order []int32
	freed []int32
}

// brokenRanks returns the places in order (the local search's best) of the
// transactions whose reads do not see what the base installs before them, or whose
// block takes places of other values.
func brokenRanks(in *encode.Inference, base *mergedBase, rank []int32) []int32 {
	var broken []int32
	for k := range in.Keys {
		trace := in.Keys[k].Trace
		seq := base.seq[k]
		ends := make([]int32, len(seq)) // installed after each writer of seq
		wrongFrom := int32(len(trace))  // the first place of a block of the wrong values
		at := int32(0)
		for i, w := range seq {
			vals := in.Vals(w)
			for j, v := range vals {
				if p := at + int32(j); p < int32(len(trace)) && trace[p] != v {
					wrongFrom = min(wrongFrom, p)
					broken = append(broken, rank[in.Writers[w].Txn])
					break
				}
			}
			at += int32(len(vals))
			ends[i] = at
		}
		for _, r := range in.Keys[k].Reads {
			rd := &in.Reads[r]
			q := rank[rd.Txn]
			if q < 0 || rd.Version {
				continue
			}
			// Installed by the writers of other transactions before it.
			i, _ := slices.BinarySearchFunc(seq, q, func(w int32, q int32) int { return int(rank[in.Writers[w].Txn] - q) })
			installed := int32(0)
			if i > 0 {
				installed = ends[i-1]
			}
			if installed != rd.Len-rd.Own || wrongFrom < rd.Len {
				broken = append(broken, q)
			}
		}
	}
	slices.Sort(broken)
	return slices.Compact(broken)
}

// proveLocalLNS reports Valid when a neighbourhood of order (the local search's best,
// not a serial order) holds a serial order of c.h that verifySerial accepts; such an
// order proves every model without process or real-time order (c.proven). m is the
// model whose narrowed problem is searched. It reports Invalid when that problem itself
// has no solution: the assumptions the solver learned its way around were all let go
// and it failed without them (family E 10K seed 1, which the model's own search left
// unknown at 150 s: 148 conflicts here); the refutation is then named as the model's
// own search names one (nameRefutation). The checker's problem state is restored
// afterwards.
func (c *checker) proveLocalLNS(in *encode.Inference, order []int32, m string, conflicts int64) Validity {
	defer c.keepProblem()()
	// The deferred snapshot replays run before the model's first solver run, this one
	// too: under a small conflict limit this search would otherwise spend it first.
	if c.beforeSerialSearch != nil && !c.strictSearchFirst(m) {
		c.runBeforeSerialSearch()
	}
	if c.proven[m] {
		return Valid
	}
	if c.budget.out() {
		return Unknown
	}
	var narrowed *encode.Windows
	if pr := c.narrowing(in, m); pr.Contradiction == nil && !pr.KeyUnsat {
		narrowed = pr.Win
	}
	base := newMergedBase(in, order, nil)
	rank := make([]int32, len(c.h.Txns))
	for i := range rank {
		rank[i] = -1
	}
	for i, t := range order {
		rank[t] = int32(i)
	}
	broken := brokenRanks(in, base, rank)
	nFindings := len(in.Findings)
	defer func() { in.Findings = in.Findings[:nFindings] }()
	nativeTiling := !c.opts.Solver.ClausalTiling && c.opts.Solver.ExportPrefix == ""
	band := int32(lnsBand)
	if lnsBandOverride >= 0 {
		band = lnsBandOverride
	}
	unit := 2 * max(band, 1)
	if lnsLevelUnitOverride >= 0 {
		unit = lnsLevelUnitOverride
	}
	free := make([]bool, len(in.Writers))
	if !slices.Equal(order, c.lnsLast.order) {
		c.lnsLast = lnsSearched{order: order}
	}
	for _, w := range c.lnsLast.freed {
		free[w] = true
	}
	for w := range in.Writers {
		q := rank[in.Writers[w].Txn]
		i, _ := slices.BinarySearch(broken, q-band)
		if q < 0 || i < len(broken) && broken[i] <= q+band {
			free[w] = true
		}
	}
	if c.budget.out() {
		return Unknown
	}
	c.progress("searching the neighbourhood of the local search's best order")
	c.resetProblem()
	c.p = encode.BuildWith(in, encode.BuildOptions{Win: narrowed, Stop: c.budget.stop, NativeTiling: nativeTiling})
	in.Findings = in.Findings[:nFindings]
	if c.p == nil || len(c.p.UnsatKeys) > 0 || len(c.p.WindowUnsatKeys) > 0 {
		return Unknown // the model's own search reports these
	}
	c.addOrderEdges(nil)
	v := c.serialView(m)
	// Every writer's base place is a phase; those of the writers not free are assumed.
	all, writerOf := base.assumptions(c.p, make([]bool, len(in.Writers)))
	guess := make([]bool, c.p.NumVars+v.extraVars)
	var assume []sat.Lit
	for _, l := range all {
		guess[l.Var()] = true
		if !free[writerOf[l.Var()]] {
			assume = append(assume, l)
		}
	}
	n, ok := c.budget.limit(conflicts)
	if !ok {
		return Unknown
	}
	// How far a writer's transaction lies from the nearest broken one, in places.
	dist := func(w int32) int32 {
		q := rank[in.Writers[w].Txn]
		i, _ := slices.BinarySearch(broken, q)
		d := int32(1 << 30)
		if i < len(broken) {
			d = broken[i] - q
		}
		if i > 0 {
			d = min(d, q-broken[i-1])
		}
		return d
	}
	// The nearest to a broken transaction first, a few at a time: the neighbourhood
	// grows where the conflicts are.
	run := solveLettingGo(n, assume, writerOf, func(core []int32) []int32 {
		slices.SortFunc(core, func(a, b int32) int { return int(dist(a) - dist(b)) })
		core = core[:min(len(core), lnsDropMax)]
		c.lnsLast.freed = append(c.lnsLast.freed, core...)
		return core
	}, func(w int32) int {
		return lnsLevels - 1 - min(lnsLevels-1, bits.Len32(uint32(dist(w)/unit)))
	})
	status, _ := c.solveWith(v, guess, solverConfig{propagate: true, conflicts: n, run: run})
	switch {
	case status == sat.Unsat:
		c.nameRefutation(in, m)
		return Invalid
	case status != sat.Sat || c.spare == nil:
		return Unknown
	case c.acceptLocalOrder(in, c.modelOrder(solverModel(c.spare), v)):
		return Valid
	}
	return Unknown
}
