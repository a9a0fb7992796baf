package check

import (
	"time"

	"doppel/encode"
	"doppel/history"
)

// SolverProblemHook, for the external tests, sets a function told, for each problem
// handed to the solver, whether strict serializability was already refuted and whether
// the problem is the strict-serializable view (nil removes it).
func SolverProblemHook(f func(strictRefuted, strictView bool)) {
	if f == nil {
		solveHook = nil
		return
	}
	solveHook = func(c *checker, v *view) {
		strict := c.strictEdges != nil && len(v.edges) > 0 && len(c.strictEdges) > 0 && &v.edges[0] == &c.strictEdges[0]
		f(c.strictRefuted, strict)
	}
}

// SkipLostLeftOut keeps the relaxed witness from trying the history without the lost
// updates' losers (lostLeftOut) while skip holds.
func SkipLostLeftOut(skip bool) { skipLostLeftOut = skip }

// ShareAndReplaysForTests sets every share of the time shareTime gives (0: its own)
// and whether the replays before the narrowing are left out.
func ShareAndReplaysForTests(share time.Duration, noReplays bool) {
	shareOverride, skipReplays = share, noReplays
}

// MergedChainsOrder replays h without the appends its version reads miss and places
// them by mergedChains: tried says the replay without them ran through (and h has
// such appends), order is mergedChains's (nil: none found), err its verification.
func MergedChainsOrder(h *history.History) (tried bool, order []int32, err error) {
	in := encode.InferPerRead(h)
	merged := mergedWriters(h, in)
	if len(merged) == 0 || !perReadClean(in) {
		return false, nil, nil
	}
	h2 := stripMerged(h, in)
	in2 := encode.InferPerRead(h2)
	if !perReadClean(in2) {
		return false, nil, nil
	}
	order2, ok, _ := perReadReplays(h2, in2, nil, true, nil, func() bool { return false })
	if !ok {
		return false, nil, nil
	}
	order = mergedChains(h, in, order2, merged, nil)
	if order != nil {
		_, err = verifyPerReadLists(h, in, order)
	}
	return true, order, err
}

// MergedLNSOrder is MergedChainsOrder with the neighbourhood search instead of the
// chains: tried as there; at is the positions of the order proveMergedLNS verified
// (nil: none found), rejected whether a solver model failed the verification.
func MergedLNSOrder(h *history.History) (tried bool, at []int32, rejected bool) {
	in := encode.InferPerRead(h)
	merged := mergedWriters(h, in)
	if len(merged) == 0 || !perReadClean(in) {
		return false, nil, false
	}
	for t := range h.Txns {
		if h.Txns[t].Status == history.Info && len(in.TxnWriters(int32(t))) > 0 {
			return false, nil, false
		}
	}
	h2 := stripMerged(h, in)
	in2 := encode.InferPerRead(h2)
	if !perReadClean(in2) {
		return false, nil, false
	}
	order2, ok, _ := perReadReplays(h2, in2, nil, true, nil, func() bool { return false })
	if !ok {
		return false, nil, false
	}
	c := &checker{h: h, proven: map[string]bool{}}
	c.budget = newBudget(c.opts, &c.res.Stats.Conflicts)
	at = c.proveMergedLNS(in, order2, merged)
	return true, at, c.res.Stats.ReplayRejected > 0
}

// StrictSearchTurns, for the external tests, bounds the strict search's first run
// (strictFirstWork) to work units and keeps it out of the solver's rounds when off;
// the returned function restores both.
func StrictSearchTurns(work int64, off bool) (restore func()) {
	w, o := strictFirstWork, noStrictTurns
	strictFirstWork, noStrictTurns = work, off
	return func() { strictFirstWork, noStrictTurns = w, o }
}

// StrictChoices, for the external tests, sets the strict search within windows to
// take its :info choices by invoke (byInvoke) or in prio's order, with the search in
// the other order beside it (race) or alone; the returned function restores both.
func StrictChoices(byInvoke, race bool) (restore func()) {
	b, r := noInfoByInvoke, noStrictRace
	noInfoByInvoke, noStrictRace = !byInvoke, !race
	return func() { noInfoByInvoke, noStrictRace = b, r }
}

// StrictInfoHorizon, for the external tests, leaves out the strict search within the
// :info transactions' horizon when off; the returned function restores it.
func StrictInfoHorizon(off bool) (restore func()) {
	o := noInfoHorizon
	noInfoHorizon = off
	return func() { noInfoHorizon = o }
}

// NarrowAhead, for the external tests, runs no narrowing ahead of the strict search
// when off; the returned function restores it.
func NarrowAhead(off bool) (restore func()) {
	o := noNarrowAhead
	noNarrowAhead = off
	return func() { noNarrowAhead = o }
}

// NarrowingsAhead is how many narrowings started ahead of a search are running.
func NarrowingsAhead() int32 { return narrowingsAhead.Load() }

// DeferSIRepairs, for the external tests, runs the unguided snapshot replay's repairs
// in their turn (off) or after the serial attempts where only snapshot models are
// asked (on, the default); the returned function restores it.
func DeferSIRepairs(on bool) (restore func()) {
	o := noDeferSIRepairs
	noDeferSIRepairs = !on
	return func() { noDeferSIRepairs = o }
}

// SnapshotFirstShare, for the external tests, sets the share of their work the first
// snapshot searches get where only snapshot models are asked; the returned function
// restores it.
func SnapshotFirstShare(share int64) (restore func()) {
	o := snapshotFirstShare
	snapshotFirstShare = share
	return func() { snapshotFirstShare = o }
}

// RelaxedGates, for the external tests, leaves the snapshot searches with relaxed
// real-time gates out when off; the returned function restores them.
func RelaxedGates(on bool) (restore func()) {
	o := noRelaxedGates
	noRelaxedGates = !on
	return func() { noRelaxedGates = o }
}
