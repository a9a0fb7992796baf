package check

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"doppel/history"
	"doppel/internal/brute"
)

// TestLostUpdatesAreSound: on the brute-force corpus (snapshot-like histories without
// first-committer-wins make lost updates), every lost-update anomaly is one the brute
// force confirms: each model it counts for is not valid, its transactions are :ok, read
// the key first with equal lists and append to it; and some are found.
func TestLostUpdatesAreSound(t *testing.T) {
	configs := []brute.Config{{Strategy: brute.SnapshotLike}, {Strategy: brute.SnapshotLike, Values: 3}, {}}
	found := 0
	for seed := 0; seed < *namedSeeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		h := brute.Random(rng, configs[seed%len(configs)])
		res, err := Check(h, Options{Models: ModelNames()})
		if err != nil {
			t.Fatal(err)
		}
		for i := range res.Anomalies {
			a := &res.Anomalies[i]
			if a.Type != "lost-update" {
				continue
			}
			found++
			if len(a.Txns) < 2 {
				t.Fatalf("seed %d: lost-update with %d transactions", seed, len(a.Txns))
			}
			var first []int32
			for _, ref := range a.Txns {
				tx := &h.Txns[ref.ID]
				read := int32(-1)
				for j := tx.OpStart; j < tx.OpEnd; j++ {
					if op := &h.Ops[j]; h.Keys[op.Key] == a.Key {
						if op.Kind == history.Read && read < 0 {
							read = j
						}
						if op.Kind == history.Append {
							break
						}
					}
				}
				if tx.Status != history.OK || read < 0 {
					t.Fatalf("seed %d: T%d did not read key %s before appending\n%s", seed, ref.ID, a.Key, brute.Format(h))
				}
				list := h.ReadList(&h.Ops[read])
				if first != nil && !slices.Equal(first, list) {
					t.Fatalf("seed %d: the reads of the lost update differ\n%s", seed, brute.Format(h))
				}
				first = list
			}
			for _, m := range ModelNames() {
				if CountsFor(a, m) && a.countsFor(m) && brute.Check(h, m) {
					t.Fatalf("seed %d: lost-update counts against %s, which the brute force finds valid\n%s", seed, m, brute.Format(h))
				}
			}
			if !strings.Contains(a.Explanation, "lost") {
				t.Errorf("seed %d: explanation %q", seed, a.Explanation)
			}
		}
	}
	t.Logf("%d lost updates", found)
	if found == 0 {
		t.Errorf("no lost update in the corpus: the test checks nothing")
	}
}

// TestElleLostUpdate: Elle's lost-update test history gets Elle's two anomalies,
// lost-update (first, with its key and both transactions) and G2-item.
func TestElleLostUpdate(t *testing.T) {
	h, err := history.ParseFile("../testdata/elle/lost-update.edn")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(h, Options{Models: []string{"strict-serializable"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.AnomalyTypes, []string{"G2-item", "lost-update"}) {
		t.Errorf("anomaly types %v, want Elle's G2-item and lost-update", res.AnomalyTypes)
	}
	a := res.Anomalies[0]
	if a.Type != "lost-update" || a.Key != ":x" || len(a.Txns) != 2 || a.Txns[0].Index != 3 || a.Txns[1].Index != 5 {
		t.Errorf("first anomaly %+v", a)
	}
}
