package encode

import (
	"math/rand/v2"
	"strings"
	"testing"

	"doppel/internal/brute"
)

// TestDiagnosisClaimsHold: a key with no segmentation is named by which relaxation of
// its observations (no read cuts, no pins, neither) has one; each name is a claim about
// every attribution. With the relaxations' bounded search cut short (budgets of 0 to 3
// steps, undecided), the claim of the name given must still hold, checked by the
// search without a bound: a search that ran out proves nothing either way (it used to
// count as "has a segmentation", which named G1b whatever the cause).
func TestDiagnosisClaimsHold(t *testing.T) {
	saved := segmentBudget
	defer func() { segmentBudget = saved }()
	holds := func(p *Problem, k int32, cuts, pins bool) (ok, decided bool) {
		segmentBudget = saved * 100
		defer func() { segmentBudget = saved }()
		return p.segmentable(k, cuts, pins)
	}
	checked, undecided := 0, 0
	for seed := 0; seed < 20000; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		h := brute.Random(rng, brute.Config{Values: 2})
		for _, perRead := range []bool{false, true} {
			in := Infer(h)
			if perRead {
				in = InferPerRead(h)
			}
			in.CheckValues()
			for k := range in.Keys {
				if in.Keys[k].Bad {
					continue
				}
				p := &Problem{In: in, Plans: make([]Plan, len(in.Keys)), sc: newScratch(in, false)}
				if ok, decided := holds(p, int32(k), true, true); ok || !decided {
					continue
				}
				for _, budget := range []int{0, 1, 3, saved} {
					before := len(in.Findings)
					segmentBudget = budget
					in.Diagnose(int32(k))
					if _, decided := p.segmentable(int32(k), false, true); !decided {
						undecided++
					}
					segmentBudget = saved
					for _, f := range in.Findings[before:] {
						checked++
						var want, cuts, pins bool
						switch {
						case strings.Contains(f.Text, "every way to attribute its values to appends"):
							want, cuts, pins = true, false, true
						case strings.Contains(f.Text, "no way to split its values into whole appends that ends every read"),
							strings.Contains(f.Text, "no way to attribute its values that ends every read"):
							want, cuts, pins = true, true, false
						case strings.Contains(f.Text, "cannot be split into whole appends of distinct transactions, each transaction's appends together"):
							want, cuts, pins = false, false, false
						default:
							continue // a claim of its own (unique values, two pins at one place)
						}
						if ok, decided := holds(p, int32(k), cuts, pins); ok != want || !decided {
							t.Fatalf("seed %d (per read %v), budget %d: %s %q, but a segmentation with cuts %v and pins %v exists: %v (decided %v)\n%s",
								seed, perRead, budget, f.Type, f.Text, cuts, pins, ok, decided, brute.Format(h))
						}
					}
					in.Findings = in.Findings[:before]
				}
			}
		}
	}
	t.Logf("%d claims checked, %d diagnoses with the search for a segmentation without cuts undecided", checked, undecided)
	if checked == 0 || undecided == 0 {
		t.Errorf("nothing checked, or no search ran out: the test tests nothing")
	}
}
