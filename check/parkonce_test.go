package check

import (
	"strings"
	"testing"

	"doppel/encode"
	"doppel/history"
)

// TestReplayParksOnce: a transaction that cannot run yet is parked on the wait list of
// the slot it needs. Tried again before that slot fills (a predecessor resolved, a
// deferred retry, a spare re-checked), it must not be linked into a list a second time:
// linked twice, the list loops and waking it never returns, past every --timeout.
func TestReplayParksOnce(t *testing.T) {
	const src = `{:type :invoke, :f :txn, :value [[:r :x nil]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:r :x [1 2]]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:append :x 1]], :process 1, :index 2}
{:type :ok, :f :txn, :value [[:append :x 1]], :process 1, :index 3}
{:type :invoke, :f :txn, :value [[:append :x 2]], :process 2, :index 4}
{:type :ok, :f :txn, :value [[:append :x 2]], :process 2, :index 5}
`
	h, err := history.Parse(strings.NewReader(src), "parks-once")
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	r := newReplay(h, in, commitsOf(h), nil)
	if r == nil {
		t.Fatal("no replay")
	}
	const reader = 0
	r.try(reader)
	r.try(reader) // again, before x has two values
	parked := 0
	for s := range r.waitHead {
		for w, steps := r.waitHead[s], 0; w >= 0; w, steps = r.waitNext[w], steps+1 {
			if steps > int(r.n) {
				t.Fatalf("the wait list of slot %d loops", s)
			}
			if w == reader {
				parked++
			}
		}
	}
	if parked != 1 {
		t.Fatalf("the reader is on %d wait lists, want 1", parked)
	}
	for tx := int32(1); tx < r.n; tx++ {
		r.try(tx)
	}
	order, ok := r.loop()
	if !ok || len(order) != 3 || order[2] != reader {
		t.Fatalf("replay = %v, %v; want the two appends, then the reader", order, ok)
	}
}
