package sat

import (
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"doppel/internal/slicesx"
)

// Reasons of assigned variables: a clause reference (>= 0), or one of these.
const (
	reasonNone   int32 = -1 // decision, assumption or level-0 unit
	reasonTheory int32 = -2 // implied by the theory; ask Theory.Explain when needed
)

// watcher is an entry of a watch list: the clause, and a blocker literal of it; if the
// blocker is true the clause is satisfied and need not be visited. For a binary clause cref
// is stored complemented (^cr < 0) and the blocker is the other literal, so propagation
// never reads the clause itself.
type watcher struct {
	cref    int32
	blocker Lit
}

// clauseRef returns the clause reference of w, binary or not.
func (w watcher) clauseRef() int32 {
	if w.cref < 0 {
		return ^w.cref
	}
	return w.cref
}

// Solver is a CDCL SAT solver. It is not safe for concurrent use, except Interrupt.
type Solver struct {
	// Clause database.
	arena      []Lit // all clauses, see arena.go
	wasted     int   // arena entries of deleted clauses
	numProblem int
	learnts    []int32
	watches    [][]watcher // watches[l]: clauses watching l.Not(), visited when l becomes true

	// Original clauses as given to AddClause, for WriteDIMACS.
	origLits []Lit
	origEnd  []int32

	// Assignment, indexed by variable.
	assigns  []LBool // value of the positive literal
	level    []int32
	reason   []int32
	trailPos []int32
	trail    []Lit
	trailLim []int32 // trail length at the start of each decision level
	qhead    int     // next trail position for Boolean propagation

	// Branching.
	activity   []float64
	varInc     float64
	order      varHeap
	polarity   []bool // saved phase: true means the negative literal
	staticNext Var    // lowest possibly-unassigned rank for the "static" heuristic
	// staticOrder lists the variables in the order the "static" heuristic decides them
	// and staticRank is its inverse; nil: variable order.
	staticOrder, staticRank []Var

	// Conflict analysis scratch.
	seen        []uint8
	levelStamp  []uint32 // per level, for LBD counting
	stamp       uint32
	learntBuf   []Lit
	toClear     []Lit
	stack       []Lit
	theoryConfl []Lit

	// Theory and its lazily fetched explanations (per variable, valid while assigned).
	theory      Theory
	explanation [][]Lit

	claInc float64
	ok     bool // false once the clauses are UNSAT at level 0

	// Assumptions of the current Solve call, and the final conflict of the last one.
	// They take assumeLevels decision levels (0, 1, or one per group for SolveLevels):
	// level i+1 holds assumptions[assumeEnds[i-1]:assumeEnds[i]] (from 0 for i = 0).
	// levelsDone: the assumption levels complete and propagated on the trail. kept: the
	// groups of the levels a SolveLevels call left standing.
	assumptions   []Lit
	assumeLevels  int
	assumeEnds    []int
	levelsDone    int
	kept          [][]Lit
	finalConflict []Lit
	model         []LBool

	// Restarts: glucose-style recent LBDs against the global average, with blocking.
	lbdQueue     []int32
	lbdQueueHead int
	lbdQueueSum  int64
	lbdQueueLen  int
	lbdTotal     int64
	trailQueue   []int32
	trailQHead   int
	trailQSum    int64
	trailQLen    int
	lubyIndex    int

	nextReduce   int64
	reduceInterv int64

	opts          Options
	conflictLimit int64
	decisionLimit int64 // per Solve call, 0: none
	startDecision int64 // decisions when the running Solve began
	deadline      time.Time
	interrupted   atomic.Bool
	stats         Stats
}

// New returns an empty solver with DefaultOptions.
func New() *Solver {
	s := &Solver{varInc: 1, claInc: 1, ok: true}
	s.order.act = &s.activity
	s.levelStamp = []uint32{0}
	s.SetOptions(DefaultOptions())
	return s
}

// SetOptions replaces the search options (see Options for the defaults of zero fields).
func (s *Solver) SetOptions(o Options) {
	if o.Heuristic == "" {
		o.Heuristic = "vsids"
	}
	if o.Restarts == "" {
		o.Restarts = "glucose"
	}
	if o.VarDecay <= 0 || o.VarDecay >= 1 {
		o.VarDecay = 0.95
	}
	if o.LubyUnit <= 0 {
		o.LubyUnit = 100
	}
	if o.ReduceFirst <= 0 {
		o.ReduceFirst = 2000
	}
	if o.ReduceInc <= 0 {
		o.ReduceInc = 300
	}
	if o.ChronoLevels == 0 {
		o.ChronoLevels = 100
	}
	s.opts = o
	s.reduceInterv = o.ReduceFirst
	s.nextReduce = s.stats.Conflicts + o.ReduceFirst
}

// NewVar adds a variable and returns it.
func (s *Solver) NewVar() Var {
	v := Var(len(s.assigns))
	s.assigns = append(s.assigns, LUndef)
	s.level = append(s.level, 0)
	s.reason = append(s.reason, reasonNone)
	s.trailPos = append(s.trailPos, 0)
	s.activity = append(s.activity, 0)
	s.polarity = append(s.polarity, true)
	s.seen = append(s.seen, 0)
	s.explanation = append(s.explanation, nil)
	if n := len(s.watches); n+2 <= cap(s.watches) {
		// A recycled solver's watch lists: emptied, their storage kept.
		s.watches = s.watches[:n+2]
		s.watches[n], s.watches[n+1] = s.watches[n][:0], s.watches[n+1][:0]
	} else {
		s.watches = append(s.watches, nil, nil)
	}
	s.levelStamp = append(s.levelStamp, 0)
	s.order.grow(len(s.assigns))
	s.order.insert(v)
	return v
}

