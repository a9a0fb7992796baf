package encode

import (
	"fmt"
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
