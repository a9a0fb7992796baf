package bench

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"doppel/workload"
)

// Sweep returns n scenarios drawn at random from seed over the generator's flags —
// sizes, clients, transaction lengths, keys and their skew, read ratio, duplicate
// values, :info and :fail transactions, snapshot isolated behaviour, one injected
// anomaly — so that the checker is measured on histories nobody tuned it for (the
// named families above are the ones it was tuned on). Each is named sweep-SEED-I,
// which Find draws again, and expects the verdicts its simulator guarantees.
func Sweep(seed int64, n int) []Scenario {
	out := make([]Scenario, n)
	for i := range out {
		out[i] = sweepScenario(seed, i)
	}
	return out
}

func sweepScenario(seed int64, i int) Scenario {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	s := workload.DefaultSpec()
	s.Txns = pick(1000, 2000, 5000, 10_000)
	s.Sessions = pick(3, 5, 8, 12, 20, 30)
	s.Ops = pick(2, 3, 4, 6, 10)
	s.Keys = pick(3, 5, 10, 20, 50, 200, 1000)
	s.ValDomain = pick(2, 2, 3, 4, 6)
	s.DupKeys = []float64{0.3, 0.7, 1, 1}[rng.IntN(4)]
	s.Seed = rng.Int64N(1_000_000)
	if rng.Float64() < 0.3 {
		s.KeyDist = []string{"zipf", "hotspot"}[rng.IntN(2)]
	}
	if rng.Float64() < 0.3 {
		s.Reads = []float64{0.2, 0.8}[rng.IntN(2)]
	}
	sim := workload.SimOptions{Behaviour: workload.SimSerializable}
	if rng.Float64() < 0.3 {
		sim.Info = []float64{0.01, 0.05}[rng.IntN(2)]
	}
	if rng.Float64() < 0.2 {
		sim.Fail = 0.05
	}
	expect := validUnderAll
	switch rng.IntN(4) {
	case 0:
		sim.Behaviour = workload.SimSnapshot
		expect = validUnderSI
	case 1:
		kind := workload.AllInjections[rng.IntN(len(workload.AllInjections))]
		sim.Inject, sim.InjectAt = []string{kind}, []float64{0.1, 0.5, 0.95}[rng.IntN(3)]
		s.DupKeys = 1 // the injections need keys whose values repeat
		expect = invalidAll
		if kind == workload.InjectWriteSkew {
			expect = writeSkewOnly
		}
	}
	return Scenario{Name: fmt.Sprintf("sweep-%d-%d", seed, i), Spec: s, Sim: sim, ExpectValid: expect, Hard: true}
}

// findSweep draws the scenario a sweep-SEED-I name stands for.
func findSweep(name string) (Scenario, bool) {
	rest, ok := strings.CutPrefix(name, "sweep-")
	if !ok {
		return Scenario{}, false
	}
	a, b, ok := strings.Cut(rest, "-")
	if !ok {
		return Scenario{}, false
	}
	seed, err1 := strconv.ParseInt(a, 10, 64)
	i, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || i < 0 {
		return Scenario{}, false
	}
	return sweepScenario(seed, i), true
}
