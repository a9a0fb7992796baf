package encode

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"doppel/internal/brute"
)

var (
	segmentSeeds     = flag.Int("segment-seeds", 3000, "random histories TestSegmentMatchesReference compares")
	segmentableSeeds = flag.Int("segmentable-seeds", 800, "random histories TestSegmentableGroupedMatchesPlan compares")
)

// TestSegmentMatchesReference: segment, which finds where each sequence of values fits
// once for all the writers that append it, gives exactly the plans of segmentReference
// (every writer scanning every position of its first value): the same state, cuts,
// pins, blocks and candidates in the same order, on random histories of 1–3 values
// with long lists, with and without read cuts and pins, per transaction and per read,
// without windows and within random ones, with a fresh scratch per key and with one
// shared over all keys (as BuildFrom's), and with grouping from 1, 2 or 8 occurrences
// of a writer's first value.
func TestSegmentMatchesReference(t *testing.T) {
	saved := groupMinOccurrences
	defer func() { groupMinOccurrences = saved }()
	compared, grouped, open := 0, 0, 0
	for seed := 0; seed < *segmentSeeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 9))
		cfg := brute.Config{Values: 1 + rng.IntN(3), MaxKeys: 1 + rng.IntN(3), MaxOps: 2 + rng.IntN(6),
			MinTxns: 2, MaxTxns: []int{8, 30, 80}[rng.IntN(3)], MaxProcesses: 1 + rng.IntN(4)}
		h := brute.Random(rng, cfg)
		for mode := range 3 { // one base per transaction, per read, per read with the G-cursor pins
			in := Infer(h)
			switch mode {
			case 1:
				in = InferPerRead(h)
			case 2:
				in = InferSingleStop(h, nil)
			}
			in.CheckValues()
			var wins []*Windows
			wins = append(wins, nil)
			for range 2 {
				wins = append(wins, randomWindows(rng, in))
			}
			for wn, win := range wins {
				for _, fromOcc := range []int{1, 2, 8} {
					groupMinOccurrences = fromOcc
					shared, sharedRef := newScratch(in, true), newScratch(in, true)
					shared.win, sharedRef.win = win, win
					for k := range in.Keys {
						for _, cp := range [][2]bool{{true, true}, {false, true}, {true, false}, {false, false}} {
							fresh, freshRef := newScratch(in, false), newScratch(in, false)
							fresh.win, freshRef.win = win, win
							got := fresh.segment(int32(k), cp[0], cp[1])
							want := freshRef.segmentReference(int32(k), cp[0], cp[1])
							gotShared := shared.segment(int32(k), cp[0], cp[1])
							wantShared := sharedRef.segmentReference(int32(k), cp[0], cp[1])
							where := fmt.Sprintf("seed %d, inference %d, windows %d, grouping from %d, key %d, cuts %v, pins %v",
								seed, mode, wn, fromOcc, k, cp[0], cp[1])
							if !samePlan(got, want) {
								t.Fatalf("%s: segment gives\n%+v\nthe reference\n%+v\n%s", where, got, want, brute.Format(h))
							}
							if !samePlan(gotShared, wantShared) || !samePlan(gotShared, want) {
								t.Fatalf("%s, shared scratch: segment gives\n%+v\nthe reference\n%+v\n%s", where, gotShared, wantShared, brute.Format(h))
							}
							compared++
							if got.State == KeyOpen {
								open++
							}
							if slices.ContainsFunc(fresh.groupSize, func(s int32) bool { return s >= 2 }) {
								grouped++
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d plans compared, %d open, %d with writers grouped", compared, open, grouped)
	if grouped == 0 || open == 0 {
		t.Errorf("no writer was grouped or no key open: the test tests nothing")
	}
}

// samePlan compares plans, with a nil slice equal to an empty one.
func samePlan(a, b Plan) bool {
	norm := func(p Plan) Plan {
		if len(p.Blocks) == 0 {
			p.Blocks = nil
		}
		if len(p.Cands) == 0 {
			p.Cands = nil
		}
		if len(p.Cut) == 0 {
			p.Cut = nil
		}
		if len(p.Pin) == 0 {
			p.Pin = nil
		}
		if len(p.Unobserved) == 0 {
			p.Unobserved = nil
		}
		return p
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// randomWindows narrows each writer at random: a range (sometimes one position, inside
// or past the trace, or unbounded above) and sometimes a list of allowed positions.
func randomWindows(rng *rand.Rand, in *Inference) *Windows {
	win := NewWindows(len(in.Writers))
	win.Allow = make([][]int32, len(in.Writers))
	for w := range in.Writers {
		n := int32(len(in.Keys[in.Writers[w].Key].Trace))
		switch rng.IntN(4) {
		case 0: // unbounded
		case 1:
			win.Lo[w] = rng.Int32N(n + 2)
			win.Hi[w] = win.Lo[w] + rng.Int32N(n+2)
		case 2:
			win.Lo[w] = rng.Int32N(n + 2)
			win.Hi[w] = win.Lo[w]
		case 3:
			win.Lo[w] = rng.Int32N(n/2 + 1)
			for p := win.Lo[w]; p <= n; p++ {
				if rng.IntN(3) == 0 {
					win.Allow[w] = append(win.Allow[w], p)
				}
			}
		}
	}
	return win
}

// segmentableByPlan is Problem.segmentable as it was: segment's plan pl, then the
// depth-first search on its candidates.
func segmentableByPlan(in *Inference, k int32, pl Plan, budget int) (ok, decided bool) {
	switch pl.State {
	case KeyUnsat:
		return false, true
	case KeyFixed, KeyUnread:
		return true, true
	}
	return in.distinctSegmentation(k, pl.Cands, budget)
}

// compareSegmentable checks segmentableGrouped against segmentableByPlan on every key
// of in, with and without cuts and pins, at several budgets; it returns how many
// answers it compared and how many of them came from a depth-first search.
func compareSegmentable(t *testing.T, in *Inference, where string) (answered, searched int) {
	t.Helper()
	for k := range in.Keys {
		for _, cp := range [][2]bool{{true, true}, {false, true}, {true, false}, {false, false}} {
			pl := newScratch(in, false).segment(int32(k), cp[0], cp[1])
			for _, budget := range []int{0, 1, 3, 10, 100, 200000} {
				wantOK, wantDecided := segmentableByPlan(in, int32(k), pl, budget)
				ok, decided, ans := newScratch(in, false).segmentableGrouped(int32(k), cp[0], cp[1], budget)
				if !ans {
					continue
				}
				answered++
				if budget == 0 && !decided {
					searched++
				}
				if ok != wantOK || decided != wantDecided {
					t.Fatalf("%s, key %d, cuts %v, pins %v, budget %d: segmentableGrouped says %v (decided %v), the plan %v (decided %v)",
						where, k, cp[0], cp[1], budget, ok, decided, wantOK, wantDecided)
				}
			}
		}
	}
	return answered, searched
}

// TestSegmentableGroupedMatchesPlan: the explanation's question whether a key has a
// segmentation with distinct writers gets the same answer (and the same "undecided"
// when the search's budget runs out: the search meets the candidates in the same
// order) from the groups as from segment's plan, on random histories; sorting by
// counting forced, so that small traces take the grouped path too.
func TestSegmentableGroupedMatchesPlan(t *testing.T) {
	savedMin, savedSlack := groupMinOccurrences, countingSortSlack
	defer func() { groupMinOccurrences, countingSortSlack = savedMin, savedSlack }()
	answered, searched, declined := 0, 0, 0
	for seed := 0; seed < *segmentableSeeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 21))
		cfg := brute.Config{Values: 1 + rng.IntN(3), MaxKeys: 1 + rng.IntN(3), MaxOps: 2 + rng.IntN(6),
			MinTxns: 2, MaxTxns: []int{8, 30, 80}[rng.IntN(3)], MaxProcesses: 1 + rng.IntN(4)}
		h := brute.Random(rng, cfg)
		in := Infer(h)
		in.CheckValues()
		for _, fromOcc := range []int{1, 2, 8} {
			for _, slack := range []int{-1 << 30, savedSlack} {
				groupMinOccurrences, countingSortSlack = fromOcc, slack
				a, s := compareSegmentable(t, in, fmt.Sprintf("seed %d, grouping from %d, slack %d", seed, fromOcc, slack))
				answered, searched = answered+a, searched+s
			}
		}
		perRead := InferPerRead(h)
		for k := range perRead.Keys {
			if _, _, ans := newScratch(perRead, false).segmentableGrouped(int32(k), true, true, 10); ans && perRead.Keys[k].TraceBy >= 0 && len(perRead.Keys[k].Trace) > 0 {
				t.Fatalf("seed %d: the grouped search answered per read", seed)
			}
			declined++
		}
	}
	t.Logf("%d answers compared, %d of them undecided at budget 0 (a search ran), %d per-read keys declined", answered, searched, declined)
	if searched == 0 {
		t.Errorf("no search ran on the grouped path: the test tests too little")
	}
}
