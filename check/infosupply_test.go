package check

import (
	"strings"
	"testing"

	"doppel/encode"
	"doppel/history"
)

// infoSupplyHistory: :info I1 must fill key a's only position, since the committed W
// appending the same value is invoked after R read all of a; :info I2 competes with I1
// for key b's only position and may fill key c's (as may I3). Real time puts RB (a reader of all
// of b) after R, so I1 must run before R and RB, and I2, if it committed, after RB.
const infoSupplyHistory = `{:type :invoke, :f :txn, :value [[:append :b 0] [:append :c 7]], :process 2, :index 0}
{:type :invoke, :f :txn, :value [[:append :a 0] [:append :b 0]], :process 1, :index 1}
{:type :invoke, :f :txn, :value [[:r :a nil]], :process 0, :index 2}
{:type :ok, :f :txn, :value [[:r :a [0]]], :process 0, :index 3}
{:type :invoke, :f :txn, :value [[:r :b nil]], :process 3, :index 4}
{:type :ok, :f :txn, :value [[:r :b [0]]], :process 3, :index 5}
{:type :invoke, :f :txn, :value [[:append :a 0]], :process 0, :index 6}
{:type :ok, :f :txn, :value [[:append :a 0]], :process 0, :index 7}
{:type :invoke, :f :txn, :value [[:r :c nil]], :process 4, :index 8}
{:type :ok, :f :txn, :value [[:r :c [7]]], :process 4, :index 9}
{:type :info, :f :txn, :value [[:append :a 0] [:append :b 0]], :process 1, :index 10}
{:type :info, :f :txn, :value [[:append :b 0] [:append :c 7]], :process 2, :index 11}
{:type :invoke, :f :txn, :value [[:append :c 7]], :process 5, :index 12}
{:type :info, :f :txn, :value [[:append :c 7]], :process 5, :index 13}
`

// TestLateCommittedWriterSuppliesNothing: under real-time order, a committed writer
// invoked after a read of its key's whole trace appends past the trace, so it does not
// count among the writers that can fill the trace's values. Counted (as before), the
// :info writer that alone can fill key a looked like a thief of it and was parked;
// the replay then gave key b's position to the other :info writer and got stuck (as
// the 1M-transaction :info history did). Without real-time order the count is
// unchanged.
func TestLateCommittedWriterSuppliesNothing(t *testing.T) {
	h, err := history.Parse(strings.NewReader(infoSupplyHistory), "info-supply")
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	commit := commitsOf(h)
	guide := orderGuide(in, commit)
	order, ok := schedule(h, in, commit, guide, false, nil)
	if !ok {
		t.Fatal("the replay under real-time order got stuck")
	}
	if err := verifySerialStop(h, in, order, true, true, nil); err != nil {
		t.Fatalf("its order does not verify: %v", err)
	}
	r := newReplay(h, in, commit, guide)
	i1 := txnWithOps(t, h, history.Info, "a")
	if r.commit[i1] != encode.Committed {
		t.Errorf("the :info writer that alone can fill key a is %v, want settled as committed", r.commit[i1])
	}
	if r := newReplay(h, in, commit, nil); r.wholeRead != nil {
		t.Error("without real-time order, the supply of a value still leaves out late writers")
	}
	res, _ := Check(h, Options{Models: []string{"strict-serializable"}})
	if res.Valid != Valid {
		t.Errorf("strict-serializable: %v, want valid", res.Valid)
	}
}

// txnWithOps returns the transaction of status st that appends to key name.
func txnWithOps(t *testing.T, h *history.History, st history.Status, name string) int32 {
	t.Helper()
	for i := range h.Txns {
		if h.Txns[i].Status != st {
			continue
		}
		for _, op := range h.TxnOps(i) {
			if op.Kind == history.Append && strings.TrimPrefix(h.Keys[op.Key], ":") == name {
				return int32(i)
			}
		}
	}
	t.Fatalf("no %v transaction appends to %s", st, name)
	return -1
}
