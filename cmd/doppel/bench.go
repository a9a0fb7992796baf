package main

import (
	"doppel/workload"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"doppel/bench"
)

func init() {
	commands["bench"] = command{summary: "benchmark the checker on generated histories (the paper's Figure 3 and more)", run: runBench}
}

// benchReport is what --json prints, --out writes and --load reads.
type benchReport struct {
	Machine   bench.MachineInfo `json:"machine"`
	LoadAtEnd string            `json:"load_average_at_end"`
	Runs      int               `json:"runs_per_scenario"`
	Scenarios []bench.Summary   `json:"scenarios"`
}

func runBench(args []string) int {
	fs := flag.NewFlagSet("doppel bench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: doppel bench [flags]\n\nGenerates each scenario's history, checks it, and prints a table of times.\nHeavy scenarios (scale-1m) run only when --scenario names them (or with --heavy).\nA verdict that differs from the scenario's expected one is a MISMATCH (exit 1).\n\nflags:")
		fs.PrintDefaults()
	}
	pattern := fs.String("scenario", "", "run the scenarios whose names match this regular expression (default: all but the heavy and hard ones;\na heavy one only if the expression contains its whole name, or with --heavy)")
	heavy := fs.Bool("heavy", false, "also run the heavy scenarios that --scenario matches")
	runs := fs.Int("runs", 3, "runs per scenario; the table shows the minimum and median")
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	out := fs.String("out", "", "also write the JSON results to this file")
	svg := fs.String("svg", "", "write an SVG plot of the Figure 3 scenarios to this file")
	load := fs.String("load", "", "read results from this JSON file (written by --out) instead of running")
	timeout := fs.Duration("timeout", time.Minute, "give up each check after this long (verdict unknown; a check still running 10 s later is abandoned); 0 means no limit")
	inProcess := fs.Bool("in-process", false, "run the scenarios in this process instead of one child process per run\n(an abandoned check then keeps running beside the next ones)")
	child := fs.String("child", "", "run this one scenario once and print its measurement as JSON (used by the parent bench)")
	models := fs.String("models", "", "check these models (comma-separated) instead of each scenario's own")
	list := fs.Bool("list", false, "list the scenarios and exit")
	showProgress := fs.Bool("progress", false, "print progress on stderr even when it is not a terminal")
	sweep := fs.Int("sweep", 0, "instead of the named scenarios, run this many drawn at random over the generator's flags\n(sweep-SEED-I: sizes, clients, keys and their skew, reads, duplicates, :info, :fail, snapshot behaviour, one injected anomaly),\neach expecting the verdicts its simulator guarantees")
	sweepSeed := fs.Int64("sweep-seed", 1, "the seed --sweep draws its scenarios from")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		return benchUsage("unexpected arguments: %v", fs.Args())
	}
	if *runs < 1 {
		return benchUsage("--runs must be at least 1, got %d", *runs)
	}
	var re *regexp.Regexp
	if *pattern != "" {
		var err error
		if re, err = regexp.Compile(*pattern); err != nil {
			return benchUsage("--scenario: %v", err)
		}
	}
	if *child != "" {
		return benchChild(*child, *timeout, *models)
	}
	var selected []bench.Scenario
	candidates := bench.Scenarios()
	if *sweep > 0 {
		candidates = bench.Sweep(*sweepSeed, *sweep)
		if re == nil {
			re = regexp.MustCompile(".")
		}
	}
	for _, sc := range candidates {
		if selects(re, *pattern, *heavy, sc) {
			sc.Timeout = *timeout
			if *models != "" {
				sc.Models = strings.Split(*models, ",")
			}
			selected = append(selected, sc)
		}
	}
	if *list {
		for _, sc := range bench.Scenarios() {
			s := sc.Spec
			heavy := ""
			if sc.Heavy {
				heavy = " (heavy)"
			}
			if sc.Hard {
				heavy += " (hard)"
			}
			if sc.File != "" {
				fmt.Printf("%-28s recorded history %s%s\n", sc.Name, sc.File, heavy)
				continue
			}
			// Every flag that differs from doppel gen's defaults, so that the line
			// regenerates the history.
			extra := ""
			def := workload.DefaultSpec()
			if s.KeyDist != def.KeyDist {
				extra += ", key-dist " + s.KeyDist
			}
			if s.Reads != def.Reads {
				extra += fmt.Sprintf(", reads %g", s.Reads)
			}
			if sc.Sim.Fail > 0 {
				extra += fmt.Sprintf(", fail %g", sc.Sim.Fail)
			}
			if len(sc.Sim.Faults) > 0 || sc.Sim.FaultRate > 0 {
				extra += fmt.Sprintf(", faults %s at rate %g", strings.Join(sc.Sim.Faults, ","), sc.Sim.FaultRate)
			}
			if sc.Sim.Info > 0 {
				extra += fmt.Sprintf(", info %g", sc.Sim.Info)
			}
			if len(sc.Sim.Inject) > 0 {
				extra += fmt.Sprintf(", inject %s at %g", strings.Join(sc.Sim.Inject, ","), sc.Sim.InjectAt)
			}
			fmt.Printf("%-28s %d sessions, %d txns x %d ops, %d keys, dup-keys %g, val-domain %d, val-zipf %g, seed %d, behaviour %s%s%s\n",
				sc.Name, s.Sessions, s.Txns, s.Ops, s.Keys, s.DupKeys, s.ValDomain, s.ValZipf, s.Seed, sc.Sim.Behaviour, extra, heavy)
		}
		return 0
	}

	var rep benchReport
	if *load != "" {
		b, err := os.ReadFile(*load)
		if err == nil {
			err = json.Unmarshal(b, &rep)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "doppel bench:", err)
			return exitUsage
		}
		// Best is not stored; recompute it, and keep only the selected scenarios.
		kept := rep.Scenarios[:0]
		for _, s := range rep.Scenarios {
			if re == nil || re.MatchString(s.Scenario) {
				kept = append(kept, bench.Summarize(s.Runs))
			}
		}
		rep.Scenarios = kept
	} else {
		if len(selected) == 0 {
			return benchUsage("no scenario matches %q (see --list)", *pattern)
		}
		var progress io.Writer
		if *showProgress || stderrIsTerminal() {
			progress = os.Stderr
		}
		rep.Machine, rep.Runs = bench.Machine(), *runs
		for _, sc := range selected {
			var ms []bench.Measurement
			for i := 0; i < *runs; i++ {
				run := bench.Run
				if !*inProcess {
					run = func(sc bench.Scenario, progress io.Writer) (bench.Measurement, error) {
						return runBenchChild(sc, *timeout, *models, progress)
					}
				}
				m, err := run(sc, progress)
				if err != nil {
					fmt.Fprintln(os.Stderr, "doppel bench:", err)
					return 1
				}
				ms = append(ms, m)
			}
			rep.Scenarios = append(rep.Scenarios, bench.Summarize(ms))
		}
		rep.LoadAtEnd = bench.LoadAverage()
	}

	if *out != "" {
		if err := writeBenchJSON(*out, &rep); err != nil {
			fmt.Fprintln(os.Stderr, "doppel bench:", err)
			return 1
		}
	}
	if *svg != "" {
		f, err := os.Create(*svg)
		if err == nil {
			err = bench.WriteSVG(f, rep.Scenarios)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "doppel bench:", err)
			return 1
		}
	}
	mismatches := 0
	for _, s := range rep.Scenarios {
		for _, r := range s.Runs {
			for _, v := range r.Verdicts {
				if v.Mismatch() {
					mismatches++
					fmt.Fprintf(os.Stderr, "doppel bench: MISMATCH %s %s: %s, expected %s\n", s.Scenario, v.Model, v.Valid, v.Expected)
				}
			}
		}
	}
	code := 0
	if mismatches > 0 {
		code = 1
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(&rep); err != nil {
			fmt.Fprintln(os.Stderr, "doppel bench:", err)
			return 1
		}
		return code
	}
	if rep.Machine.CPUs > 0 {
		m := rep.Machine
		fmt.Printf("%s, %d CPUs (%s), %.1f GiB, %s; load %s at start, %s at end; %d runs per scenario\n",
			m.Date.Format("2006-01-02 15:04 MST"), m.CPUs, m.CPUModel, float64(m.MemBytes)/(1<<30), m.GoVersion, m.LoadAvg, rep.LoadAtEnd, rep.Runs)
	}
	if err := bench.WriteTable(os.Stdout, rep.Scenarios); err != nil {
		fmt.Fprintln(os.Stderr, "doppel bench:", err)
		return 1
	}
	return code
}

