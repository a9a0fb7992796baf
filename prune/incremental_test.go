package prune

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"doppel/encode"
	"doppel/internal/brute"
)

var incSeeds = 3000

// TestIncrementalIsExact: the incremental passes give exactly what passes over the whole
// graph give (windows, allowed positions, rank, rounds, contradiction and its
// explanation), on random histories from tiny to a few hundred transactions, at every
// level, whether incremental passes run whenever bounds are kept or only when few edges
// changed; and they do run.
func TestIncrementalIsExact(t *testing.T) {
	saved := incFraction
	defer func() { fullPasses, incFraction = false, saved }()
	ran := 0
	for seed := range incSeeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		cfg := brute.Config{Values: 1 + seed%3, MaxKeys: 2 + seed%6, MaxProcesses: 2 + seed%5, MaxOps: 2 + seed%4}
		cfg.MinTxns = 5 + seed%40
		cfg.MaxTxns = cfg.MinTxns + seed%200
		h := brute.Random(rng, cfg)
		in := encode.Infer(h)
		if len(in.Findings) > 0 {
			continue
		}
		for _, lv := range levels {
			opts := Options{Level: lv.level}
			fullPasses = true
			want := describe(Run(in, opts))
			for _, frac := range []int64{0, saved} {
				fullPasses, incFraction = false, frac
				res, p := runPruner(in, opts)
				if got := describe(res); got != want {
					t.Fatalf("seed %d, %+v, incFraction %d: incremental passes give\n%s\nwhole passes give\n%s\n%s", seed, lv.level, frac, got, want, brute.Format(h))
				}
				if p.inc != nil {
					ran += p.inc.passes
				}
			}
		}
	}
	if ran == 0 {
		t.Fatal("no incremental pass ran: the test compares nothing")
	}
	t.Logf("%d incremental batch passes, all exact", ran)
}

// describe prints everything a Result holds.
func describe(r *Result) string {
	s := fmt.Sprintf("rounds %d narrowed %d removed %d keyUnsat %v (key %d)\nlo %v\nhi %v\nallow %v\nrank %v\n",
		r.Rounds, r.Narrowed, r.Removed, r.KeyUnsat, r.UnsatKey, r.Win.Lo, r.Win.Hi, r.Win.Allow, r.Win.Rank)
	if c := r.Contradiction; c != nil {
		s += fmt.Sprintf("contradiction %s key %d txn %d txns %v steps %v: %s", c.Type, c.Key, c.Txn, c.Txns, slices.Clone(c.Steps), c.Text)
	}
	return s
}
