package sat

import (
	"fmt"
	"math/rand"
	"testing"
)

// benchSolve solves a fresh solver per iteration over a fixed set of instances and reports
// conflicts per instance.
func benchSolve(b *testing.B, n int, instances [][][]Lit, opts Options) {
	b.Helper()
	var conflicts int64
	solved := 0
	for i := 0; i < b.N; i++ {
		for _, cnf := range instances {
			s := newSolverWith(n, cnf)
			s.SetOptions(opts)
			if s.Solve() == Unknown {
				b.Fatal("unknown")
			}
			conflicts += s.Stats().Conflicts
			solved++
		}
	}
	b.ReportMetric(float64(conflicts)/float64(solved), "conflicts/op-instance")
}

func random3SATInstances(n, count int) [][][]Lit {
	rng := rand.New(rand.NewSource(42))
	var out [][][]Lit
	for i := 0; i < count; i++ {
		out = append(out, randomCNF(rng, n, int(float64(n)*4.26), 3))
	}
	return out
}

func benchOptions() map[string]Options {
	luby := DefaultOptions()
	luby.Restarts = "luby"
	noMin := DefaultOptions()
	noMin.NoMinimize = true
	return map[string]Options{"glucose": DefaultOptions(), "luby": luby, "nomin": noMin}
}

// BenchmarkRandom3SAT solves 10 random 3-SAT instances at ratio 4.26 (about half SAT) per op.
func BenchmarkRandom3SAT(b *testing.B) {
	for _, n := range []int{100, 200} {
		instances := random3SATInstances(n, 10)
		for _, name := range []string{"glucose", "luby", "nomin"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				benchSolve(b, n, instances, benchOptions()[name])
			})
		}
	}
}

// BenchmarkPigeonhole solves PHP(n+1, n), which is UNSAT and hard for resolution.
func BenchmarkPigeonhole(b *testing.B) {
	for _, holes := range []int{7, 8} {
		n, cnf := pigeonhole(holes)
		for _, name := range []string{"glucose", "luby"} {
			b.Run(fmt.Sprintf("holes=%d/%s", holes, name), func(b *testing.B) {
				benchSolve(b, n, [][][]Lit{cnf}, benchOptions()[name])
			})
		}
	}
}
