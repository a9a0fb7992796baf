package check

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"doppel/encode"
	"doppel/history"
)

// TestLimitsBeforeCheck: limits spent before the check (while parsing) give the shape
// of any unknown result: every model unknown, with a message naming the limit, the
// phase and where in it, no anomaly, no verdict. Without limits they are never reached;
// a model Check refuses is refused before any work.
func TestLimitsBeforeCheck(t *testing.T) {
	l, err := StartLimits(Options{Models: []string{"serializable", "snapshot-isolation"}, Timeout: time.Nanosecond}, "parsing h.edn")
	if err != nil {
		t.Fatal(err)
	}
	if !l.Reached() {
		t.Fatal("a 1 ns limit was not reached")
	}
	l.Stop()
	l.Stop() // twice is fine
	res := l.Unknown("at line 7")
	if res.Valid != Unknown || len(res.Models) != 2 || len(res.Anomalies) != 0 || len(res.Strongest) != 0 {
		t.Fatalf("result %+v, want unknown for both models and nothing else", res)
	}
	for _, mr := range res.Models {
		want := mr.Model + ": the time limit (1ns) was reached while parsing h.edn, at line 7, after "
		if mr.Valid != Unknown || !strings.HasPrefix(mr.Message, want) {
			t.Errorf("%s: %v %q, want unknown, %q...", mr.Model, mr.Valid, mr.Message, want)
		}
	}
	if res.Message != res.Models[0].Message {
		t.Errorf("result message %q, want the first model's", res.Message)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"valid":"unknown"`, `"anomalies":[]`, `"anomaly_types":[]`, `"message":"serializable: the time limit`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}

	free, err := StartLimits(Options{}, "parsing h.edn")
	if err != nil {
		t.Fatal(err)
	}
	if free.Reached() {
		t.Error("no limits, yet reached")
	}
	free.Stop()
	if _, err := StartLimits(Options{Models: []string{"no-such-model"}}, "parsing h.edn"); err == nil {
		t.Error("an unknown model was accepted")
	}
}

// TestMemoryLimitBeforeCheck: --max-memory holds while parsing too.
func TestMemoryLimitBeforeCheck(t *testing.T) {
	l, err := StartLimits(Options{MaxMemory: 1}, "parsing h.edn")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	for i := 0; !l.Reached(); i++ {
		if i > 1000 {
			t.Fatal("a 1-byte memory limit was not reached in 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if msg := l.Unknown("at line 1").Message; !strings.Contains(msg, "memory limit") || !strings.Contains(msg, "while parsing h.edn") {
		t.Errorf("message %q does not name the memory limit and the parse", msg)
	}
}

// stopHistory is n keys each appended to once and read whole, perTxn keys a
// transaction; with incompatible, key 0 is also read as [2], which no order of appends
// explains (an incompatible-order the inference finds on its own).
func stopHistory(t *testing.T, n, perTxn int, incompatible bool) *history.History {
	t.Helper()
	var b strings.Builder
	idx := 0
	txn := func(value string) {
		for _, typ := range []string{":invoke", ":ok"} {
			fmt.Fprintf(&b, "{:type %s, :f :txn, :value [%s], :process 0, :index %d}\n", typ, value, idx)
			idx++
		}
	}
	for _, op := range []string{"[:append %d 1]", "[:r %d [1]]"} {
		for k := 0; k < n; k += perTxn {
			var ops []string
			for j := k; j < min(k+perTxn, n); j++ {
				ops = append(ops, fmt.Sprintf(op, j))
			}
			txn(strings.Join(ops, " "))
		}
	}
	if incompatible {
		txn("[:r 0 [2]]")
	}
	h, err := history.Parse(strings.NewReader(b.String()), "h")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestCutInferenceDecidesNothing: an inference cut short by a spent limit counts
// nothing it found (a part of an inference is none): unknown naming the inference,
// where a whole one finds the incompatible order. (Fewer transactions than stopEvery
// and more reads: only the inference's look at the reads asks the limits.)
func TestCutInferenceDecidesNothing(t *testing.T) {
	h := stopHistory(t, 2*stopEvery, 10, true)
	res, _ := Check(h, Options{Models: []string{"serializable"}})
	if res.Valid != Invalid || !contains(res.AnomalyTypes, "incompatible-order") {
		t.Fatalf("without limits: %v %v, want not valid (incompatible-order)", res.Valid, res.AnomalyTypes)
	}
	res, _ = Check(h, Options{Models: []string{"serializable"}, Timeout: time.Nanosecond})
	checkCounters(t, res, "time limit (1ns)")
	if len(res.Anomalies) != 0 || !strings.Contains(res.Message, "while inferring dependencies") {
		t.Errorf("cut short: anomalies %v, message %q; want none, naming the inference", res.AnomalyTypes, res.Message)
	}
}

// TestLostUpdateSearchStops: the lost-update search asks the limits every stopEvery
// transactions; cut short, it counts nothing.
func TestLostUpdateSearchStops(t *testing.T) {
	h := stopHistory(t, stopEvery+10, 1, false)
	if _, ok := lostUpdatesStop(h, func() bool { return false }); !ok {
		t.Fatal("never told to stop, the search stopped")
	}
	if lost, ok := lostUpdatesStop(h, func() bool { return true }); ok || lost != nil {
		t.Fatalf("told to stop: ok %v, %d anomalies", ok, len(lost))
	}
	res, _ := Check(h, Options{Models: []string{"serializable"}, Timeout: time.Nanosecond})
	checkCounters(t, res, "time limit (1ns)")
	if !strings.Contains(res.Message, "while looking for lost updates") {
		t.Errorf("message %q does not name the lost-update search", res.Message)
	}
}

// TestReplaySetUpAndVerificationStop: the serial replay's set-up and its verification,
// and the snapshot isolation verification, give up when their stop hook says so (a verification given up is no rejection);
// never told to, they replay and accept the order.
func TestReplaySetUpAndVerificationStop(t *testing.T) {
	h := stopHistory(t, 3000, 1, false)
	in := encode.Infer(h)
	commit := commitsOf(h)
	if r := newReplayStop(h, in, commit, nil, func() bool { return true }); r != nil {
		t.Error("the replay's set-up went on after its stop said to give up")
	}
	asked := 0
	order, ok := schedule(h, in, commit, nil, false, func() bool { asked++; return false })
	if !ok || asked == 0 {
		t.Fatalf("replay: ok %v, stop asked %d times", ok, asked)
	}
	if err := verifySerialStop(h, in, order, true, true, func() bool { return false }); err != nil {
		t.Fatalf("verification never stopped: %v", err)
	}
	if err := verifySerialStop(h, in, order, true, true, func() bool { return true }); err != errStopped {
		t.Fatalf("verification told to stop: %v, want errStopped", err)
	}
	// The snapshot isolation verification likewise.
	events, ok, _ := scheduleSnapshot(h, in, commit, nil, false, false, nil)
	if !ok {
		t.Fatal("the snapshot replay did not complete")
	}
	if err := verifySIStop(h, in, events, true, true, func() bool { return false }); err != nil {
		t.Fatalf("snapshot verification never stopped: %v", err)
	}
	if err := verifySIStop(h, in, events, true, true, func() bool { return true }); err != errStopped {
		t.Fatalf("snapshot verification told to stop: %v, want errStopped", err)
	}
}
