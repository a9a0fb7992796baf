package prune

import (
	"flag"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
)

var seeds = flag.Int("seeds", 20000, "random tiny histories in TestContradictionsAreSound")

// levels pairs each narrowing level with the weakest model it is sound for.
var levels = []struct {
	level Level
	model string
}{
	{Level{}, "serializable"},
	{Level{Process: true}, "strong-session-serializable"},
	{Level{Process: true, Realtime: true}, "strict-serializable"},
	{Level{Split: true}, "snapshot-isolation"},
	{Level{Process: true, PerRead: true}, "strong-session-read-committed"},
	{Level{Process: true, Realtime: true, PerRead: true}, "strong-read-committed"},
}

// TestContradictionsAreSound: a contradiction is a proof, so the brute force must find
// the history invalid under the level's model; and a history the brute force finds
// valid must keep, for every writer, a window (the narrowing never empties one).
func TestContradictionsAreSound(t *testing.T) {
	found := 0
	typed := map[string]int{}
	for seed := 0; seed < *seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		cfg := brute.Config{Values: 1 + seed%3}
		h := brute.Random(rng, cfg)
		oneBase, perRead := encode.Infer(h), encode.InferPerRead(h)
		for _, lv := range levels {
			in := oneBase
			if lv.level.PerRead {
				in = perRead
			}
			if len(in.Findings) > 0 {
				continue
			}
			res := Run(in, Options{Level: lv.level})
			valid := brute.Check(h, lv.model)
			if res.Contradiction != nil {
				found++
				if valid {
					t.Fatalf("seed %d: %s is valid, but narrowing found: %s\n%s", seed, lv.model, res.Contradiction.Text, brute.Format(h))
				}
				if text := strings.TrimSpace(res.Contradiction.Text); text == "" || strings.HasSuffix(text, ":") || res.Contradiction.Type == "" {
					t.Fatalf("seed %d: a contradiction without explanation or type", seed)
				}
				if typ := res.Contradiction.Type; !slices.Contains(levelTypes(lv.level), typ) {
					t.Fatalf("seed %d: %s's contradiction is typed %s, a cycle that model does not forbid: %s\n%s", seed, lv.model, typ, res.Contradiction.Text, brute.Format(h))
				}
				// A step names only the orders its level has: serializability's windows
				// owe nothing to real time.
				for _, st := range res.Contradiction.Steps {
					if !lv.level.Realtime && strings.Contains(st.Why, "real-time") ||
						!lv.level.Process && !lv.level.PerRead && strings.Contains(st.Why, "process order") {
						t.Fatalf("seed %d: %s's step names an order the model does not have: %s", seed, lv.model, st.Why)
					}
				}
				typed[res.Contradiction.Type]++
				continue
			}
			if res.KeyUnsat {
				if valid {
					t.Fatalf("seed %d: %s is valid, but a key was found without segmentation", seed, lv.model)
				}
				continue
			}
			for w := range in.Writers {
				if res.Win.Lo[w] > res.Win.Hi[w] {
					t.Fatalf("seed %d: writer %d left with an empty window [%d,%d]", seed, w, res.Win.Lo[w], res.Win.Hi[w])
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no contradiction found at all: the test exercises nothing")
	}
	t.Logf("%d contradictions, all sound; types %v", found, typed)
}

// levelTypes lists the cycle types a contradiction at level lv may be named by: the
// cycles of its model's graph, marked with the strongest order of the level (the
// windows may have been narrowed through it). The per-read levels' graph has no rw
// edge, so only G0 and G1c; the split graph's cycles with two rw edges are
// G-nonadjacent.
func levelTypes(lv Level) []string {
	base := []string{"G0", "G1c", "G-single", "G2-item"}
	switch {
	case lv.PerRead:
		base = []string{"G0", "G1c"}
	case lv.Split:
		base = []string{"G0", "G1c", "G-single", "G-nonadjacent"}
	}
	suffix := ""
	switch {
	case lv.Realtime:
		suffix = "-realtime"
	case lv.Process:
		suffix = "-process"
	}
	var out []string
	for _, b := range base {
		out = append(out, b+suffix)
	}
	return out
}

func parse(t *testing.T, edn string) *encode.Inference {
	t.Helper()
	h, err := history.ParseEDN(strings.NewReader(edn), "test")
	if err != nil {
		t.Fatal(err)
	}
	return encode.Infer(h)
}

// TestNarrowsThroughOtherKeys: T2's append of 1 to x could be the first or the second 1
// of x's list by values alone, but T2 read y before T3 appended to y, and T4 read x = [1]
// after T3 (real time not needed: T4 read y with T3's append): so T2's block is at 0.
func TestNarrowsThroughOtherKeys(t *testing.T) {
	in := parse(t, `{:index 0 :type :invoke :process 0 :f :txn :value [[:append "x" 1] [:r "y" nil]]}
{:index 1 :type :ok :process 0 :f :txn :value [[:append "x" 1] [:r "y" []]]}
{:index 2 :type :invoke :process 1 :f :txn :value [[:append "y" 5]]}
{:index 3 :type :ok :process 1 :f :txn :value [[:append "y" 5]]}
{:index 4 :type :invoke :process 2 :f :txn :value [[:r "y" nil] [:r "x" nil]]}
{:index 5 :type :ok :process 2 :f :txn :value [[:r "y" [5]] [:r "x" [1]]]}
{:index 6 :type :invoke :process 3 :f :txn :value [[:append "x" 1]]}
{:index 7 :type :ok :process 3 :f :txn :value [[:append "x" 1]]}
{:index 8 :type :invoke :process 4 :f :txn :value [[:r "x" nil]]}
{:index 9 :type :ok :process 4 :f :txn :value [[:r "x" [1 1]]]}
`)
	res := Run(in, Options{})
	if res.Contradiction != nil {
		t.Fatalf("valid history contradicted: %s", res.Contradiction.Text)
	}
	var x int32 = -1
	for k, name := range in.H.Keys {
		if name == `"x"` || name == "x" {
			x = int32(k)
		}
	}
	if x < 0 {
		t.Fatalf("no key x among %v", in.H.Keys)
	}
	// T0 (the first transaction) appends 1 to x and read y = []: before T1's append to
	// y, which T2 saw together with x = [1]. So T0 < T1 < T2, and T2 saw one value of
	// x: T0's block is position 0.
	for _, w := range in.Keys[x].Writers {
		if in.Writers[w].Txn == 0 {
			if res.Win.Lo[w] != 0 || res.Win.Hi[w] != 0 {
				t.Fatalf("T0's window on x is [%d,%d], want [0,0]", res.Win.Lo[w], res.Win.Hi[w])
			}
			return
		}
	}
	t.Fatal("T0 is not a writer of x")
}

// TestWriteSkewContradicts: two transactions that each read both keys empty and each
// append to one of them cannot be serialized; the passes prove it without search.
func TestWriteSkewContradicts(t *testing.T) {
	in := parse(t, `{:index 0 :type :invoke :process 0 :f :txn :value [[:r "x" nil] [:r "y" nil] [:append "x" 1]]}
{:index 1 :type :invoke :process 1 :f :txn :value [[:r "x" nil] [:r "y" nil] [:append "y" 1]]}
{:index 2 :type :ok :process 0 :f :txn :value [[:r "x" []] [:r "y" []] [:append "x" 1]]}
{:index 3 :type :ok :process 1 :f :txn :value [[:r "x" []] [:r "y" []] [:append "y" 1]]}
{:index 4 :type :invoke :process 2 :f :txn :value [[:r "x" nil] [:r "y" nil]]}
{:index 5 :type :ok :process 2 :f :txn :value [[:r "x" [1]] [:r "y" [1]]]}
`)
	res := Run(in, Options{})
	if res.Contradiction == nil {
		t.Fatal("write skew not contradicted")
	}
	if !strings.HasPrefix(res.Contradiction.Type, "G2") && !strings.HasPrefix(res.Contradiction.Type, "G-single") {
		t.Fatalf("write skew named %s", res.Contradiction.Type)
	}
	if len(res.Contradiction.Txns) < 2 {
		t.Fatalf("contradiction names %v", res.Contradiction.Txns)
	}
	t.Log(res.Contradiction.Text)
}

// TestKeyContradictionNamesInfoWriters: x = [1 1 1 1 1] needs the :info writer's three appends, but
// T5 (:info, named by its completion's :index) was invoked after the reader completed, so under real time its block, if
// it committed, lies past the read. T2, the only committed writer, is free: the text
// used to list the committed writers' narrowed windows only, and ended with ": ".
func TestKeyContradictionNamesInfoWriters(t *testing.T) {
	in := parse(t, `{:index 0 :type :invoke :process 0 :f :txn :value [[:r "x" nil]]}
{:index 1 :type :invoke :process 1 :f :txn :value [[:append "x" 1] [:append "x" 1]]}
{:index 2 :type :ok :process 1 :f :txn :value [[:append "x" 1] [:append "x" 1]]}
{:index 3 :type :ok :process 0 :f :txn :value [[:r "x" [1 1 1 1 1]]]}
{:index 4 :type :invoke :process 1 :f :txn :value [[:append "x" 1] [:append "x" 1] [:append "x" 1]]}
{:index 5 :type :info :process 1 :f :txn :value [[:append "x" 1] [:append "x" 1] [:append "x" 1]]}
`)
	res := Run(in, Options{Level: Level{Process: true, Realtime: true}})
	c := res.Contradiction
	if c == nil {
		t.Fatal("no contradiction: x shows five values, and only two can lie before the read")
	}
	t.Log(c.Text)
	if strings.HasSuffix(strings.TrimSpace(c.Text), ":") {
		t.Fatalf("the text ends with nothing after its colon: %q", c.Text)
	}
	for _, want := range []string{"T5 (:info; if it committed)'s block of 3 values at no position of the trace", "T2's block of 2 values at any position"} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("the text does not say %q: %q", want, c.Text)
		}
	}
	info := slices.IndexFunc(in.H.Txns, func(tx history.Txn) bool { return tx.Status == history.Info })
	if !slices.Contains(c.Txns, int32(info)) {
		t.Errorf("the contradiction's transactions %v leave out the :info writer T5", c.Txns)
	}
}

