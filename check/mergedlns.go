package check

import (
	"slices"

	"doppel/encode"
	"doppel/history"
	"doppel/sat"
)

// A large-neighbourhood search for read committed's attribution where the merged
// appends' chains (mergedChains) fail. The base is the read-by-read replay of the
// history without the merged appends (order2). Free: the merged blocks and their
// key's blocks of the merged values from a radius of places before the merged
// transaction's version read on (the surplus block of those values must go past the
// trace, the blocks between move on). Every other writer's window is the places of its
// values within a radius of its base's, and an assumption keeps it at its base's
// place; a failure under assumptions names some in its final conflict, which are
// dropped, until a solution or a failure without assumptions, after which the dropped
// writers' radius grows. A solution within the windows is an attribution of the whole
// history; only an order verifyPerReadLists accepts counts. Off by default
// (SolverOptions.MergedLNS): on the tiny histories of its test it places most of what
// the chains miss, on the 2,000-transaction dup-noop family none of the unknowns.

// lnsRound is one neighbourhood: every writer not free may move among the places of
// its values within radius places of its base's (the merged key's blocks of the
// merged values from radius places before the version read on are free), and the
// round's own conflict bound for all its solver calls.
type lnsRound struct {
	radius    int
	conflicts int64
}

// lnsRounds: the first round's radius and conflicts; each later round widens the
// windows of the writers whose assumptions the last round dropped (lnsGrow times),
// within the same conflicts each.
var lnsFirst = lnsRound{radius: 1, conflicts: 10_000}

const (
	lnsRoundsMax = 6
	lnsGrow      = 4
)

// mergedBase is the attribution of order2 without the merged blocks: per writer its
// block's start (-1: a merged block, not placed), and per key the writers in list order.
type mergedBase struct {
	pos []int32
	seq [][]int32
}

func newMergedBase(in *encode.Inference, order2, merged []int32) *mergedBase {
	b := &mergedBase{pos: make([]int32, len(in.Writers)), seq: make([][]int32, len(in.Keys))}
	skip := make([]bool, len(in.Writers))
	for _, w := range merged {
		skip[w] = true
		b.pos[w] = -1
	}
	at := make([]int32, len(in.Keys))
	for _, t := range order2 {
		for _, w := range in.TxnWriters(t) {
			if skip[w] {
				continue
			}
			k := in.Writers[w].Key
			b.seq[k] = append(b.seq[k], w)
			b.pos[w] = at[k]
			at[k] += in.Writers[w].End - in.Writers[w].Start
		}
	}
	return b
}

// sameIndex returns, per key, the writers of each value list in base order: for
// writer w, same[w] is the list of its key's writers with its values and idx[w] its
// index there.
func (b *mergedBase) sameIndex(in *encode.Inference) (same [][]int32, idx []int32) {
	same = make([][]int32, len(in.Writers))
	idx = make([]int32, len(in.Writers))
	for _, ws := range b.seq {
		var groups [][]int32
		for _, w := range ws {
			g := -1
			for i, gr := range groups {
				if slices.Equal(in.Vals(gr[0]), in.Vals(w)) {
					g = i
					break
				}
			}
			if g < 0 {
				groups = append(groups, nil)
				g = len(groups) - 1
			}
			idx[w] = int32(len(groups[g]))
			groups[g] = append(groups[g], w)
		}
		for _, gr := range groups {
			for _, w := range gr {
				same[w] = gr
			}
		}
	}
	return same, idx
}