// Reserve sizes the solver's storage for vars variables and clauses problem clauses of
// lits literals in all, before they are added. It changes nothing else: without it the
// slices grow by doubling, and on a problem of millions of variables the copies (into
// fresh memory, each page faulted in) took half of the solver's construction.
func (s *Solver) Reserve(vars, clauses, lits int) {
	n := len(s.assigns) + vars
	s.assigns = slicesx.Reserve(s.assigns, vars)
	s.level = slicesx.Reserve(s.level, vars)
	s.reason = slicesx.Reserve(s.reason, vars)
	s.trailPos = slicesx.Reserve(s.trailPos, vars)
	s.activity = slicesx.Reserve(s.activity, vars)
	s.polarity = slicesx.Reserve(s.polarity, vars)
	s.seen = slicesx.Reserve(s.seen, vars)
	s.explanation = slicesx.Reserve(s.explanation, vars)
	s.watches = slicesx.Reserve(s.watches, 2*vars)
	s.trail = slicesx.Reserve(s.trail, n-len(s.trail))
	s.order.heap = slicesx.Reserve(s.order.heap, vars)
	s.order.index = slicesx.Reserve(s.order.index, n-len(s.order.index))
	s.arena = slicesx.Reserve(s.arena, lits+clauseHeader*clauses)
	s.origLits = slicesx.Reserve(s.origLits, lits)
	s.origEnd = slicesx.Reserve(s.origEnd, clauses)
}

// Recycle returns an empty solver, as New, that takes over s's storage (emptied): the
// next problem's variables and clauses are written over the memory s used, rather than
// into fresh memory (on problems of millions of variables, faulting in and zeroing
// fresh pages costs more than the search). s must not be used afterwards.
func (s *Solver) Recycle() *Solver {
	r := New()
	r.assigns, r.level, r.reason, r.trailPos = s.assigns[:0], s.level[:0], s.reason[:0], s.trailPos[:0]
	r.activity, r.polarity, r.seen = s.activity[:0], s.polarity[:0], s.seen[:0]
	clear(s.explanation)
	r.explanation = s.explanation[:0]
	r.watches = s.watches[:0]
	r.trail = s.trail[:0]
	r.order.heap, r.order.index = s.order.heap[:0], s.order.index[:0]
	r.arena, r.origLits, r.origEnd = s.arena[:0], s.origLits[:0], s.origEnd[:0]
	r.learnts = s.learnts[:0]
	*s = Solver{}
	return r
}

// NumVars returns the number of variables.
func (s *Solver) NumVars() int { return len(s.assigns) }

// NumClauses returns the number of problem clauses kept after level-0 simplification.
func (s *Solver) NumClauses() int { return s.numProblem }

// NumLearnts returns the number of learned clauses currently kept.
func (s *Solver) NumLearnts() int { return len(s.learnts) }

// SetTheory attaches a theory; it sees the whole trail on its first Propagate.
func (s *Solver) SetTheory(t Theory) { s.dropKept(); s.theory = t }

// Theory returns the attached theory, or nil.
func (s *Solver) Theory() Theory { return s.theory }

// SetStaticOrder sets the order in which the "static" heuristic decides variables: a
// permutation of all of them (nil: variable order). Call it after the last NewVar.
func (s *Solver) SetStaticOrder(order []Var) {
	if order == nil {
		s.staticOrder, s.staticRank = nil, nil
		return
	}
	if len(order) != len(s.assigns) {
		panic("sat: static order is not a permutation of the variables")
	}
	s.staticOrder = order
	s.staticRank = make([]Var, len(order))
	for r, v := range order {
		s.staticRank[v] = Var(r)
	}
	s.staticNext = 0
}

// SetConflictLimit bounds the conflicts of each Solve call; 0 means no bound.
func (s *Solver) SetConflictLimit(n int64) { s.conflictLimit = n }

// SetDecisionLimit bounds the decisions of each Solve call; 0 means no bound. A search
// can make thousands of decisions per conflict (each with its propagation), where a
// conflict bound alone says little about the time it takes.
func (s *Solver) SetDecisionLimit(n int64) { s.decisionLimit = n }

// SetDeadline makes Solve return Unknown after t; the zero time means no deadline.
func (s *Solver) SetDeadline(t time.Time) { s.deadline = t }

// Interrupt makes the running Solve (or the next one, if none is running) return Unknown
// soon. Safe to call from any goroutine.
func (s *Solver) Interrupt() { s.interrupted.Store(true) }

// OutOfTime reports whether the deadline has passed or Solve was interrupted. A theory
// whose propagation can run long (a first propagation over millions of edges) asks it
// now and then, and on true calls Interrupt and returns: Solve then stops with Unknown
// at its next decision.
func (s *Solver) OutOfTime() bool {
	return s.interrupted.Load() || !s.deadline.IsZero() && time.Now().After(s.deadline)
}

// Stats returns the work counters.
func (s *Solver) Stats() Stats { return s.stats }

// Value returns the current value of l (during search: the partial assignment).
func (s *Solver) Value(l Lit) LBool {
	v := s.assigns[l>>1]
	if l&1 == 1 {
		return -v
	}
	return v
}

// ModelValue returns the value of l in the model found by the last Solve that returned Sat.
func (s *Solver) ModelValue(l Lit) bool {
	v := l.Var()
	if int(v) >= len(s.model) {
		return false
	}
	return s.model[v] == LTrue != l.IsNeg()
}

