package check

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
	"doppel/prune"
)

// TestOrderCountIsSound runs the order count alone on random tiny histories: every
// history it refutes under a model must be not valid under it by the brute force, and
// it must refute some (else the test checks nothing).
func TestOrderCountIsSound(t *testing.T) {
	cfgs := []brute.Config{
		{Strategy: brute.SnapshotLike},
		{Strategy: brute.Realtime},
		{Strategy: brute.FailInfo},
		{Values: 3, MaxTxns: 7, Strategy: brute.SnapshotLike},
		{Values: 2, MaxTxns: 8, MaxKeys: 2, MaxProcesses: 2, Strategy: brute.Realtime},
	}
	n := *seeds / 2
	for _, m := range []string{"strong-session-read-committed", "strong-read-committed"} {
		refuted, windowed, narrowed := 0, 0, 0
		for ci, cfg := range cfgs {
			for seed := 0; seed < n; seed++ {
				rng := rand.New(rand.NewPCG(uint64(seed), uint64(7+ci)))
				h := brute.Random(rng, cfg)
				in := encode.InferPerRead(h)
				in.CheckValues()
				if len(in.Findings) > 0 {
					continue
				}
				short := orderCount(h, in, models[m].realtime, nil, nil)
				if short == nil {
					// Then as proveByOrderCount goes on with narrow: the thresholds read by read, and the
					// count again within their windows.
					pr := prune.Run(in, prune.Options{Level: prune.Level{Process: true, Realtime: models[m].realtime, PerRead: true}})
					if pr.Contradiction != nil {
						narrowed++
						if brute.Check(h, m) {
							t.Fatalf("config %d seed %d: the thresholds read by read refute %s (%s), the brute force finds it valid\n%s", ci, seed, m, pr.Contradiction.Text, brute.Format(h))
						}
						continue
					}
					if pr.KeyUnsat {
						continue
					}
					if short = orderCount(h, in, models[m].realtime, pr.Win, nil); short == nil {
						continue
					}
					windowed++
				}
				refuted++
				if brute.Check(h, m) {
					t.Fatalf("config %d seed %d: the order count refutes %s on key %s (%+v), the brute force finds it valid\n%s", ci, seed, m, h.Keys[short.Key], short, brute.Format(h))
				}
				checkOrderCountText(t, h, in, short, models[m].realtime)
			}
		}
		t.Logf("%s: %d refuted by the count (%d only within narrowed windows), %d by the thresholds read by read", m, refuted, windowed, narrowed)
		if refuted == 0 || narrowed == 0 {
			t.Errorf("%s: the order count or the thresholds refuted nothing: the test checks nothing", m)
		}
	}
}