// windows returns round r's windows and the writers free in it.
func (b *mergedBase) windows(in *encode.Inference, merged []int32, r lnsRound, rad []int) (*encode.Windows, []bool) {
	same, idx := b.sameIndex(in)
	free := make([]bool, len(in.Writers))
	for _, m := range merged {
		free[m] = true
		k := in.Writers[m].Key
		vals := in.Vals(m)
		// The merged transaction's version read on k: its block belongs near the
		// read's length; from radius places before on, its values' blocks are free.
		l := int32(0)
		for i := range in.Reads {
			if rd := &in.Reads[i]; rd.Version && rd.Txn == in.Writers[m].Txn && rd.Key == k {
				l = rd.Len
			}
		}
		var group []int32
		for _, x := range b.seq[k] {
			if slices.Equal(in.Vals(x), vals) {
				group = same[x]
				break
			}
		}
		center := 0
		for i, x := range group {
			if b.pos[x] < l {
				center = i
			}
		}
		for _, x := range group[max(center-r.radius, 0):] {
			free[x] = true
		}
	}
	win := encode.NewWindows(len(in.Writers))
	win.Allow = make([][]int32, len(in.Writers))
	for w := range in.Writers {
		if free[w] || b.pos[w] < 0 {
			continue
		}
		n := int32(len(in.Keys[in.Writers[w].Key].Trace))
		gr, i := same[w], int(idx[w])
		var allow []int32
		unobserved := false
		for _, x := range gr[max(i-rad[w], 0):min(i+rad[w]+1, len(gr))] {
			if p := b.pos[x]; p < n {
				allow = append(allow, p)
			} else {
				unobserved = true
			}
		}
		if len(allow) == 0 {
			win.Lo[w] = n
			continue
		}
		slices.Sort(allow)
		win.Allow[w] = allow
		win.Lo[w], win.Hi[w] = allow[0], allow[len(allow)-1]
		if unobserved {
			win.Hi[w] = encode.Unbounded
		}
	}
	return win, free
}

// assumptions returns the literals that keep every writer not free at its base's
// place (or unobserved), and per variable the writer it places (-1: none).
func (b *mergedBase) assumptions(p *encode.Problem, free []bool) (lits []sat.Lit, writerOf []int32) {
	in := p.In
	writerOf = make([]int32, p.NumVars)
	for i := range writerOf {
		writerOf[i] = -1
	}
	for k := range p.Plans {
		if p.SegVar == nil || p.SegVar[k] == nil {
			continue
		}
		n := int32(len(in.Keys[k].Trace))
		for i, cd := range p.Plans[k].Cands {
			v := p.SegVar[k][i]
			writerOf[v] = cd.Writer
			if !free[cd.Writer] && b.pos[cd.Writer] == cd.Pos && cd.Pos < n {
				lits = append(lits, sat.PosLit(sat.Var(v)))
			}
		}
		for _, w := range in.Keys[k].Writers {
			if v, ok := p.UnobservedVar(int32(k), w); ok {
				writerOf[v] = w
				if !free[w] && b.pos[w] >= n {
					lits = append(lits, sat.PosLit(sat.Var(v)))
				}
			}
		}
	}
	return lits, writerOf
}

// proveMergedLNS runs the rounds from order2 (a verified read-by-read order of
// stripMerged(h)) and returns the positions of a verified order of h, or nil. Within
// a round one solver answers under assumptions that keep the writers at their base's
// places; each failure's final conflict names the assumptions to drop (those of its
// writers), until a solution or a failure without assumptions (the round's windows
// hold none: the next round widens them). The checker's problem state is restored
// afterwards: the windowed problems are its own.
func (c *checker) proveMergedLNS(in *encode.Inference, order2, merged []int32) []int32 {
	defer c.keepProblem()()
	base := newMergedBase(in, order2, merged)
	nFindings := len(in.Findings)
	defer func() { in.Findings = in.Findings[:nFindings] }()
	nativeTiling := !c.opts.Solver.ClausalTiling && c.opts.Solver.ExportPrefix == ""
	r := lnsFirst
	rad := make([]int, len(in.Writers))
	for w := range rad {
		rad[w] = r.radius
	}
	for round := 0; round < lnsRoundsMax; round++ {
		if c.budget.out() {
			return nil
		}
		c.progress("placing the merged appends within a neighbourhood")
		win, free := base.windows(in, merged, r, rad)
		c.resetProblem()
		c.p = encode.BuildWith(in, encode.BuildOptions{Win: win, Stop: c.budget.stop, NativeTiling: nativeTiling})
		in.Findings = in.Findings[:nFindings]
		if c.p == nil {
			return nil
		}
		if len(c.p.UnsatKeys) > 0 || len(c.p.WindowUnsatKeys) > 0 {
			continue
		}
		c.addOrderEdges(nil)
		v := c.serialView("read-committed")
		assume, writerOf := base.assumptions(c.p, free)
		dropped := map[int32]bool{}
		guess := make([]bool, c.p.NumVars+v.extraVars)
		for _, l := range assume {
			guess[l.Var()] = true
		}
		n, ok := c.budget.limit(r.conflicts)
		if !ok {
			return nil
		}
		run := solveLettingGo(n, assume, writerOf, func(core []int32) []int32 {
			for _, w := range core {
				dropped[w] = true
			}
			return core
		}, nil)
		status, _ := c.solveWith(v, guess, solverConfig{propagate: true, conflicts: n, run: run})
		if status != sat.Sat || c.spare == nil {
			// The writers the cores named get wider windows.
			for w := range dropped {
				rad[w] *= lnsGrow
			}
			continue
		}
		vals := solverModel(c.spare)
		holds := c.holdsUnder(vals)
		order := make([]int32, 0, len(c.h.Txns))
		for _, t := range newGraph(v.nodes, v.edges, holds).reversePostorder(holds) {
			if t < c.p.HubBase && c.h.Txns[t].Status != history.Fail {
				order = append(order, t)
			}
		}
		at, err := verifyPerReadLists(c.h, in, order)
		if err != nil {
			c.res.Stats.ReplayRejected++ // the solver's model disagrees with the verification: a bug
			return nil
		}
		return at
	}
	return nil
}