// Model returns the last model, indexed by variable (true means the variable is true).
func (s *Solver) Model() []bool {
	m := make([]bool, len(s.model))
	for i, b := range s.model {
		m[i] = b == LTrue
	}
	return m
}

// Trail returns the assigned literals in assignment order. Do not modify it.
func (s *Solver) Trail() []Lit { return s.trail }

// DecisionLevel returns the current decision level (0 outside search).
func (s *Solver) DecisionLevel() int { return len(s.trailLim) }

// Level returns the decision level at which v was assigned (meaningful only if assigned).
func (s *Solver) Level(v Var) int { return int(s.level[v]) }

// FinalConflict returns, after Solve returned Unsat under assumptions, a clause made of
// negated assumptions that the formula implies (empty if the formula itself is UNSAT).
func (s *Solver) FinalConflict() []Lit { return append([]Lit(nil), s.finalConflict...) }

// Imply assigns l at the current level on behalf of the theory (reason asked later through
// Explain). It returns false if l is already false, true otherwise.
func (s *Solver) Imply(l Lit) bool {
	switch s.Value(l) {
	case LTrue:
		return true
	case LFalse:
		return false
	}
	s.stats.TheoryPropagations++
	s.explanation[l.Var()] = nil
	s.enqueue(l, reasonTheory)
	return true
}

func (s *Solver) enqueue(l Lit, reason int32) { s.enqueueAt(l, reason, int32(len(s.trailLim))) }

// enqueueAt assigns l at decision level lvl, which is below the current one when the
// trail is out of level order (after chronological backtracking, see cancelUntil).
func (s *Solver) enqueueAt(l Lit, reason int32, lvl int32) {
	v := l.Var()
	if l.IsNeg() {
		s.assigns[v] = LFalse
	} else {
		s.assigns[v] = LTrue
	}
	s.level[v] = lvl
	s.reason[v] = reason
	s.trailPos[v] = int32(len(s.trail))
	s.trail = append(s.trail, l)
}

// AddClause adds a clause at decision level 0 (copying lits; new variables are created as
// needed). It returns false if the formula is now trivially UNSAT.
func (s *Solver) AddClause(lits ...Lit) bool {
	s.dropKept()
	if len(s.trailLim) != 0 {
		panic("sat: AddClause called during search")
	}
	for _, l := range lits {
		if l < 0 {
			panic(fmt.Sprintf("sat: AddClause with invalid literal %d", int32(l)))
		}
		for int(l.Var()) >= len(s.assigns) {
			s.NewVar()
		}
	}
	s.origLits = append(s.origLits, lits...)
	s.origEnd = append(s.origEnd, int32(len(s.origLits)))
	if !s.ok {
		return false
	}
	// Simplify at level 0: drop false literals and duplicates; skip satisfied clauses and
	// tautologies. seen marks literals already kept (1: positive, 2: negative).
	c := s.learntBuf[:0]
	satisfied := false
	for _, l := range lits {
		v := l.Var()
		mark := uint8(1) << (l & 1)
		if s.Value(l) == LTrue || s.seen[v]&(mark^3) != 0 {
			satisfied = true
			break
		}
		if s.Value(l) == LFalse || s.seen[v]&mark != 0 {
			continue
		}
		s.seen[v] |= mark
		c = append(c, l)
	}
	for _, l := range lits {
		s.seen[l.Var()] = 0
	}
	s.learntBuf = c[:0]
	switch {
	case satisfied:
		return true
	case len(c) == 0:
		s.ok = false
		return false
	case len(c) == 1:
		s.enqueue(c[0], reasonNone)
		if s.propagate() >= 0 {
			s.ok = false
		}
		return s.ok
	}
	cr := s.newClause(c, false, 0)
	s.attach(cr)
	return true
}

func (s *Solver) attach(cr int32) {
	lits := s.lits(cr)
	wr := cr
	if len(lits) == 2 {
		wr = ^cr
	}
	s.watches[lits[0].Not()] = append(s.watches[lits[0].Not()], watcher{wr, lits[1]})
	s.watches[lits[1].Not()] = append(s.watches[lits[1].Not()], watcher{wr, lits[0]})
}

// propagate runs Boolean constraint propagation over the trail from qhead. It returns the
// conflicting clause, or -1.
func (s *Solver) propagate() int32 {
	confl := int32(-1)
	assigns := s.assigns
	// value is Value without the method call; LFalse is -LTrue, so negation flips the sign.
	value := func(l Lit) LBool {
		v := assigns[l>>1]
		if l&1 == 1 {
			return -v
		}
		return v
	}
	for s.qhead < len(s.trail) {
		p := s.trail[s.qhead]
		s.qhead++
		s.stats.Propagations++
		falseLit := p.Not()
		ws := s.watches[p]
		i, j := 0, 0
		for i < len(ws) {
			w := ws[i]
			i++
			bv := value(w.blocker)
			if bv == LTrue {
				ws[j] = w
				j++
				continue
			}
			if w.cref < 0 { // binary clause: the blocker is the other literal
				ws[j] = w
				j++
				if bv == LFalse {
					confl = ^w.cref
					s.qhead = len(s.trail)
					j += copy(ws[j:], ws[i:])
					i = len(ws)
				} else {
					// Implied at the level of the literal that falsified the clause, which
					// is below the current one while kept literals are propagated again.
					s.enqueueAt(w.blocker, ^w.cref, s.level[p.Var()])
				}
				continue
			}
			lits := s.lits(w.cref)
			if lits[0] == falseLit {
				lits[0], lits[1] = lits[1], falseLit
			}
			first := lits[0]
			nw := watcher{w.cref, first}
			if first != w.blocker && value(first) == LTrue {
				ws[j] = nw
				j++
				continue
			}
			// Look for a new literal to watch instead of falseLit.
			moved := false
			for k := 2; k < len(lits); k++ {
				if value(lits[k]) != LFalse {
					lits[1], lits[k] = lits[k], falseLit
					s.watches[lits[1].Not()] = append(s.watches[lits[1].Not()], nw)
					moved = true
					break
				}
			}
			if moved {
				continue
			}
			// The clause is unit or conflicting under the assignment.
			ws[j] = nw
			j++
			if value(first) == LFalse {
				confl = w.cref
				s.qhead = len(s.trail)
				j += copy(ws[j:], ws[i:])
				i = len(ws)
			} else {
				// Implied at the highest level of the clause's false literals: the
				// current one, unless p is a kept literal propagated again.
				lvl := s.level[p.Var()]
				if lvl < int32(len(s.trailLim)) {
					for _, q := range lits[2:] {
						lvl = max(lvl, s.level[q.Var()])
					}
				}
				s.enqueueAt(first, w.cref, lvl)
			}
		}
		s.watches[p] = ws[:j]
	}
	return confl
}

