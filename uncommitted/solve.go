package uncommitted

import (
	"slices"

	"doppel/sat"
	"doppel/theory"
)

// solveMaxChoices bounds the position variables of the solver's encoding (one per
// position of a longest read and class that may take it); past it the search over
// attributions (search.go) runs instead.
const solveMaxChoices = 150_000

// solveOpen decides the open keys with the CDCL solver (package sat) and the
// acyclicity theory (package theory), given the fixed keys' edges and the model's
// orders. ran is false when the encoding would exceed solveMaxChoices. The verdict is
// Valid only for an attribution verifyAttribution accepts (attr), Invalid when the
// encoding is unsatisfiable, Unknown when stop said so first.
//
// The encoding, per open key and longest read L (one selector per L when there are
// several, exactly one chosen):
//   - y(p, c): position p of L is taken by class c (an :ok writer's appends of L[p]'s
//     value, or all uncommitted appends of it); exactly one class per position;
//   - each class takes at most as many positions as it has appends (a sequential
//     counter, whose registers also say when the class is full);
//   - u(W): writer W has an append to the key no position took; it must hold when one
//     of W's classes is not full (or W appends a value L does not show). It may hold
//     when W is placed whole, which only adds edges: a satisfying assignment is
//     re-checked by verifyAttribution, and an unsatisfiable one has no attribution
//     with fewer edges either, since u(W) false is then allowed exactly when true
//     would add an edge the definition does not;
//   - the ww edges as graph structure: per position p >= 1 a hub node, with an edge
//     A → hub guarded by y(p-1, A's class) for every committed A, and hub → B guarded
//     by y(p, B's class) and "B does not take p-1": a path A → hub → B exists exactly
//     when A takes p-1 and another committed B takes p. An end hub after L's last
//     position leads to every writer W guarded by u(W) and "W does not take the last
//     position" (L's last writer's edge to the writers left over). An uncommitted
//     class has no edge into the hub: the chain is broken there, as Elle's edges are.
//
// The fixed keys' edges and the model's process and real-time order are unguarded.
func (x *Index) solveOpen(process, realtime bool, stop func() bool) (v Verdict, attr []keyAttribution, ran bool) {
	return x.solveOpenWithin(process, realtime, 0, stop)
}

// solveOpenWithin is solveOpen giving up (Unknown) after maxConflicts (0: no bound).
func (x *Index) solveOpenWithin(process, realtime bool, maxConflicts int64, stop func() bool) (v Verdict, attr []keyAttribution, ran bool) {
	v, attr, ran, spent := x.solveOpenSpent(process, realtime, maxConflicts, stop)
	if process && realtime && v != Valid {
		x.strongRefuted = x.strongRefuted || v == Invalid
		x.strongSpent = max(x.strongSpent, spent)
	}
	return v, attr, ran
}

// solveOpenSpent is solveOpenWithin, also giving the conflicts the solver ran.
func (x *Index) solveOpenSpent(process, realtime bool, maxConflicts int64, stop func() bool) (v Verdict, attr []keyAttribution, ran bool, spent int64) {
	choices := 0
	for _, o := range x.open {
		for _, pos := range o.classes {
			for _, cs := range pos {
				choices += len(cs)
			}
		}
	}
	if choices > solveMaxChoices {
		return Unknown, nil, false, 0
	}
	e := newRUEncoding(x, process, realtime, stop)
	if e == nil {
		return Unknown, nil, true, 0
	}
	s, g := e.s, e.graph()
	if g.Init() != nil {
		// The unguarded edges alone: the fixed keys' and the orders, acyclic (Decide
		// checked), and the end hubs' with no way in. Not reached; kept exact anyway.
		return Invalid, nil, true, 0
	}
	s.SetTheory(g)
	// The longest reads' run (LongestReads) is a likely attribution even where it is
	// not acyclic: the solver starts from it.
	if run, ok := x.serialRun(process, false, stop); ok {
		e.setPhases(run)
	}
	s.SetDecisionLimit(solveChunkDecisions)
	counted := int64(0)
	for {
		// A chunk never runs past the caller's conflict limit (--max-conflicts 1 ran
		// 500 here).
		chunk := int64(solveChunkConflicts)
		if x.ConflictsLeft != nil {
			if left := x.ConflictsLeft(); left >= 0 {
				chunk = max(1, min(chunk, left))
			}
		}
		s.SetConflictLimit(chunk)
		st := s.Solve()
		if x.Conflicts != nil {
			// The caller's conflict limit counts these too (its stop reads the total).
			*x.Conflicts += s.Stats().Conflicts - counted
		}
		counted = s.Stats().Conflicts
		switch st {
		case sat.Sat:
			attr = e.attribution()
			if !x.verifyAttribution(process, realtime, attr) {
				return Unknown, nil, false, counted // not reached: the search decides instead
			}
			return Valid, attr, true, counted
		case sat.Unsat:
			return Invalid, nil, true, counted
		}
		if stop != nil && stop() || maxConflicts > 0 && s.Stats().Conflicts >= maxConflicts {
			return Unknown, nil, true, counted
		}
	}
}

