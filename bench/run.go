package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
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
}

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
}

// Run generates sc's history, checks it, and measures the text path (EDN written to a
// temporary file and parsed back). progress, if not nil, gets a line per step.
func Run(sc Scenario, progress io.Writer) (Measurement, error) {
	m := Measurement{Scenario: sc.Name}
	if err := sc.Spec.Validate(); err != nil {
		return m, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	if err := sc.Sim.Validate(); err != nil {
		return m, fmt.Errorf("scenario %s: %w", sc.Name, err)
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

	say("generating %d transactions", sc.Spec.Txns)
	t0 := time.Now()
	b := history.NewBuilder(sc.Name)
	if err := workload.Simulate(sc.Spec, sc.Sim, b.Add); err != nil {
		return m, fmt.Errorf("scenario %s: simulate: %w", sc.Name, err)
	}
	h, err := b.Finish()
	if err != nil {
		return m, fmt.Errorf("scenario %s: build: %w", sc.Name, err)
	}
	b = nil
	m.GenerateSeconds = time.Since(t0).Seconds()
	m.Txns, m.Ops = len(h.Txns), len(h.Ops)

	say("checking %d ops under %v", m.Ops, sc.models())
	t0 = time.Now()
	res, err := check.Check(h, check.Options{Models: sc.models(), Timeout: sc.Timeout})
	if err != nil {
		return m, fmt.Errorf("scenario %s: check: %w", sc.Name, err)
	}
	m.CheckSeconds = time.Since(t0).Seconds()
	m.Stats = res.Stats
	m.Valid = res.Valid.String()
	for _, mr := range res.Models {
		m.Verdicts = append(m.Verdicts, Verdict{Model: mr.Model, Valid: mr.Valid.String(), Anomalies: mr.AnomalyTypes})
	}
	h = nil

	say("writing EDN")
	parsed, err := textPath(sc, &m)
	if err != nil {
		return m, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	if len(parsed.Txns) != m.Txns || len(parsed.Ops) != m.Ops {
		return m, fmt.Errorf("scenario %s: parsed %d txns and %d ops, built %d and %d",
			sc.Name, len(parsed.Txns), len(parsed.Ops), m.Txns, m.Ops)
	}
	m.TotalSeconds = m.Stats.ParseSeconds + m.CheckSeconds
	if m.TotalSeconds > 0 {
		m.OpsPerSecond = float64(m.Ops) / m.TotalSeconds
	}
	m.PeakGoBytes = sampler.stop()
	if rssReset {
		m.PeakRSSBytes = peakRSS()
	}
	runtime.KeepAlive(parsed)
	say("done: %s in %.3fs (parse %.3fs + check %.3fs)", m.Valid, m.TotalSeconds, m.Stats.ParseSeconds, m.CheckSeconds)
	return m, nil
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