// propagateAll alternates Boolean propagation and the theory until neither assigns anything.
// It returns a Boolean conflict (clause reference) or a theory conflict (copied into
// s.theoryConfl, returned with cref -1), or (-1, nil).
func (s *Solver) propagateAll() (int32, []Lit) {
	for {
		if cr := s.propagate(); cr >= 0 {
			return cr, nil
		}
		if s.theory == nil {
			return -1, nil
		}
		before := len(s.trail)
		if tc := s.theory.Propagate(s); tc != nil {
			// Keep the copy non-nil: an empty conflict (the theory is unsatisfiable
			// whatever the assignment) must still read as a conflict.
			s.theoryConfl = append(s.theoryConfl[:0], tc...)
			if s.theoryConfl == nil {
				s.theoryConfl = []Lit{}
			}
			for _, l := range s.theoryConfl {
				if l < 0 || int(l.Var()) >= len(s.assigns) || s.Value(l) != LFalse {
					panic(fmt.Sprintf("sat: theory conflict clause %v has literal %v that is not false", s.theoryConfl, l))
				}
			}
			return -1, s.theoryConfl
		}
		if len(s.trail) == before {
			return -1, nil
		}
	}
}

// reasonLits returns the reason clause of the assigned variable v (which contains v's
// literal; callers skip it). A theory reason is fetched from Explain once and cached.
func (s *Solver) reasonLits(v Var) []Lit {
	r := s.reason[v]
	if r >= 0 {
		return s.lits(r)
	}
	if r != reasonTheory {
		return nil
	}
	if e := s.explanation[v]; e != nil {
		return e
	}
	l := PosLit(v)
	if s.assigns[v] == LFalse {
		l = NegLit(v)
	}
	e := append([]Lit(nil), s.theory.Explain(l)...)
	found := false
	for _, q := range e {
		if q == l {
			found = true
			continue
		}
		if q < 0 || int(q.Var()) >= len(s.assigns) || s.Value(q) != LFalse || s.trailPos[q.Var()] > s.trailPos[v] {
			panic(fmt.Sprintf("sat: theory explanation %v of %v has literal %v that was not false before it", e, l, q))
		}
	}
	if !found {
		panic(fmt.Sprintf("sat: theory explanation %v does not contain the implied literal %v", e, l))
	}
	s.explanation[v] = e
	return e
}

func (s *Solver) newDecisionLevel() { s.trailLim = append(s.trailLim, int32(len(s.trail))) }

// cancelUntil backtracks to decision level lvl, saving phases and telling the theory.
// After chronological backtracking the trail is not in level order: literals of levels
// up to lvl may follow the start of level lvl+1. They stay assigned, moved down in
// their order, and are propagated again (the theory sees them as new trail literals);
// a theory's implied literal among them keeps its explanation, fetched before the
// theory is told to forget.
func (s *Solver) cancelUntil(lvl int) {
	if len(s.trailLim) <= lvl {
		return
	}
	n := int(s.trailLim[lvl])
	j := n
	for i := n; i < len(s.trail); i++ {
		l := s.trail[i]
		v := l.Var()
		if s.level[v] <= int32(lvl) {
			if s.reason[v] == reasonTheory {
				// Its explanation's literals are of its level or below, still assigned,
				// and the theory has not been told yet: ask it now, while it can answer.
				s.reasonLits(v)
			}
			s.trailPos[v] = int32(j)
			s.trail[j] = l
			j++
			continue
		}
		s.assigns[v] = LUndef
		s.explanation[v] = nil
		if s.opts.PhaseSaving {
			s.polarity[v] = l.IsNeg()
		}
		s.order.insert(v)
		if r := s.staticRankOf(v); r < s.staticNext {
			s.staticNext = r
		}
	}
	s.trail = s.trail[:j]
	s.trailLim = s.trailLim[:lvl]
	s.qhead = n
	if s.theory != nil {
		s.theory.Backtrack(n)
	}
}

func (s *Solver) bumpVar(v Var) {
	s.activity[v] += s.varInc
	if s.activity[v] > 1e100 {
		for i := range s.activity {
			s.activity[i] *= 1e-100
		}
		s.varInc *= 1e-100
	}
	s.order.increased(v)
}

func (s *Solver) bumpClause(cr int32) {
	a := s.activityOf(cr) + float32(s.claInc)
	s.setActivity(cr, a)
	if a > 1e20 {
		for _, lr := range s.learnts {
			s.setActivity(lr, s.activityOf(lr)*1e-20)
		}
		s.claInc *= 1e-20
	}
}

