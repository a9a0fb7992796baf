package encode

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"doppel/history"
	"doppel/internal/brute"
)

// TestBuildSizesAndDeterminism checks that BuildFrom's measuring pass agrees with what
// it emits (the lists are built at exactly their size, with room for the process and
// real-time edges only), and that building twice gives the same problem.
func TestBuildSizesAndDeterminism(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 600; i++ {
		cfg := brute.Config{MinTxns: 2, MaxTxns: 8 + rng.IntN(60), MaxKeys: 1 + rng.IntN(6), Values: 1 + rng.IntN(4),
			MaxOps: 2 + rng.IntN(6), MaxProcesses: 1 + rng.IntN(5)}
		h := brute.Random(rng, cfg)
		p, q := Build(h), Build(h)
		if len(p.Guards) != cap(p.Guards) || len(p.Clauses) != cap(p.Clauses) || len(p.ClauseEnd) != cap(p.ClauseEnd) {
			t.Fatalf("history %d: guards %d/%d, literals %d/%d, clauses %d/%d (length/capacity)\n%s", i,
				len(p.Guards), cap(p.Guards), len(p.Clauses), cap(p.Clauses), len(p.ClauseEnd), cap(p.ClauseEnd), brute.Format(h))
		}
		if want := len(p.Edges) + len(p.ProcessEdges()) + len(p.RealtimeEdges()); cap(p.Edges) != want {
			t.Fatalf("history %d: edge capacity %d, want %d\n%s", i, cap(p.Edges), want, brute.Format(h))
		}
		if !slices.Equal(p.Edges, q.Edges) || !slices.Equal(p.Guards, q.Guards) || !slices.Equal(p.Clauses, q.Clauses) ||
			!slices.Equal(p.ClauseEnd, q.ClauseEnd) || p.NumVars != q.NumVars {
			t.Fatalf("history %d: two builds differ\n%s", i, brute.Format(h))
		}
	}
}

// benchHistory is a random history of n transactions with duplicated values over many
// keys, so that both fixed and open keys are common.
func benchHistory(n int) *history.History {
	rng := rand.New(rand.NewPCG(1, 2))
	return brute.Random(rng, brute.Config{MinTxns: n, MaxTxns: n, MaxKeys: n / 4, Values: 3, MaxOps: 8, MaxProcesses: 8,
		Strategy: brute.Serial})
}

func BenchmarkInfer(b *testing.B) {
	h := benchHistory(20000)
	b.ResetTimer()
	for b.Loop() {
		Infer(h)
	}
}

func BenchmarkBuildFrom(b *testing.B) {
	in := Infer(benchHistory(20000))
	b.ResetTimer()
	for b.Loop() {
		BuildFrom(in)
	}
}

// TestStopHooks: BuildFromStop and AppendRealtimeEdges give up when stop says so, and
// build exactly what BuildFrom and RealtimeEdges do when it never does.
func TestStopHooks(t *testing.T) {
	h := benchHistory(20000)
	in := Infer(h)
	if p := BuildFromStop(in, func() bool { return true }); p != nil {
		t.Fatal("BuildFromStop went on after stop")
	}
	asked := 0
	p := BuildFromStop(in, func() bool { asked++; return false })
	q := BuildFrom(in)
	if asked < len(in.Keys) || !slices.Equal(p.Edges, q.Edges) || !slices.Equal(p.Clauses, q.Clauses) {
		t.Fatalf("BuildFromStop asked %d times for %d keys, or built another problem", asked, len(in.Keys))
	}
	if _, ok := q.AppendRealtimeEdges(nil, func() bool { return true }); ok {
		t.Fatal("AppendRealtimeEdges went on after stop")
	}
	process := q.ProcessEdges()
	both, ok := q.AppendRealtimeEdges(slices.Clone(process), func() bool { return false })
	if !ok || !slices.Equal(both, append(process, q.RealtimeEdges()...)) {
		t.Fatal("AppendRealtimeEdges does not append RealtimeEdges")
	}
}

// TestRealtimeGatesAreRealtimeOrder: T1 precedes T2 by RealtimeGates (T1 among the
// first gate[T2] completed transactions) exactly when a path of RealtimeEdges leads
// from T1 to T2, on random histories with :info, failed and never-completed
// transactions, whatever the commit choice.
func TestRealtimeGatesAreRealtimeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	for i := 0; i < 2000; i++ {
		cfg := brute.Config{MinTxns: 2, MaxTxns: 4 + rng.IntN(14), MaxKeys: 1 + rng.IntN(3), Values: 1 + rng.IntN(3),
			MaxOps: 1 + rng.IntN(4), MaxProcesses: 1 + rng.IntN(5)}
		h := brute.Random(rng, cfg)
		n := len(h.Txns)
		commit := make([]Commit, n)
		for t := range commit {
			switch h.Txns[t].Status {
			case history.OK:
				commit[t] = Committed
			case history.Fail:
				commit[t] = NotCommitted
			default:
				commit[t] = Commit(rng.IntN(3)) // :info: any choice
			}
		}
		p := &Problem{In: &Inference{H: h}, Commit: commit}
		reach := make([][]bool, n)
		for a := range reach {
			reach[a] = make([]bool, n)
		}
		for _, e := range p.RealtimeEdges() {
			reach[e.From][e.To] = true
		}
		for k := range n {
			for a := range n {
				for b := range n {
					reach[a][b] = reach[a][b] || reach[a][k] && reach[k][b]
				}
			}
		}
		completed, gate := p.RealtimeGates()
		for b := range n {
			before := make([]bool, n)
			for _, a := range completed[:gate[b]] {
				before[a] = true
			}
			for a := range n {
				if before[a] != reach[a][b] {
					t.Fatalf("history %d: T%d before T%d: gates say %v, edges %v\n%s", i, a, b, before[a], reach[a][b], brute.Format(h))
				}
			}
		}
	}
}

// TestInferInPartsIsInfer: the inference in two parts (two goroutines) is exactly the
// inference in one pass, with and without per-read inference, on random histories
// with duplicates, :info and failed transactions and internal anomalies.
func TestInferInPartsIsInfer(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 3000; i++ {
		cfg := brute.Config{MinTxns: 1, MaxTxns: 2 + rng.IntN(30), MaxKeys: 1 + rng.IntN(5), Values: 1 + rng.IntN(4),
			MaxOps: 1 + rng.IntN(6), MaxProcesses: 1 + rng.IntN(5)}
		h := brute.Random(rng, cfg)
		for _, perRead := range []bool{false, true} {
			one, two := inferParts(h, perRead, nil, 1<<30), inferParts(h, perRead, nil, 1)
			if !reflect.DeepEqual(one, two) {
				t.Fatalf("history %d (per read %v): the inference in two parts differs\n%s", i, perRead, brute.Format(h))
			}
		}
	}
}
