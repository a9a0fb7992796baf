package workload

import (
	"strings"
	"testing"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/internal/brute"
	"doppel/shrink"
)

// injectedRun is a simulated history with its events and the injections made.
type injectedRun struct {
	events   []history.Event
	h        *history.History
	injected []Injection
}

// simulateInjected simulates spec under the serializable behaviour with the anomalies
// inject.
func simulateInjected(t *testing.T, spec Spec, inject ...string) injectedRun {
	t.Helper()
	var r injectedRun
	opt := SimOptions{Behaviour: SimSerializable, Inject: inject, InjectAt: DefaultInjectAt}
	var err error
	r.injected, err = SimulateInjected(spec, opt, func(e *history.Event) error { r.events = append(r.events, *e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if r.h, err = history.FromEvents(r.events); err != nil {
		t.Fatal(err)
	}
	return r
}

// tinyInjectSpec is small enough for the brute force (which is exponential in the
// number of transactions) and duplicate-heavy: every key allows duplicates, from 2 values.
func tinyInjectSpec(seed int64) Spec {
	return Spec{Sessions: 3, Txns: 9, Ops: 3, Keys: 3, Reads: 0.5, KeyDist: "uniform", KeyZipf: 1,
		DupKeys: 1, ValZipf: 1, ValDomain: 2, Seed: seed}
}

// completion returns the :index of the completion of the transaction invoked at idx.
func (r injectedRun) completion(t *testing.T, idx int64) int64 {
	t.Helper()
	for i, e := range r.events {
		if e.Index != idx {
			continue
		}
		for _, c := range r.events[i+1:] {
			if c.Process == e.Process {
				if c.Type != history.TypeOK {
					t.Errorf("transaction invoked at %d completed with type %v, want ok", idx, c.Type)
				}
				return c.Index
			}
		}
	}
	t.Fatalf("no completed transaction invoked at :index %d", idx)
	return -1
}

// checkShape checks each injection's shape: both transactions :ok, on keys that allow
// duplicates, appending values that the history appends more than once to the key.
func (r injectedRun) checkShape(t *testing.T, spec Spec) {
	t.Helper()
	src := NewTxnSource(spec, 0)
	appends := map[[2]int64]int{} // (key, value) -> appends in the history
	for _, e := range r.events {
		if e.Type != history.TypeInvoke {
			continue
		}
		for _, op := range e.Value {
			if op.Append {
				appends[[2]int64{op.Key, op.Value}]++
			}
		}
	}
	for _, in := range r.injected {
		for _, idx := range in.Invokes {
			r.completion(t, idx)
			for _, op := range r.events[idx].Value {
				if !src.IsDupKey(op.Key) {
					t.Errorf("%v: key %d does not allow duplicates", in, op.Key)
				}
				if op.Append && appends[[2]int64{op.Key, op.Value}] < 2 {
					t.Errorf("%v: value %d appended to key %d only once", in, op.Value, op.Key)
				}
			}
		}
	}
}

// TestInjectAgainstBruteForce: on tiny duplicate-heavy histories, the brute force finds
// the run valid without injection and not serializable with each anomaly; snapshot
// isolation allows write skew only.
func TestInjectAgainstBruteForce(t *testing.T) {
	for _, kind := range AllInjections {
		for seed := int64(1); seed <= 20; seed++ {
			spec := tinyInjectSpec(seed)
			plain := simulateInjected(t, spec)
			if !brute.Check(plain.h, brute.Serializable) {
				t.Fatalf("seed %d without injection: not serializable\n%s", seed, brute.Format(plain.h))
			}
			r := simulateInjected(t, spec, kind)
			if len(r.injected) != 1 || r.injected[0].Kind != kind {
				t.Fatalf("%s seed %d: injected %v", kind, seed, r.injected)
			}
			r.checkShape(t, spec)
			h := r.h
			for _, model := range []string{brute.Serializable, brute.StrictSerializable, brute.SnapshotIsolation} {
				want := model == brute.SnapshotIsolation && kind == InjectWriteSkew
				if got := brute.Check(h, model); got != want {
					t.Errorf("%s seed %d: brute force says %v under %s, want %v\n%s", kind, seed, got, model, want, brute.Format(h))
				}
			}
		}
	}
}

// TestInjectChecker: on larger histories (the bench's inject-* shape at 300
// transactions), the checker finds the run valid without injection and not valid with
// it.
func TestInjectChecker(t *testing.T) {
	spec := Spec{Sessions: 10, Txns: 300, Ops: 6, Keys: 100, Reads: 0.5, KeyDist: "uniform", KeyZipf: 1,
		DupKeys: 1, ValZipf: 1, ValDomain: 3, Seed: 1}
	plain := simulateInjected(t, spec)
	res, err := check.Check(plain.h, check.Options{Models: []string{"serializable"}, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid != check.Valid {
		t.Fatalf("without injection: %v %s", res.Valid, res.Message)
	}
	for _, kind := range AllInjections {
		r := simulateInjected(t, spec, kind)
		r.checkShape(t, spec)
		// Half the transactions were invoked before T1: at least as many events.
		if first := r.injected[0].Invokes[0]; first < int64(spec.Txns/2) {
			t.Errorf("%s: injected at :index %d, before half of the %d transactions", kind, first, spec.Txns)
		}
		res, err := check.Check(r.h, check.Options{Models: []string{"serializable"}, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid != check.Invalid {
			t.Errorf("%s: %v %s", kind, res.Valid, res.Message)
			continue
		}
		// The explanation may be a case analysis over attributions elsewhere in the
		// history rather than the injected pair's cycle; say which, for the record.
		named := 0
		for _, a := range res.Anomalies {
			for _, tr := range a.Txns {
				for _, idx := range r.injected[0].Invokes {
					if tr.Index == r.completion(t, idx) {
						named++
					}
				}
			}
		}
		t.Logf("%s: %v; the counterexample names %d of the 2 injected transactions", kind, res.AnomalyTypes, named)
	}
}

// TestInjectSeveral: several anomalies are injected one after the other, each once.
func TestInjectSeveral(t *testing.T) {
	spec := tinyInjectSpec(1)
	spec.Txns = 60
	injected := simulateInjected(t, spec, AllInjections...).injected
	if len(injected) != len(AllInjections) {
		t.Fatalf("injected %v, want one of each of %v", injected, AllInjections)
	}
	for i, in := range injected {
		if in.Kind != AllInjections[i] || in.Invokes[0] >= in.Invokes[1] {
			t.Errorf("injection %d: %v", i, in)
		}
		if i > 0 && in.Invokes[0] <= injected[i-1].Invokes[1] {
			t.Errorf("injection %d (%v) starts before the previous one (%v) was chosen", i, in, injected[i-1])
		}
	}
	if s := injected[0].String(); !strings.HasPrefix(s, "injected write-skew: invoke indexes ") {
		t.Errorf("String() = %q", s)
	}
}

func TestInjectOptionErrors(t *testing.T) {
	spec := tinyInjectSpec(1)
	for _, opt := range []SimOptions{
		{Inject: []string{"dirty-write"}},
		{Inject: []string{InjectGSingle, InjectGSingle}},
		{Inject: []string{InjectGSingle}, Behaviour: SimSnapshot},
		{Inject: []string{InjectGSingle}, InjectAt: 1.5},
	} {
		if err := opt.Validate(); err == nil {
			t.Errorf("%+v accepted", opt)
		}
	}
	// Without keys that allow duplicates there is nothing to inject into.
	spec.DupKeys = 0
	_, err := SimulateInjected(spec, SimOptions{Inject: []string{InjectLostUpdate}}, func(*history.Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "could not inject") {
		t.Errorf("no duplicate keys: got %v", err)
	}
}

// TestInjectedPairNamedOnLongHistories: on a history past the size where a violation
// proved by thresholds is decided again to name it, the evidence is the thresholds'
// cycle, and for each injected anomaly it names both injected transactions, under
// serializable and strict-serializable (narrowing finds what the pair did, not an
// attribution elsewhere).
func TestInjectedPairNamedOnLongHistories(t *testing.T) {
	spec := Spec{Sessions: 10, Txns: 3000, Ops: 6, Keys: 100, Reads: 0.5, KeyDist: "uniform", KeyZipf: 1,
		DupKeys: 1, ValZipf: 1, ValDomain: 3, Seed: 2}
	for _, kind := range AllInjections {
		r := simulateInjected(t, spec, kind)
		res, err := check.Check(r.h, check.Options{Models: []string{"serializable", "strict-serializable"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, mr := range res.Models {
			if mr.Valid != check.Invalid {
				t.Errorf("%s: %s %v %s", kind, mr.Model, mr.Valid, mr.Message)
			}
		}
		want := []int64{r.completion(t, r.injected[0].Invokes[0]), r.completion(t, r.injected[0].Invokes[1])}
		found := false
		for _, a := range res.Anomalies {
			named := 0
			for _, tr := range a.Txns {
				if tr.Index == want[0] || tr.Index == want[1] {
					named++
				}
			}
			found = found || named >= 2
		}
		if !found {
			t.Errorf("%s: no anomaly names both injected transactions (:index %v): %+v", kind, want, res.AnomalyTypes)
		}
	}
}

// TestInjectedCounterexample: on a 2500-transaction duplicate-heavy history with one
// injected anomaly, the counterexample of every model found not valid has at most 10
// transactions, contains both injected ones, and is not valid by the brute force.
func TestInjectedCounterexample(t *testing.T) {
	spec := Spec{Sessions: 10, Txns: 2500, Ops: 6, Keys: 100, Reads: 0.5, KeyDist: "uniform", KeyZipf: 1,
		DupKeys: 1, ValZipf: 1, ValDomain: 3, Seed: 3}
	models := []string{"serializable", "strict-serializable", "snapshot-isolation"}
	for _, kind := range AllInjections {
		r := simulateInjected(t, spec, kind)
		res, err := check.Check(r.h, check.Options{Models: models})
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{r.completion(t, r.injected[0].Invokes[0]), r.completion(t, r.injected[0].Invokes[1])}
		reports, failures := shrink.Counterexamples(r.h, &res, time.Time{})
		if len(failures) > 0 {
			t.Fatalf("%s: %v", kind, failures)
		}
		covered := 0
		for _, cx := range reports {
			covered += len(cx.Models)
			if cx.Transactions > 10 {
				t.Errorf("%s: counterexample for %v has %d transactions", kind, cx.Models, cx.Transactions)
			}
			named := 0
			for _, tr := range cx.Txns {
				if tr.Index == want[0] || tr.Index == want[1] {
					named++
				}
			}
			if named != 2 {
				t.Errorf("%s: counterexample for %v names %d of the injected :index %v:\n%s", kind, cx.Models, named, want, cx.EDNText())
			}
			h, err := history.Parse(strings.NewReader(cx.EDNText()), "counterexample.edn")
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			for _, m := range cx.Models {
				if ok, err := brute.CheckModel(h, m); err != nil || ok {
					t.Errorf("%s: the counterexample for %s is valid by the brute force (err %v)\n%s", kind, m, err, cx.EDNText())
				}
			}
		}
		invalid := 0
		for _, mr := range res.Models {
			if mr.Valid == check.Invalid {
				invalid++
			}
		}
		if invalid == 0 || covered != invalid {
			t.Errorf("%s: %d models not valid, %d with a counterexample", kind, invalid, covered)
		}
	}
}