// computeLBD counts the distinct decision levels of lits (the "glue").
func (s *Solver) computeLBD(lits []Lit) int {
	s.stamp++
	if s.stamp == 0 {
		clear(s.levelStamp)
		s.stamp = 1
	}
	n := 0
	for _, l := range lits {
		lv := s.level[l.Var()]
		for int(lv) >= len(s.levelStamp) {
			// Assumptions that are already true open empty decision levels, so there
			// can be more levels than variables.
			s.levelStamp = append(s.levelStamp, 0)
		}
		if s.levelStamp[lv] != s.stamp {
			s.levelStamp[lv] = s.stamp
			n++
		}
	}
	return n
}

// analyze derives the first-UIP clause from a conflict clause whose literals are all false
// and include at least one at the current decision level. It returns the learned clause
// (asserting literal first, a literal of the backjump level second; valid until the next
// analyze) and the backjump level.
func (s *Solver) analyze(confl []Lit, cr int32) ([]Lit, int) {
	learnt := append(s.learntBuf[:0], litUndef)
	curLevel := int32(len(s.trailLim))
	pathC := 0
	p := litUndef
	idx := len(s.trail) - 1
	lits := confl
	for {
		if cr >= 0 && s.isLearnt(cr) {
			s.bumpClause(cr)
			if old := s.lbd(cr); old > 2 {
				if lbd := int32(s.computeLBD(lits)); lbd+1 < old {
					s.setLBD(cr, lbd)
				}
			}
		}
		for _, q := range lits {
			v := q.Var()
			if p != litUndef && v == p.Var() {
				continue
			}
			if s.seen[v] == 0 && s.level[v] > 0 {
				s.bumpVar(v)
				s.seen[v] = 1
				if s.level[v] >= curLevel {
					pathC++
				} else {
					learnt = append(learnt, q)
				}
			}
		}
		// The next literal of the conflict level to resolve; seen literals of lower
		// levels (in the clause already) can follow it on an out-of-order trail.
		for v := s.trail[idx].Var(); s.seen[v] == 0 || s.level[v] < curLevel; v = s.trail[idx].Var() {
			idx--
		}
		p = s.trail[idx]
		idx--
		s.seen[p.Var()] = 0
		pathC--
		if pathC <= 0 {
			break
		}
		cr = s.reason[p.Var()]
		lits = s.reasonLits(p.Var())
	}
	learnt[0] = p.Not()

	// Recursive minimization (MiniSat's "deep" mode): drop literals implied by the others.
	s.toClear = append(s.toClear[:0], learnt...)
	if !s.opts.NoMinimize {
		var abstract uint32
		for _, l := range learnt[1:] {
			abstract |= s.abstractLevel(l.Var())
		}
		j := 1
		for i := 1; i < len(learnt); i++ {
			v := learnt[i].Var()
			if s.reason[v] == reasonNone || !s.litRedundant(learnt[i], abstract) {
				learnt[j] = learnt[i]
				j++
			}
		}
		learnt = learnt[:j]
	}
	for _, l := range s.toClear {
		s.seen[l.Var()] = 0
	}

	// Put a literal of the highest remaining level second: it is watched with the
	// asserting literal and determines the backjump level.
	btLevel := 0
	if len(learnt) > 1 {
		maxI := 1
		for i := 2; i < len(learnt); i++ {
			if s.level[learnt[i].Var()] > s.level[learnt[maxI].Var()] {
				maxI = i
			}
		}
		learnt[1], learnt[maxI] = learnt[maxI], learnt[1]
		btLevel = int(s.level[learnt[1].Var()])
	}
	s.learntBuf = learnt
	return learnt, btLevel
}

func (s *Solver) abstractLevel(v Var) uint32 { return 1 << (uint32(s.level[v]) & 31) }

// litRedundant reports whether p (in the learned clause, seen) is implied by the other
// literals of the clause, following reasons depth-first. Variables proved implied stay seen
// (and are recorded in toClear) so later checks reuse the result.
func (s *Solver) litRedundant(p Lit, abstract uint32) bool {
	s.stack = append(s.stack[:0], p)
	top := len(s.toClear)
	for len(s.stack) > 0 {
		q := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		qv := q.Var()
		for _, l := range s.reasonLits(qv) {
			v := l.Var()
			if v == qv || s.seen[v] != 0 || s.level[v] == 0 {
				continue
			}
			if s.reason[v] != reasonNone && s.abstractLevel(v)&abstract != 0 {
				s.seen[v] = 1
				s.stack = append(s.stack, l)
				s.toClear = append(s.toClear, l)
				continue
			}
			for _, c := range s.toClear[top:] {
				s.seen[c.Var()] = 0
			}
			s.toClear = s.toClear[:top]
			return false
		}
	}
	return true
}

// analyzeFinal computes the assumptions responsible for p (the negation of a falsified
// assumption) being true, as a clause of negated assumptions in s.finalConflict.
func (s *Solver) analyzeFinal(p Lit) {
	s.finalConflict = append(s.finalConflict[:0], p)
	s.assumptionsBehind([]Lit{p})
}

// analyzeFinalConflict computes, for a conflict among the assumption level's literals
// (a clause reference, or a theory clause if cr < 0), the assumptions responsible, as a
// clause of negated assumptions in s.finalConflict.
func (s *Solver) analyzeFinalConflict(cr int32, theoryConfl []Lit) {
	confl := theoryConfl
	if cr >= 0 {
		confl = s.lits(cr)
	}
	s.finalConflict = s.finalConflict[:0]
	s.assumptionsBehind(confl)
}

