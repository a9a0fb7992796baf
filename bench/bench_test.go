package bench

import (
	"bytes"
	"encoding/xml"
	"flag"
	"strings"
	"testing"

	"doppel/check"
	"doppel/history"
	"doppel/workload"
)

// tiny is a scenario small enough for `go test ./...`.
func tiny(name string, sim workload.SimOptions, models ...string) Scenario {
	return Scenario{
		Name: name,
		Spec: workload.Spec{Sessions: 4, Txns: 300, Ops: 4, Keys: 20, Reads: 0.5, KeyDist: "uniform",
			KeyZipf: 1, DupKeys: 0.5, ValZipf: 1, ValDomain: 10, Seed: 1},
		Sim:    sim,
		Models: models,
	}
}

func TestRunVerdicts(t *testing.T) {
	ok, err := Run(tiny("tiny-serializable", workload.SimOptions{Behaviour: workload.SimSerializable}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok.Valid != "valid" || len(ok.Verdicts) != len(DefaultModels) {
		t.Errorf("serializable behaviour: got %s, verdicts %+v; want valid under %v", ok.Valid, ok.Verdicts, DefaultModels)
	}
	if ok.Txns != 300 || ok.Ops == 0 || ok.Bytes == 0 || ok.Stats.Operations != ok.Ops {
		t.Errorf("sizes: txns %d, ops %d (stats %d), bytes %d", ok.Txns, ok.Ops, ok.Stats.Operations, ok.Bytes)
	}
	if ok.TotalSeconds < ok.CheckSeconds || ok.OpsPerSecond <= 0 || ok.PeakGoBytes == 0 {
		t.Errorf("measurements: total %v, check %v, ops/s %v, peak %d", ok.TotalSeconds, ok.CheckSeconds, ok.OpsPerSecond, ok.PeakGoBytes)
	}

	bad, err := Run(tiny("tiny-faulty", workload.SimOptions{Behaviour: workload.SimFaulty, FaultRate: 0.5}, "serializable"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if bad.Valid != "not valid" || len(bad.Verdicts) != 1 || bad.Verdicts[0].Model != "serializable" {
		t.Errorf("faulty behaviour at fault rate 0.5: got %s, verdicts %+v; want not valid under serializable", bad.Valid, bad.Verdicts)
	}
}

func TestRunRejectsBadScenario(t *testing.T) {
	sc := tiny("bad", workload.SimOptions{Behaviour: "eventual"})
	if _, err := Run(sc, nil); err == nil {
		t.Error("Run accepted behaviour eventual")
	}
	sc = tiny("bad", workload.SimOptions{})
	sc.Spec.Sessions = 0
	if _, err := Run(sc, nil); err == nil {
		t.Error("Run accepted 0 sessions")
	}
}

func TestScenarios(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range Scenarios() {
		if seen[sc.Name] {
			t.Errorf("scenario %s listed twice", sc.Name)
		}
		seen[sc.Name] = true
		if err := sc.Spec.Validate(); err != nil {
			t.Errorf("%s: %v", sc.Name, err)
		}
		if err := sc.Sim.Validate(); err != nil {
			t.Errorf("%s: %v", sc.Name, err)
		}
	}
	for _, name := range []string{"fig3-left-1000", "fig3-left-5000", "fig3-right-dup0", "fig3-right-dup100", "scale-100k", "scale-1m"} {
		if !seen[name] {
			t.Errorf("scenario %s missing", name)
		}
	}
	sc, _ := Find("fig3-right-dup100")
	if sc.Spec.Sessions*100 != sc.Spec.Txns || sc.Spec.Ops != 8 || sc.Spec.DupKeys != 1 {
		t.Errorf("fig3-right-dup100 is not the paper's point: %+v", sc.Spec)
	}
}

func TestSummarize(t *testing.T) {
	runs := []Measurement{
		{Scenario: "s", TotalSeconds: 3, PeakRSSBytes: 10, Valid: "valid"},
		{Scenario: "s", TotalSeconds: 1, PeakRSSBytes: 30, Valid: "valid"},
		{Scenario: "s", TotalSeconds: 2, PeakRSSBytes: 20, Valid: "valid"},
		{Scenario: "s", TotalSeconds: 10, PeakRSSBytes: 5, Valid: "valid"},
	}
	s := Summarize(runs)
	if s.MinSeconds != 1 || s.MedianSeconds != 2.5 || s.Best.TotalSeconds != 1 || s.MaxPeakRSSBytes != 30 || !s.SameVerdicts {
		t.Errorf("got %+v", s)
	}
	runs[2].Valid = "not valid"
	if Summarize(runs[:3]).SameVerdicts || Summarize(runs[:3]).MedianSeconds != 2 {
		t.Errorf("odd count or differing verdicts: %+v", Summarize(runs[:3]))
	}
}

func TestReports(t *testing.T) {
	var sums []Summary
	for i, name := range []string{"fig3-left-1000", "fig3-left-5000", "fig3-right-dup100"} {
		sums = append(sums, Summarize([]Measurement{{Scenario: name, Txns: 1000, Ops: 20000, TotalSeconds: float64(i+1) / 10,
			Verdicts: []Verdict{{Model: "serializable", Valid: "not valid", Anomalies: []string{"G-single"}}}}}))
	}
	var table bytes.Buffer
	if err := WriteTable(&table, sums); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fig3-left-5000", "~50 s", "<100 s", "ser:NO(G-single)"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var svg bytes.Buffer
	if err := WriteSVG(&svg, sums); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&svg)
	for {
		_, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("SVG is not well-formed XML: %v", err)
			}
			break
		}
	}
	if err := WriteSVG(&svg, sums[:0]); err == nil {
		t.Error("WriteSVG without Figure 3 points did not fail")
	}
}

// benchmarkCheck generates sc's history once and times check.Check on it; ops/s counts
// micro-ops checked per second (parsing excluded: BenchmarkParse* measure it).
func benchmarkCheck(b *testing.B, name string) {
	sc, ok := Find(name)
	if !ok {
		b.Fatalf("no scenario %s", name)
	}
	bld := history.NewBuilder(name)
	if err := workload.Simulate(sc.Spec, sc.Sim, bld.Add); err != nil {
		b.Fatal(err)
	}
	h, err := bld.Finish()
	if err != nil {
		b.Fatal(err)
	}
	opts := check.Options{Models: sc.models()}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		if _, err := check.Check(h, opts); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(len(h.Ops))*float64(n)/b.Elapsed().Seconds(), "ops/s")
}