// checkOrderCountText checks an order count's explanation against the history: each
// kind of bound is said once, every writer is listed under its kind, each listed
// position shows the writer's values in the key's longest read, and the counts add up.
func checkOrderCountText(t *testing.T, h *history.History, in *encode.Inference, short *orderShort, realtime bool) {
	t.Helper()
	order := "process"
	if realtime {
		order = "process or real-time"
	}
	key := &in.Keys[short.Key]
	oc := newOrderCount(h, short, key.Trace, in.Reads[key.TraceBy].Txn, order)
	text := oc.text(h, key.Trace, order)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\n%s\n%s", fmt.Sprintf(format, args...), text, brute.Format(h))
	}
	for _, r := range oc.Reasons {
		if n := strings.Count(text, r.Text); n != 1 {
			fail("reason %q said %d times", r.Bound, n)
		}
	}
	if len(oc.Blocks) != len(short.Txns) || len(oc.Blocks) > orderBlocksShown {
		return
	}
	val := h.Values[short.Value]
	shows := func(p int, vals []string) bool {
		for i, v := range vals {
			if p+i > len(key.Trace) {
				return true // the rest lies past the trace
			}
			if h.Values[key.Trace[p+i-1]] != v {
				return false
			}
		}
		return true
	}
	for _, b := range oc.Blocks {
		line := fmt.Sprintf("T%d [%s] %s", b.Txn, strings.Join(b.Values, " "), b.where())
		if !strings.Contains(text, line) {
			fail("T%d is not listed as %q", b.Txn, line)
		}
		if b.From > 0 && b.Bound != boundNowhere && !shows(b.From, b.Values) || b.To > 0 && !shows(b.To, b.Values) {
			fail("T%d's block %v does not show at %d or %d", b.Txn, b.Values, b.From, b.To)
		}
		if b.After != nil && *b.After != b.Txn {
			// The transaction its first position comes from precedes it.
			if !strings.Contains(text, fmt.Sprintf("%s, after T%d", line, *b.After)) {
				fail("T%d's bound from T%d is not said", b.Txn, *b.After)
			}
			a, w := txnByIndex(h, *b.After), txnByIndex(h, b.Txn)
			procOrder := a.Process >= 0 && a.Process == w.Process && a.Invoke < w.Invoke
			if !procOrder && !(realtime && a.Complete >= 0 && a.Complete < w.Invoke) {
				fail("T%d does not precede T%d in process (real-time) order", *b.After, b.Txn)
			}
		}
		if w := b.Window; w != nil {
			// The window marks the block's values where it starts at From.
			for p := w.MarkFrom; p <= min(w.MarkTo, w.Length); p++ {
				if w.Values[p-w.From] != b.Values[p-w.MarkFrom] || w.MarkFrom != b.From {
					fail("T%d's window %s does not mark %v at %d", b.Txn, w, b.Values, b.From)
				}
			}
			if b.From == b.To && !strings.Contains(text, line+", ") && !strings.Contains(text, line+": "+w.String()) {
				fail("T%d's window is not shown", b.Txn)
			}
		}
		if b.Bound == boundPinned && b.From != b.To && b.From > 0 && b.From < b.To {
			fail("T%d is pinned to %d-%d", b.Txn, b.From, b.To)
		}
	}
	if oc.To < oc.From {
		return
	}
	positions := 0
	for p := oc.From; p <= oc.To; p++ {
		if h.Values[key.Trace[p-1]] == val {
			positions++
		}
	}
	if positions != oc.Positions || oc.Over != (oc.Appends > oc.Positions) || !oc.Over && oc.Appends >= oc.Positions {
		fail("%d positions show %s in %d-%d (said: %d), %d appends, over %v", positions, val, oc.From, oc.To, oc.Positions, oc.Appends, oc.Over)
	}
	if oc.Over {
		// Every confined append is a listed writer's append of the value.
		appends := 0
		for _, b := range oc.Blocks {
			for _, v := range b.Values {
				if v == val {
					appends++
				}
			}
		}
		if appends < oc.Appends {
			fail("%d appends of %s said to lie there, the listed writers have %d", oc.Appends, val, appends)
		}
	}
}

// txnByIndex finds the transaction with :index i.
func txnByIndex(h *history.History, i int64) *history.Txn {
	for t := range h.Txns {
		if h.Txns[t].Index == i {
			return &h.Txns[t]
		}
	}
	return nil
}

