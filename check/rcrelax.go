package check

import (
	"doppel/internal/ordersearch"
)

// The serial search on a relaxation (DESIGN.md, "The serial search on few keys"): the
// same search with the reads and blocks of all keys but a few left out. Every order
// that runs each transaction of the whole history so also runs it so with fewer
// constraints, so when no order of the relaxation exists, none of the whole does: the
// model is refuted. The keys kept grow by refinement (counterexample-guided): an
// order the relaxation finds is replayed on every key, and the keys of the first
// transaction that cannot run there are kept in the next round; an order that
// replays on every key is one of the whole history. Most transactions of a relaxation
// to few keys change no kept key's list and run at once, so a lost update whose proof
// needs a few keys is refuted without the choices on the others, which the whole
// search must exhaust (branch rcjump in BENCHMARKS.md).

// rcRelaxRounds bounds the refinement's rounds; rcRelaxShare the share of the
// search's state bound that a round may use.
const (
	rcRelaxRounds = 256
	rcRelaxShare  = 8
)

// rcRelaxation is the outcome of relaxedSearch: the verdict, the last relaxation's
// search (for an explanation), the keys it kept, rounds run and states visited.
type rcRelaxation struct {
	v      Validity
	s      *rcSerial
	keys   []int32
	rounds int
	states int
	order  []int32 // when valid: an order of the whole history
}

// relaxedSearch runs the refinement from no key kept, full (the search of the whole
// history, at its first state) guiding each round and left at its first state. Valid:
// r.order is an order of the whole history (the last round's order, which runs on
// every key); Invalid: the
// relaxation kept in r.s has no order; Unknown: stopped, or out of rounds.
func (full *rcSerial) relaxedSearch(maxStates int) rcRelaxation {
	nk := len(full.in.Keys)
	keep := make([]bool, nk)
	r := rcRelaxation{v: Unknown}
	for r.rounds < rcRelaxRounds {
		r.rounds++
		s := newRCSerialKeys(full.h, full.in, full.realtime, full.stop, keep)
		if s == nil {
			return r
		}
		s.guide = full
		res := ordersearch.Search(s, ordersearch.Limits{MaxStates: maxStates, MaxBytes: rcSerialMemoBytes, Stop: full.stop})
		order := s.order
		for len(full.order) > 0 { // the whole search back at its first state
			full.Undo()
		}
		r.states += res.States
		r.s = s
		s.states = res.States
		switch res.Outcome {
		case ordersearch.Exhausted:
			r.v = Invalid
			return r
		case ordersearch.Stopped:
			return r
		}
		bad, at := full.firstViolation(order)
		if rcRelaxDebug != nil {
			rcRelaxDebug(r.rounds, at, len(bad), res.States)
		}
		if len(bad) == 0 {
			r.order = order
			r.v = Valid
			return r
		}
		for _, k := range bad {
			if !keep[k] {
				keep[k] = true
				r.keys = append(r.keys, k)
			}
		}
	}
	return r
}

// firstViolation replays order (a permutation of the :ok transactions that keeps
// process order) on every key and returns the keys on which its first transaction
// that cannot run fails (none: the order runs every transaction). The search's
// state is left as it was.
func (s *rcSerial) firstViolation(order []int32) ([]int32, int) {
	saved := append([]int32(nil), s.pos...)
	defer copy(s.pos, saved)
	var bad []int32
	first := -1
	for i, t := range order {
		for _, rd := range s.reads[t] {
			if p := s.pos[rd.key]; p < rd.base || rd.pin && p != rd.base {
				bad = append(bad, rd.key)
			}
		}
		for _, wi := range s.writers[t] {
			if k := s.in.Writers[wi].Key; !s.writerFits(wi, s.pos[k]) {
				bad = append(bad, k)
			}
		}
		if len(bad) > 0 && first < 0 {
			first = i
		}
		if len(bad) > 0 && (rcRelaxSpan == 0 || i >= first+rcRelaxSpan) {
			return bad, first
		}
		for _, wi := range s.writers[t] {
			w := &s.in.Writers[wi]
			if n := int32(len(s.in.Keys[w.Key].Trace)); s.pos[w.Key] < n {
				s.pos[w.Key] = min(n, s.pos[w.Key]+w.End-w.Start)
			}
		}
	}
	return bad, first
}

var rcRelaxDebug func(round, at, bad, states int)
var rcRelaxSpan int