// assumptionsBehind adds to s.finalConflict the negation of every assumption that the
// trail's reasons lead to from the variables of lits.
func (s *Solver) assumptionsBehind(lits []Lit) {
	if len(s.trailLim) == 0 {
		return
	}
	for _, l := range lits {
		if s.level[l.Var()] > 0 {
			s.seen[l.Var()] = 1
		}
	}
	for i := len(s.trail) - 1; i >= int(s.trailLim[0]); i-- {
		l := s.trail[i]
		x := l.Var()
		if s.seen[x] == 0 {
			continue
		}
		if s.level[x] == 0 {
			// A level-0 literal learned after chronological backtracking sits above the
			// start of level 1: a fact, not an assumption.
			s.seen[x] = 0
			continue
		}
		if s.reason[x] == reasonNone {
			s.finalConflict = append(s.finalConflict, l.Not())
		} else {
			for _, q := range s.reasonLits(x) {
				if q.Var() != x && s.level[q.Var()] > 0 {
					s.seen[q.Var()] = 1
				}
			}
		}
		s.seen[x] = 0
	}
	for _, l := range lits {
		s.seen[l.Var()] = 0
	}
}

// resolveConflict analyzes a conflict (a clause reference, or a theory clause if cr < 0),
// learns a clause and backjumps. It returns false if the formula is UNSAT.
func (s *Solver) resolveConflict(cr int32, theoryConfl []Lit) bool {
	confl := theoryConfl
	if cr >= 0 {
		confl = s.lits(cr)
	}
	// The conflict may lie entirely below the current level (a theory's; or a clause's
	// on an out-of-order trail): go there first.
	confLevel := s.conflictLevel(cr, theoryConfl)
	if confLevel == 0 {
		s.ok = false
		return false
	}
	s.cancelUntil(confLevel)
	learnt, btLevel := s.analyze(confl, cr)
	s.stats.Learned++
	lbd := 1
	// A long jump undoes work the search would mostly redo (a static order with saved
	// phases re-decides the same literals; on a 40K-variable problem most learned
	// clauses were units, each followed by thousands of decisions): go back one level
	// instead, and assign the asserting literal at its own level.
	if c := s.opts.ChronoLevels; c > 0 && confLevel-btLevel > c {
		s.stats.Chrono++
		s.cancelUntil(confLevel - 1)
	} else {
		s.cancelUntil(btLevel)
	}
	if len(learnt) == 1 {
		s.enqueueAt(learnt[0], reasonNone, 0)
	} else {
		lbd = s.computeLBD(learnt)
		lcr := s.newClause(learnt, true, lbd)
		s.learnts = append(s.learnts, lcr)
		s.attach(lcr)
		s.bumpClause(lcr)
		s.enqueueAt(learnt[0], lcr, int32(btLevel))
	}
	s.varInc /= s.opts.VarDecay
	s.claInc /= 0.999
	s.recordLBD(lbd)
	return true
}

const (
	lbdQueueSize   = 50
	trailQueueSize = 5000
	restartK       = 0.8 // restart if recent LBD average * K > global average
	blockR         = 1.4 // block a restart if the trail is this much above its average
)

// recordLBD feeds the glucose restart statistics; with blocking, a conflict that occurs on an
// unusually long trail (close to a model) postpones the next restart.
func (s *Solver) recordLBD(lbd int) {
	if s.opts.Restarts != "glucose" {
		return
	}
	if s.lbdQueue == nil {
		s.lbdQueue = make([]int32, lbdQueueSize)
		s.trailQueue = make([]int32, trailQueueSize)
	}
	s.lbdTotal += int64(lbd)
	trailLen := int32(len(s.trail))
	if s.trailQLen == trailQueueSize && s.lbdQueueLen == lbdQueueSize &&
		float64(trailLen) > blockR*float64(s.trailQSum)/float64(s.trailQLen) {
		s.lbdQueueLen, s.lbdQueueSum, s.lbdQueueHead = 0, 0, 0
	}
	if s.trailQLen == trailQueueSize {
		s.trailQSum -= int64(s.trailQueue[s.trailQHead])
	} else {
		s.trailQLen++
	}
	s.trailQueue[s.trailQHead] = trailLen
	s.trailQSum += int64(trailLen)
	s.trailQHead = (s.trailQHead + 1) % trailQueueSize
	if s.lbdQueueLen == lbdQueueSize {
		s.lbdQueueSum -= int64(s.lbdQueue[s.lbdQueueHead])
	} else {
		s.lbdQueueLen++
	}
	s.lbdQueue[s.lbdQueueHead] = int32(lbd)
	s.lbdQueueSum += int64(lbd)
	s.lbdQueueHead = (s.lbdQueueHead + 1) % lbdQueueSize
}

func (s *Solver) glucoseRestartDue() bool {
	if s.lbdQueueLen < lbdQueueSize || s.stats.Conflicts == 0 {
		return false
	}
	recent := float64(s.lbdQueueSum) / float64(s.lbdQueueLen)
	global := float64(s.lbdTotal) / float64(s.stats.Conflicts)
	return recent*restartK > global
}

// Luby returns the i-th element (from 0) of the Luby sequence 1 1 2 1 1 2 4 1 1 2 ...:
// restarts whose lengths follow it are within a logarithmic factor of the best fixed
// length for any distribution of run lengths (Luby, Sinclair and Zuckerman).
func Luby(i int) int64 { return luby(i) }

func luby(i int) int64 {
	size, seq := 1, 0
	for size < i+1 {
		seq++
		size = 2*size + 1
	}
	for size-1 != i {
		size = (size - 1) >> 1
		seq--
		i %= size
	}
	return int64(1) << seq
}

