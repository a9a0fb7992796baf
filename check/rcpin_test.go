package check

import (
	"strings"
	"testing"

	"doppel/encode"
	"doppel/history"
)

// TestRCSerialPinPassed: process 1's second transaction appends 1 to key 0 and reads
// [2 1], its own append after one value; it waits for its first, which reads key 1,
// written only after process 2 has appended 2 and then 1 to key 0. Once process 2's
// second transaction takes key 0 to two values, the pinned read can never hold: the
// state fails at once (pinPassedLast), though process 2 could still go on, and the
// whole search finds no order.
func TestRCSerialPinPassed(t *testing.T) {
	edn := `{:index 0, :type :invoke, :process 1, :f :txn, :value [[:r 1 nil]]}
{:index 1, :type :ok, :process 1, :f :txn, :value [[:r 1 [5]]]}
{:index 2, :type :invoke, :process 1, :f :txn, :value [[:append 0 1] [:r 0 nil]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:append 0 1] [:r 0 [2 1]]]}
{:index 4, :type :invoke, :process 2, :f :txn, :value [[:append 0 2]]}
{:index 5, :type :ok, :process 2, :f :txn, :value [[:append 0 2]]}
{:index 6, :type :invoke, :process 2, :f :txn, :value [[:append 0 1]]}
{:index 7, :type :ok, :process 2, :f :txn, :value [[:append 0 1]]}
{:index 8, :type :invoke, :process 2, :f :txn, :value [[:append 1 5]]}
{:index 9, :type :ok, :process 2, :f :txn, :value [[:append 1 5]]}
{:index 10, :type :invoke, :process 3, :f :txn, :value [[:r 0 nil]]}
{:index 11, :type :ok, :process 3, :f :txn, :value [[:r 0 [2 1 1]]]}
`
	h, err := history.Parse(strings.NewReader(edn), "pin")
	if err != nil {
		t.Fatal(err)
	}
	in := encode.InferPerRead(h)
	if in.CheckValues(); len(in.Findings) > 0 {
		t.Fatalf("findings: %v", in.Findings)
	}
	s := newRCSerial(h, in, false, nil)
	if s == nil {
		t.Fatal("no search")
	}
	p2 := s.place[2] // T2, process 2's first transaction
	for range 2 {    // process 2 appends 2, then 1: key 0 has two values
		if !s.Run(p2) {
			t.Fatal("process 2 cannot run")
		}
	}
	if !s.pinPassedLast() {
		t.Fatal("key 0 passed the pinned read's base, but pinPassedLast did not see it")
	}
	if got := s.Candidates(nil); len(got) != 0 {
		t.Fatalf("candidates at a failed state: %v", got)
	}
	s.Undo()
	if s.pinPassedLast() {
		t.Fatal("after undoing the second append key 0 is at the base: the read still holds")
	}
	s.Undo()
	if v := s.run(); v != Invalid {
		t.Fatalf("search: %v, want Invalid (process 1's read of [2 1] needs key 0 at one value after key 1 was written)", v)
	}
}
