package check

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"doppel/history"
	"doppel/internal/brute"
)

// permuted returns h with key ids, value ids and process ids renumbered by random
// permutations (printed names move with them): the same history, met in another order.
func permuted(h *history.History, rng *rand.Rand) *history.History {
	g := *h
	kp, vp, pp := rng.Perm(len(h.Keys)), rng.Perm(len(h.Values)), rng.Perm(len(h.Processes))
	g.Keys = make([]string, len(h.Keys))
	for i, j := range kp {
		g.Keys[j] = h.Keys[i]
	}
	g.Values = make([]string, len(h.Values))
	for i, j := range vp {
		g.Values[j] = h.Values[i]
	}
	g.Processes = make([]string, len(h.Processes))
	for i, j := range pp {
		g.Processes[j] = h.Processes[i]
	}
	g.Ops = append([]history.MicroOp(nil), h.Ops...)
	for i := range g.Ops {
		g.Ops[i].Key = int32(kp[g.Ops[i].Key])
		if g.Ops[i].Kind == history.Append {
			g.Ops[i].Value = int32(vp[g.Ops[i].Value])
		}
	}
	g.ReadValues = make([]int32, len(h.ReadValues))
	for i, v := range h.ReadValues {
		g.ReadValues[i] = int32(vp[v])
	}
	g.Txns = append([]history.Txn(nil), h.Txns...)
	for i := range g.Txns {
		if g.Txns[i].Process >= 0 {
			g.Txns[i].Process = int32(pp[g.Txns[i].Process])
		}
	}
	return &g
}

// TestMetamorphic: renaming keys, values and processes never changes a verdict, nor
// does converting the history to EDN or JSON text and parsing it back.
func TestMetamorphic(t *testing.T) {
	for seed := 0; seed < 2000; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		h := brute.Random(rng, brute.Config{})
		want, _ := Check(h, Options{Models: ModelNames()})
		got, _ := Check(permuted(h, rng), Options{Models: ModelNames()})
		// Through text: EDN for even seeds, JSON lines for odd ones.
		var buf bytes.Buffer
		write := history.WriteHistoryEDN
		if seed%2 == 1 {
			write = history.WriteHistoryJSON
		}
		if err := write(&buf, h); err != nil {
			t.Fatal(err)
		}
		text := buf.String()
		ht, err := history.Parse(&buf, "converted")
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		viaText, _ := Check(ht, Options{Models: ModelNames()})
		for i := range want.Models {
			if want.Models[i].Valid != got.Models[i].Valid {
				t.Fatalf("seed %d: %s is %v, renamed %v\n%s", seed, want.Models[i].Model, want.Models[i].Valid, got.Models[i].Valid, brute.Format(h))
			}
			if want.Models[i].Valid != viaText.Models[i].Valid {
				t.Fatalf("seed %d: %s is %v, %v after conversion to\n%s", seed, want.Models[i].Model, want.Models[i].Valid, viaText.Models[i].Valid, text)
			}
		}
	}
}
