package bench

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/workload"
)

// Verdict is one model's outcome.
type Verdict struct {
	Model     string   `json:"model"`
	Valid     string   `json:"valid"` // valid, not valid or unknown
	Anomalies []string `json:"anomaly_types,omitempty"`
	// Expected is the scenario's expected verdict (valid or not valid), "" if none.
	Expected string `json:"expected,omitempty"`
}

// Mismatch says whether the model decided against the expected verdict.
func (v Verdict) Mismatch() bool {
	return v.Expected != "" && v.Valid != "unknown" && v.Valid != v.Expected
}

// Undecided says whether the model has an expected verdict but gave unknown.
func (v Verdict) Undecided() bool { return v.Expected != "" && v.Valid == "unknown" }

// abandonAfter is how long past its Timeout a check may run before the bench stops
// waiting for it (the Timeout bounds the solver, not every phase).
var abandonAfter = 10 * time.Second // a variable for tests

// Measurement is one run of a scenario.
type Measurement struct {
	Scenario string `json:"scenario"`
	Txns     int    `json:"txns"`
	Ops      int    `json:"ops"`
	Bytes    int64  `json:"bytes"` // size of the history in EDN
	// GenerateSeconds: simulate and build the history in memory (not part of checking).
	GenerateSeconds float64 `json:"generate_seconds"`
	// WriteSeconds: simulate again and write the EDN file (not part of checking).
	WriteSeconds float64 `json:"write_seconds"`
	// CheckSeconds is the wall time of check.Check on the in-memory history; Stats holds
	// its phases, and Stats.ParseSeconds the time history.ParseFile took on the EDN file.
	CheckSeconds float64 `json:"check_seconds"`
	// TotalSeconds = parse + check: what `doppel check FILE` spends.
	TotalSeconds float64   `json:"total_seconds"`
	OpsPerSecond float64   `json:"ops_per_second"` // Ops / TotalSeconds
	Valid        string    `json:"valid"`
	Verdicts     []Verdict `json:"verdicts"`
	// PeakGoBytes is the high-water mark of the memory the Go runtime held from the OS
	// (runtime/metrics /memory/classes/total:bytes minus .../heap/released:bytes, that is
	// MemStats.Sys - HeapReleased), sampled every 5 ms during the run. Sys alone never
	// shrinks, so it would carry one run's peak into the next.
	PeakGoBytes uint64 `json:"peak_go_bytes"`
	// PeakRSSBytes is the process's VmHWM from /proc/self/status, reset at the start of
	// the run through /proc/self/clear_refs; 0 where that is not possible.
	PeakRSSBytes uint64      `json:"peak_rss_bytes"`
	Stats        check.Stats `json:"stats"`
	// Abandoned: the check was still running abandonAfter past the scenario's Timeout
	// and was left behind (its goroutine runs on until the process exits); the
	// verdicts are unknown and the text path was not measured.
	Abandoned bool `json:"abandoned,omitempty"`
	// StuckIn is the check's phase (check.Options.Progress) when it was abandoned.
	StuckIn string `json:"stuck_in,omitempty"`
	// Injected lists the anomalies injected into the history, with the :index of the
	// invokes of their transactions.
	Injected []string `json:"injected,omitempty"`
}

