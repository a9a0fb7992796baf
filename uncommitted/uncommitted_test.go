package uncommitted

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"doppel/internal/brute"
)

// The three models as Decide's (process, realtime) and the oracle's names.
var modelsUnderTest = []struct {
	name              string
	process, realtime bool
}{
	{"read-uncommitted", false, false},
	{"strong-session-read-uncommitted", true, false},
	{"strong-read-uncommitted", true, true},
}

// TestDecideHand: hand histories whose verdicts follow from the definition (DESIGN.md,
// "Read uncommitted"), through fixed keys, open keys (duplicate values) and findings.
func TestDecideHand(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		valid      [3]bool // read-uncommitted, strong-session, strong
		fixed      bool    // when invalid: the cycle is among fixed edges
		finding    string  // when invalid by a count
		open       int     // keys with a choice
	}{
		{name: "g0", text: "ok [a x 1] [a y 2]\nok [a x 2] [a y 1]\nok [r x [1 2]] [r y [1 2]]", fixed: true},
		{name: "g0-through-fail", text: "ok [a x 1] [a y 2]\nfail [a x 2] [a y 1]\nok [r x [1 2]] [r y [1 2]]", valid: [3]bool{true, true, true}},
		// Duplicated 1 on x (T1 or T3): T1's gives T1 → T2 (x) → T1 (y); T3's is acyclic.
		{name: "avoidable", text: "ok [a x 1] [a y 5]\nok [a y 6] [a x 2]\nok [a x 1]\nok [r x [1 2]] [r y [6 5]]", valid: [3]bool{true, true, true}, open: 1},
		// Both writers of 1 close a cycle: G0 in every attribution, found by the search.
		{name: "g0-through-duplicates", text: "ok [a x 1] [a y 5]\nok [a y 6] [a x 2]\nok [a x 1] [a z 7]\nok [a z 8] [a x 2]\nok [r x [1 2]] [r y [6 5]] [r z [8 7]]", open: 1},
		// A failed append of the duplicated value takes the position with no edge.
		{name: "duplicate-by-fail", text: "ok [a x 1] [a y 5]\nok [a y 6] [a x 2]\nfail [a x 1]\nok [r x [1 2]] [r y [6 5]]", valid: [3]bool{true, true, true}, open: 1},
		{name: "duplicate-elements", text: "ok [a x 1]\nok [r x [1 1]]", finding: "duplicate-elements"},
		{name: "garbage", text: "ok [a x 1]\nok [r x [1 2]]", finding: "garbage-read"},
		// Two longest reads: the second choice is acyclic.
		{name: "two-longest", text: "ok [a x 1] [a y 2]\nok [a x 2] [a y 1]\nok [r x [1 2]] [r y [1 2]]\nok [r x [2 1]]", valid: [3]bool{true, true, true}, open: 1},
		{name: "process", text: "p0 ok [a x 2]\np0 ok [a x 1]\np1 ok [r x [1 2]]", valid: [3]bool{true, false, false}, fixed: true},
		{name: "realtime", text: "p0 ok [a x 1] inv=0 cmp=1\np1 ok [a x 2] inv=2 cmp=3\np2 ok [r x [2 1]] inv=4 cmp=5", valid: [3]bool{true, true, false}, fixed: true},
		// A read that misses its own append still counts (a version read): 2 shown twice.
		{name: "internal", text: "ok [a x 1] [r x [2 2]]\nok [a x 2]", finding: "duplicate-elements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := brute.Parse(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			x := NewIndex(h)
			if x.Open() != tc.open {
				t.Errorf("%d open keys, want %d", x.Open(), tc.open)
			}
			for i, m := range modelsUnderTest {
				r := x.Decide(m.process, m.realtime, nil, nil)
				if (r.Verdict == Valid) != tc.valid[i] || r.Verdict == Unknown {
					t.Fatalf("%s: verdict %v, want valid=%v", m.name, r.Verdict, tc.valid[i])
				}
				if b := brute.Check(h, m.name); b != tc.valid[i] {
					t.Fatalf("%s: the oracle says %v: the hand verdict is wrong", m.name, b)
				}
				if tc.valid[i] {
					continue
				}
				switch {
				case tc.finding != "":
					if len(r.Findings) == 0 || r.Findings[0].Type != tc.finding {
						t.Errorf("%s: findings %+v, want %s", m.name, r.Findings, tc.finding)
					}
				case r.Cycle == nil && r.Serial != nil && m.process && !tc.fixed:
					// The serial search's proof: no order of the writers exists.
				case r.Cycle == nil || r.Fixed != tc.fixed:
					t.Errorf("%s: cycle %+v fixed=%v, want a cycle, fixed=%v", m.name, r.Cycle, r.Fixed, tc.fixed)
				default:
					checkCycle(t, r.Cycle)
				}
			}
		})
	}
}

// checkCycle: consecutive steps meet and the last returns to the first.
func checkCycle(t *testing.T, c []Step) {
	t.Helper()
	for i, s := range c {
		if s.To != c[(i+1)%len(c)].From {
			t.Fatalf("not a cycle: %+v", c)
		}
	}
}

