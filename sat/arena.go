package sat

import "math"

// Clauses live in one flat []Lit arena so that propagation reads a clause's size and
// literals from one place. A clause reference (cref) is the offset of its header:
//
//	arena[cr]   number of literals
//	arena[cr+1] flags: bit 0 learned, bit 1 deleted, bits 2.. LBD
//	arena[cr+2] activity (float32 bits); during garbage collection, the new reference
//	arena[cr+3:cr+3+size] the literals; lits[0], lits[1] are the watched ones, and for a
//	                      reason clause of three or more literals lits[0] is the implied one
const (
	clauseHeader  = 3
	flagLearnt    = 1
	flagDeleted   = 2
	flagLBDShift  = 2
	maxStoredLBD  = 1 << 20
	gcWasteFactor = 4 // collect when more than 1/gcWasteFactor of the arena is deleted
)

func (s *Solver) lits(cr int32) []Lit {
	n := int32(s.arena[cr])
	return s.arena[cr+clauseHeader : cr+clauseHeader+n : cr+clauseHeader+n]
}

func (s *Solver) isLearnt(cr int32) bool  { return s.arena[cr+1]&flagLearnt != 0 }
func (s *Solver) isDeleted(cr int32) bool { return s.arena[cr+1]&flagDeleted != 0 }
func (s *Solver) lbd(cr int32) int32      { return int32(s.arena[cr+1] >> flagLBDShift) }

func (s *Solver) setLBD(cr int32, lbd int32) {
	lbd = min(lbd, maxStoredLBD)
	s.arena[cr+1] = s.arena[cr+1]&(1<<flagLBDShift-1) | Lit(lbd<<flagLBDShift)
}

func (s *Solver) activityOf(cr int32) float32 {
	return math.Float32frombits(uint32(s.arena[cr+2]))
}

func (s *Solver) setActivity(cr int32, a float32) { s.arena[cr+2] = Lit(math.Float32bits(a)) }

// newClause copies lits into the arena. It may reallocate the arena: slices from s.lits
// taken before are stale afterwards.
func (s *Solver) newClause(lits []Lit, learnt bool, lbd int) int32 {
	cr := int32(len(s.arena))
	flags := Lit(min(lbd, maxStoredLBD) << flagLBDShift)
	if learnt {
		flags |= flagLearnt
	} else {
		s.numProblem++
	}
	s.arena = append(s.arena, Lit(len(lits)), flags, 0)
	s.arena = append(s.arena, lits...)
	return cr
}

// deleteClause marks a clause deleted; its watchers must be removed by the caller.
func (s *Solver) deleteClause(cr int32) {
	s.arena[cr+1] |= flagDeleted
	s.wasted += clauseHeader + int(s.arena[cr])
}

// collectGarbage compacts the arena once enough of it is deleted, and rewrites every clause
// reference (watchers, reasons of assigned variables, the learned list).
func (s *Solver) collectGarbage() {
	if s.wasted*gcWasteFactor < len(s.arena) {
		return
	}
	old := s.arena
	arena := make([]Lit, 0, len(old)-s.wasted+len(old)/8)
	for cr := 0; cr < len(old); {
		size := int(old[cr])
		next := cr + clauseHeader + size
		if old[cr+1]&flagDeleted == 0 {
			newCr := Lit(len(arena))
			arena = append(arena, old[cr:next]...)
			old[cr+2] = newCr // forwarding reference
		}
		cr = next
	}
	for l := range s.watches {
		ws := s.watches[l]
		for i, w := range ws {
			if w.cref < 0 {
				ws[i].cref = ^int32(old[^w.cref+2])
			} else {
				ws[i].cref = int32(old[w.cref+2])
			}
		}
	}
	for _, l := range s.trail {
		if r := s.reason[l.Var()]; r >= 0 {
			s.reason[l.Var()] = int32(old[r+2])
		}
	}
	for i, cr := range s.learnts {
		s.learnts[i] = int32(old[cr+2])
	}
	s.arena = arena
	s.wasted = 0
}
