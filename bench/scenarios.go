// Package bench measures doppel's checker on generated histories: the points of the
// paper's Figure 3 and larger scale points. `doppel bench` and the Benchmark functions
// of this package both run its scenarios; BENCHMARKS.md records the numbers.
package bench

import (
	"fmt"
	"time"

	"doppel/workload"
)

// DefaultModels are checked when a scenario names none.
var DefaultModels = []string{"serializable", "strict-serializable", "snapshot-isolation"}

// Scenario is one benchmark point: a workload, the simulated database it runs against,
// and the models its history is checked under.
type Scenario struct {
	Name   string
	Spec   workload.Spec
	Sim    workload.SimOptions
	Models []string // empty means DefaultModels
	// Timeout bounds each check (the verdict is then unknown); 0 means none.
	Timeout time.Duration
	// Heavy scenarios (minutes, gigabytes) run only when selected by name.
	Heavy bool
	// PaperSeconds is the paper prototype's (Elle+) checking time for this point, when
	// the paper reports one (read off its Figure 3; 0 means not reported).
	PaperSeconds float64
	// PaperNote says how PaperSeconds was reported ("~", "<").
	PaperNote string
}

// models returns the models to check sc under.
func (sc Scenario) models() []string {
	if len(sc.Models) == 0 {
		return DefaultModels
	}
	return sc.Models
}

// fig3Left is the paper's Figure 3 (left) workload with txns transactions (appendix C):
// 20 sessions, 20 ops per transaction, 5000 keys, 50% reads, half the keys with
// duplicate values drawn zipf(0.5) from 1..100. The paper does not say how keys are
// chosen for this figure; we draw them uniformly.
func fig3Left(txns int) workload.Spec {
	return workload.Spec{
		Sessions: 20, Txns: txns, Ops: 20, Keys: 5000, Reads: 0.5,
		KeyDist: "uniform", KeyZipf: 1, DupKeys: 0.5, ValZipf: 0.5, ValDomain: 100, Seed: 1,
	}
}

// fig3Right is the paper's Figure 3 (right) workload with a fraction dup of duplicate
// keys: 100 sessions x 100 transactions of 8 ops, 5000 keys, 50% reads, values drawn
// zipf(1.5) from 1..100.
func fig3Right(dup float64) workload.Spec {
	return workload.Spec{
		Sessions: 100, Txns: 10_000, Ops: 8, Keys: 5000, Reads: 0.5,
		KeyDist: "uniform", KeyZipf: 1, DupKeys: dup, ValZipf: 1.5, ValDomain: 100, Seed: 1,
	}
}

// scale is the Figure 3 (left) shape at txns transactions with as many keys as
// transactions, so that lists stay as long as at fig3-left-5000 (10 appends per key on
// average) instead of growing with the history.
func scale(txns int) workload.Spec {
	s := fig3Left(txns)
	s.Keys = txns
	return s
}

// Scenarios lists every benchmark point, in the order `doppel bench` runs them.
func Scenarios() []Scenario {
	serializable := workload.SimOptions{Behaviour: workload.SimSerializable}
	var out []Scenario
	for txns := 1000; txns <= 5000; txns += 1000 {
		sc := Scenario{Name: fmt.Sprintf("fig3-left-%d", txns), Spec: fig3Left(txns), Sim: serializable}
		if txns == 5000 {
			sc.PaperSeconds, sc.PaperNote = 50, "~"
		}
		out = append(out, sc)
	}
	for _, pct := range []int{0, 25, 50, 75, 100} {
		sc := Scenario{Name: fmt.Sprintf("fig3-right-dup%d", pct), Spec: fig3Right(float64(pct) / 100), Sim: serializable}
		if pct == 100 {
			sc.PaperSeconds, sc.PaperNote = 100, "<"
		}
		out = append(out, sc)
	}

	contention := fig3Left(2000)
	contention.Ops, contention.Keys = 10, 50
	long := fig3Left(2000)
	long.Ops = 100
	unique := fig3Left(5000)
	unique.DupKeys = 0
	moderate := fig3Left(2000)
	moderate.Ops, moderate.Keys = 10, 1000
	out = append(out,
		Scenario{Name: "contention-50keys", Spec: contention, Sim: serializable},
		Scenario{Name: "long-txns", Spec: long, Sim: serializable},
		Scenario{Name: "unique-values", Spec: unique, Sim: serializable},
		Scenario{Name: "snapshot-behaviour", Spec: moderate,
			Sim:    workload.SimOptions{Behaviour: workload.SimSnapshot},
			Models: []string{"snapshot-isolation", "serializable"}},
		Scenario{Name: "faulty-behaviour", Spec: moderate,
			Sim:    workload.SimOptions{Behaviour: workload.SimFaulty, FaultRate: 0.01},
			Models: []string{"serializable", "snapshot-isolation"}},
		Scenario{Name: "scale-100k", Spec: scale(100_000), Sim: serializable},
		// The scaling series: doubling the history should about double the time.
		Scenario{Name: "scale-250k", Spec: scale(250_000), Sim: serializable, Heavy: true},
		Scenario{Name: "scale-500k", Spec: scale(500_000), Sim: serializable, Heavy: true},
		Scenario{Name: "scale-1m", Spec: scale(1_000_000), Sim: serializable, Heavy: true},
		// Snapshot isolation at scale: valid under SI, not serializable (write skew).
		Scenario{Name: "snapshot-100k", Spec: scale(100_000),
			Sim:    workload.SimOptions{Behaviour: workload.SimSnapshot},
			Models: []string{"snapshot-isolation"}},
		Scenario{Name: "snapshot-1m", Spec: scale(1_000_000),
			Sim:    workload.SimOptions{Behaviour: workload.SimSnapshot},
			Models: []string{"snapshot-isolation"}, Heavy: true},
	)
	return out
}

// Find returns the scenario called name.
func Find(name string) (Scenario, bool) {
	for _, sc := range Scenarios() {
		if sc.Name == name {
			return sc, true
		}
	}
	return Scenario{}, false
}