// The solver runs in chunks, the caller's stop asked between them.
const (
	solveChunkConflicts = 500
	solveChunkDecisions = 50_000
)

// ruEncoding is solveOpen's problem: the solver with its clauses, and the edges for
// the graph.
type ruEncoding struct {
	x *Index
	s *sat.Solver
	// y[i][li][p][j]: open key i, its longest read li, position p, the j-th class of
	// o.classes[li][p]; sel[i][li]: L number li of key i is the one (nil: a single L).
	y   [][][][]sat.Lit
	sel [][]sat.Lit
	// The graph's edges (from, to, guard) and its node count.
	from, to []int32
	guards   [][]sat.Lit
	nodes    int32
	// Scratch per transaction: its class index at the position last marked.
	at, atStamp []int32
	stamp       int32
}

func newRUEncoding(x *Index, process, realtime bool, stop func() bool) *ruEncoding {
	h := x.h
	e := &ruEncoding{x: x, s: sat.New(), at: make([]int32, len(h.Txns)), atStamp: make([]int32, len(h.Txns))}
	d := &decider{h: h, n: len(h.Txns)}
	d.orderEdges(process, realtime)
	e.nodes = int32(len(d.adj))
	for u, es := range d.adj {
		for _, ed := range es {
			e.edge(int32(u), ed.to, nil)
		}
	}
	for i, from := range x.fixFrom {
		e.edge(from, x.fixEdge[i].to, nil)
	}
	for _, o := range x.open {
		if stop != nil && stop() {
			return nil
		}
		e.addKey(o)
	}
	return e
}

func (e *ruEncoding) edge(from, to int32, guard []sat.Lit) {
	e.from, e.to = append(e.from, from), append(e.to, to)
	e.guards = append(e.guards, guard)
}

func (e *ruEncoding) lit() sat.Lit { return sat.PosLit(e.s.NewVar()) }

func (e *ruEncoding) graph() *theory.Graph {
	g := theory.NewGraph(int(e.nodes))
	lits := 0
	for _, gd := range e.guards {
		lits += len(gd)
	}
	g.Reserve(len(e.from), lits)
	for i := range e.from {
		g.AddEdge(int(e.from[i]), int(e.to[i]), e.guards[i])
	}
	return g
}

