package theory

import (
	"math"

	"doppel/sat"
)

// Counting is the supply-counting theory over a Tiling: on each open key, the trace
// positions holding value v (the demand) must be filled by the chosen blocks, and a
// writer has at most one block, so the writers still able to supply v must be able to
// supply all of it. Per (key, value) counter and per writer, the theory keeps the most
// the writer can still supply (the largest count of v among its candidates not yet
// false: candidates cut off by the end of the trace supply less); the sum over the
// key's writers is the supply.
//
//   - supply < demand: conflict (the false candidates that lowered a writer's most);
//   - supply = demand: every writer must supply its most, so each of its candidates
//     that supplies less is false.
//
// This is the pigeonhole the tiling alone only finds by search: many writers of the same
// few values competing for the positions of a hot key, where each placement leaves
// one writer fewer for the positions still open. Reasons are computed when the solver
// asks (Explain), from the candidates that were false when the literal was implied.
type Counting struct {
	Stats CountingStats

	// Layout (shared by Fresh). candOf[v]: the candidate of variable v, or -1.
	candOf, candVar []int32
	// Per candidate, its entries: the slots it supplies and how much (CSR).
	entStart, entSlot, entCnt []int32
	// Per slot (one counter's writer), its candidates and how much each supplies (CSR).
	slotStart, slotCand, slotCnt []int32
	slotCounter                  []int32
	// Per counter, its slots (contiguous) and the demand.
	counterStart, demand []int32

	// State. best[s]: the most slot s can still supply; atBest[s]: its live candidates
	// supplying that much; supply[k]: the sum of best over counter k's slots; dead[c]:
	// candidate c was seen false.
	best, atBest, supply []int32
	dead                 []bool
	stack                []sat.Lit
	// seenAt[v]: the stack index where v's literal was seen (MaxInt32: not seen);
	// markOf[v], counterOf[v]: for a literal this theory implied, the stack length then
	// and the counter that implied it.
	seenAt, markOf, counterOf []int32
	started                   bool
	// entDrop[j]: the j-th entry of the candidate being seen lowered its slot's most.
	entDrop []bool
	confl   []sat.Lit
}

// CountingStats counts the theory's work.
type CountingStats struct {
	Propagations int64 // literals implied
	Conflicts    int64
}

// NewCounting builds the counting theory for t over variables 0..vars-1, or returns
// nil when t has no value per cell (a Tiling built without them) or no candidate.
func NewCounting(t *Tiling, vars int) *Counting {
	if len(t.Var) == 0 || len(t.CellVal) != int(t.Cells) {
		return nil
	}
	// Counters: one per (key, value) with demand, numbered per key in order of first
	// occurrence. cellCounter[x]: the counter of cell x.
	cellCounter := make([]int32, t.Cells)
	var demand []int32
	for k, x0 := range t.KeyStart {
		x1 := t.Cells
		if k+1 < len(t.KeyStart) {
			x1 = t.KeyStart[k+1]
		}
		ids := map[int32]int32{}
		for x := x0; x < x1; x++ {
			id, ok := ids[t.CellVal[x]]
			if !ok {
				id = int32(len(demand))
				ids[t.CellVal[x]] = id
				demand = append(demand, 0)
			}
			cellCounter[x] = id
			demand[id]++
		}
	}
	// Entries (candidate, counter, count) and slots (counter, writer). A writer is its
	// group, or the candidate alone when it has no group.
	type slotKey struct{ counter, writer int32 }
	slotOf := map[slotKey]int32{}
	var slotCounter []int32
	n := len(t.Var)
	c := &Counting{candVar: t.Var, candOf: make([]int32, vars)}
	for i := range c.candOf {
		c.candOf[i] = -1
	}
	c.entStart = make([]int32, n+1)
	counts := map[int32]int32{}
	var order []int32
	for i := 0; i < n; i++ {
		c.candOf[t.Var[i]] = int32(i)
		clear(counts)
		order = order[:0]
		for x := t.Cell0[i]; x < t.Cell1[i]; x++ {
			k := cellCounter[x]
			if counts[k] == 0 {
				order = append(order, k)
			}
			counts[k]++
		}
		writer := t.Group[i]
		if writer < 0 {
			writer = t.Groups + int32(i)
		}
		for _, k := range order {
			sk := slotKey{k, writer}
			s, ok := slotOf[sk]
			if !ok {
				s = int32(len(slotCounter))
				slotOf[sk] = s
				slotCounter = append(slotCounter, k)
			}
			c.entSlot = append(c.entSlot, s)
			c.entCnt = append(c.entCnt, counts[k])
		}
		c.entStart[i+1] = int32(len(c.entSlot))
	}
	// Renumber slots so that each counter's are contiguous.
	nk := len(demand)
	c.counterStart = make([]int32, nk+1)
	for _, k := range slotCounter {
		c.counterStart[k+1]++
	}
	for k := 1; k <= nk; k++ {
		c.counterStart[k] += c.counterStart[k-1]
	}
	fill := append([]int32(nil), c.counterStart...)
	renum := make([]int32, len(slotCounter))
	c.slotCounter = make([]int32, len(slotCounter))
	for s, k := range slotCounter {
		renum[s] = fill[k]
		c.slotCounter[fill[k]] = k
		fill[k]++
	}
	for e := range c.entSlot {
		c.entSlot[e] = renum[c.entSlot[e]]
	}
	ns := len(slotCounter)
	c.slotStart = make([]int32, ns+1)
	for _, s := range c.entSlot {
		c.slotStart[s+1]++
	}
	for s := 1; s <= ns; s++ {
		c.slotStart[s] += c.slotStart[s-1]
	}
	c.slotCand = make([]int32, len(c.entSlot))
	c.slotCnt = make([]int32, len(c.entSlot))
	fill = append(fill[:0], c.slotStart...)
	for i := 0; i < n; i++ {
		for e := c.entStart[i]; e < c.entStart[i+1]; e++ {
			s := c.entSlot[e]
			c.slotCand[fill[s]] = int32(i)
			c.slotCnt[fill[s]] = c.entCnt[e]
			fill[s]++
		}
	}
	c.demand = demand
	c.reset()
	return c
}