// TestOrderCountLostUpdate: a lost update whose loser's process goes on appending to
// the key has no strong-session read committed attribution; the count finds it.
func TestOrderCountLostUpdate(t *testing.T) {
	// T0 and T1 read x = [1] and append 2 and 3; only T1's 3 shows (T0's was lost). T0's
	// process then appends 4, shown after 3: T0's block must come before it and after
	// [1], where the list shows 3 (T1's).
	const edn = `{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 0 1]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:append 0 1]]}
{:index 2, :type :invoke, :process 1, :f :txn, :value [[:r 0 nil] [:append 0 2]]}
{:index 3, :type :invoke, :process 2, :f :txn, :value [[:r 0 nil] [:append 0 3]]}
{:index 4, :type :ok, :process 1, :f :txn, :value [[:r 0 [1]] [:append 0 2]]}
{:index 5, :type :ok, :process 2, :f :txn, :value [[:r 0 [1]] [:append 0 3]]}
{:index 6, :type :invoke, :process 1, :f :txn, :value [[:append 0 4]]}
{:index 7, :type :ok, :process 1, :f :txn, :value [[:append 0 4]]}
{:index 8, :type :invoke, :process 0, :f :txn, :value [[:r 0 nil]]}
{:index 9, :type :ok, :process 0, :f :txn, :value [[:r 0 [1 3 4]]]}
`
	h, err := history.ParseEDN(strings.NewReader(edn), "lost-update")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"strong-session-read-committed", "strong-read-committed"} {
		res, err := Check(h, Options{Models: []string{m}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid != Invalid || brute.Check(h, m) {
			t.Fatalf("%s: %v (brute force valid=%v), want not valid", m, res.Valid, brute.Check(h, m))
		}
		in := encode.InferPerRead(h)
		if orderCount(h, in, models[m].realtime, nil, nil) == nil {
			t.Errorf("%s: the order count finds nothing", m)
		}
	}
	if res, _ := Check(h, Options{Models: []string{"read-committed"}}); res.Valid != Valid {
		t.Errorf("read-committed: %v, want valid (no process order: T0's block goes past the trace)", res.Valid)
	}
}

// TestOrderCountUpperBounds: two lost updates of the same value after [1], each
// loser's process going on to a block that must be in the trace, so that both losers'
// blocks must start at position 2, the only one showing 2. The lower bounds alone
// leave it open (two appends of 2 for one position); the upper bounds close it, once
// from a read that shows its own append (pinned), once from a value only one writer
// appends (the block must be in the trace).
func TestOrderCountUpperBounds(t *testing.T) {
	const pinned = `{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 0 1]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:append 0 1]]}
{:index 2, :type :invoke, :process 1, :f :txn, :value [[:r 0 nil] [:append 0 2]]}
{:index 3, :type :invoke, :process 2, :f :txn, :value [[:r 0 nil] [:append 0 2]]}
{:index 4, :type :ok, :process 1, :f :txn, :value [[:r 0 [1]] [:append 0 2]]}
{:index 5, :type :ok, :process 2, :f :txn, :value [[:r 0 [1]] [:append 0 2]]}
{:index 6, :type :invoke, :process 1, :f :txn, :value [[:append 0 3] [:r 0 nil]]}
{:index 7, :type :ok, :process 1, :f :txn, :value [[:append 0 3] [:r 0 [1 2 3]]]}
{:index 8, :type :invoke, :process 2, :f :txn, :value [[:append 0 4] [:r 0 nil]]}
{:index 9, :type :ok, :process 2, :f :txn, :value [[:append 0 4] [:r 0 [1 2 3 4]]]}
`
	const counted = `{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 0 1]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:append 0 1]]}
{:index 2, :type :invoke, :process 1, :f :txn, :value [[:r 0 nil] [:append 0 2]]}
{:index 3, :type :invoke, :process 2, :f :txn, :value [[:r 0 nil] [:append 0 2]]}
{:index 4, :type :ok, :process 1, :f :txn, :value [[:r 0 [1]] [:append 0 2]]}
{:index 5, :type :ok, :process 2, :f :txn, :value [[:r 0 [1]] [:append 0 2]]}
{:index 6, :type :invoke, :process 1, :f :txn, :value [[:append 0 3]]}
{:index 7, :type :ok, :process 1, :f :txn, :value [[:append 0 3]]}
{:index 8, :type :invoke, :process 2, :f :txn, :value [[:append 0 4]]}
{:index 9, :type :ok, :process 2, :f :txn, :value [[:append 0 4]]}
{:index 10, :type :invoke, :process 0, :f :txn, :value [[:r 0 nil]]}
{:index 11, :type :ok, :process 0, :f :txn, :value [[:r 0 [1 2 3 4]]]}
`
	for name, edn := range map[string]string{"pinned": pinned, "counted": counted} {
		h, err := history.ParseEDN(strings.NewReader(edn), name)
		if err != nil {
			t.Fatal(err)
		}
		in := encode.InferPerRead(h)
		for _, m := range []string{"strong-session-read-committed", "strong-read-committed"} {
			if brute.Check(h, m) {
				t.Fatalf("%s: the brute force finds %s valid: the test history is wrong", name, m)
			}
			short := orderCount(h, in, models[m].realtime, nil, nil)
			if short == nil || !short.Over || short.Window != [2]int32{2, 2} || len(short.Txns) != 2 {
				t.Fatalf("%s, %s: order count %+v, want two appends of 2 confined to position 2", name, m, short)
			}
			// Without the witnesses (and the serial search, which refutes it first).
			res, err := Check(h, Options{Models: []string{m}, Solver: SolverOptions{NoWitness: true}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Valid != Invalid || len(res.Anomalies) == 0 || !strings.Contains(res.Anomalies[len(res.Anomalies)-1].Explanation, "must lie there") {
				t.Fatalf("%s, %s: %v %+v, want not valid by the order count", name, m, res.Valid, res.Anomalies)
			}
		}
		if !brute.Check(h, "read-committed") {
			t.Fatalf("%s: the brute force finds read-committed not valid: the test history is wrong", name)
		}
		if res, _ := Check(h, Options{Models: []string{"read-committed"}}); res.Valid != Valid {
			t.Errorf("%s: read-committed %v, want valid (without process order the losers' blocks go past the trace)", name, res.Valid)
		}
	}
}

// TestOrderCountThroughOtherKeys: two lost updates of 2 after [1] on x (key 0), each
// loser's process going on to append to another key (y, z) that a transaction reads
// before appending to x and reading its own append there (pinned at 3 and at 4). So
// each loser's block must end before that pinned block: both at position 2, the only
// one showing 2. The count on x alone sees no order between a loser and the pinned
// block (the path runs through y or z); the thresholds read by read do, and the count
// within their windows names the two appends.
func TestOrderCountThroughOtherKeys(t *testing.T) {
	const edn = `{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 0 1]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:append 0 1]]}
{:index 2, :type :invoke, :process 1, :f :txn, :value [[:r 0 nil] [:append 0 2]]}
{:index 3, :type :invoke, :process 2, :f :txn, :value [[:r 0 nil] [:append 0 2]]}
{:index 4, :type :ok, :process 1, :f :txn, :value [[:r 0 [1]] [:append 0 2]]}
{:index 5, :type :ok, :process 2, :f :txn, :value [[:r 0 [1]] [:append 0 2]]}
{:index 6, :type :invoke, :process 1, :f :txn, :value [[:append 1 5]]}
{:index 7, :type :ok, :process 1, :f :txn, :value [[:append 1 5]]}
{:index 8, :type :invoke, :process 2, :f :txn, :value [[:append 2 6]]}
{:index 9, :type :ok, :process 2, :f :txn, :value [[:append 2 6]]}
{:index 10, :type :invoke, :process 3, :f :txn, :value [[:r 1 nil] [:append 0 3] [:r 0 nil]]}
{:index 11, :type :ok, :process 3, :f :txn, :value [[:r 1 [5]] [:append 0 3] [:r 0 [1 2 3]]]}
{:index 12, :type :invoke, :process 4, :f :txn, :value [[:r 2 nil] [:append 0 4] [:r 0 nil]]}
{:index 13, :type :ok, :process 4, :f :txn, :value [[:r 2 [6]] [:append 0 4] [:r 0 [1 2 3 4]]]}
`
	h, err := history.ParseEDN(strings.NewReader(edn), "through-other-keys")
	if err != nil {
		t.Fatal(err)
	}
	const m = "strong-session-read-committed"
	if brute.Check(h, m) || !brute.Check(h, "read-committed") {
		t.Fatalf("the brute force finds %s valid=%v, read-committed valid=%v: the test history is wrong", m, brute.Check(h, m), brute.Check(h, "read-committed"))
	}
	in := encode.InferPerRead(h)
	if short := orderCount(h, in, false, nil, nil); short != nil {
		t.Fatalf("the count on x alone refutes it (%+v): the test no longer needs the other keys", short)
	}
	// One conflict is too few for the solver to refute it: only the thresholds decide
	// (the serial search, which refutes it first, is off without the witnesses).
	res, err := Check(h, Options{Models: []string{m}, MaxConflicts: 1, Solver: SolverOptions{NoWitness: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid != Invalid || len(res.Anomalies) == 0 {
		t.Fatalf("%v %+v, want not valid by the thresholds read by read", res.Valid, res.Anomalies)
	}
	a := res.Anomalies[len(res.Anomalies)-1]
	if a.Type != "G1c-process" || !strings.Contains(a.Explanation, "thresholds of every key") || len(a.Txns) != 2 {
		t.Fatalf("anomaly %s with %d transactions: %s; want G1c-process naming the two losers within the thresholds' windows", a.Type, len(a.Txns), a.Explanation)
	}
	if res, _ := Check(h, Options{Models: []string{"read-committed"}}); res.Valid != Valid {
		t.Errorf("read-committed: %v, want valid (without process order the losers' blocks go past the trace)", res.Valid)
	}
}