// TestBeforeSearch: the caller's proof is asked only when keys are open, the fixed
// edges leave no cycle and the longest-reads witness did not prove it, and its true
// skips the search.
func TestBeforeSearch(t *testing.T) {
	for _, tc := range []struct {
		text  string
		asked bool
	}{
		{"ok [a x 1] [a y 2]\nok [a x 2] [a y 1]\nok [r x [1 2]] [r y [1 2]]", false},                                                    // fixed cycle
		{"ok [a x 1]\nok [a x 2]\nok [r x [1 2]]", false},                                                                                // all fixed, valid
		{"ok [a x 1] [a y 5]\nok [a y 6] [a x 2]\nok [a x 1]\nok [r x [1 2]] [r y [6 5]]", false},                                        // open, the witness proves it
		{"ok [a x 1]\nok [r x [1 1]]", false},                                                                                            // finding
		{"ok [a x 1] [a y 5]\nok [a y 6] [a x 2]\nok [a x 1] [a z 7]\nok [a z 8] [a x 2]\nok [r x [1 2]] [r y [6 5]] [r z [8 7]]", true}, // open, invalid
	} {
		h, err := brute.Parse(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		asked := false
		r := NewIndex(h).Decide(false, false, nil, func() bool { asked = true; return true })
		if asked != tc.asked {
			t.Errorf("%q: asked=%v, want %v", tc.text, asked, tc.asked)
		}
		if asked && (r.Verdict != Valid || !r.ByCaller) {
			t.Errorf("%q: the caller's proof was not taken: %+v", tc.text, r)
		}
		if x := NewIndex(h); x.Open() > 0 && !asked && !r.ByWitness {
			t.Errorf("%q: open keys, neither the witness nor the caller proved it: %+v", tc.text, r)
		}
	}
}

var decideSeeds = flag.Int("decide-seeds", 3000, "random histories TestDecideRandom compares with the oracle")

// TestDecideRandom compares Decide with the oracle on small random histories with few
// values (duplicates on every key; every other one with failed and indeterminate
// transactions), the index reused across the three models as the checker does.
func TestDecideRandom(t *testing.T) {
	seeds := *decideSeeds
	if testing.Short() {
		seeds = 300
	}
	open := 0
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		cfg := brute.Config{MaxTxns: 7, Values: 2}
		if seed%2 == 1 {
			// Failed and indeterminate appends: the runs search's ground.
			cfg.Strategy = brute.FailInfo
		}
		h := brute.Random(rng, cfg)
		x := NewIndex(h)
		if x.Open() > 0 {
			open++
		}
		for _, m := range modelsUnderTest {
			// With the serial and runs searches, and with the search over
			// attributions alone: by the solver, and by backtracking.
			want := brute.Check(h, m.name)
			for _, mode := range []struct{ noSerial, noSolver, solverOnly bool }{{false, false, false}, {true, false, true}, {true, true, false}} {
				x.NoSerial, x.NoSolver, x.SolverOnly = mode.noSerial, mode.noSolver, mode.solverOnly
				r := x.Decide(m.process, m.realtime, nil, nil)
				if (r.Verdict == Valid) != want || r.Verdict == Unknown {
					t.Fatalf("seed %d, %s (%+v): verdict %v, the oracle says valid=%v\n%s", seed, m.name, mode, r.Verdict, want, brute.Format(h))
				}
				if r.Verdict == Invalid && r.Serial == nil && len(r.Findings) == 0 {
					if len(r.Cycle) == 0 {
						t.Fatalf("seed %d, %s: not valid with no cycle to show\n%s", seed, m.name, brute.Format(h))
					}
					checkCycle(t, r.Cycle)
				}
			}
		}
	}
	if open < seeds/10 {
		t.Errorf("only %d of %d histories had open keys: the search is hardly exercised", open, seeds)
	}
}

// TestShortCycle: a ring of 30 transactions, each before the next on its own key (the
// cycle a depth-first search meets first), and a G0 between the last two on key s: the
// cycle reported is the two-transaction one, with the same verdict.
func TestShortCycle(t *testing.T) {
	const n = 30
	var lines []string
	for i := 0; i < n; i++ {
		line := fmt.Sprintf("ok [a r%d 1] [a r%d 2]", i, (i+n-1)%n)
		switch i {
		case n - 2:
			line += " [a s 2]"
		case n - 1:
			line += " [a s 1]"
		}
		lines = append(lines, line)
	}
	read := "ok [r s [1 2]]"
	for i := 0; i < n; i++ {
		read += fmt.Sprintf(" [r r%d [1 2]]", i)
	}
	h, err := brute.Parse(strings.Join(append(lines, read), "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if brute.Check(h, "read-uncommitted") {
		t.Fatal("the oracle finds the history valid: the test history is wrong")
	}
	r := NewIndex(h).Decide(false, false, nil, nil)
	if r.Verdict != Invalid || !r.Fixed {
		t.Fatalf("verdict %v fixed %v, want not valid among fixed edges", r.Verdict, r.Fixed)
	}
	checkCycle(t, r.Cycle)
	if len(r.Cycle) != 2 {
		t.Errorf("a cycle of %d steps, want the 2 of key s: %+v", len(r.Cycle), r.Cycle)
	}
}