// benchmarkParse writes sc's history as EDN once and times history.Parse on it.
func benchmarkParse(b *testing.B, name string) {
	sc, ok := Find(name)
	if !ok {
		b.Fatalf("no scenario %s", name)
	}
	var edn bytes.Buffer
	if err := workload.Simulate(sc.Spec, sc.Sim, func(e *history.Event) error { return history.WriteEDN(&edn, e) }); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(edn.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	ops, n := 0, 0
	for b.Loop() {
		h, err := history.Parse(bytes.NewReader(edn.Bytes()), name)
		if err != nil {
			b.Fatal(err)
		}
		ops = len(h.Ops)
		n++
	}
	b.ReportMetric(float64(ops)*float64(n)/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkFig3Left1000(b *testing.B)      { benchmarkCheck(b, "fig3-left-1000") }
func BenchmarkFig3Left5000(b *testing.B)      { benchmarkCheck(b, "fig3-left-5000") }
func BenchmarkFig3Right0(b *testing.B)        { benchmarkCheck(b, "fig3-right-dup0") }
func BenchmarkFig3Right50(b *testing.B)       { benchmarkCheck(b, "fig3-right-dup50") }
func BenchmarkFig3Right100(b *testing.B)      { benchmarkCheck(b, "fig3-right-dup100") }
func BenchmarkContention(b *testing.B)        { benchmarkCheck(b, "contention-50keys") }
func BenchmarkLongTxns(b *testing.B)          { benchmarkCheck(b, "long-txns") }
func BenchmarkUniqueValues(b *testing.B)      { benchmarkCheck(b, "unique-values") }
func BenchmarkSnapshot(b *testing.B)          { benchmarkCheck(b, "snapshot-behaviour") }
func BenchmarkFaulty(b *testing.B)            { benchmarkCheck(b, "faulty-behaviour") }
func BenchmarkParseFig3Left5000(b *testing.B) { benchmarkParse(b, "fig3-left-5000") }

// BenchmarkScale100K takes tens of seconds per iteration; it runs only when -bench
// selects it (plain `-bench .` does too).
func BenchmarkScale100K(b *testing.B) { benchmarkCheck(b, "scale-100k") }

// BenchmarkScale1M (minutes, gigabytes) runs only when named explicitly, e.g.
// -bench 'Scale1M$', not under -bench . (scale-1m is a Heavy scenario).
func BenchmarkScale1M(b *testing.B) {
	if !strings.Contains(testingBenchFlag(), "1M") {
		b.Skip("run with -bench Scale1M")
	}
	benchmarkCheck(b, "scale-1m")
}

// testingBenchFlag is the -test.bench pattern.
func testingBenchFlag() string {
	if f := flag.Lookup("test.bench"); f != nil {
		return f.Value.String()
	}
	return ""
}