// addKey encodes open key o.
func (e *ruEncoding) addKey(o *openKey) {
	s := e.s
	var sel []sat.Lit
	if len(o.ls) > 1 {
		for range o.ls {
			sel = append(sel, e.lit())
		}
		s.AddClause(sel...)
		amo(s, sel)
	}
	ys := make([][][]sat.Lit, len(o.ls))
	for li, l := range o.ls {
		y := make([][]sat.Lit, len(l))
		nc := len(o.classTxn)
		perClass := make([][]sat.Lit, nc) // a class's position literals, in order
		for p := range l {
			cs := o.classes[li][p]
			y[p] = make([]sat.Lit, len(cs))
			for j, c := range cs {
				y[p][j] = e.lit()
				perClass[c] = append(perClass[c], y[p][j])
				if sel != nil {
					s.AddClause(y[p][j].Not(), sel[li])
				}
			}
			alo := append([]sat.Lit(nil), y[p]...)
			if sel != nil {
				alo = append(alo, sel[li].Not())
			}
			s.AddClause(alo...)
			amo(s, y[p])
		}
		ys[li] = y
		// Capacities, and per class the literal "full" (nil: it can never be).
		full := make([]sat.Lit, nc)
		hasFull := make([]bool, nc)
		for c, lits := range perClass {
			k := int(o.classLeft[c])
			if len(lits) == 0 || k >= len(lits) && o.classTxn[c] < 0 {
				continue // uncommitted: no edges, and room for every position
			}
			full[c], hasFull[c] = counter(s, lits, k)
		}
		// Per value, the committed classes placed whole take at most its positions:
		// implied by the positions' clauses, but only through a pigeonhole the
		// solver's resolution cannot refute in short (writers of a value outnumbering
		// its positions, as where an update was lost); as a counter over the "full"
		// literals (each as often as its class's appends), placing enough classes
		// whole forces the others' u.
		valueOf := make([]int32, nc)
		positions := map[int32]int{} // value → positions
		for p, v := range l {
			positions[v]++
			for _, c := range o.classes[li][p] {
				valueOf[c] = v
			}
		}
		byValue := map[int32][]sat.Lit{}
		var values []int32
		for c, f := range full {
			if !hasFull[c] || o.classTxn[c] < 0 {
				continue
			}
			v := valueOf[c]
			if byValue[v] == nil {
				values = append(values, v)
			}
			for range o.classLeft[c] {
				byValue[v] = append(byValue[v], f)
			}
		}
		slices.Sort(values)
		for _, v := range values {
			if lits := byValue[v]; len(lits) > positions[v] {
				counter(s, lits, positions[v])
			}
		}
		// u(W) per writer, the hubs and the edges.
		u := make([]sat.Lit, len(o.writers))
		uConst := make([]bool, len(o.writers)) // u(W) always holds
		placeable := make([]int32, len(o.writers))
		for c, lits := range perClass {
			if w := o.classW[c]; w >= 0 && len(lits) > 0 && hasFull[c] {
				placeable[w] += o.classLeft[c]
			}
		}
		for wi := range o.writers {
			if placeable[wi] < o.left[wi] {
				uConst[wi] = true
				continue
			}
			u[wi] = e.lit()
		}
		for c, f := range full {
			if w := o.classW[c]; hasFull[c] && w >= 0 && !uConst[w] {
				s.AddClause(u[w], f)
			}
		}
		for p := 1; p < len(l); p++ {
			hub := e.nodes
			e.nodes++
			prev := o.classes[li][p-1]
			e.mark(o, prev)
			for j, c := range prev {
				if t := o.classTxn[c]; t >= 0 {
					e.edge(t, hub, []sat.Lit{y[p-1][j]})
				}
			}
			for j, c := range o.classes[li][p] {
				t := o.classTxn[c]
				if t < 0 {
					continue
				}
				guard := []sat.Lit{y[p][j]}
				if e.atStamp[t] == e.stamp {
					guard = append(guard, y[p-1][e.at[t]].Not())
				}
				e.edge(hub, t, guard)
			}
		}
		last := len(l) - 1
		if last < 0 {
			continue
		}
		end := e.nodes
		e.nodes++
		lastCs := o.classes[li][last]
		e.mark(o, lastCs)
		for j, c := range lastCs {
			if t := o.classTxn[c]; t >= 0 {
				e.edge(t, end, []sat.Lit{y[last][j]})
			}
		}
		for wi, t := range o.writers {
			var guard []sat.Lit
			if !uConst[wi] {
				guard = append(guard, u[wi])
			}
			if e.atStamp[t] == e.stamp {
				guard = append(guard, y[last][e.at[t]].Not())
			}
			e.edge(end, t, guard)
		}
	}
	e.y = append(e.y, ys)
	e.sel = append(e.sel, sel)
}

// setPhases makes attr the solver's first guess.
func (e *ruEncoding) setPhases(attr []keyAttribution) {
	for i, o := range e.x.open {
		a := attr[i]
		if a.li < 0 || a.li >= len(o.ls) || len(a.at) != len(o.ls[a.li]) {
			continue
		}
		if e.sel[i] != nil {
			e.s.SetPhase(e.sel[i][a.li].Var(), true)
		}
		for p, t := range a.at {
			for j, c := range o.classes[a.li][p] {
				if o.classTxn[c] == t {
					e.s.SetPhase(e.y[i][a.li][p][j].Var(), true)
					break
				}
			}
		}
	}
}

