package bench

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		if sc.File != "" {
			continue
		}
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

// TestHardScenarios: the families of issue 9 exist under their stable names, each with
// an expected verdict per model, and the injected ones really inject.
func TestHardScenarios(t *testing.T) {
	want := []string{
		"dupkeys-k10v2-350-s1", "dupkeys-k10v2-10k-s3", "window-v3-500-s1", "window-v3-10k-s2",
		"info2-20k", "info2-100k", "info2-1m", "inject-write-skew-1k", "inject-lost-update-10k",
		"inject-g-single-100k", "mariadb-kill-conn", "postgres-rc-kill-conn",
	}
	for _, name := range want {
		sc, ok := Find(name)
		if !ok {
			t.Errorf("scenario %s missing", name)
			continue
		}
		if !sc.Hard {
			t.Errorf("%s is in the default set", name)
		}
		if sc.File == "" && len(sc.ExpectValid) != len(sc.models()) {
			t.Errorf("%s: expected verdicts %v for models %v", name, sc.ExpectValid, sc.models())
		}
	}
	if sc, _ := Find("info2-1m"); !sc.Heavy {
		t.Error("info2-1m is not heavy")
	}
	for _, name := range []string{"inject-write-skew-1k", "inject-g-single-1k"} {
		sc, _ := Find(name)
		injected, err := workload.SimulateInjected(sc.Spec, sc.Sim, func(*history.Event) error { return nil })
		if err != nil || len(injected) != 1 {
			t.Errorf("%s: injected %v, %v", name, injected, err)
		}
		if sc.ExpectValid["serializable"] || sc.ExpectValid["snapshot-isolation"] != strings.Contains(name, "write-skew") {
			t.Errorf("%s: expected verdicts %v", name, sc.ExpectValid)
		}
	}
	for _, name := range []string{"mariadb-kill-conn", "postgres-rc-kill-conn", "rc-store-3850", "rc-store-info-487"} {
		sc, _ := Find(name)
		if _, err := findUpward(sc.File); err != nil {
			t.Error(err)
		}
	}
}

// TestExpectations: a verdict against the expected one is a mismatch, unknown is
// undecided, and the table says which.
func TestExpectations(t *testing.T) {
	sc := tiny("tiny-expect", workload.SimOptions{Behaviour: workload.SimSerializable}, "serializable", "snapshot-isolation")
	sc.ExpectValid = map[string]bool{"serializable": false}
	m, err := Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Verdicts) != 2 || !m.Verdicts[0].Mismatch() || m.Verdicts[0].Expected != "not valid" ||
		m.Verdicts[1].Mismatch() || m.Verdicts[1].Expected != "" {
		t.Errorf("verdicts %+v", m.Verdicts)
	}
	if got := expectText([]Measurement{m}); got != "MISMATCH" {
		t.Errorf("expectText = %q, want MISMATCH", got)
	}
	undecided := Verdict{Model: "serializable", Valid: "unknown", Expected: "valid"}
	if undecided.Mismatch() || !undecided.Undecided() {
		t.Errorf("%+v: mismatch %v, undecided %v", undecided, undecided.Mismatch(), undecided.Undecided())
	}
	if got := expectText([]Measurement{{Verdicts: []Verdict{undecided}}}); got != "undecided" {
		t.Errorf("expectText = %q, want undecided", got)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, []Summary{Summarize([]Measurement{m})}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "MISMATCH") || !strings.Contains(table.String(), "ser:ok!") {
		t.Errorf("table does not show the mismatch:\n%s", table.String())
	}
}

