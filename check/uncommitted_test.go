package check

import (
	"math/rand/v2"
	"testing"

	"doppel/internal/brute"
)

// TestReadUncommitted checks the read-uncommitted models on histories whose verdicts
// follow from Elle's definition by hand (DESIGN.md, "Read uncommitted"), duplicates
// included, and against the brute-force oracle.
func TestReadUncommitted(t *testing.T) {
	const ru, ss, st = "read-uncommitted", "strong-session-read-uncommitted", "strong-read-uncommitted"
	for _, tc := range []struct {
		name, text string
		valid      []string // the others of the three are not valid
		anomaly    string   // a type found, when not valid
	}{
		{"g0", "ok [a x 1] [a y 2]\nok [a x 2] [a y 1]\nok [r x [1 2]] [r y [1 2]]", nil, "G0"},
		// A :fail writer gives no ww edge (Elle's write-index holds :ok and :info only).
		{"g0-through-fail", "ok [a x 1] [a y 2]\nfail [a x 2] [a y 1]\nok [r x [1 2]] [r y [1 2]]", []string{ru, ss, st}, ""},
		// An :info writer may have aborted: then it is like a :fail one.
		{"g0-through-info", "ok [a x 1] [a y 2]\ninfo [a x 2] [a y 1]\nok [r x [1 2]] [r y [1 2]]", []string{ru, ss, st}, ""},
		// Dirty and intermediate reads, incompatible orders: allowed.
		{"g1", "ok [a x 1] [a x 2]\nfail [a x 3]\nok [r x [1]]\nok [r x [3]]\nok [r x [1 3 2]]", []string{ru, ss, st}, ""},
		// Interleaving two :ok writers' appends is a G0.
		{"interleaved", "ok [a x 1] [a x 2]\nok [a x 3]\nok [r x [1 3 2]]", nil, "G0"},
		// An unobserved append after an observed one of another writer: a G0 too.
		{"unobserved-after", "ok [a x 1] [a x 2]\nok [a x 3]\nok [r x [1 3]]", nil, "G0"},
		{"duplicate-elements", "ok [a x 1]\nok [r x [1 1]]", nil, "duplicate-elements"},
		// ... unless a second append of 1 exists, even a failed one.
		{"duplicate-by-fail", "ok [a x 1]\nfail [a x 1]\nok [r x [1 1]]", []string{ru, ss, st}, ""},
		{"garbage", "ok [a x 1]\nok [r x [1 2]]", nil, "garbage-read"},
		// Duplicated 1 on x: T1's gives the cycle T1 → T2 (x) → T1 (y); T3's does not.
		{"avoidable", "ok [a x 1] [a y 5]\nok [a y 6] [a x 2]\nok [a x 1]\nok [r x [1 2]] [r y [6 5]]", []string{ru, ss, st}, ""},
		// ... and without T3, unavoidable.
		{"unavoidable", "ok [a x 1] [a y 5]\nok [a y 6] [a x 2]\nok [r x [1 2]] [r y [6 5]]", nil, "G0"},
		// Two longest reads that differ: some choice is acyclic.
		{"two-longest", "ok [a x 1] [a y 2]\nok [a x 2] [a y 1]\nok [r x [1 2]] [r y [1 2]]\nok [r x [2 1]]", []string{ru, ss, st}, ""},
		{"process", "p0 ok [a x 2]\np0 ok [a x 1]\np1 ok [r x [1 2]]", []string{ru}, "G0-process"},
		{"realtime", "p0 ok [a x 1] inv=0 cmp=1\np1 ok [a x 2] inv=2 cmp=3\np2 ok [r x [2 1]] inv=4 cmp=5", []string{ru, ss}, "G0-realtime"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := brute.Parse(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Check(h, Options{Models: []string{ru, ss, st}})
			if err != nil {
				t.Fatal(err)
			}
			for _, mr := range res.Models {
				want := false
				for _, m := range tc.valid {
					want = want || m == mr.Model
				}
				if (mr.Valid == Valid) != want {
					t.Errorf("%s: %v, want valid=%v (anomalies %v)", mr.Model, mr.Valid, want, res.Anomalies)
				}
				if b := brute.Check(h, mr.Model); b != want {
					t.Errorf("%s: brute force says valid=%v, want %v", mr.Model, b, want)
				}
			}
			if tc.anomaly != "" && !contains(res.AnomalyTypes, tc.anomaly) {
				t.Errorf("anomalies %v, want %s among them", res.AnomalyTypes, tc.anomaly)
			}
		})
	}
}

// TestReadUncommittedReplay: on random histories with duplicates, the verified replays
// (and the strict-serializable witness) tried before the search (replayUncommitted)
// prove some histories, and every verdict,
// with them or by the search alone (NoWitness), is the oracle's.
func TestReadUncommittedReplay(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 400
	}
	byReplay, byWitness := 0, 0
	for seed := 0; seed < n; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		h := brute.Random(rng, brute.Config{MaxTxns: 7, Values: 2})
		for _, m := range []string{"read-uncommitted", "strong-session-read-uncommitted", "strong-read-uncommitted"} {
			want := brute.Check(h, m)
			res, err := Check(h, Options{Models: []string{m}})
			if err != nil {
				t.Fatal(err)
			}
			search, _ := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true}})
			if (res.Valid == Valid) != want || (search.Valid == Valid) != want {
				t.Fatalf("seed %d, %s: %v (replays), %v (search alone), the oracle says valid=%v\n%s",
					seed, m, res.Valid, search.Valid, want, brute.Format(h))
			}
			if res.Stats.Witnessed > res.Stats.Replayed {
				byWitness++ // strict serializability's narrowed problem (strictNarrowedWitness)
			}
			if res.Stats.Replayed > 0 {
				byReplay++
				if search.Stats.Replayed > 0 {
					t.Fatalf("seed %d: a replay ran with NoWitness", seed)
				}
			}
		}
	}
	if byReplay < n/20 {
		t.Errorf("only %d verdicts of %d by a replay: the path is hardly exercised", byReplay, 3*n)
	}
	t.Logf("%d of %d verdicts by a verified replay, %d by strict serializability's narrowed problem", byReplay, 3*n, byWitness)
}
