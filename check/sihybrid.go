package check

import (
	"time"

	"doppel/encode"
	"doppel/prune"
	"doppel/sat"
)

// The hybrid witness for snapshot isolation (DESIGN.md, "Deciding"). A snapshot-isolated
// execution in which a transaction starts right before it commits is a serial step; so
// keeping a transaction whole (its start and commit one node) only adds constraints to
// the split graph, and a solution of the graph where most transactions are whole is a
// snapshot-isolated one. That graph is nearly the serializable one, on which the search
// is fast (the key-order chain orders blocks at once), where the split graph of a
// write-heavy history leaves the search wandering. The transactions split are those an
// anomaly that snapshot isolation allows needs split: a cycle passes through a whole
// transaction by an anti-dependency into it and one out of it (a write skew), and
// splitting it cuts the cycle there. Cycles of edges that hold in every attribution
// are cut before any search; then each bounded search splits the transactions where
// the cycles its acyclicity theory met (conflicts and implications) can be cut, and the
// next search runs on the new view, until one finds a solution or no cycle it met can
// be cut so.

// hybridKnownRounds bounds the rounds of cutting known cycles (each rebuilds the view).
const hybridKnownRounds = 32

// hybridRounds bounds the searches of each stage of the hybrid witness.
const hybridRounds = 8

// hybridStages are the hybrid witness's searches, each with the conflicts of all its
// rounds together: first the depth-first-like search without theory propagation, cheap
// per decision (on a 10K-transaction write skew among keys of two values it decides
// where theory propagation took 13 CPU-s for its decisions' look-ahead), then VSIDS with
// theory propagation, which write-heavy hot keys need (the first leaves 4 of 8
// injected write skews of 200 transactions unknown).
var hybridStages = []solverConfig{
	{heuristic: "static", conflicts: 2000},
	{propagate: true, conflicts: 20000},
}

// cutPoints marks in cut the whole transactions at which cycle (edge ids of v, in
// path order, closing) enters by an anti-dependency and leaves by one; it reports
// whether there was one.
func cutPoints(v *view, cycle []int32, cut []bool) bool {
	found := false
	for i, id := range cycle {
		in, out := &v.edges[cycle[(i+len(cycle)-1)%len(cycle)]], &v.edges[id]
		if x := out.From; in.To == x && !v.isHub(x) && v.merged[x/2] && intoCommit(v, in) && fromStart(v, out) {
			cut[x/2] = true
			found = true
		}
	}
	return found
}

// hybridView returns the split graph of model m with the transactions marked in
// merged whole, after splitting those that cut the cycles of edges that hold in every
// attribution (merged is updated), oriented (the pairs of unobserved writers of a key
// with one of them split); nil when the limits ran out or a known cycle cannot be cut
// (a cycle snapshot isolation forbids too).
func (c *checker) hybridView(m string, merged []bool) *view {
	var scratch bfsScratch
	cut := make([]bool, len(merged))
	for round := 0; ; round++ {
		v := c.siViewMerged(m, false, merged)
		if v == nil || c.budget.out() {
			return nil
		}
		g := newGraph(v.nodes, v.edges, known)
		comps := g.sccs(func(int32) bool { return true }, known)
		if len(comps) == 0 {
			c.orientLazy(v)
			return v
		}
		if round == hybridKnownRounds {
			return nil
		}
		inComp := make([]bool, g.n)
		for _, comp := range comps {
			for _, x := range comp {
				inComp[x] = true
			}
			cycle := g.path(comp[0], comp[0], func(x int32) bool { return inComp[x] }, known, &scratch)
			for _, x := range comp {
				inComp[x] = false
			}
			if cycle == nil || !cutPoints(v, cycle, cut) {
				return nil
			}
		}
		for t, x := range cut {
			if x {
				merged[t], cut[t] = false, false
			}
		}
	}
}

// intoCommit reports whether edge e, into a transaction, goes to its commit in the
// split graph: an anti-dependency, directly or from a hub's half after readers' starts
// (hubR, odd).
func intoCommit(v *view, e *encode.Edge) bool {
	if v.isHub(e.To) {
		return false
	}
	return e.Kind == encode.RW && !v.isHub(e.From) || v.isHub(e.From) && (e.From-v.hubFrom)&1 == 1
}

// fromStart reports whether edge e, out of a transaction, leaves from its start in the
// split graph: an anti-dependency, directly or into a hub's half after readers' starts.
func fromStart(v *view, e *encode.Edge) bool {
	return !v.isHub(e.From) && (e.Kind == encode.RW || e.Kind == encode.StartCommit)
}

