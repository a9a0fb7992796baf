package encode

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"doppel/history"
)

// longKeyHistory is one key appended to n times with values 1 and 2 (no writer reads
// the key first, so none is pinned), then read whole: each block could start at about
// half of the list's positions, so segmenting and encoding that one key is long work.
func longKeyHistory(t testing.TB, n int) *history.History {
	t.Helper()
	var b strings.Builder
	idx := 0
	event := func(typ, value string) {
		fmt.Fprintf(&b, "{:type %s, :f :txn, :value %s, :process 0, :index %d}\n", typ, value, idx)
		idx++
	}
	var all []string
	for i := 0; i < n; i++ {
		v := 1 + i*i%7%2
		all = append(all, fmt.Sprint(v))
		op := fmt.Sprintf("[[:append :x %d]]", v)
		event(":invoke", op)
		event(":ok", op)
	}
	event(":invoke", "[[:r :x nil]]")
	event(":ok", "[[:r :x ["+strings.Join(all, " ")+"]]]")
	h, err := history.Parse(strings.NewReader(b.String()), "long-key")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestBuildStopsInsideAKey: the stop hook is asked while one long key is segmented and
// encoded, not only between keys, and the build gives up as soon as it says so.
func TestBuildStopsInsideAKey(t *testing.T) {
	in := Infer(longKeyHistory(t, 600))
	calls := 0
	stop := func() bool { calls++; return calls >= 3 }
	// One key: between keys the hook is asked twice (before segmenting it and before
	// emitting it); a third question can only come from inside the key.
	if p := BuildWithinStop(in, nil, stop); p != nil {
		t.Fatalf("the build went on after its stop said to give up (asked %d times)", calls)
	}
	if calls != 3 {
		t.Fatalf("stop asked %d times, want 3 (the build goes on asking after it said to stop)", calls)
	}
	// Never told to stop, the same build completes, asking along the way.
	calls = 0
	if p := BuildWithinStop(in, nil, func() bool { calls++; return false }); p == nil || calls < 3 {
		t.Fatalf("build without stopping: problem %v, stop asked %d times", p != nil, calls)
	}
}

// manyKeysHistory is n keys, each appended to once and then read; key 0's read is a
// garbage read (a value nobody appended), which the value checks find.
func manyKeysHistory(t testing.TB, n int) *history.History {
	t.Helper()
	var b strings.Builder
	idx := 0
	txn := func(value string) {
		for _, typ := range []string{":invoke", ":ok"} {
			fmt.Fprintf(&b, "{:type %s, :f :txn, :value %s, :process 0, :index %d}\n", typ, value, idx)
			idx++
		}
	}
	for k := 0; k < n; k++ {
		txn(fmt.Sprintf("[[:append %d 1]]", k))
	}
	txn("[[:r 0 [5]]]")
	for k := 1; k < n; k++ {
		txn(fmt.Sprintf("[[:r %d [1]]]", k))
	}
	h, err := history.Parse(strings.NewReader(b.String()), "many-keys")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestInferStops: the inference asks its stop hook along the way on a history of
// more than stopEvery transactions, gives up (nil) at whichever question it says so,
// and, never told to, infers what Infer does. A small history is never asked.
func TestInferStops(t *testing.T) {
	h := manyKeysHistory(t, stopEvery+100)
	for _, perRead := range []bool{false, true} {
		infer := InferStop
		want := Infer(h)
		if perRead {
			infer, want = InferPerReadStop, InferPerRead(h)
		}
		asks := 0
		got := infer(h, func() bool { asks++; return false })
		if got == nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("per read %v: never stopped, the inference differs from Infer's", perRead)
		}
		if asks < 3 { // the transactions, then the reads twice (traces)
			t.Fatalf("per read %v: stop asked %d times over %d transactions", perRead, asks, len(h.Txns))
		}
		for k := 1; k <= asks; k++ {
			n := 0
			if in := infer(h, func() bool { n++; return n == k }); in != nil || n != k {
				t.Errorf("per read %v: stop said so at question %d: inference %v, asked %d times", perRead, k, in != nil, n)
			}
		}
	}
	small := manyKeysHistory(t, 10)
	if InferStop(small, func() bool { t.Fatal("a small history's inference asked its stop hook"); return true }) == nil {
		t.Fatal("a small history's inference stopped")
	}
}

// TestCheckValuesStops: the value checks ask their stop hook every stopEvery keys and
// report false when it says so; never told to, they find what CheckValues finds (key
// 0's garbage read).
func TestCheckValuesStops(t *testing.T) {
	h := manyKeysHistory(t, 2*stopEvery+100)
	want := Infer(h)
	want.CheckValues()
	if len(want.Findings) != 1 || want.Findings[0].Type != "garbage-read" {
		t.Fatalf("findings %+v, want one garbage-read", want.Findings)
	}
	got := Infer(h)
	asks := 0
	if !got.CheckValuesStop(func() bool { asks++; return false }) || asks != 2 || !reflect.DeepEqual(got.Findings, want.Findings) {
		t.Fatalf("never stopped: asked %d times (want 2), findings %+v", asks, got.Findings)
	}
	stopped := Infer(h)
	if stopped.CheckValuesStop(func() bool { return true }) {
		t.Fatal("the value checks went on after their stop said to give up")
	}
}

// readersHistory is longKeyHistory(n) with readers more: each prefix of the list read
// by perLen transactions of their own (they append nothing).
func readersHistory(t testing.TB, n, perLen int) *history.History {
	t.Helper()
	base := longKeyHistory(t, n)
	var all []string
	for _, v := range base.ReadList(&base.Ops[len(base.Ops)-1]) {
		all = append(all, fmt.Sprint(base.Values[v]))
	}
	var b strings.Builder
	idx := 0
	event := func(typ, value string) {
		fmt.Fprintf(&b, "{:type %s, :f :txn, :value %s, :process 0, :index %d}\n", typ, value, idx)
		idx++
	}
	for i := 0; i < n; i++ {
		op := "[[:append :x " + all[i] + "]]"
		event(":invoke", op)
		event(":ok", op)
	}
	for l := 1; l <= n; l++ {
		for range perLen {
			event(":invoke", "[[:r :x nil]]")
			event(":ok", "[[:r :x ["+strings.Join(all[:l], " ")+"]]]")
		}
	}
	h, err := history.Parse(strings.NewReader(b.String()), "long-key-readers")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestBuildAsksByWork: the stop hook is asked by the work done, not by the calls: the
// edges of a trace position pair each block that may start there with each reader of
// that length, so readers at every length (work of hundreds of units a position) make
// the build of the same key ask more often (a key of few values, thousands of blocks
// per position: once, 14 s went by between two asks).
func TestBuildAsksByWork(t *testing.T) {
	asks := func(h *history.History) int {
		calls := 0
		if p := BuildWithinStop(Infer(h), nil, func() bool { calls++; return false }); p == nil {
			t.Fatal("the build did not complete")
		}
		return calls
	}
	plain, read := asks(longKeyHistory(t, 300)), asks(readersHistory(t, 300, 5))
	if read < plain+8 {
		t.Errorf("stop asked %d times with 5 readers at each length, %d without: the readers' edges are not counted as work", read, plain)
	}
}

// TestExpiredAfter: asked once per expiredEvery units, however they come.
func TestExpiredAfter(t *testing.T) {
	calls := 0
	sc := &scratch{stop: func() bool { calls++; return calls == 3 }}
	sc.expiredAfter(expiredEvery - 1)
	if calls != 0 {
		t.Fatalf("asked %d times before expiredEvery units", calls)
	}
	sc.expired()
	sc.expiredAfter(3 * expiredEvery)
	if calls != 2 {
		t.Fatalf("asked %d times after 4 expiredEvery units in two steps, want 2", calls)
	}
	if sc.expiredAfter(expiredEvery) != true || calls != 3 || !sc.expired() || calls != 3 {
		t.Fatalf("the third ask said stop: want expired from then on without asking again (asked %d)", calls)
	}
}