// benchChild runs one scenario once and prints its Measurement as JSON on stdout.
func benchChild(name string, timeout time.Duration, models string) int {
	sc, ok := bench.Find(name)
	if !ok {
		return benchUsage("no scenario %q", name)
	}
	sc.Timeout = timeout
	if models != "" {
		sc.Models = strings.Split(models, ",")
	}
	var progress io.Writer
	if stderrIsTerminal() || os.Getenv(benchProgressEnv) != "" {
		progress = os.Stderr
	}
	m, err := bench.Run(sc, progress)
	if err != nil {
		fmt.Fprintln(os.Stderr, "doppel bench:", err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(&m); err != nil {
		fmt.Fprintln(os.Stderr, "doppel bench:", err)
		return 1
	}
	// Returning exits the process, and with it a check abandoned at its timeout.
	return 0
}

// benchProgressEnv tells a child bench to print progress (its stderr is the parent's).
const benchProgressEnv = "DOPPEL_BENCH_PROGRESS"

// runBenchChild runs one run of sc in a child process (this executable with --child),
// so that a check abandoned at its timeout ends with the child, and every run starts
// from a fresh heap.
func runBenchChild(sc bench.Scenario, timeout time.Duration, models string, progress io.Writer) (bench.Measurement, error) {
	var m bench.Measurement
	exe, err := os.Executable()
	if err != nil {
		return m, err
	}
	args := []string{"bench", "--child", sc.Name, "--timeout", timeout.String()}
	if models != "" {
		args = append(args, "--models", models)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	cmd.Env = os.Environ()
	if progress != nil {
		cmd.Env = append(cmd.Env, benchProgressEnv+"=1")
	}
	out, err := cmd.Output()
	if err != nil {
		return m, fmt.Errorf("scenario %s: child: %w", sc.Name, err)
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return m, fmt.Errorf("scenario %s: child output: %w", sc.Name, err)
	}
	return m, nil
}

// selects says whether --scenario pattern (compiled: re, nil if empty) and --heavy
// select sc: heavy scenarios need their whole name in the pattern, or --heavy.
func selects(re *regexp.Regexp, pattern string, heavy bool, sc bench.Scenario) bool {
	if re == nil {
		return !sc.Heavy && !sc.Hard
	}
	return re.MatchString(sc.Name) && (!sc.Heavy || heavy || strings.Contains(pattern, sc.Name))
}

func writeBenchJSON(path string, rep *benchReport) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// stderrIsTerminal says whether progress lines would reach a person.
func stderrIsTerminal() bool {
	st, err := os.Stderr.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func benchUsage(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "doppel bench: "+format+"\n", args...)
	return exitUsage
}