// keepProblem saves the checker's problem state for a search on problems of its own
// (the neighbourhood searches); the returned function restores it.
func (c *checker) keepProblem() (restore func()) {
	p, edges, siGuards, varRefs, varRefsView := c.p, c.edges, c.siGuards, c.varRefs, c.varRefsView
	nData, nDataProcess, dataCyclic := c.nData, c.nDataProcess, c.dataCyclic
	strictEdges, strictTried, strictSat := c.strictEdges, c.strictTried, c.strictSat
	staticOrder, tiling, counting, matching := c.staticOrder, c.tiling, c.counting, c.matching
	return func() {
		c.p, c.edges, c.siGuards, c.varRefs, c.varRefsView = p, edges, siGuards, varRefs, varRefsView
		c.nData, c.nDataProcess, c.dataCyclic = nData, nDataProcess, dataCyclic
		c.strictEdges, c.strictTried, c.strictSat = strictEdges, strictTried, strictSat
		c.staticOrder, c.tiling, c.counting, c.matching = staticOrder, tiling, counting, matching
		c.spare = nil
	}
}

// solveLettingGo returns a solver run (solverConfig.run) that solves under assume and,
// after each failure under assumptions, lets go the assumptions of the writers pick
// chooses among those of the final conflict (writerOf: the writer each variable
// places, -1 none), until a solution, a failure with nothing let go (Unknown), or n
// conflicts in all. Unsat means the problem itself has no solution: a failure with no
// assumption left, or whose final conflict names none.
//
// Each writer's assumption goes to the solver level of its group (group: 0 and up,
// nil: all in 0; sat.SolveLevels), and the levels before the first group that changed
// stand from call to call: at 10,000 transactions, making 7,700 assumptions again cost
// 0.3 s a call, more than the call's own conflicts. pick lets go the writers nearest to
// where the problem is, so groups from the farthest to the nearest keep most levels.
func solveLettingGo(n int64, assume []sat.Lit, writerOf []int32, pick func(core []int32) []int32, group func(w int32) int) func(*sat.Solver) sat.Status {
	return func(s *sat.Solver) sat.Status {
		start := s.Stats().Conflicts
		var groups [][]sat.Lit
		for {
			left := n - (s.Stats().Conflicts - start)
			if left <= 0 {
				return sat.Unknown
			}
			s.SetConflictLimit(left)
			for i := range groups {
				groups[i] = groups[i][:0]
			}
			for _, l := range assume {
				g := 0
				if group != nil {
					g = group(writerOf[l.Var()])
				}
				for len(groups) <= g {
					groups = append(groups, nil)
				}
				groups[g] = append(groups[g], l)
			}
			st := s.SolveLevels(groups)
			if st != sat.Unsat || len(assume) == 0 {
				return st
			}
			var core []int32
			for _, l := range s.FinalConflict() {
				if w := writerOf[l.Var()]; w >= 0 { // one assumption per writer
					core = append(core, w)
				}
			}
			if len(core) == 0 {
				return sat.Unsat
			}
			drop := map[int32]bool{}
			for _, w := range pick(core) {
				drop[w] = true
			}
			rest := assume[:0]
			for _, l := range assume {
				if !drop[writerOf[l.Var()]] {
					rest = append(rest, l)
				}
			}
			if len(rest) == len(assume) {
				return sat.Unknown
			}
			assume = rest
		}
	}
}