// locked reports whether clause cr (of three or more literals) is the reason of an assignment.
func (s *Solver) locked(cr int32) bool {
	l := s.arena[cr+clauseHeader]
	return s.reason[l.Var()] == cr && s.Value(l) == LTrue
}

// reduceDB deletes about half of the learned clauses, worst first (high LBD, then low
// activity), keeping glue clauses (LBD <= 2), binary clauses and reasons.
func (s *Solver) reduceDB() {
	sort.Slice(s.learnts, func(a, b int) bool {
		ca, cb := s.learnts[a], s.learnts[b]
		if la, lb := s.lbd(ca), s.lbd(cb); la != lb {
			return la > lb
		}
		return s.activityOf(ca) < s.activityOf(cb)
	})
	limit := len(s.learnts) / 2
	j := 0
	deleted := 0
	for i, cr := range s.learnts {
		if i < limit && s.lbd(cr) > 2 && s.arena[cr] > 2 && !s.locked(cr) {
			s.deleteClause(cr)
			deleted++
			continue
		}
		s.learnts[j] = cr
		j++
	}
	s.learnts = s.learnts[:j]
	s.stats.Deleted += int64(deleted)
	if deleted == 0 {
		return
	}
	for l := range s.watches {
		ws := s.watches[l]
		k := 0
		for _, w := range ws {
			if !s.isDeleted(w.clauseRef()) {
				ws[k] = w
				k++
			}
		}
		s.watches[l] = ws[:k]
	}
	s.collectGarbage()
}

// reuseLevel is the level a restart goes back to: the levels whose decisions a restart
// to level 0 would make again are kept ("reusing the trail", van der Tak, Ramos and
// Heule). With the static heuristic and saved phases that is most of the trail: a
// full restart re-decided every variable in the same order to the same values (a
// 40K-variable problem spent three quarters of its decisions so). A level is kept
// while its decision ranks before the next variable the heuristic would decide.
// VSIDS restarts go to level 0 as always.
func (s *Solver) reuseLevel() int {
	base := min(s.assumeLevels, len(s.trailLim)) // the assumptions stay
	if s.opts.Heuristic != "static" || !s.opts.PhaseSaving {
		return base
	}
	s.advanceStatic()
	lvl := base
	for lvl < len(s.trailLim) && s.staticRankOf(s.trail[s.trailLim[lvl]].Var()) < s.staticNext {
		lvl++
	}
	return min(lvl, len(s.trailLim))
}

// conflictLevel is the highest level among a conflict's literals.
func (s *Solver) conflictLevel(cr int32, theoryConfl []Lit) int {
	confl := theoryConfl
	if cr >= 0 {
		confl = s.lits(cr)
	}
	lvl := 0
	for _, l := range confl {
		lvl = max(lvl, int(s.level[l.Var()]))
	}
	return lvl
}

// staticVar is the variable of rank r in the static order; staticRankOf is v's rank.
func (s *Solver) staticVar(r Var) Var {
	if s.staticOrder != nil {
		return s.staticOrder[r]
	}
	return r
}

func (s *Solver) staticRankOf(v Var) Var {
	if s.staticRank != nil {
		return s.staticRank[v]
	}
	return v
}

// advanceStatic moves staticNext past the assigned variables: to the rank of the next
// variable the static heuristic decides (len(assigns) when all are assigned).
func (s *Solver) advanceStatic() {
	for int(s.staticNext) < len(s.assigns) && s.assigns[s.staticVar(s.staticNext)] != LUndef {
		s.staticNext++
	}
}

func (s *Solver) pickBranch() Lit {
	var v Var = -1
	if s.opts.Heuristic == "static" {
		s.advanceStatic()
		if int(s.staticNext) < len(s.assigns) {
			v = s.staticVar(s.staticNext)
		}
	} else {
		for !s.order.empty() {
			if c := s.order.removeMax(); s.assigns[c] == LUndef {
				v = c
				break
			}
		}
	}
	if v < 0 {
		return litUndef
	}
	if s.polarity[v] {
		return NegLit(v)
	}
	return PosLit(v)
}

// searchResult says why search stopped.
type searchResult int8

const (
	searchSat searchResult = iota
	searchUnsat
	searchRestart
	searchLimit
)

func (s *Solver) limitReached(startConflicts int64) bool {
	if s.interrupted.Load() {
		return true
	}
	if s.conflictLimit > 0 && s.stats.Conflicts-startConflicts >= s.conflictLimit {
		return true
	}
	if s.decisionLimit > 0 && s.stats.Decisions-s.startDecision >= s.decisionLimit {
		return true
	}
	return !s.deadline.IsZero() && time.Now().After(s.deadline)
}

