package theory

import "doppel/sat"

// Matching is Hall's condition over a Tiling's cells: every cell (trace position) of an
// open key must be covered by a chosen block, and a writer group chooses at most one
// block, so the groups whose candidates over a set of cells S are not false must be
// able to cover all of S. The theory keeps a matching of cells to live candidates in
// which group g takes at most cap(g) cells (its longest block: one block covers no
// more); when a cell cannot be matched (no augmenting path), the cells S the search
// reached and their groups N(S) are a Hall violation: every live candidate over S
// belongs to N(S), and N(S) can cover fewer cells than S holds. The conflict clause is
// the false candidates over S of groups outside N(S): one of them must be chosen.
//
// This is the pigeonhole the counting theory sees only for a whole (key, value): here
// any set of positions, e.g. the few positions of a value before a writer's window
// opens, that the writers still able to fill them cannot all fill. It only detects
// (no implied literals), so it costs nothing until a matched candidate becomes false;
// the matching is not restored on backtracking (a matching of live candidates stays
// one when candidates come back to life).
type Matching struct {
	Stats MatchingStats

	// Layout (shared by Fresh). Per candidate: its variable, cells and group.
	candVar, cell0, cell1, grp []int32
	candOf                     []int32 // per variable: its candidate, or -1
	coverStart, cover          []int32 // per cell, the candidates over it (CSR)
	groupStart, groupCands     []int32 // per group, its candidates (CSR)
	capOf                      []int32 // per group, the most cells one of its blocks covers
	slotStart                  []int32 // per group, its first slot (cap(g) slots each)

	// State. dead[c]: candidate c was seen false. match[x]: the candidate cell x is
	// matched to (-1: none); load[g]: the cells matched to group g's candidates, which
	// are slots[slotStart[g]:slotStart[g]+load[g]].
	dead  []bool
	match []int32
	load  []int32
	slots []int32
	stack []sat.Lit
	// pending: the cells not matched (inPending marks them).
	pending   []int32
	inPending []bool
	// The augmenting search: per cell and group the epoch it was reached in, per cell
	// the cell it was reached from and the candidate that cell would take.
	cellSeen, groupSeen, candSeen []int32
	from, fromCand                []int32
	epoch                         int32
	queue                         []int32
	confl                         []sat.Lit
}

// MatchingStats counts the theory's work.
type MatchingStats struct {
	Conflicts int64
	Searches  int64 // augmenting searches (a matched candidate became false)
}

// NewMatching builds the matching theory for t over variables 0..vars-1, or nil when t
// has no candidate.
func NewMatching(t *Tiling, vars int) *Matching {
	n := len(t.Var)
	if n == 0 {
		return nil
	}
	m := &Matching{candVar: t.Var, cell0: t.Cell0, cell1: t.Cell1, grp: make([]int32, n), candOf: make([]int32, vars)}
	for i := range m.candOf {
		m.candOf[i] = -1
	}
	groups := t.Groups
	for i := 0; i < n; i++ {
		m.candOf[t.Var[i]] = int32(i)
		if g := t.Group[i]; g >= 0 {
			m.grp[i] = g
		} else {
			m.grp[i] = groups // a writer with one candidate: a group of its own
			groups++
		}
	}
	cellCount := make([]int32, t.Cells+1)
	for i := 0; i < n; i++ {
		for x := t.Cell0[i]; x < t.Cell1[i]; x++ {
			cellCount[x+1]++
		}
	}
	m.coverStart, m.cover = csr(cellCount, t.Cell0, t.Cell1)
	groupCount := make([]int32, groups+1)
	m.capOf = make([]int32, groups)
	for i := 0; i < n; i++ {
		g := m.grp[i]
		groupCount[g+1]++
		m.capOf[g] = max(m.capOf[g], t.Cell1[i]-t.Cell0[i])
	}
	lo, hi := make([]int32, n), make([]int32, n)
	for i := 0; i < n; i++ {
		lo[i], hi[i] = m.grp[i], m.grp[i]+1
	}
	m.groupStart, m.groupCands = csr(groupCount, lo, hi)
	m.slotStart = make([]int32, groups+1)
	for g := int32(0); g < groups; g++ {
		m.slotStart[g+1] = m.slotStart[g] + m.capOf[g]
	}
	m.reset()
	return m
}

// Fresh returns a theory over the same layout in the state of no assignment.
func (m *Matching) Fresh() *Matching {
	f := &Matching{candVar: m.candVar, cell0: m.cell0, cell1: m.cell1, grp: m.grp, candOf: m.candOf,
		coverStart: m.coverStart, cover: m.cover, groupStart: m.groupStart, groupCands: m.groupCands, capOf: m.capOf,
		slotStart: m.slotStart}
	f.reset()
	return f
}

