package brute

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"doppel/history"
)

// naive decides a model with no pruning and no memo at all: every commit subset, every
// permutation, and for snapshot isolation every vector of snapshot points, each checked
// against the definition. It is exponential beyond measure, for histories of at most
// 5 transactions.
func naive(h *history.History, model string) bool {
	var ok, info []int
	for i, t := range h.Txns {
		switch t.Status {
		case history.OK:
			ok = append(ok, i)
		case history.Info:
			info = append(info, i)
		}
	}
	for sub := 0; sub < 1<<len(info); sub++ {
		committed := slices.Clone(ok)
		for j, t := range info {
			if sub&(1<<j) != 0 {
				committed = append(committed, t)
			}
		}
		found := false
		permute(committed, 0, func(order []int) bool {
			if naiveOrder(h, model, order) {
				found = true
			}
			return found
		})
		if found {
			return true
		}
	}
	return false
}

// permute calls f with every permutation of a until f returns true.
func permute(a []int, k int, f func([]int) bool) bool {
	if k == len(a) {
		return f(a)
	}
	for i := k; i < len(a); i++ {
		a[k], a[i] = a[i], a[k]
		if permute(a, k+1, f) {
			a[k], a[i] = a[i], a[k]
			return true
		}
		a[k], a[i] = a[i], a[k]
	}
	return false
}

func naiveOrder(h *history.History, model string, order []int) bool {
	for i, a := range order {
		for _, b := range order[:i] {
			// b is before a: a must not be required before b.
			switch model {
			case StrongSessionSerializable:
				if processBefore(h, a, b) {
					return false
				}
			case StrictSerializable:
				if processBefore(h, a, b) || realTimeBefore(h, a, b) {
					return false
				}
			}
		}
	}
	if model != SnapshotIsolation {
		snaps := make([]int, len(order))
		for i := range snaps {
			snaps[i] = i
		}
		return naiveExplains(h, order, snaps)
	}
	if len(order) > 5 {
		// Too many vectors: choose each transaction's snapshot on its own, which is
		// equivalent, since a snapshot point only constrains its own transaction.
		for i := range order {
			found := false
			for s := 0; s <= i && !found; s++ {
				found = naiveSeesAt(h, order, i, s)
			}
			if !found {
				return false
			}
		}
		return true
	}
	snaps := make([]int, len(order))
	var try func(i int) bool
	try = func(i int) bool {
		if i == len(order) {
			return naiveExplains(h, order, snaps)
		}
		for s := 0; s <= i; s++ {
			snaps[i] = s
			if try(i + 1) {
				return true
			}
		}
		return false
	}
	return try(0)
}

// naiveExplains: the transaction at position i of order sees the appends of the first
// snaps[i] ones, then its own; writers of a common key are never concurrent.
func naiveExplains(h *history.History, order, snaps []int) bool {
	for i, t := range order {
		for j, u := range order[:i] {
			// u committed before t; concurrent if t's snapshot misses u (u cannot see t).
			if snaps[i] <= j && sharesAppendKey(h, t, u) {
				return false
			}
		}
		if h.Txns[t].Status != history.OK {
			continue
		}
		lists := map[int32][]int32{}
		for _, u := range order[:snaps[i]] {
			for _, op := range h.TxnOps(u) {
				if op.Kind == history.Append {
					lists[op.Key] = append(lists[op.Key], op.Value)
				}
			}
		}
		for _, op := range h.TxnOps(t) {
			if op.Kind == history.Append {
				lists[op.Key] = append(lists[op.Key], op.Value)
			} else if op.Known && !slices.Equal(lists[op.Key], h.ReadList(&op)) {
				return false
			}
		}
	}
	return true
}

// naiveSeesAt: the transaction at position i of order, with snapshot s, reads what it
// read and is not concurrent with an earlier writer of a common key.
func naiveSeesAt(h *history.History, order []int, i, s int) bool {
	snaps := make([]int, i+1)
	for j := range snaps {
		snaps[j] = j // serial for the others: only position i is checked below
	}
	snaps[i] = s
	t := order[i]
	for j, u := range order[:i] {
		if s <= j && sharesAppendKey(h, t, u) {
			return false
		}
	}
	if h.Txns[t].Status != history.OK {
		return true
	}
	lists := map[int32][]int32{}
	for _, u := range order[:s] {
		for _, op := range h.TxnOps(u) {
			if op.Kind == history.Append {
				lists[op.Key] = append(lists[op.Key], op.Value)
			}
		}
	}
	for _, op := range h.TxnOps(t) {
		if op.Kind == history.Append {
			lists[op.Key] = append(lists[op.Key], op.Value)
		} else if op.Known && !slices.Equal(lists[op.Key], h.ReadList(&op)) {
			return false
		}
	}
	return true
}

func sharesAppendKey(h *history.History, a, b int) bool {
	for _, x := range h.TxnOps(a) {
		for _, y := range h.TxnOps(b) {
			if x.Kind == history.Append && y.Kind == history.Append && x.Key == y.Key {
				return true
			}
		}
	}
	return false
}

func TestAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cfg := Config{MaxTxns: 5}
	n := 3000
	if testing.Short() {
		n = 300
	}
	disagree := 0
	for i := 0; i < n; i++ {
		h := Random(rng, cfg)
		for _, model := range Models {
			got, want := Check(h, model), naive(h, model)
			if got != want {
				disagree++
				if disagree <= 3 {
					t.Errorf("%s: Check %v, naive %v\n%s", model, got, want, Format(h))
				}
			}
		}
	}
	if disagree > 0 {
		t.Errorf("%d disagreements", disagree)
	}
}