// Fresh returns the theory for another solver over the same candidates.
func (c *Counting) Fresh() *Counting {
	f := &Counting{candOf: c.candOf, candVar: c.candVar, entStart: c.entStart, entSlot: c.entSlot, entCnt: c.entCnt,
		slotStart: c.slotStart, slotCand: c.slotCand, slotCnt: c.slotCnt, slotCounter: c.slotCounter,
		counterStart: c.counterStart, demand: c.demand}
	f.reset()
	return f
}

// reset sets the state of no assignment.
func (c *Counting) reset() {
	ns := len(c.slotCounter)
	c.best, c.atBest = make([]int32, ns), make([]int32, ns)
	c.supply = make([]int32, len(c.demand))
	c.dead = make([]bool, len(c.candVar))
	for s := 0; s < ns; s++ {
		for e := c.slotStart[s]; e < c.slotStart[s+1]; e++ {
			switch n := c.slotCnt[e]; {
			case n > c.best[s]:
				c.best[s], c.atBest[s] = n, 1
			case n == c.best[s]:
				c.atBest[s]++
			}
		}
		c.supply[c.slotCounter[s]] += c.best[s]
	}
	c.seenAt = make([]int32, len(c.candOf))
	for i := range c.seenAt {
		c.seenAt[i] = math.MaxInt32
	}
	c.markOf = make([]int32, len(c.candOf))
	c.counterOf = make([]int32, len(c.candOf))
	c.stack = make([]sat.Lit, 0, len(c.candOf))
	c.started = false
	most := int32(0)
	for i := 0; i+1 < len(c.entStart); i++ {
		most = max(most, c.entStart[i+1]-c.entStart[i])
	}
	c.entDrop = make([]bool, most)
	// Never nil: an empty conflict (a counter short at level 0) is still a conflict.
	c.confl = make([]sat.Lit, 0, 16)
}

func (c *Counting) lit(i int32) sat.Lit { return sat.PosLit(sat.Var(c.candVar[i])) }

func (c *Counting) cand(v sat.Var) int32 {
	if int(v) >= len(c.candOf) {
		return -1
	}
	return c.candOf[v]
}