func (m *Matching) reset() {
	cells := len(m.coverStart) - 1
	m.dead = make([]bool, len(m.candVar))
	m.match = make([]int32, cells)
	m.load = make([]int32, len(m.capOf))
	m.slots = make([]int32, m.slotStart[len(m.capOf)])
	m.pending = make([]int32, 0, cells)
	m.inPending = make([]bool, cells)
	for x := range m.match {
		m.match[x] = -1
		m.pending = append(m.pending, int32(x))
		m.inPending[x] = true
	}
	m.cellSeen, m.from, m.fromCand = make([]int32, cells), make([]int32, cells), make([]int32, cells)
	m.groupSeen, m.candSeen = make([]int32, len(m.capOf)), make([]int32, len(m.candVar))
	m.stack = m.stack[:0]
	// Never nil: an empty conflict (a violation at level 0) is still a conflict.
	m.confl = make([]sat.Lit, 0, 16)
}

// Propagate implements sat.Theory.
func (m *Matching) Propagate(sv *sat.Solver) []sat.Lit {
	for len(m.stack) < len(sv.Trail()) {
		l := sv.Trail()[len(m.stack)]
		m.stack = append(m.stack, l)
		if !l.IsNeg() || int(l.Var()) >= len(m.candOf) {
			continue
		}
		c := m.candOf[l.Var()]
		if c < 0 {
			continue
		}
		m.dead[c] = true
		for x := m.cell0[c]; x < m.cell1[c]; x++ {
			if m.match[x] == c {
				m.unmatch(x)
				if !m.inPending[x] {
					m.inPending[x] = true
					m.pending = append(m.pending, x)
				}
			}
		}
	}
	for len(m.pending) > 0 {
		x := m.pending[len(m.pending)-1]
		if m.match[x] < 0 && !m.augment(x) {
			return m.conflict()
		}
		m.pending = m.pending[:len(m.pending)-1]
		m.inPending[x] = false
	}
	return nil
}

// augment matches cell x along an augmenting path (breadth first from x): false when
// there is none; the cells and groups it reached then stay marked with m.epoch.
func (m *Matching) augment(x int32) bool {
	m.Stats.Searches++
	m.epoch++
	if m.epoch == 0 { // wrapped: clear the marks
		clear(m.cellSeen)
		clear(m.groupSeen)
		clear(m.candSeen)
		m.epoch = 1
	}
	e := m.epoch
	m.queue = append(m.queue[:0], x)
	m.cellSeen[x], m.from[x] = e, -1
	for q := 0; q < len(m.queue); q++ {
		y := m.queue[q]
		for _, c := range m.cover[m.coverStart[y]:m.coverStart[y+1]] {
			if m.dead[c] {
				continue
			}
			g := m.grp[c]
			if m.groupSeen[g] == e {
				continue
			}
			if m.load[g] < m.capOf[g] {
				// Each cell of the path moves to the candidate it wants; the one
				// before it takes its room.
				for cur, cand := y, c; ; {
					prev, pc := m.from[cur], m.fromCand[cur]
					if m.match[cur] >= 0 {
						m.unmatch(cur)
					}
					m.matchTo(cur, cand)
					if prev < 0 {
						break
					}
					cur, cand = prev, pc
				}
				return true
			}
			m.groupSeen[g] = e
			// g is full: each cell it holds may move to another candidate, freeing
			// room in g for y.
			for _, z := range m.slots[m.slotStart[g] : m.slotStart[g]+m.load[g]] {
				if m.cellSeen[z] != e {
					m.cellSeen[z], m.from[z], m.fromCand[z] = e, y, c
					m.queue = append(m.queue, z)
				}
			}
		}
	}
	return false
}

// matchTo matches cell x to candidate c (its group has room).
func (m *Matching) matchTo(x, c int32) {
	g := m.grp[c]
	m.match[x] = c
	m.slots[m.slotStart[g]+m.load[g]] = x
	m.load[g]++
}

// unmatch frees cell x (matched) from its candidate's group.
func (m *Matching) unmatch(x int32) {
	g := m.grp[m.match[x]]
	m.match[x] = -1
	from, last := m.slotStart[g], m.slotStart[g]+m.load[g]-1
	for i := from; i <= last; i++ {
		if m.slots[i] == x {
			m.slots[i] = m.slots[last]
			break
		}
	}
	m.load[g]--
}

// conflict is the clause of the Hall violation the last failed augment reached: the
// false candidates over its cells whose groups it did not reach.
func (m *Matching) conflict() []sat.Lit {
	m.Stats.Conflicts++
	e := m.epoch
	m.confl = m.confl[:0]
	for _, y := range m.queue {
		for _, c := range m.cover[m.coverStart[y]:m.coverStart[y+1]] {
			if m.dead[c] && m.groupSeen[m.grp[c]] != e && m.candSeen[c] != e {
				m.candSeen[c] = e
				m.confl = append(m.confl, sat.PosLit(sat.Var(m.candVar[c])))
			}
		}
	}
	return m.confl
}

// Explain implements sat.Theory (the theory implies nothing).
func (m *Matching) Explain(l sat.Lit) []sat.Lit { return []sat.Lit{l} }

// Backtrack implements sat.Theory.
func (m *Matching) Backtrack(n int) {
	for j := len(m.stack) - 1; j >= n; j-- {
		l := m.stack[j]
		if !l.IsNeg() || int(l.Var()) >= len(m.candOf) {
			continue
		}
		if c := m.candOf[l.Var()]; c >= 0 {
			m.dead[c] = false
		}
	}
	if n < len(m.stack) {
		m.stack = m.stack[:n]
	}
}
