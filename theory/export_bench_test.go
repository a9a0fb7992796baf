package theory

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"doppel/sat"
)

// loadExport reads an instance written by `doppel check --export PREFIX`:
// PREFIX.cnf (DIMACS) and PREFIX.graph (a comment line, then one edge a line:
// "from to kind [DIMACS guard literals]").
func loadExport(prefix string) (*sat.Solver, *Graph, error) {
	cnf, err := os.Open(prefix + ".cnf")
	if err != nil {
		return nil, nil, err
	}
	defer cnf.Close()
	s, err := sat.ParseDIMACS(bufio.NewReader(cnf))
	if err != nil {
		return nil, nil, fmt.Errorf("%s.cnf: %w", prefix, err)
	}
	gf, err := os.Open(prefix + ".graph")
	if err != nil {
		return nil, nil, err
	}
	defer gf.Close()
	sc := bufio.NewScanner(gf)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var g *Graph
	var guard []sat.Lit
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if g == nil {
			// "c nodes N; ..."
			if len(f) < 3 || f[0] != "c" || f[1] != "nodes" {
				return nil, nil, fmt.Errorf("%s.graph:%d: want \"c nodes N; ...\"", prefix, line)
			}
			n, err := strconv.Atoi(strings.TrimSuffix(f[2], ";"))
			if err != nil {
				return nil, nil, fmt.Errorf("%s.graph:%d: %v", prefix, line, err)
			}
			g = NewGraph(n)
			continue
		}
		if len(f) < 3 {
			return nil, nil, fmt.Errorf("%s.graph:%d: want \"from to kind [guard]\"", prefix, line)
		}
		from, err1 := strconv.Atoi(f[0])
		to, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("%s.graph:%d: bad node", prefix, line)
		}
		guard = guard[:0]
		for _, x := range f[3:] {
			d, err := strconv.Atoi(x)
			if err != nil || d == 0 {
				return nil, nil, fmt.Errorf("%s.graph:%d: bad literal %q", prefix, line, x)
			}
			l := sat.PosLit(sat.Var(d - 1))
			if d < 0 {
				l = sat.NegLit(sat.Var(-d - 1))
			}
			guard = append(guard, l)
		}
		if g.AddEdge(from, to, guard) < 0 {
			return nil, nil, fmt.Errorf("%s.graph:%d: edge out of range", prefix, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if g == nil {
		return nil, nil, fmt.Errorf("%s.graph: empty", prefix)
	}
	return s, g, nil
}

// timedTheory forwards to a Graph and adds up the time spent in it.
type timedTheory struct {
	g     *Graph
	spent time.Duration
}

func (t *timedTheory) Propagate(s *sat.Solver) []sat.Lit {
	start := time.Now()
	c := t.g.Propagate(s)
	t.spent += time.Since(start)
	return c
}

func (t *timedTheory) Explain(l sat.Lit) []sat.Lit {
	start := time.Now()
	r := t.g.Explain(l)
	t.spent += time.Since(start)
	return r
}

func (t *timedTheory) Backtrack(n int) {
	start := time.Now()
	t.g.Backtrack(n)
	t.spent += time.Since(start)
}

// BenchmarkExported solves the instances named by DOPPEL_THEORY_INSTANCES
// (comma-separated PREFIXes of `doppel check --export PREFIX`, model suffix
// included, e.g. /tmp/x-serializable) with VSIDS, with and without theory
// propagation, up to DOPPEL_THEORY_CONFLICTS conflicts (default 20000), and
// reports the solver's conflicts and the time spent in the theory per conflict.
func BenchmarkExported(b *testing.B) {
	names := os.Getenv("DOPPEL_THEORY_INSTANCES")
	if names == "" {
		b.Skip("set DOPPEL_THEORY_INSTANCES to exported instance prefixes")
	}
	limit := int64(20000)
	if v := os.Getenv("DOPPEL_THEORY_CONFLICTS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			b.Fatalf("DOPPEL_THEORY_CONFLICTS: %v", err)
		}
		limit = n
	}
	for _, prefix := range strings.Split(names, ",") {
		for _, heuristic := range []string{"vsids", "static"} {
			for _, propagation := range []bool{true, false} {
				name := fmt.Sprintf("%s/%s/propagation=%v", prefix[strings.LastIndex(prefix, "/")+1:], heuristic, propagation)
				b.Run(name, func(b *testing.B) {
					var st sat.Stats
					var tt *timedTheory
					var status sat.Status
					var cpu time.Duration
					for b.Loop() {
						b.StopTimer()
						s, g, err := loadExport(prefix)
						if err != nil {
							b.Fatal(err)
						}
						g.Propagation = propagation
						if g.Init() != nil {
							b.Fatal("known cycle")
						}
						tt = &timedTheory{g: g}
						s.SetTheory(tt)
						opts := sat.DefaultOptions()
						opts.Heuristic = heuristic
						s.SetOptions(opts)
						s.SetConflictLimit(limit)
						b.StartTimer()
						cpu0 := cpuTime()
						status = s.Solve()
						cpu += cpuTime() - cpu0
						st = s.Stats()
					}
					conflicts := max(st.Conflicts, 1)
					b.ReportMetric(float64(st.Conflicts), "conflicts")
					b.ReportMetric(float64(tt.spent.Nanoseconds())/float64(conflicts), "theory-ns/conflict")
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(conflicts), "cpu-ns/conflict")
					b.ReportMetric(float64(tt.g.Stats.Propagations), "theoryprops")
					b.ReportMetric(float64(tt.g.Stats.Searches), "searches")
					b.ReportMetric(float64(tt.g.Stats.Visited), "visited")
					b.Logf("%s: %v after %d conflicts", name, status, st.Conflicts)
				})
			}
		}
	}
}

// cpuTime is the process's user and system time: on a loaded machine it
// varies far less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