// TestAbandon: a check that outlives its timeout (here 1 ns, with no grace; the check
// waits until the test ends, since a real one honours a 1 ns limit in about a
// millisecond and could win the race) is left behind and reported unknown, without the
// text path.
func TestAbandon(t *testing.T) {
	old, oldCheck := abandonAfter, checkHistory
	abandonAfter = 0
	release := make(chan struct{})
	checkHistory = func(h *history.History, opts check.Options) (check.Result, error) {
		<-release
		return check.Check(h, opts)
	}
	defer func() { close(release); abandonAfter, checkHistory = old, oldCheck }()
	sc := tiny("tiny-abandon", workload.SimOptions{Behaviour: workload.SimSerializable}, "serializable")
	sc.Timeout = time.Nanosecond
	sc.ExpectValid = map[string]bool{"serializable": true}
	m, err := Run(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Abandoned || m.StuckIn == "" || m.Valid != "unknown" || len(m.Verdicts) != 1 || !m.Verdicts[0].Undecided() || m.Bytes != 0 {
		t.Errorf("got %+v", m)
	}
}

// TestRecordedScenario: a scenario on a recorded, gzip-compressed history parses it
// and checks it.
func TestRecordedScenario(t *testing.T) {
	var edn bytes.Buffer
	spec := tiny("x", workload.SimOptions{}).Spec
	if err := workload.Simulate(spec, workload.SimOptions{}, func(e *history.Event) error { return history.WriteEDN(&edn, e) }); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "h.edn.gz")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(edn.Bytes())
	zw.Close()
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Run(Scenario{Name: "recorded", File: path, Models: []string{"serializable"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Txns != spec.Txns || m.Bytes != int64(edn.Len()) || m.Valid != "valid" || m.Stats.ParseSeconds <= 0 {
		t.Errorf("got txns %d bytes %d valid %s parse %v; want %d txns, %d bytes, valid",
			m.Txns, m.Bytes, m.Valid, m.Stats.ParseSeconds, spec.Txns, edn.Len())
	}
	if _, err := Run(Scenario{Name: "missing", File: "no/such/history.edn"}, nil); err == nil {
		t.Error("a missing recorded history did not fail")
	}
}

// TestSweepScenarios: a sweep is the same for the same seed, each of its names finds
// the same scenario again (the bench's child process looks it up by name), every
// drawn configuration is one the generator accepts, and an injected anomaly gets keys
// whose values repeat.
func TestSweepScenarios(t *testing.T) {
	a, b := Sweep(7, 50), Sweep(7, 50)
	other := Sweep(8, 50)
	differs := false
	for i := range a {
		if a[i].Name != fmt.Sprintf("sweep-7-%d", i) || a[i].Spec != b[i].Spec {
			t.Fatalf("scenario %d: %s %+v, then %s %+v", i, a[i].Name, a[i].Spec, b[i].Name, b[i].Spec)
		}
		differs = differs || a[i].Spec != other[i].Spec
		found, ok := Find(a[i].Name)
		if !ok || found.Spec != a[i].Spec || found.Sim.Behaviour != a[i].Sim.Behaviour || found.Sim.Info != a[i].Sim.Info {
			t.Fatalf("Find(%q) = %+v, %v; want %+v", a[i].Name, found, ok, a[i])
		}
		if err := a[i].Spec.Validate(); err != nil {
			t.Fatalf("%s: %v", a[i].Name, err)
		}
		if err := a[i].Sim.Validate(); err != nil {
			t.Fatalf("%s: %v", a[i].Name, err)
		}
		if len(a[i].Sim.Inject) > 0 && a[i].Spec.DupKeys != 1 {
			t.Fatalf("%s injects %v on dup-keys %g", a[i].Name, a[i].Sim.Inject, a[i].Spec.DupKeys)
		}
		if len(a[i].ExpectValid) == 0 {
			t.Fatalf("%s expects nothing", a[i].Name)
		}
	}
	if !differs {
		t.Fatal("sweeps from seeds 7 and 8 are the same")
	}
	for _, bad := range []string{"sweep-", "sweep-7", "sweep-x-1", "sweep-7--1"} {
		if _, ok := Find(bad); ok {
			t.Fatalf("Find(%q) found a scenario", bad)
		}
	}
}
