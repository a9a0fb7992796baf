// Package ordersearch is the depth-first search over the orders in which processes'
// transactions run, shared by the serial searches of strong-session and strong read
// committed (check/rcserial.go) and of the strong forms of read uncommitted
// (uncommitted/serial.go). The caller's Space says which processes may go next and
// runs or undoes one step; the search tries them in that order, remembers every state
// it has seen fail (the state fixes the rest of the search, so a state that failed
// once fails again) and stops at the caller's limits.
package ordersearch

import "hash/maphash"

// Space is one serial search's state and its moves.
type Space interface {
	// Candidates appends to buf the processes whose next transaction may go next, in
	// the order to try them (none: the state fails).
	Candidates(buf []int32) []int32
	// Run runs process c's next transaction; false, with nothing changed, when it
	// cannot run after all.
	Run(c int32) bool
	// Undo reverts the last transaction Run ran.
	Undo()
	// Done reports whether the order run so far is complete.
	Done() bool
	// State appends to buf an encoding of the state: equal encodings, equal searches
	// from there.
	State(buf []byte) []byte
}

// Limits bound a search: the failed states remembered (and their bytes), and Stop,
// asked every 1024 steps.
type Limits struct {
	MaxStates int
	MaxBytes  int
	Stop      func() bool
	// Memo, when set, holds the failed states across searches of one Space (the same
	// history and constraints): a search stopped by its limits and started again
	// skips what it already saw fail. MaxStates and MaxBytes then count them all.
	Memo *Memo
}

// Memo is the failed states a search remembers (Limits.Memo).
type Memo struct{ failed stateSet }

// States is the number of failed states m holds.
func (m *Memo) States() int { return m.failed.n }

// Outcome is how a search ended.
type Outcome int

const (
	// Found: the Space holds a complete order.
	Found Outcome = iota
	// Exhausted: no order is complete.
	Exhausted
	// Stopped: by the limits.
	Stopped
)

// Result is a search's outcome, with the failed states it remembered.
type Result struct {
	Outcome Outcome
	States  int
}

// Search runs the depth-first search from sp's current state.
func Search(sp Space, lim Limits) Result {
	if sp.Done() {
		return Result{Outcome: Found}
	}
	failed := &stateSet{}
	if lim.Memo != nil {
		failed = &lim.Memo.failed
	}
	type frame struct{ from, next, end int } // its candidates: cands[from:end]
	var cands []int32
	var frames []frame
	var key []byte
	push := func() {
		from := len(cands)
		cands = sp.Candidates(cands)
		frames = append(frames, frame{from, from, len(cands)})
	}
	push()
	for steps := 1; len(frames) > 0; steps++ {
		if steps&1023 == 0 && lim.Stop != nil && lim.Stop() {
			return Result{Outcome: Stopped, States: failed.n}
		}
		f := &frames[len(frames)-1]
		if f.next > f.from {
			sp.Undo() // the candidate tried last ran, and its state failed
		}
		ran := false
		for f.next < f.end {
			c := cands[f.next]
			f.next++
			if !sp.Run(c) {
				continue
			}
			if sp.Done() {
				return Result{Outcome: Found, States: failed.n}
			}
			if key = sp.State(key[:0]); failed.has(key) {
				sp.Undo()
				continue
			}
			ran = true
			break
		}
		if ran {
			push()
			continue
		}
		// Every candidate failed: so does this state.
		cands = cands[:f.from]
		frames = frames[:len(frames)-1]
		key = sp.State(key[:0])
		failed.add(key)
		if failed.n > lim.MaxStates || failed.bytes() > lim.MaxBytes || len(failed.arena) > maxArena {
			return Result{Outcome: Stopped, States: failed.n}
		}
	}
	return Result{Outcome: Exhausted, States: failed.n}
}

// maxArena keeps the arena's offsets within 32 bits.
const maxArena = 1 << 31

// stateSet is a set of byte strings kept in one arena: millions of short keys that a
// map of strings would allocate one by one, and the collector scan.
type stateSet struct {
	arena []byte
	ends  []uint32 // per entry: its end in arena (it starts where the one before ends)
	slots []uint64 // open addressing: hash<<32 | entry+1; 0 empty
	seed  maphash.Seed
	n     int
}

func (s *stateSet) entry(i uint32) []byte {
	from := uint32(0)
	if i > 0 {
		from = s.ends[i-1]
	}
	return s.arena[from:s.ends[i]]
}

func (s *stateSet) hash(b []byte) uint32 {
	return uint32(maphash.Bytes(s.seed, b))
}

func (s *stateSet) has(b []byte) bool {
	if s.n == 0 {
		return false
	}
	h := s.hash(b)
	mask := uint32(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := s.slots[i]
		if v == 0 {
			return false
		}
		if uint32(v>>32) == h && string(s.entry(uint32(v)-1)) == string(b) {
			return true
		}
	}
}

// add adds b, which the set does not hold.
func (s *stateSet) add(b []byte) {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	h := s.hash(b)
	s.arena = append(s.arena, b...)
	s.ends = append(s.ends, uint32(len(s.arena)))
	s.n++
	s.put(h, uint32(s.n))
}

func (s *stateSet) put(h, ref uint32) {
	mask := uint32(len(s.slots) - 1)
	i := h & mask
	for s.slots[i] != 0 {
		i = (i + 1) & mask
	}
	s.slots[i] = uint64(h)<<32 | uint64(ref)
}

func (s *stateSet) grow() {
	old := s.slots
	if s.slots == nil {
		s.seed = maphash.MakeSeed()
	}
	s.slots = make([]uint64, max(1024, 2*len(old)))
	for _, v := range old {
		if v != 0 {
			s.put(uint32(v>>32), uint32(v))
		}
	}
}

// bytes is the memory the set holds.
func (s *stateSet) bytes() int {
	return cap(s.arena) + 4*cap(s.ends) + 8*len(s.slots)
}