// TestAgainstNaiveLarger compares on 6 and 7 transactions, where the pruning and the
// memo of Check matter most.
func TestAgainstNaiveLarger(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	cfg := Config{MinTxns: 6, MaxTxns: 7}
	disagree := 0
	for i := 0; i < 600; i++ {
		h := Random(rng, cfg)
		for _, model := range Models {
			got, want := Check(h, model), naive(h, model)
			if got != want {
				disagree++
				if disagree <= 3 {
					t.Errorf("%s: Check %v, naive %v\n%s", model, got, want, Format(h))
				}
			}
		}
	}
}

// TestHandCasesNaive checks the hand verdicts with the naive checker too.
func TestHandCasesNaive(t *testing.T) {
	for _, c := range handCases {
		h, err := Parse(c.text)
		if err != nil {
			t.Fatal(err)
		}
		for i, model := range Models {
			if got := naive(h, model); got != c.want[i] {
				t.Errorf("%s %s: naive %v, want %v", c.name, model, got, c.want[i])
			}
		}
	}
}

// TestProperties checks, over many random histories, what construction guarantees and
// the implications between models, and reports how often each strategy yields each
// verdict.
func TestProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	type tally struct{ valid, total int }
	counts := map[Strategy]*[4]tally{}
	var overall [4]tally
	for _, s := range Strategies {
		counts[s] = &[4]tally{}
	}
	failures := 0
	fail := func(format string, args ...any) {
		failures++
		if failures <= 5 {
			t.Errorf(format, args...)
		}
	}
	for i := 0; i < n; i++ {
		g := Generate(rng, Config{})
		var v verdicts
		for m, model := range Models {
			v[m] = Check(g.H, model)
			counts[g.Strategy][m].total++
			overall[m].total++
			if v[m] {
				counts[g.Strategy][m].valid++
				overall[m].valid++
			}
		}
		for _, model := range g.Guaranteed {
			if !v[slices.Index(Models, model)] {
				fail("%s history not %s as constructed:\n%s", g.Strategy, model, Format(g.H))
			}
		}
		ser, session, strict, si := v[0], v[1], v[2], v[3]
		if strict && !session || session && !ser || ser && !si {
			fail("implication broken (ser %v session %v strict %v si %v):\n%s", ser, session, strict, si, Format(g.H))
		}
		// Format and Parse round-trip, with the same verdicts.
		text := Format(g.H)
		h2, err := Parse(text)
		if err != nil {
			fail("Parse(Format): %v\n%s", err, text)
			continue
		}
		if got := Format(h2); got != text {
			fail("round trip changed the history:\n%s\n%s", text, got)
		}
		for m, model := range Models {
			if Check(h2, model) != v[m] {
				fail("%s: verdict changed by round trip:\n%s", model, text)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "valid fraction per strategy (%d histories)\n%-14s", n, "")
	for _, m := range Models {
		fmt.Fprintf(&b, " %28s", m)
	}
	row := func(name string, ts *[4]tally) {
		fmt.Fprintf(&b, "\n%-14s", name)
		for _, c := range ts {
			fmt.Fprintf(&b, " %21.1f%% of %4d", 100*float64(c.valid)/float64(max(c.total, 1)), c.total)
		}
	}
	for _, s := range Strategies {
		row(s.String(), counts[s])
	}
	row("all", &overall)
	t.Log(b.String())
	for m, c := range overall {
		frac := float64(c.valid) / float64(c.total)
		if frac < 0.25 || frac > 0.75 {
			t.Errorf("%s: %.1f%% valid, want each verdict at least 25%%", Models[m], 100*frac)
		}
	}
}

func TestGeneratedShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 2000; i++ {
		h := Random(rng, Config{})
		if len(h.Txns) < 2 || len(h.Txns) > 8 {
			t.Fatalf("%d transactions", len(h.Txns))
		}
		for j, tx := range h.Txns {
			if n := tx.OpEnd - tx.OpStart; n < 1 || n > 4 {
				t.Fatalf("%d micro-ops\n%s", n, Format(h))
			}
			if tx.Status == history.Info && tx.Complete != -1 {
				t.Fatalf("info with a completion\n%s", Format(h))
			}
			if tx.Complete >= 0 && tx.Invoke >= tx.Complete {
				t.Fatalf("T%d completes before it is invoked\n%s", j, Format(h))
			}
			for _, op := range h.TxnOps(j) {
				if op.Kind == history.Read && op.Known != (tx.Status == history.OK) {
					t.Fatalf("T%d: read known %v for %s\n%s", j, op.Known, tx.Status, Format(h))
				}
			}
		}
		// A process's transactions do not overlap, and nothing follows an :info one.
		for a := range h.Txns {
			for b := range h.Txns {
				ta, tb := h.Txns[a], h.Txns[b]
				if a == b || ta.Process != tb.Process || ta.Invoke < 0 || tb.Invoke < ta.Invoke {
					continue
				}
				if ta.Status == history.Info {
					t.Fatalf("T%d follows :info T%d in its process\n%s", b, a, Format(h))
				}
				if ta.Complete < 0 || ta.Complete > tb.Invoke {
					t.Fatalf("T%d and T%d overlap in one process\n%s", a, b, Format(h))
				}
			}
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	hs := make([]*history.History, 1000)
	for i := range hs {
		hs[i] = Random(rng, Config{})
	}
	for _, model := range Models {
		b.Run(model, func(b *testing.B) {
			i := 0
			for b.Loop() {
				Check(hs[i%len(hs)], model)
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "histories/s")
		})
	}
}