// search runs CDCL until a model, UNSAT, a restart (after maxConflicts conflicts for Luby,
// or when recent learned clauses are poor for glucose) or a limit.
func (s *Solver) search(maxConflicts, startConflicts int64) searchResult {
	var conflicts int64
	var ticks uint32
	for {
		cr, tc := s.propagateAll()
		if cr >= 0 || tc != nil {
			s.stats.Conflicts++
			conflicts++
			if cl := s.conflictLevel(cr, tc); cl > 0 && cl <= s.assumeLevels {
				// The assumptions and what they imply conflict: no decision is involved.
				// The levels from the conflict's are not ones to keep.
				s.levelsDone = min(s.levelsDone, cl-1)
				s.analyzeFinalConflict(cr, tc)
				return searchUnsat
			}
			if !s.resolveConflict(cr, tc) {
				return searchUnsat
			}
			if s.limitReached(startConflicts) {
				return searchLimit
			}
			continue
		}
		if (maxConflicts > 0 && conflicts >= maxConflicts) ||
			(s.opts.Restarts == "glucose" && s.glucoseRestartDue()) {
			s.lbdQueueLen, s.lbdQueueSum, s.lbdQueueHead = 0, 0, 0
			return searchRestart
		}
		if s.stats.Conflicts >= s.nextReduce {
			s.reduceInterv += s.opts.ReduceInc
			s.nextReduce = s.stats.Conflicts + s.reduceInterv
			s.reduceDB()
		}
		// The interrupt flag at every decision (a plain load): one decision's theory
		// propagation can take milliseconds on a big graph, too long to wait for 1024.
		if ticks++; s.interrupted.Load() || ticks&1023 == 0 && s.limitReached(startConflicts) {
			return searchLimit
		}

		if lvl := len(s.trailLim); lvl < s.assumeLevels {
			// Every assumption in one level (one per group for SolveLevels): a
			// conflict's backjump lands on them or above, so the assumptions are not made
			// again conflict after conflict (thousands of them, each propagated through
			// the theory, cost milliseconds a conflict); a conflict within them ends the
			// search.
			from := 0
			if lvl > 0 {
				from = s.assumeEnds[lvl-1]
			}
			group := s.assumptions[from:s.assumeEnds[lvl]]
			s.levelsDone = lvl
			s.newDecisionLevel()
			for _, p := range group {
				switch s.Value(p) {
				case LTrue:
					continue
				case LFalse:
					s.analyzeFinal(p.Not())
					return searchUnsat
				}
				s.enqueue(p, reasonNone)
			}
			continue
		}
		s.levelsDone = s.assumeLevels
		next := litUndef
		if next == litUndef {
			next = s.pickBranch()
			if next == litUndef {
				return searchSat
			}
			s.stats.Decisions++
		}
		s.newDecisionLevel()
		s.enqueue(next, reasonNone)
	}
}

// Solve searches for a model of the clauses (and the theory) in which all assumptions hold.
// After Sat the model is in ModelValue; after Unsat under assumptions FinalConflict tells
// which assumptions were responsible; Unknown means a limit was reached. The solver returns
// to decision level 0 afterwards, so more clauses can be added and Solve called again.
func (s *Solver) Solve(assumptions ...Lit) Status {
	s.dropKept()
	s.assumptions = append(s.assumptions[:0], assumptions...)
	s.assumeLevels, s.assumeEnds = 0, s.assumeEnds[:0]
	if len(assumptions) > 0 {
		s.assumeLevels, s.assumeEnds = 1, append(s.assumeEnds, len(assumptions))
	}
	status := s.solve()
	s.cancelUntil(0)
	return status
}

// SolveLevels is Solve under the assumptions of every group together, group i at
// decision level i+1, and it leaves the levels it completed standing: the next
// SolveLevels call takes over those whose groups are the same as its own first ones
// instead of making them again. A search that lets go of assumptions a few at a time
// (the neighbourhood searches), putting those it lets go last in the last groups,
// pays for propagating the others once (at 10,000 transactions about 0.3 s a call,
// more than the call's own conflicts). Any other call that changes the solver (Solve,
// AddClause, SetTheory) first goes back to level 0; until then Value sees the standing
// levels' assignments.
func (s *Solver) SolveLevels(groups [][]Lit) Status {
	same := 0
	for same < len(groups) && same < len(s.kept) && same < s.levelsDone && same < len(s.trailLim) &&
		slices.Equal(groups[same], s.kept[same]) {
		same++
	}
	s.cancelUntil(same)
	s.levelsDone = same
	s.assumptions, s.assumeEnds = s.assumptions[:0], s.assumeEnds[:0]
	for _, g := range groups {
		s.assumptions = append(s.assumptions, g...)
		s.assumeEnds = append(s.assumeEnds, len(s.assumptions))
	}
	s.assumeLevels = len(groups)
	status := s.solve()
	keep := 0
	if s.ok {
		keep = min(s.levelsDone, len(s.trailLim))
	}
	s.cancelUntil(keep)
	s.levelsDone = keep
	s.kept = s.kept[:min(same, keep)] // the levels taken over keep their groups
	for _, g := range groups[len(s.kept):keep] {
		s.kept = append(s.kept, slices.Clone(g))
	}
	return status
}

// dropKept goes back to level 0 from the levels SolveLevels left standing.
func (s *Solver) dropKept() {
	if len(s.kept) > 0 || len(s.trailLim) > 0 {
		s.cancelUntil(0)
	}
	s.kept, s.levelsDone = s.kept[:0], 0
}

// solve runs the search from the current level under s.assumptions.
func (s *Solver) solve() Status {
	s.finalConflict = s.finalConflict[:0]
	s.model = s.model[:0]
	if !s.ok {
		return Unsat
	}
	for _, a := range s.assumptions {
		for int(a.Var()) >= len(s.assigns) {
			s.NewVar()
		}
	}
	defer s.interrupted.Store(false)
	start := s.stats.Conflicts
	s.startDecision = s.stats.Decisions
	status := Unknown
	for status == Unknown {
		var budget int64
		if s.opts.Restarts == "luby" {
			budget = luby(s.lubyIndex) * s.opts.LubyUnit
			s.lubyIndex++
		}
		switch s.search(budget, start) {
		case searchSat:
			status = Sat
			s.model = append(s.model[:0], s.assigns...)
		case searchUnsat:
			status = Unsat
		case searchRestart:
			s.stats.Restarts++
			s.cancelUntil(s.reuseLevel())
		case searchLimit:
			return Unknown
		}
	}
	return status
}
