package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/report"
)

func init() {
	commands["check"] = command{summary: "check a history (Jepsen EDN or JSON lines) against consistency models", run: runCheck}
}

func runCheck(args []string) int {
	fs := flag.NewFlagSet("doppel check", flag.ContinueOnError)
	modelFlag := fs.String("model", "serializable", "models to check, comma-separated, or all: "+strings.Join(check.ModelNames(), ", ")+
		" (Elle's aliases too: PL-2, PL-2.99, PL-3, PL-SI, PL-SS, :serializable, ...)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the report")
	stats := fs.Bool("stats", false, "print solver and phase statistics")
	timeout := fs.Duration("timeout", 0, "give up (verdict unknown) after this long, parsing included; 0 means no limit")
	maxConflicts := fs.Int64("max-conflicts", 0, "give up (verdict unknown) after this many solver conflicts, all stages and models together; 0 means no limit")
	noTheoryProp := fs.Bool("no-theory-prop", false, "solver: the acyclicity theory only detects cycles, never implies")
	noWitness := fs.Bool("no-witness", false, "solver: always search: no replay, no first guess, no strict or serializable shortcut (for testing the solver)")
	noPrune := fs.Bool("no-prune", false, "solver: build the whole problem, without narrowing where each block can start first (for testing the solver)")
	heuristic := fs.String("heuristic", "", "solver decision heuristic: vsids or static (default: a portfolio, static first)")
	restarts := fs.String("restarts", "", "solver restart policy: glucose, luby or none (default: glucose in the portfolio)")
	export := fs.String("export", "", "write each model's solver instance as PREFIX-MODEL.cnf (DIMACS) and PREFIX-MODEL.graph, whatever decides the model")
	prof := fs.String("profile", "", "write a cpu or mem profile (pprof) to the current directory")
	directory := fs.String("directory", "", "also write the evidence into this directory (as Elle's --directory): index.html, <model>/<anomaly>.txt, <model>/<anomaly>-N.dot")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: doppel check [flags] FILE|-\n\nExit codes: 0 valid, 1 not valid, 2 unknown (a limit was reached), 3 bad input or usage.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitValid
		}
		return exitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	switch {
	case *heuristic != "" && *heuristic != "vsids" && *heuristic != "static":
		fmt.Fprintf(os.Stderr, "doppel check: --heuristic must be vsids or static, not %q\n", *heuristic)
		return exitUsage
	case *restarts != "" && *restarts != "glucose" && *restarts != "luby" && *restarts != "none":
		fmt.Fprintf(os.Stderr, "doppel check: --restarts must be glucose, luby or none, not %q\n", *restarts)
		return exitUsage
	case *timeout < 0 || *maxConflicts < 0:
		fmt.Fprintln(os.Stderr, "doppel check: --timeout and --max-conflicts must not be negative (0 means no limit)")
		return exitUsage
	}
	if stop, err := startProfile(*prof); err != nil {
		fmt.Fprintln(os.Stderr, "doppel check:", err)
		return exitUsage
	} else {
		defer stop()
	}
	t0 := time.Now() // --timeout counts parsing too
	opts := check.Options{Models: strings.Split(*modelFlag, ","), Timeout: *timeout, MaxConflicts: *maxConflicts, Start: t0,
		Solver: check.SolverOptions{NoTheoryPropagation: *noTheoryProp, NoWitness: *noWitness, NoPrune: *noPrune,
			Heuristic: *heuristic, Restarts: *restarts, ExportPrefix: *export}}
	endProgress := func() {}
	if isTerminal(os.Stderr) {
		opts.Progress = func(phase string) {
			fmt.Fprintf(os.Stderr, "\r\033[Kdoppel check: %s (%.1fs)", phase, time.Since(t0).Seconds())
		}
		opts.Progress("parsing " + fs.Arg(0))
		endProgress = func() { fmt.Fprint(os.Stderr, "\r\033[K") }
	}
	h, err := history.ParseFile(fs.Arg(0))
	if err != nil {
		endProgress()
		fmt.Fprintln(os.Stderr, "doppel check:", err)
		return exitUsage
	}
	if len(h.Txns) == 0 {
		// A verdict on nothing would read as "valid": say what is missing instead.
		endProgress()
		what := "it is empty"
		if h.Events > 0 {
			what = fmt.Sprintf("none of its %d operations has :f :txn", h.Events)
		}
		fmt.Fprintf(os.Stderr, "doppel check: %s: no transactions to check (%s)\n", fs.Arg(0), what)
		return exitUsage
	}
	parse := time.Since(t0).Seconds()
	res, err := check.Check(h, opts)
	endProgress()
	if err != nil {
		fmt.Fprintln(os.Stderr, "doppel check:", err)
		return exitUsage
	}
	res.Stats.ParseSeconds = parse
	for _, w := range res.Warnings {
		fmt.Fprintln(os.Stderr, "doppel check:", w)
	}
	if *directory != "" {
		if err := report.Write(*directory, h, &res); err != nil {
			fmt.Fprintln(os.Stderr, "doppel check: writing the report directory:", err)
			return exitUsage
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintln(os.Stderr, "doppel check: writing the report:", err)
			return exitUsage
		}
	} else {
		// Buffered so that a failed write (a full disk, a closed pipe) is seen at Flush
		// and reported, rather than exiting with a verdict nobody received.
		out := bufio.NewWriter(os.Stdout)
		writeReport(out, fs.Arg(0), &res, *stats)
		if err := out.Flush(); err != nil {
			fmt.Fprintln(os.Stderr, "doppel check: writing the report:", err)
			return exitUsage
		}
	}
	switch res.Valid {
	case check.Valid:
		return exitValid
	case check.Invalid:
		return exitInvalid
	}
	return exitUnknown
}

