package theory

import "doppel/sat"

// Segments is the append-adjacency theory: on each key that several attributions
// of its duplicated values can explain, the blocks chosen (a block: writer w's
// appends at trace positions p..p+len-1, one solver variable per candidate) must
// tile the key's trace, and a writer has at most one block.
//
// The trace positions of every such key are cells. A tiling is exactly a choice
// in which every cell is covered by one chosen block: blocks are contiguous runs
// that match the trace, so covering each cell once leaves no gap and no overlap.
// Per cell the theory counts the covering candidates not yet false, which gives:
//
//   - a chosen block rules out every other block over its cells, and every other
//     block of its writer (reason: the two cannot both be chosen);
//   - a cell with one live candidate left forces it (reason: the cell must be
//     covered, and every other candidate over it is out);
//   - a cell with none left is a conflict (the clause: one of them is chosen).
//
// The "at most one" halves replace sequential-counter clauses (two auxiliary
// variables and six clauses per candidate, on keys whose candidates are already
// quadratic in the trace length). The encoding keeps its boundary variables
// ("a block starts at p") and their binary clauses: learned clauses that name a
// boundary instead of every candidate that could start there stay short, and
// without them the search needs many times the decisions.
type Segments struct {
	Stats SegmentStats

	// Candidates: variable, covered cells cell0[c]..cell1[c]-1, writer group (-1:
	// none, the writer has no other candidate).
	candVar, cell0, cell1, group []int32
	// candOf[v]: the candidate of variable v, or -1.
	candOf []int32
	// Per cell, the candidates covering it (CSR).
	coverStart, cover []int32
	// Per group, its candidates (CSR).
	groupStart, groupCands []int32

	// State. live[x]: candidates over cell x not false; chosenCell[x] and
	// chosenGroup[g]: the true candidate there, or -1.
	live, chosenCell, chosenGroup []int32
	// stack: the literals of the solver's trail seen so far (mirrors the trail).
	stack []sat.Lit
	// why[v] for a literal of v this theory implied: >= 0 the chosen candidate it
	// clashes with, <= -2 the cell -why-2 it alone could cover.
	why []int32
	// conflict clause buffer.
	confl []sat.Lit
}

// SegmentStats counts the theory's work.
type SegmentStats struct {
	Propagations int64 // literals implied
	Conflicts    int64
}

// Tiling describes the candidates of every open key, flat: candidate i has variable
// Var[i], covers cells Cell0[i]..Cell1[i]-1, and belongs to writer group Group[i]
// (-1 when its writer has no other candidate on the key). Cells are numbered over all
// keys; a key's cells are its trace positions.
//
// CellVal (the value at each cell) and KeyStart (each key's first cell, in order) are
// for the counting theory (NewCounting); a Tiling without them has no counting.
type Tiling struct {
	Var, Cell0, Cell1, Group []int32
	Cells, Groups            int32
	CellVal, KeyStart        []int32
}

// NewSegments builds the theory for the candidates of t whose index keep accepts
// (nil: all), over variables 0..vars-1 (a solver may have more: they are no
// candidates).
func NewSegments(t *Tiling, vars int, keep func(i int) bool) *Segments {
	s := &Segments{}
	n := len(t.Var)
	s.candVar, s.cell0, s.cell1, s.group = make([]int32, 0, n), make([]int32, 0, n), make([]int32, 0, n), make([]int32, 0, n)
	s.candOf = make([]int32, vars)
	for i := range s.candOf {
		s.candOf[i] = -1
	}
	cellCount := make([]int32, t.Cells+1)
	groupCount := make([]int32, t.Groups+1)
	for i := range t.Var {
		if keep != nil && !keep(i) {
			continue
		}
		c := int32(len(s.candVar))
		s.candVar = append(s.candVar, t.Var[i])
		s.cell0 = append(s.cell0, t.Cell0[i])
		s.cell1 = append(s.cell1, t.Cell1[i])
		s.group = append(s.group, t.Group[i])
		s.candOf[t.Var[i]] = c
		for x := t.Cell0[i]; x < t.Cell1[i]; x++ {
			cellCount[x+1]++
		}
		if g := t.Group[i]; g >= 0 {
			groupCount[g+1]++
		}
	}
	s.coverStart, s.cover = csr(cellCount, s.cell0, s.cell1)
	gs := make([]int32, len(s.group))
	ge := make([]int32, len(s.group))
	for c, g := range s.group {
		if g < 0 {
			gs[c], ge[c] = 0, 0
			continue
		}
		gs[c], ge[c] = g, g+1
	}
	s.groupStart, s.groupCands = csr(groupCount, gs, ge)
	s.reset(t.Cells, t.Groups)
	return s
}

