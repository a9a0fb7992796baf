package check

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"doppel/internal/brute"
)

// TestCasesStructured: on the brute-force corpus, every proof by cases comes as
// structured cases: each has a cycle, each choice of a position marks, in its window of
// the key's list (positions counted from 1), exactly the values the choice places
// there; the text has one block per case and says why they cover every attribution.
func TestCasesStructured(t *testing.T) {
	proofs, windows := 0, 0
	for seed := 0; seed < *seeds/4; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		h := brute.Random(rng, brute.Config{Values: 2})
		res, err := Check(h, Options{Models: ModelNames()})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range res.Anomalies {
			if len(a.Cases) == 0 {
				continue
			}
			proofs++
			if a.CasesCover == "" || !strings.Contains(a.Explanation, "Positions count from 1.") || !strings.Contains(a.Explanation, a.CasesCover) {
				t.Fatalf("seed %d: %s: the text lacks the base of positions or why the cases cover every attribution:\n%s", seed, a.Type, a.Explanation)
			}
			for i, cs := range a.Cases {
				if cs.N != i+1 || len(cs.Steps) < 2 || !strings.Contains(a.Explanation, "Case "+itoa(cs.N)+",") {
					t.Fatalf("seed %d: case %d of %s: %+v\n%s", seed, i+1, a.Type, cs, a.Explanation)
				}
				for _, st := range cs.Steps {
					if st.FromIndex != h.Txns[st.From].Index || st.ToIndex != h.Txns[st.To].Index {
						t.Fatalf("seed %d: step %+v names the wrong :index", seed, st)
					}
				}
				for _, ch := range cs.Choices {
					if ch.Kind != "position" {
						continue
					}
					w := ch.Window
					if w == nil {
						t.Fatalf("seed %d: choice %+v has no window", seed, ch)
					}
					// A block may reach past the list (a choice the case negates): the window
					// shows the part within it.
					in := min(w.MarkTo, w.Length) - w.MarkFrom + 1
					if ch.Position != w.MarkFrom || w.MarkTo-w.MarkFrom+1 != len(ch.Values) || w.From < 1 ||
						w.MarkFrom < w.From || w.From+len(w.Values)-1 > w.Length || in < 0 || w.MarkFrom-w.From+in > len(w.Values) {
						t.Fatalf("seed %d: choice %+v: window %+v", seed, ch, w)
					}
					if got := w.Values[w.MarkFrom-w.From : w.MarkFrom-w.From+in]; !slices.Equal(got, ch.Values[:in]) {
						t.Fatalf("seed %d: choice %q marks %v in its window, not its values %v", seed, ch.Text, got, ch.Values)
					}
					windows++
				}
			}
		}
	}
	t.Logf("%d proofs by cases, %d position windows", proofs, windows)
	if proofs == 0 || windows == 0 {
		t.Errorf("no proof by cases with positions in the corpus: nothing tested")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestVerdictOnly: with VerdictOnly, every history of the corpus gets the same verdict
// per model, and the solver's "not valid" is not explained by cases (a counterexample
// search decides its candidates so and explains only the cut it keeps; the G-single
// search's cases are its decision, and stay). Some history must lose its proof by
// cases, else the test checks nothing.
func TestVerdictOnly(t *testing.T) {
	skipped := 0
	hasCases := func(res Result) bool {
		for _, a := range res.Anomalies {
			if len(a.Cases) > 0 {
				return true
			}
		}
		return false
	}
	for seed := 0; seed < *seeds/4; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		h := brute.Random(rng, brute.Config{Values: 2})
		for _, m := range []string{"serializable", "read-committed", "snapshot-isolation"} {
			full, err := Check(h, Options{Models: []string{m}})
			if err != nil {
				t.Fatal(err)
			}
			only, err := Check(h, Options{Models: []string{m}, VerdictOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			if full.Valid != only.Valid {
				t.Fatalf("seed %d, %s: %v with explanations, %v without", seed, m, full.Valid, only.Valid)
			}
			if hasCases(only) {
				t.Fatalf("seed %d, %s: a proof by cases with VerdictOnly", seed, m)
			}
			if hasCases(full) {
				skipped++
			}
		}
	}
	if skipped == 0 {
		t.Error("no history had a proof by cases: the test checks nothing")
	}
}