// Run generates sc's history, checks it, and measures the text path (EDN written to a
// temporary file and parsed back). progress, if not nil, gets a line per step.
func Run(sc Scenario, progress io.Writer) (Measurement, error) {
	m := Measurement{Scenario: sc.Name}
	if sc.File == "" {
		if err := sc.Spec.Validate(); err != nil {
			return m, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		if err := sc.Sim.Validate(); err != nil {
			return m, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
	}
	say := func(format string, args ...any) {
		if progress != nil {
			fmt.Fprintf(progress, "%s: "+format+"\n", append([]any{sc.Name}, args...)...)
		}
	}

	// Start the memory measurements from what the previous run left.
	debug.FreeOSMemory()
	rssReset := resetPeakRSS()
	sampler := startSampler()
	defer sampler.stop()

	var h *history.History
	var err error
	t0 := time.Now()
	if sc.File != "" {
		say("parsing %s", sc.File)
		if h, err = parseRecorded(sc.File, &m); err != nil {
			return m, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		m.Stats.ParseSeconds = time.Since(t0).Seconds()
	} else {
		say("generating %d transactions", sc.Spec.Txns)
		b := history.NewBuilder(sc.Name)
		injected, err := workload.SimulateInjected(sc.Spec, sc.Sim, b.Add)
		if err != nil {
			return m, fmt.Errorf("scenario %s: simulate: %w", sc.Name, err)
		}
		for _, in := range injected {
			m.Injected = append(m.Injected, in.String())
		}
		if h, err = b.Finish(); err != nil {
			return m, fmt.Errorf("scenario %s: build: %w", sc.Name, err)
		}
		m.GenerateSeconds = time.Since(t0).Seconds()
	}
	m.Txns, m.Ops = len(h.Txns), len(h.Ops)
	parseSeconds := m.Stats.ParseSeconds

	say("checking %d ops under %v", m.Ops, sc.models())
	t0 = time.Now()
	res, stuckIn, err := checkWithin(h, sc)
	m.CheckSeconds = time.Since(t0).Seconds()
	switch {
	case errors.Is(err, errAbandoned):
		m.Abandoned, m.StuckIn = true, stuckIn
		m.Valid = check.Unknown.String()
		for _, model := range sc.models() {
			m.Verdicts = append(m.Verdicts, Verdict{Model: model, Valid: check.Unknown.String()})
		}
	case err != nil:
		return m, fmt.Errorf("scenario %s: check: %w", sc.Name, err)
	default:
		m.Stats = res.Stats
		m.Valid = res.Valid.String()
		for _, mr := range res.Models {
			m.Verdicts = append(m.Verdicts, Verdict{Model: mr.Model, Valid: mr.Valid.String(), Anomalies: mr.AnomalyTypes})
		}
	}
	m.Stats.ParseSeconds = parseSeconds
	for i := range m.Verdicts {
		if want, ok := sc.ExpectValid[m.Verdicts[i].Model]; ok {
			m.Verdicts[i].Expected = check.Invalid.String()
			if want {
				m.Verdicts[i].Expected = check.Valid.String()
			}
		}
	}
	h = nil

	var parsed *history.History
	if sc.File == "" && !m.Abandoned {
		say("writing EDN")
		if parsed, err = textPath(sc, &m); err != nil {
			return m, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		if len(parsed.Txns) != m.Txns || len(parsed.Ops) != m.Ops {
			return m, fmt.Errorf("scenario %s: parsed %d txns and %d ops, built %d and %d",
				sc.Name, len(parsed.Txns), len(parsed.Ops), m.Txns, m.Ops)
		}
	}
	m.TotalSeconds = m.Stats.ParseSeconds + m.CheckSeconds
	if m.TotalSeconds > 0 && !m.Abandoned {
		m.OpsPerSecond = float64(m.Ops) / m.TotalSeconds
	}
	m.PeakGoBytes = sampler.stop()
	if rssReset {
		m.PeakRSSBytes = peakRSS()
	}
	runtime.KeepAlive(parsed)
	if m.Abandoned {
		say("abandoned in %s after %.3fs", m.StuckIn, m.CheckSeconds)
	}
	say("done: %s in %.3fs (parse %.3fs + check %.3fs)", m.Valid, m.TotalSeconds, m.Stats.ParseSeconds, m.CheckSeconds)
	return m, nil
}

// errAbandoned: checkWithin stopped waiting for the check.
var errAbandoned = errors.New("check abandoned")

// checkWithin checks h as sc says; with a Timeout, it waits at most abandonAfter
// longer for the check to return (it then keeps running in its goroutine), and
// returns errAbandoned with the phase the check was in.
// checkHistory is check.Check; a test replaces it with one that outlives any timeout.
var checkHistory = check.Check

func checkWithin(h *history.History, sc Scenario) (check.Result, string, error) {
	opts := check.Options{Models: sc.models(), Timeout: sc.Timeout}
	if sc.Timeout <= 0 {
		res, err := check.Check(h, opts)
		return res, "", err
	}
	var phase atomic.Value
	phase.Store("starting")
	opts.Progress = func(p string) { phase.Store(p) }
	type outcome struct {
		res check.Result
		err error
	}
	done := make(chan outcome, 1)
	run := checkHistory
	go func() {
		res, err := run(h, opts)
		done <- outcome{res, err}
	}()
	limit := time.NewTimer(sc.Timeout + abandonAfter)
	defer limit.Stop()
	select {
	case o := <-done:
		return o.res, "", o.err
	case <-limit.C:
		return check.Result{}, phase.Load().(string), errAbandoned
	}
}

// parseRecorded parses the recorded history at path (relative to the working
// directory or one of its parents, so that it is found from anywhere in the module),
// gunzipping it if its name ends in .gz. m.Bytes gets the size of the history text.
func parseRecorded(path string, m *Measurement) (*history.History, error) {
	full, err := findUpward(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(full)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 1<<20)
	if strings.HasSuffix(full, ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", full, err)
		}
		defer zr.Close()
		r = zr
	}
	counted := &countingReader{r: r}
	h, err := history.Parse(counted, full)
	m.Bytes = counted.n
	return h, err
}

// findUpward returns path if it exists, else the first parent/path that does.
func findUpward(path string) (string, error) {
	if filepath.IsAbs(path) {
		return path, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		full := filepath.Join(dir, path)
		if _, err := os.Stat(full); err == nil {
			return full, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s: not found in the working directory or its parents (run from the module)", path)
		}
		dir = parent
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// textPath writes sc's history as EDN to a temporary file and parses it back, recording
// the size, the write time and the parse time in m.
func textPath(sc Scenario, m *Measurement) (*history.History, error) {
	f, err := os.CreateTemp("", "doppel-bench-*.edn")
	if err != nil {
		return nil, err
	}
	path := f.Name()
	defer os.Remove(path)
	t0 := time.Now()
	w := bufio.NewWriterSize(f, 1<<20)
	err = workload.Simulate(sc.Spec, sc.Sim, func(e *history.Event) error { return history.WriteEDN(w, e) })
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write EDN: %w", err)
	}
	m.WriteSeconds = time.Since(t0).Seconds()
	if st, err := os.Stat(path); err == nil {
		m.Bytes = st.Size()
	}
	t0 = time.Now()
	h, err := history.ParseFile(path)
	if err != nil {
		return nil, fmt.Errorf("parse EDN: %w", err)
	}
	m.Stats.ParseSeconds = time.Since(t0).Seconds()
	return h, nil
}

// sampler records the high-water mark of the Go runtime's mapped memory.
type sampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
	peak uint64
}

func startSampler() *sampler {
	s := &sampler{done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	read := func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 && sample[1].Value.Kind() == metrics.KindUint64 {
			s.peak = max(s.peak, sample[0].Value.Uint64()-sample[1].Value.Uint64())
		}
	}
	read()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// runtime/metrics does not stop the world, unlike runtime.ReadMemStats.
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.done:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	}()
	return s
}

// stop ends the sampling (once) and returns the peak.
func (s *sampler) stop() uint64 {
	s.once.Do(func() { close(s.done); s.wg.Wait() })
	return s.peak
}

// resetPeakRSS resets VmHWM to the current RSS (Linux >= 4.0); false if it cannot.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS reads VmHWM in bytes, 0 if unavailable.
func peakRSS() uint64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("VmHWM:"))
		if !ok {
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) != 2 || string(fields[1]) != "kB" {
			return 0
		}
		kb, err := strconv.ParseUint(string(fields[0]), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// Summary is the runs of one scenario: their minimum and median of the total time,
// and the run that took the minimum (whose phases a table shows).
type Summary struct {
	Scenario      string        `json:"scenario"`
	Runs          []Measurement `json:"runs"`
	Best          Measurement   `json:"-"` // the run with the least TotalSeconds
	MinSeconds    float64       `json:"min_seconds"`
	MedianSeconds float64       `json:"median_seconds"`
	// MaxPeakRSSBytes and MaxPeakGoBytes are the largest peaks over the runs.
	MaxPeakRSSBytes uint64 `json:"max_peak_rss_bytes"`
	MaxPeakGoBytes  uint64 `json:"max_peak_go_bytes"`
	// SameVerdicts is false if the runs disagree (they should not: runs are deterministic).
	SameVerdicts bool `json:"same_verdicts"`
}

// Summarize aggregates the runs of one scenario; runs must not be empty.
func Summarize(runs []Measurement) Summary {
	s := Summary{Runs: runs, SameVerdicts: true}
	if len(runs) == 0 {
		return s
	}
	s.Scenario = runs[0].Scenario
	totals := make([]float64, len(runs))
	best := 0
	for i, r := range runs {
		totals[i] = r.TotalSeconds
		if r.TotalSeconds < runs[best].TotalSeconds {
			best = i
		}
		s.MaxPeakRSSBytes = max(s.MaxPeakRSSBytes, r.PeakRSSBytes)
		s.MaxPeakGoBytes = max(s.MaxPeakGoBytes, r.PeakGoBytes)
		if r.Valid != runs[0].Valid || !slices.EqualFunc(r.Verdicts, runs[0].Verdicts, func(a, b Verdict) bool {
			return a.Model == b.Model && a.Valid == b.Valid
		}) {
			s.SameVerdicts = false
		}
	}
	s.Best = runs[best]
	slices.Sort(totals)
	s.MinSeconds = totals[0]
	n := len(totals)
	if n%2 == 1 {
		s.MedianSeconds = totals[n/2]
	} else {
		s.MedianSeconds = (totals[n/2-1] + totals[n/2]) / 2
	}
	return s
}

// MachineInfo describes where a benchmark ran.
type MachineInfo struct {
	CPUs      int       `json:"cpus"`
	CPUModel  string    `json:"cpu_model"`
	MemBytes  uint64    `json:"mem_bytes"`
	GoVersion string    `json:"go_version"`
	Date      time.Time `json:"date"`
	LoadAvg   string    `json:"load_average"` // 1, 5 and 15 minute load when read
}

// Machine reads the machine's description (from /proc on Linux; fields stay empty elsewhere).
func Machine() MachineInfo {
	mi := MachineInfo{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Date: time.Now().UTC().Truncate(time.Second)}
	if cpuinfo, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range bytes.Lines(cpuinfo) {
			if name, val, ok := bytes.Cut(line, []byte(":")); ok && string(bytes.TrimSpace(name)) == "model name" {
				mi.CPUModel = string(bytes.TrimSpace(val))
				break
			}
		}
	}
	if meminfo, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range bytes.Lines(meminfo) {
			if rest, ok := bytes.CutPrefix(line, []byte("MemTotal:")); ok {
				if f := bytes.Fields(rest); len(f) == 2 {
					kb, _ := strconv.ParseUint(string(f[0]), 10, 64)
					mi.MemBytes = kb << 10
				}
			}
		}
	}
	mi.LoadAvg = LoadAverage()
	return mi
}

// LoadAverage is the first three fields of /proc/loadavg, "" if unavailable.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return ""
	}
	return string(bytes.Join(f[:3], []byte(" ")))
}