// Fresh returns the theory for another solver over the same candidates: the layout is
// shared (it is never written), the state is new.
func (s *Segments) Fresh() *Segments {
	f := &Segments{candVar: s.candVar, cell0: s.cell0, cell1: s.cell1, group: s.group, candOf: s.candOf,
		coverStart: s.coverStart, cover: s.cover, groupStart: s.groupStart, groupCands: s.groupCands}
	f.reset(int32(len(s.live)), int32(len(s.chosenGroup)))
	return f
}

// reset sets the state of no assignment.
func (s *Segments) reset(cells, groups int32) {
	s.live = make([]int32, cells)
	for x := range s.live {
		s.live[x] = s.coverStart[x+1] - s.coverStart[x]
	}
	s.chosenCell = make([]int32, cells)
	for x := range s.chosenCell {
		s.chosenCell[x] = -1
	}
	s.chosenGroup = make([]int32, groups)
	for g := range s.chosenGroup {
		s.chosenGroup[g] = -1
	}
	s.why = make([]int32, len(s.candOf))
	s.stack = make([]sat.Lit, 0, len(s.candOf)) // the trail's length, about
}

// csr lists, for each slot, the items whose range lo[i]..hi[i]-1 contains it;
// count[x+1] holds how many (it is turned into the offsets).
func csr(count, lo, hi []int32) (start, items []int32) {
	for x := 1; x < len(count); x++ {
		count[x] += count[x-1]
	}
	items = make([]int32, count[len(count)-1])
	fill := append([]int32(nil), count...)
	for i := range lo {
		for x := lo[i]; x < hi[i]; x++ {
			items[fill[x]] = int32(i)
			fill[x]++
		}
	}
	return count, items
}

// Satisfied reports whether vals (a value per variable) chooses a tiling: every cell
// covered once, every writer group used at most once.
func (t *Tiling) Satisfied(vals []bool) bool {
	covered := make([]int32, t.Cells)
	used := make([]bool, t.Groups)
	for i, v := range t.Var {
		if !vals[v] {
			continue
		}
		for x := t.Cell0[i]; x < t.Cell1[i]; x++ {
			covered[x]++
		}
		if g := t.Group[i]; g >= 0 {
			if used[g] {
				return false
			}
			used[g] = true
		}
	}
	for _, n := range covered {
		if n != 1 {
			return false
		}
	}
	return true
}

func (s *Segments) lit(c int32) sat.Lit { return sat.PosLit(sat.Var(s.candVar[c])) }

// cand returns the candidate of variable v, or -1.
func (s *Segments) cand(v sat.Var) int32 {
	if int(v) >= len(s.candOf) {
		return -1
	}
	return s.candOf[v]
}

// Propagate implements sat.Theory.
func (s *Segments) Propagate(sv *sat.Solver) []sat.Lit {
	for len(s.stack) < len(sv.Trail()) {
		l := sv.Trail()[len(s.stack)]
		s.stack = append(s.stack, l)
		c := s.cand(l.Var())
		if c < 0 {
			continue
		}
		if confl := s.apply(sv, c, !l.IsNeg()); confl != nil {
			s.Stats.Conflicts++
			return confl
		}
	}
	return nil
}

