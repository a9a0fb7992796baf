package check

import (
	"math/rand/v2"
	"slices"
	"testing"

	"doppel/internal/brute"
)

// TestLatticeAgreesWithChecker: every implication of Elle's lattice is one the
// checker's definitions give (the stronger model's attributions and graph contain the
// weaker's), and every model doppel decides is in the lattice.
func TestLatticeAgreesWithChecker(t *testing.T) {
	for _, m := range ModelNames() {
		if _, ok := implies[m]; !ok {
			t.Errorf("%s is not in the lattice", m)
		}
		for _, w := range implies[m] {
			if _, ok := models[w]; !ok {
				t.Errorf("%s implies %s, which doppel does not decide", m, w)
			}
			if !graphWithin(w, m) || !forbidsWithin(w, m) {
				t.Errorf("%s implies %s in Elle's lattice, but the checker's definitions do not", m, w)
			}
		}
	}
}

// TestSummary checks Elle's summary against the verdicts on random histories: Not and
// AlsoNot hold exactly the models ruled out, no model is both ruled out and among the
// strongest valid ones, and every model found valid is implied by a strongest one.
func TestSummary(t *testing.T) {
	for seed := 0; seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 9))
		h := brute.Random(rng, brute.Config{Strategy: brute.Strategies[seed%len(brute.Strategies)]})
		res, err := Check(h, Options{Models: []string{"all"}})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, m := range append(append([]string{}, res.Not...), res.AlsoNot...) {
			out[m] = true
		}
		for _, mr := range res.Models {
			if (mr.Valid == Invalid) != out[mr.Model] {
				t.Fatalf("seed %d: %s is %v but not/also-not are %v / %v", seed, mr.Model, mr.Valid, res.Not, res.AlsoNot)
			}
			if mr.Valid != Valid {
				continue
			}
			covered := false
			for _, s := range res.Strongest {
				covered = covered || s == mr.Model || below(s)[mr.Model]
			}
			if !covered {
				t.Fatalf("seed %d: %s valid but not implied by the strongest %v", seed, mr.Model, res.Strongest)
			}
		}
		for _, s := range res.Strongest {
			if out[s] {
				t.Fatalf("seed %d: %s both strongest valid and ruled out", seed, s)
			}
		}
		for _, m := range res.Not {
			for x := range below(m) {
				if out[x] {
					t.Fatalf("seed %d: %s in not, but %s below it is ruled out too", seed, m, x)
				}
			}
		}
	}
}

// TestElleNames: Adya's names and EDN spellings of the models between read committed
// and serializable resolve, and read uncommitted's.
func TestElleNames(t *testing.T) {
	for name, want := range map[string]string{
		"PL-2+": "consistent-view", ":PL-CS": "cursor-stability", "pl-fcv": "forward-consistent-view",
		"PL-3U": "update-serializable", "PL-2L": "monotonic-view", ":PL-MSR": "monotonic-snapshot-read",
		":monotonic-atomic-view": "monotonic-atomic-view",
	} {
		if got, err := CanonicalModel(name); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	for name, want := range map[string]string{
		"read-uncommitted": "read-uncommitted", ":PL-1": "read-uncommitted",
		"strong-session-PL-1": "strong-session-read-uncommitted", "strong-PL-1": "strong-read-uncommitted",
	} {
		if got, err := CanonicalModel(name); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestBetweenModels checks the models between read committed and serializable on
// histories whose verdicts follow from Elle's definitions by hand, duplicates included.
func TestBetweenModels(t *testing.T) {
	rcLike := []string{"read-committed", "monotonic-atomic-view", "monotonic-view", "monotonic-snapshot-read"}
	gSingle := []string{"consistent-view", "forward-consistent-view", "update-serializable"}
	for _, tc := range []struct {
		name, text     string
		valid, invalid []string
	}{
		// Elle's lost-update: both read [] and append; only serializable's G-single and
		// cursor stability's lost-update see it.
		{"lost-update", "ok [r x []] [a x 1]\nok [r x []] [a x 2]\nok [r x [1 2]]",
			rcLike, list([]string{"cursor-stability", "serializable", "snapshot-isolation"}, gSingle)},
		// The same with duplicate values: both read [1] and append 1.
		{"lost-update-dup", "ok [a x 1]\nok [r x [1]] [a x 1]\nok [r x [1]] [a x 1]\nok [r x [1 1 1]]",
			rcLike, list([]string{"cursor-stability", "serializable"}, gSingle)},
		// G-single without a lost update: T1 read x before T2's append, and T2's append
		// to y comes before T1's.
		{"g-single", "ok [r x []] [a y 1]\nok [a x 1] [a y 2]\nok [r x [1]] [r y [2 1]]",
			list(rcLike, []string{"cursor-stability"}), list([]string{"serializable"}, gSingle)},
		// Write skew: two rw edges, allowed by the G-single models.
		{"write-skew", "ok [r x []] [r y []] [a x 1]\nok [r x []] [r y []] [a y 1]",
			list(rcLike, []string{"cursor-stability", "snapshot-isolation"}, gSingle), []string{"serializable"}},
		// A G-single under one attribution of the duplicate 1s only: if T2's [1] is
		// first, T1 (which read [1], and z from T3) has rw to T3, which wrote z: a
		// G-single; if T3's is first, no cycle.
		{"g-single-avoidable", "ok [r x [1]] [r z [5]]\nok [a x 1]\nok [a x 1] [a z 5]\nok [r x [1 1]]",
			list(rcLike, []string{"cursor-stability", "serializable"}, gSingle), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := brute.Parse(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Check(h, Options{Models: []string{"all"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, mr := range res.Models {
				switch {
				case slices.Contains(tc.valid, mr.Model) && mr.Valid != Valid,
					slices.Contains(tc.invalid, mr.Model) && mr.Valid != Invalid:
					t.Errorf("%s: %v (anomalies %v)", mr.Model, mr.Valid, mr.AnomalyTypes)
				}
				if want := brute.Check(h, mr.Model); (mr.Valid == Valid) != want {
					t.Errorf("%s: %v, brute force says valid=%v", mr.Model, mr.Valid, want)
				}
			}
		})
	}
}