// TestAllWholeIsSerial: with Split and every transaction whole (Options.Whole), each
// transaction is one node as without Split, so the narrowing must find what the serial
// level with the same orders finds: the same contradiction or none, the same windows.
// With none whole it must find what Split alone finds.
func TestAllWholeIsSerial(t *testing.T) {
	compared := 0
	for seed := 0; seed < *seeds/4; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		h := brute.Random(rng, brute.Config{Values: 1 + seed%3})
		in := encode.Infer(h)
		if len(in.Findings) > 0 {
			continue
		}
		orders := []Level{{}, {Process: true}, {Process: true, Realtime: true}}
		lv := orders[seed%len(orders)]
		split := lv
		split.Split = true
		for _, whole := range []bool{true, false} {
			all := make([]bool, len(h.Txns))
			for i := range all {
				all[i] = whole
			}
			want := Run(in, Options{Level: lv})
			if !whole {
				want = Run(in, Options{Level: split})
			}
			got := Run(in, Options{Level: split, Whole: all})
			if (want.Contradiction == nil) != (got.Contradiction == nil) || want.KeyUnsat != got.KeyUnsat {
				t.Fatalf("seed %d, %+v, whole %v: contradiction %v, key unsat %v; want %v, %v\n%s", seed, lv, whole,
					got.Contradiction != nil, got.KeyUnsat, want.Contradiction != nil, want.KeyUnsat, brute.Format(h))
			}
			if want.Contradiction != nil || want.KeyUnsat {
				continue
			}
			compared++
			if !slices.Equal(want.Win.Lo, got.Win.Lo) || !slices.Equal(want.Win.Hi, got.Win.Hi) {
				t.Fatalf("seed %d, %+v, whole %v: windows %v..%v, want %v..%v\n%s", seed, lv, whole,
					got.Win.Lo, got.Win.Hi, want.Win.Lo, want.Win.Hi, brute.Format(h))
			}
		}
	}
	if compared == 0 {
		t.Fatal("no windows compared")
	}
}