// hybridWitness looks for a solution of model m (snapshot isolation, with m's orders)
// on hybrid views, within bounds; true when one was found and verified.
func (c *checker) hybridWitness(m string) bool {
	c.progress("deciding " + m + ": looking for a mostly serial solution")
	merged := make([]bool, len(c.h.Txns))
	cut := make([]bool, len(merged))
	for _, stage := range hybridStages {
		// Each stage from the cycles of known edges only: the cycles a search meets
		// depend on its heuristic, and splitting more than needed weakens the next.
		for t := range merged {
			merged[t] = c.hybridWhole == nil || c.hybridWhole[t]
		}
		spent := int64(0)
		for round := 0; round < hybridRounds && spent < stage.conflicts; round++ {
			if c.budget.out() {
				return false
			}
			v := c.hybridView(m, merged)
			if v == nil {
				return false
			}
			vals, ok := c.witness(v)
			if ok {
				return c.verifyHybrid(m, v, vals)
			}
			n, within := c.budget.limit(stage.conflicts - spent)
			if !within {
				return false
			}
			cfg := stage
			cfg.conflicts = n
			found, before := false, c.res.Stats.Conflicts
			c.onCycle = func(cycle []int32) { found = cutPoints(v, cycle, cut) || found }
			status, _ := c.solveWith(v, vals, cfg)
			c.onCycle = nil
			spent += c.res.Stats.Conflicts - before
			if status == sat.Sat && c.spare != nil {
				vals := solverModel(c.spare)
				switch c.refineUnobserved(v, vals) {
				case ordered:
					return c.verifyHybrid(m, v, vals)
				case refined:
					// The next view has the pairs that overlapped oriented; the
					// merged transactions stay, and the round does not count (the
					// pairs only grow: this ends).
					clear(cut)
					round--
					continue
				}
				return false
			}
			if !found {
				break
			}
			for t, x := range cut {
				if x {
					merged[t], cut[t] = false, false
				}
			}
		}
	}
	return false
}

// verifyHybrid re-executes the start and commit events of a solution vals of the
// hybrid view v with verifySI: the witness counts only if that accepts it.
func (c *checker) verifyHybrid(m string, v *view, vals []bool) bool {
	spec := models[m]
	events := c.hybridEvents(v, vals)
	if events == nil {
		return false
	}
	if err := verifySIStop(c.h, c.p.In, events, spec.process, spec.realtime, c.budget.stop); err != nil {
		if err != errStopped {
			c.res.Stats.ReplayRejected++
		}
		return false
	}
	return true
}

// hybridEvents returns the start and commit events of the committed transactions in a
// topological order of the hybrid view's edges that hold under vals (acyclic: verified
// by solveWith or witness) in which each key's unobserved writers follow one another
// (unobservedOrder; nil when it finds none); a whole transaction starts and commits at
// once.
func (c *checker) hybridEvents(v *view, vals []bool) []siEvent {
	p := c.p
	pos, _ := c.unobservedOrder(v, vals, c.holdsUnder(vals))
	if pos == nil {
		return nil
	}
	order := make([]int32, v.nodes)
	for x, at := range pos {
		order[at] = int32(x)
	}
	var events []siEvent
	for _, x := range order {
		if v.isHub(x) {
			continue
		}
		t := x / 2
		switch p.Commit[t] {
		case encode.NotCommitted:
			continue
		case encode.MayCommit:
			if !vals[p.CommitVar[t]] {
				continue
			}
		}
		switch {
		case v.merged[t] && x&1 == 0:
			events = append(events, siEvent{Txn: t}, siEvent{Txn: t, Commit: true})
		case !v.merged[t]:
			events = append(events, siEvent{Txn: t, Commit: x&1 == 1})
		}
	}
	return events
}

// hybridNarrowRounds bounds the narrowings of hybridNarrowedWitness (each finds the
// cycle of one more anomaly to split, or gives up).
const hybridNarrowRounds = 4

// hybridNarrowedWitness looks (bounded) for a solution of si (snapshot isolation, or
// strong-session snapshot isolation) when the serializable-family narrowing refuted the
// history by a cycle that snapshot isolation allows (serialCuts: a write skew): every
// transaction but those at which such cycles can be cut is kept whole, and the
// narrowing with real time (strong snapshot isolation's orders) runs on that hybrid
// graph, nearly the strict-serializable one, whose windows are nearly as narrow. A
// contradiction there is another such cycle: its cut points are split and the
// narrowing runs again. Within the windows, the hybrid witness starts from the same
// whole transactions. The windows are not sound for si: only a verified solution counts.
func (c *checker) hybridNarrowedWitness(in *encode.Inference, si string) bool {
	if len(c.serialCuts) == 0 || c.budget.out() {
		return false
	}
	whole := make([]bool, len(c.h.Txns))
	for t := range whole {
		whole[t] = true
	}
	for _, t := range c.serialCuts {
		whole[t] = false
	}
	var pr *prune.Result
	for round := 0; ; round++ {
		if round == hybridNarrowRounds || c.budget.out() {
			return false
		}
		c.progress("narrowing for a mostly serial snapshot isolation")
		t0 := time.Now()
		pr = prune.Run(in, prune.Options{Level: prune.Level{Split: true, Process: true, Realtime: true}, Whole: whole,
			Deadline: c.budget.deadline, Stop: c.budget.mem.exceeded, MaxRounds: 3, Work: 300_000_000})
		c.res.Stats.PruneSeconds += time.Since(t0).Seconds()
		if pr.KeyUnsat {
			return false
		}
		if pr.Contradiction == nil {
			break
		}
		if !splitCuts(pr.Contradiction, whole) {
			return false // a cycle that splitting does not cut
		}
	}
	if c.budget.out() || allowedBlocks(pr.Win) > maxWitnessBlocks {
		return false
	}
	return c.witnessWithin(in, si, pr.Win, whole, false)
}

// splitCuts marks not whole the whole transactions at which the narrowing's cycle pc
// enters and leaves by anti-dependencies; it reports whether there was one.
func splitCuts(pc *prune.Contradiction, whole []bool) bool {
	found := false
	for i, st := range pc.Steps {
		next := pc.Steps[(i+1)%len(pc.Steps)]
		if st.Read >= 0 && next.Read >= 0 && st.To == next.From && whole[next.From] {
			whole[next.From] = false
			found = true
		}
	}
	return found
}