// writeReport prints a result for people.
func writeReport(w io.Writer, source string, res *check.Result, stats bool) {
	fmt.Fprintf(w, "%s: %s\n", source, res.Valid)
	lattice := len(res.Models) == len(check.ModelNames()) // --model all: the lattice as a table
	if lattice {
		fmt.Fprintf(w, "  %-34s %-9s %s\n", "model", "verdict", "implies")
	}
	for _, m := range res.Models {
		line := fmt.Sprintf("  %-34s %s", m.Model, m.Valid)
		if lattice {
			line = fmt.Sprintf("  %-34s %-9s %s", m.Model, m.Valid, strings.Join(check.Implies(m.Model), ", "))
		}
		if len(m.AnomalyTypes) > 0 {
			line += " (" + strings.Join(m.AnomalyTypes, ", ") + ")"
		}
		if m.Message != "" {
			line += ": " + m.Message
		}
		fmt.Fprintln(w, line)
	}
	if len(res.Not) > 0 {
		fmt.Fprintf(w, "  not: %s\n", strings.Join(res.Not, ", "))
	}
	if len(res.AlsoNot) > 0 {
		fmt.Fprintf(w, "  also not: %s\n", strings.Join(res.AlsoNot, ", "))
	}
	if len(res.Strongest) > 0 {
		fmt.Fprintf(w, "  strongest valid: %s\n", strings.Join(res.Strongest, ", "))
	}
	for i, a := range res.Anomalies {
		fmt.Fprintf(w, "\n%d. %s", i+1, a.Type)
		if a.Key != "" {
			fmt.Fprintf(w, " on key %s", a.Key)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "   %s\n", a.Explanation)
		for _, t := range a.Txns {
			where := fmt.Sprintf("line %d", t.Line)
			if t.Index >= 0 {
				where = fmt.Sprintf("index %d, line %d", t.Index, t.Line)
			}
			proc := ""
			if t.Process != "" {
				proc = ", process " + t.Process
			}
			fmt.Fprintf(w, "   - %s (%s%s, %s): %s\n", txnLabel(t), where, proc, t.Status, t.Ops)
		}
	}
	s := res.Stats
	if !s.Encoded() {
		fmt.Fprintf(w, "\n%d transactions, %d operations, %d keys; every model proved by a verified replay\n",
			s.Transactions, s.Operations, s.Keys)
	} else {
		fmt.Fprintf(w, "\n%d transactions, %d operations, %d keys (%d fixed, %d open), %d edges\n",
			s.Transactions, s.Operations, s.Keys, s.KeysFixed, s.KeysOpen, s.Edges)
	}
	if stats {
		fmt.Fprintf(w, "problem: %d variables, %d clauses, %d guarded edges; %d models decided without search (%d by a verified replay)\n",
			s.Variables, s.Clauses, s.GuardedEdges, s.Witnessed, s.Replayed)
		fmt.Fprintf(w, "solver: %d decisions, %d conflicts, %d propagations, %d theory propagations, %d learned clauses, %d pruned choices\n",
			s.Decisions, s.Conflicts, s.Propagations, s.TheoryProps, s.Learned, s.Pruned)
		fmt.Fprintf(w, "time: parse %.3fs, infer %.3fs, prune %.3fs, solve %.3fs, explain %.3fs\n",
			s.ParseSeconds, s.InferSeconds, s.PruneSeconds, s.SolveSeconds, s.ExplainSeconds)
	}
}

func txnLabel(t check.TxnRef) string {
	if t.Index >= 0 {
		return fmt.Sprintf("T%d", t.Index)
	}
	return fmt.Sprintf("T(line %d)", t.Line)
}

// isTerminal reports whether f is a terminal (progress is shown only there).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