// Propagate implements sat.Theory.
func (c *Counting) Propagate(sv *sat.Solver) []sat.Lit {
	if !c.started {
		// Counters tight before any assignment force from the start.
		c.started = true
		for k := range c.demand {
			if confl := c.check(sv, int32(k)); confl != nil {
				return confl
			}
		}
	}
	for len(c.stack) < len(sv.Trail()) {
		l := sv.Trail()[len(c.stack)]
		if int(l.Var()) < len(c.seenAt) {
			c.seenAt[l.Var()] = int32(len(c.stack))
		}
		c.stack = append(c.stack, l)
		i := c.cand(l.Var())
		if i < 0 || !l.IsNeg() {
			continue
		}
		c.dead[i] = true
		changed := false
		for e := c.entStart[i]; e < c.entStart[i+1]; e++ {
			s := c.entSlot[e]
			if c.entCnt[e] != c.best[s] {
				continue
			}
			if c.atBest[s]--; c.atBest[s] > 0 {
				continue
			}
			old := c.best[s]
			c.best[s], c.atBest[s] = 0, 0
			for f := c.slotStart[s]; f < c.slotStart[s+1]; f++ {
				if c.dead[c.slotCand[f]] {
					continue
				}
				switch n := c.slotCnt[f]; {
				case n > c.best[s]:
					c.best[s], c.atBest[s] = n, 1
				case n == c.best[s]:
					c.atBest[s]++
				}
			}
			c.supply[c.slotCounter[s]] -= old - c.best[s]
			c.entDrop[e-c.entStart[i]] = true
			changed = true
		}
		if !changed {
			continue
		}
		// The bookkeeping of this literal is complete: check the counters whose supply
		// fell (one that did not fall was checked when it last did: its candidates
		// supplying less than their writer's most are out already).
		for e := c.entStart[i]; e < c.entStart[i+1]; e++ {
			if !c.entDrop[e-c.entStart[i]] {
				continue
			}
			c.entDrop[e-c.entStart[i]] = false
			if confl := c.check(sv, c.slotCounter[c.entSlot[e]]); confl != nil {
				clear(c.entDrop)
				return confl
			}
		}
	}
	return nil
}

// check compares counter k's supply with its demand: a conflict, or the candidates
// forced out when they meet.
func (c *Counting) check(sv *sat.Solver, k int32) []sat.Lit {
	switch d := c.demand[k]; {
	case c.supply[k] < d:
		c.Stats.Conflicts++
		c.confl = c.confl[:0]
		for s := c.counterStart[k]; s < c.counterStart[k+1]; s++ {
			for f := c.slotStart[s]; f < c.slotStart[s+1]; f++ {
				if c.dead[c.slotCand[f]] && c.slotCnt[f] > c.best[s] {
					c.confl = append(c.confl, c.lit(c.slotCand[f]))
				}
			}
		}
		return c.confl
	case c.supply[k] == d:
		for s := c.counterStart[k]; s < c.counterStart[k+1]; s++ {
			for f := c.slotStart[s]; f < c.slotStart[s+1]; f++ {
				if c.slotCnt[f] >= c.best[s] {
					continue
				}
				l := c.lit(c.slotCand[f]).Not()
				if sv.Value(l) != sat.LUndef {
					continue // false: dead (or about to be seen); true: cannot be, see below
				}
				v := l.Var()
				c.markOf[v], c.counterOf[v] = int32(len(c.stack)), k
				c.Stats.Propagations++
				sv.Imply(l)
			}
		}
	}
	return nil
}

// Explain implements sat.Theory: the implied literal, and every candidate of its
// counter that was false when it was implied and supplied more than its writer could
// supply then.
func (c *Counting) Explain(l sat.Lit) []sat.Lit {
	v := l.Var()
	m, k := c.markOf[v], c.counterOf[v]
	out := []sat.Lit{l}
	deadThen := func(i int32) bool { return c.seenAt[c.candVar[i]] < m && c.dead[i] }
	for s := c.counterStart[k]; s < c.counterStart[k+1]; s++ {
		best := int32(0)
		for f := c.slotStart[s]; f < c.slotStart[s+1]; f++ {
			if !deadThen(c.slotCand[f]) {
				best = max(best, c.slotCnt[f])
			}
		}
		for f := c.slotStart[s]; f < c.slotStart[s+1]; f++ {
			if deadThen(c.slotCand[f]) && c.slotCnt[f] > best {
				out = append(out, c.lit(c.slotCand[f]))
			}
		}
	}
	return out
}

// Backtrack implements sat.Theory.
func (c *Counting) Backtrack(n int) {
	for j := len(c.stack) - 1; j >= n; j-- {
		l := c.stack[j]
		if int(l.Var()) < len(c.seenAt) {
			c.seenAt[l.Var()] = math.MaxInt32
		}
		i := c.cand(l.Var())
		if i < 0 || !l.IsNeg() {
			continue
		}
		c.dead[i] = false
		for e := c.entStart[i]; e < c.entStart[i+1]; e++ {
			s := c.entSlot[e]
			switch cnt := c.entCnt[e]; {
			case cnt > c.best[s]:
				c.supply[c.slotCounter[s]] += cnt - c.best[s]
				c.best[s], c.atBest[s] = cnt, 1
			case cnt == c.best[s]:
				c.atBest[s]++
			}
		}
	}
	if n < len(c.stack) {
		c.stack = c.stack[:n]
	}
}
