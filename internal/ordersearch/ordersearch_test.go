package ordersearch

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestStateSet compares the set with a map over many random keys, through its growth.
func TestStateSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s stateSet
	want := map[string]bool{}
	for i := 0; i < 200000; i++ {
		b := make([]byte, rng.IntN(6))
		for j := range b {
			b[j] = byte(rng.IntN(4))
		}
		if s.has(b) != want[string(b)] {
			t.Fatalf("step %d: has(%v) = %v, want %v", i, b, !want[string(b)], want[string(b)])
		}
		if !want[string(b)] && rng.IntN(2) == 0 {
			s.add(b)
			want[string(b)] = true
		}
	}
	if s.n != len(want) {
		t.Fatalf("%d entries, want %d", s.n, len(want))
	}
}

// toy is a Space of chains whose steps each run only at some counts of steps run so
// far (allowed[c][i] is a bit set of counts).
type toy struct {
	allowed [][]uint32
	head    []int32
	order   []int32
}

func (s *toy) Candidates(buf []int32) []int32 {
	for c := range s.allowed {
		if int(s.head[c]) < len(s.allowed[c]) {
			buf = append(buf, int32(c))
		}
	}
	return buf
}

func (s *toy) Run(c int32) bool {
	if s.allowed[c][s.head[c]]&(1<<len(s.order)) == 0 {
		return false
	}
	s.head[c]++
	s.order = append(s.order, c)
	return true
}

func (s *toy) Undo() {
	c := s.order[len(s.order)-1]
	s.order = s.order[:len(s.order)-1]
	s.head[c]--
}

func (s *toy) Done() bool {
	for c := range s.allowed {
		if int(s.head[c]) < len(s.allowed[c]) {
			return false
		}
	}
	return true
}

func (s *toy) State(buf []byte) []byte {
	for _, h := range s.head {
		buf = binary.AppendUvarint(buf, uint64(h))
	}
	return buf
}

// exists enumerates every interleaving.
func (s *toy) exists() bool {
	if s.Done() {
		return true
	}
	for c := range s.allowed {
		if int(s.head[c]) < len(s.allowed[c]) && s.Run(int32(c)) {
			ok := s.exists()
			s.Undo()
			if ok {
				return true
			}
		}
	}
	return false
}

// TestSearchAgainstEnumeration: the search finds an order exactly when one exists, and
// the order it leaves is complete and allowed.
func TestSearchAgainstEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	found, exhausted := 0, 0
	for seed := 0; seed < 3000; seed++ {
		s := &toy{}
		chains := 1 + rng.IntN(4)
		for range chains {
			steps := make([]uint32, rng.IntN(4))
			for i := range steps {
				steps[i] = rng.Uint32() | rng.Uint32()
			}
			s.allowed = append(s.allowed, steps)
		}
		s.head = make([]int32, chains)
		want := s.exists()
		r := Search(s, Limits{MaxStates: 1 << 20, MaxBytes: 1 << 30})
		switch {
		case r.Outcome == Stopped:
			t.Fatalf("seed %d: stopped", seed)
		case (r.Outcome == Found) != want:
			t.Fatalf("seed %d: %v, want found=%v", seed, r.Outcome, want)
		case r.Outcome == Found:
			found++
			if !s.Done() {
				t.Fatalf("seed %d: found, but the order is not complete", seed)
			}
			// Replay the order from the start.
			order := append([]int32(nil), s.order...)
			for range order {
				s.Undo()
			}
			for _, c := range order {
				if !s.Run(c) {
					t.Fatalf("seed %d: the order found does not run", seed)
				}
			}
		default:
			exhausted++
		}
	}
	if found < 300 || exhausted < 300 {
		t.Fatalf("found %d, exhausted %d: the toy is too easy one way", found, exhausted)
	}
}

// TestSearchResumesWithMemo: a search stopped by MaxStates and started again with the
// same Memo and more states reaches the verdict of an unlimited search, counts the
// failed states of both turns, and does not fail more states in all than the unlimited
// search (the second turn skips what the first saw fail).
func TestSearchResumesWithMemo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	resumed := 0
	for seed := 0; seed < 3000; seed++ {
		s := &toy{}
		chains := 2 + rng.IntN(4)
		for range chains {
			steps := make([]uint32, 2+rng.IntN(4))
			for i := range steps {
				steps[i] = rng.Uint32() | rng.Uint32() | rng.Uint32()
			}
			s.allowed = append(s.allowed, steps)
		}
		s.head = make([]int32, chains)
		whole := Search(s, Limits{MaxStates: 1 << 20, MaxBytes: 1 << 30})
		for range s.order {
			s.Undo()
		}
		if whole.States < 4 {
			continue
		}
		memo := &Memo{}
		first := Search(s, Limits{MaxStates: whole.States / 2, MaxBytes: 1 << 30, Memo: memo})
		if first.Outcome != Stopped {
			t.Fatalf("seed %d: the first turn ended %v with %d of %d states", seed, first.Outcome, first.States, whole.States)
		}
		if memo.States() != first.States {
			t.Fatalf("seed %d: the memo holds %d states, the turn reported %d", seed, memo.States(), first.States)
		}
		for range s.order { // a stopped search leaves the Space where it stopped
			s.Undo()
		}
		second := Search(s, Limits{MaxStates: 1 << 20, MaxBytes: 1 << 30, Memo: memo})
		if second.Outcome != whole.Outcome {
			t.Fatalf("seed %d: resumed %v, whole %v", seed, second.Outcome, whole.Outcome)
		}
		if second.States < first.States || second.States > whole.States {
			t.Fatalf("seed %d: %d states after both turns (first %d), %d in one", seed, second.States, first.States, whole.States)
		}
		resumed++
	}
	if resumed < 300 {
		t.Fatalf("only %d searches were long enough to stop and resume", resumed)
	}
}