// mark records, per transaction, its class index among cs.
func (e *ruEncoding) mark(o *openKey, cs []int32) {
	e.stamp++
	for j, c := range cs {
		if t := o.classTxn[c]; t >= 0 {
			e.at[t], e.atStamp[t] = int32(j), e.stamp
		}
	}
}

// attribution reads the solver's model as one attribution per open key.
func (e *ruEncoding) attribution() []keyAttribution {
	s := e.s
	attr := make([]keyAttribution, len(e.x.open))
	for i, o := range e.x.open {
		li := 0
		for j, l := range e.sel[i] {
			if s.ModelValue(l) {
				li = j
			}
		}
		y := e.y[i][li]
		at := make([]int32, len(y))
		for p := range y {
			at[p] = -1
			for j, l := range y[p] {
				if s.ModelValue(l) {
					at[p] = o.classTxn[o.classes[li][p][j]]
				}
			}
		}
		attr[i] = keyAttribution{li: li, at: at}
	}
	return attr
}

// amo adds "at most one of lits": pairwise up to 6 literals, else a sequential counter.
func amo(s *sat.Solver, lits []sat.Lit) {
	if len(lits) <= 6 {
		for i := range lits {
			for j := i + 1; j < len(lits); j++ {
				s.AddClause(lits[i].Not(), lits[j].Not())
			}
		}
		return
	}
	counter(s, lits, 1)
}

// counter adds "at most k of lits" as a sequential counter whose registers are exact:
// r[i][j] holds iff at least j+1 of lits[0..i] hold. It returns the literal "exactly
// k hold" (all k taken), ok false when fewer than k literals make that impossible.
func counter(s *sat.Solver, lits []sat.Lit, k int) (full sat.Lit, ok bool) {
	n := len(lits)
	if k <= 0 {
		for _, l := range lits {
			s.AddClause(l.Not())
		}
		return 0, false
	}
	if n < k {
		return 0, false
	}
	width := min(k+1, n) // registers "at least 1..width"
	prev := make([]sat.Lit, width)
	cur := make([]sat.Lit, width)
	for i, x := range lits {
		for j := 0; j < width && j <= i; j++ {
			r := sat.PosLit(s.NewVar())
			cur[j] = r
			switch {
			case i == 0: // r ⇔ x
				s.AddClause(x.Not(), r)
				s.AddClause(r.Not(), x)
				continue
			case j == 0: // r ⇔ prev[0] ∨ x
				s.AddClause(prev[0].Not(), r)
				s.AddClause(x.Not(), r)
				s.AddClause(r.Not(), prev[0], x)
				continue
			}
			// r ⇔ prev[j] ∨ (x ∧ prev[j-1]); prev[j] exists only when j <= i-1.
			if j <= i-1 {
				s.AddClause(prev[j].Not(), r)
				s.AddClause(r.Not(), prev[j], x)
				s.AddClause(r.Not(), prev[j], prev[j-1])
			} else {
				s.AddClause(r.Not(), x)
				s.AddClause(r.Not(), prev[j-1])
			}
			s.AddClause(x.Not(), prev[j-1].Not(), r)
		}
		if width > k && i >= k {
			s.AddClause(cur[k].Not()) // never k+1
		}
		prev, cur = cur, prev
	}
	return prev[k-1], true
}

// exampleCycle is a cycle of one attribution (each position taken by the first class
// with appends left), for the explanation of a refutation: every attribution has one.
func (x *Index) exampleCycle(process, realtime bool) []Step {
	attr := make([]keyAttribution, len(x.open))
	for i, o := range x.open {
		left := make(map[int32]int32)
		at := make([]int32, len(o.ls[0]))
		for p, cs := range o.classes[0] {
			at[p] = -1
			for _, c := range cs {
				if used := left[c]; used < o.classLeft[c] {
					left[c] = used + 1
					at[p] = o.classTxn[c]
					break
				}
			}
		}
		attr[i] = keyAttribution{li: 0, at: at}
	}
	d, ok := x.attributionGraph(process, realtime, attr)
	if !ok {
		return nil
	}
	return d.findCycle()
}