// apply records candidate c becoming chosen (true) or ruled out, and implies what
// follows; it returns a conflict clause or nil. Its bookkeeping is complete before
// any conflict is returned, so that Backtrack undoes exactly what it did.
func (s *Segments) apply(sv *sat.Solver, c int32, chosen bool) []sat.Lit {
	if !chosen {
		for x := s.cell0[c]; x < s.cell1[c]; x++ {
			s.live[x]--
		}
		for x := s.cell0[c]; x < s.cell1[c]; x++ {
			if s.chosenCell[x] >= 0 {
				continue
			}
			switch s.live[x] {
			case 0:
				s.confl = s.confl[:0]
				for _, d := range s.cover[s.coverStart[x]:s.coverStart[x+1]] {
					s.confl = append(s.confl, s.lit(d))
				}
				return s.confl
			case 1:
				for _, d := range s.cover[s.coverStart[x]:s.coverStart[x+1]] {
					if sv.Value(s.lit(d)) != sat.LFalse {
						if sv.Value(s.lit(d)) == sat.LUndef {
							s.why[s.candVar[d]] = -x - 2
							s.Stats.Propagations++
							sv.Imply(s.lit(d))
						}
						break
					}
				}
			}
		}
		return nil
	}
	var clash int32 = -1
	for x := s.cell0[c]; x < s.cell1[c]; x++ {
		if o := s.chosenCell[x]; o >= 0 {
			clash = o
			continue
		}
		s.chosenCell[x] = c
	}
	if g := s.group[c]; g >= 0 {
		if o := s.chosenGroup[g]; o >= 0 {
			clash = o
		} else {
			s.chosenGroup[g] = c
		}
	}
	if clash >= 0 {
		s.confl = append(s.confl[:0], s.lit(c).Not(), s.lit(clash).Not())
		return s.confl
	}
	for x := s.cell0[c]; x < s.cell1[c]; x++ {
		s.ruleOut(sv, c, s.cover[s.coverStart[x]:s.coverStart[x+1]])
	}
	if g := s.group[c]; g >= 0 {
		s.ruleOut(sv, c, s.groupCands[s.groupStart[g]:s.groupStart[g+1]])
	}
	return nil
}

// ruleOut implies every candidate of ds other than the chosen c false.
func (s *Segments) ruleOut(sv *sat.Solver, c int32, ds []int32) {
	for _, d := range ds {
		if d != c && sv.Value(s.lit(d)) == sat.LUndef {
			s.why[s.candVar[d]] = c
			s.Stats.Propagations++
			sv.Imply(s.lit(d).Not())
		}
	}
}

// Explain implements sat.Theory.
func (s *Segments) Explain(l sat.Lit) []sat.Lit {
	w := s.why[l.Var()]
	if w >= 0 {
		return []sat.Lit{l, s.lit(w).Not()}
	}
	x := -w - 2
	d := s.cand(l.Var())
	out := []sat.Lit{l}
	for _, e := range s.cover[s.coverStart[x]:s.coverStart[x+1]] {
		if e != d {
			out = append(out, s.lit(e))
		}
	}
	return out
}

// Backtrack implements sat.Theory.
func (s *Segments) Backtrack(n int) {
	for i := len(s.stack) - 1; i >= n; i-- {
		l := s.stack[i]
		c := s.cand(l.Var())
		if c < 0 {
			continue
		}
		if l.IsNeg() {
			for x := s.cell0[c]; x < s.cell1[c]; x++ {
				s.live[x]++
			}
			continue
		}
		for x := s.cell0[c]; x < s.cell1[c]; x++ {
			if s.chosenCell[x] == c {
				s.chosenCell[x] = -1
			}
		}
		if g := s.group[c]; g >= 0 && s.chosenGroup[g] == c {
			s.chosenGroup[g] = -1
		}
	}
	if n < len(s.stack) {
		s.stack = s.stack[:n]
	}
}

// Both runs two theories as one: first, the cheap one, until it implies nothing
// more, then the second. Each literal is explained by the theory that implied it.
type Both struct {
	First, Second sat.Theory
	// second[v]: v's last theory implication came from Second.
	second []bool
}

// NewBoth combines first and second over a solver with vars variables.
func NewBoth(first, second sat.Theory, vars int) *Both {
	return &Both{First: first, Second: second, second: make([]bool, vars)}
}

// Propagate implements sat.Theory.
func (b *Both) Propagate(s *sat.Solver) []sat.Lit {
	before := len(s.Trail())
	c := b.First.Propagate(s)
	for _, l := range s.Trail()[before:] {
		b.second[l.Var()] = false
	}
	if c != nil || len(s.Trail()) > before {
		return c // after new literals, Boolean propagation first, then both again
	}
	c = b.Second.Propagate(s)
	for _, l := range s.Trail()[before:] {
		b.second[l.Var()] = true
	}
	return c
}

// Explain implements sat.Theory.
func (b *Both) Explain(l sat.Lit) []sat.Lit {
	if b.second[l.Var()] {
		return b.Second.Explain(l)
	}
	return b.First.Explain(l)
}

// Backtrack implements sat.Theory.
func (b *Both) Backtrack(n int) {
	b.First.Backtrack(n)
	b.Second.Backtrack(n)
}
