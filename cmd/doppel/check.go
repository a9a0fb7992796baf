package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"doppel/check"
	"doppel/encode"
	"doppel/history"
	"doppel/report"
	"doppel/shrink"
)

// jsonResult is what --json prints: the check's result and the counterexamples.
type jsonResult struct {
	File string `json:"file,omitempty"` // with several files
	check.Result
	Counterexamples []*shrink.Report `json:"counterexamples,omitempty"`
}

func init() {
	commands["check"] = command{summary: "check a history (Jepsen EDN or JSON lines) against consistency models", run: runCheck}
}

// defaultModel is what doppel check checks when no model is given: as Elle and
// elle-cli do, strict serializability (real-time order included).
const defaultModel = "strict-serializable"

// checkFlags are the options of doppel check that apply to every file.
type checkFlags struct {
	models        []string
	asJSON, stats bool
	timeout       time.Duration
	directory     string
	shrinkFor     time.Duration
	solver        check.SolverOptions
	maxConflicts  int64
	maxMemory     int64
	severalFiles  bool
}

func runCheck(args []string) int {
	fs := flag.NewFlagSet("doppel check", flag.ContinueOnError)
	var modelFlag, elleModels, directory string
	modelsHelp := "consistency models to check, comma-separated, or all (default " + defaultModel + ", as Elle): " + strings.Join(check.ModelNames(), ", ") +
		" (Elle's aliases too: PL-2, PL-2.99, PL-3, PL-SI, PL-SS, :serializable, ...)"
	fs.StringVar(&modelFlag, "model", "", modelsHelp+"; elle-cli's checker name list-append is accepted and ignored")
	fs.StringVar(&elleModels, "consistency-models", "", "the same as --model (elle-cli's name)")
	fs.StringVar(&elleModels, "c", "", "the same as --model (elle-cli's short name)")
	var checker string
	fs.StringVar(&checker, "m", "", "elle-cli's checker name: only list-append")
	asJSON := fs.Bool("json", false, "print one JSON object per file instead of the report")
	output := fs.String("output", "text", "text or json (elle-cli's name; json is --json)")
	fs.String("format", "", "edn or json (elle-cli's name; ignored: the format is detected)")
	stats := fs.Bool("stats", false, "print solver and phase statistics")
	timeout := fs.Duration("timeout", 0, "give up (verdict unknown) after this long, parsing included; 0 means no limit")
	maxConflicts := fs.Int64("max-conflicts", 0, "give up (verdict unknown) after this many solver conflicts, all stages and models together; 0 means no limit")
	maxMemory := fs.String("max-memory", defaultMaxMemory(), "give up (verdict unknown) when the checker holds this much memory (e.g. 4GiB, 500MiB); 0 means no limit; the default is 3/4 of this machine's memory")
	noTheoryProp := fs.Bool("no-theory-prop", false, "solver: the acyclicity theory only detects cycles, never implies")
	noCounting := fs.Bool("no-counting", false, "solver: leave out the supply-counting theory (values per key against the writers that can still supply them)")
	noMatching := fs.Bool("no-matching", false, "solver: leave out Hall's condition over the trace positions (any set of positions against the writers that can still fill them)")
	noChain := fs.Bool("no-key-chain", false, "solver: no key-order chain (hubs chained along the trace of keys where writers compete for each position)")
	clausalTiling := fs.Bool("clausal-tiling", false, "solver: encode \"at most one block per trace position and per writer\" as clauses instead of leaving it to the append-adjacency theory")
	noWitness := fs.Bool("no-witness", false, "solver: always search: no replay, no first guess, no strict or serializable shortcut (for testing the solver)")
	noPrune := fs.Bool("no-prune", false, "solver: build the whole problem, without narrowing where each block can start first (for testing the solver)")
	noLocalSearch := fs.Bool("no-local-search", false, "solver: leave the local search for a serial order out of the serializable search's rounds (for testing)")
	noSerialSearch := fs.Bool("no-serial-search", false, "solver: skip the backtracking search for a serial order where the greedy replays got stuck (for testing)")
	noSnapshotSearch := fs.Bool("no-snapshot-search", false, "solver: skip the backtracking search for a snapshot-isolated execution where the greedy snapshot replays got stuck, with real-time gates relaxed or not (for testing)")
	noGCursor := fs.Bool("no-gcursor-pins", false, "solver: decide the models that forbid G-single on read committed's per-read problem, without placing a block right after what its transaction read before appending (for testing)")
	mergedLNS := fs.Bool("merged-lns", false, "solver: where the merged appends' chains fail, search a neighbourhood of the replay without them under assumptions (an experiment)")
	noRepair := fs.Bool("no-repair", false, "solver: leave a stuck replay stuck, without undoing its choices among writers of the same values (for testing the solver)")
	heuristic := fs.String("heuristic", "", "solver decision heuristic: vsids or static (default: a portfolio, static first)")
	restarts := fs.String("restarts", "", "solver restart policy: glucose, luby or none (default: glucose in the portfolio)")
	chronoLevels := fs.Int("chrono-levels", 0, "solver: a conflict that would jump back over more than this many decision levels backtracks one level only (chronological backtracking); 0 means 100, -1 never")
	export := fs.String("export", "", "write each model's solver instance as PREFIX-MODEL.cnf (DIMACS) and PREFIX-MODEL.graph, whatever decides the model")
	prof := fs.String("profile", "", "write a cpu or mem profile (pprof) to the current directory")
	dirHelp := "also write the evidence into this directory (as Elle's --directory): index.html, counterexample.edn, <model>/<anomaly>.txt, <model>/<anomaly>-N.dot; with several files, one subdirectory per file"
	fs.StringVar(&directory, "directory", "", dirHelp)
	fs.StringVar(&directory, "d", "", "the same as --directory (elle-cli's short name)")
	shrinkFor := fs.Duration("shrink", 20*time.Second, "search a small counterexample (a sub-history that is not valid) per model found not valid, for at most this long (and within --timeout); 0 turns it off")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: doppel check [flags] FILE|- [FILE...]\n\nExit codes: 0 valid, 1 not valid, 2 unknown (a limit was reached), 3 bad input or usage; with several files, the worst of them.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		if err == flag.ErrHelp {
			return exitValid
		}
		return exitUsage
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	models, err := modelNames(modelFlag + "," + elleModels)
	if err == nil && checker != "" && checker != "list-append" {
		err = fmt.Errorf("-m %s: doppel checks list-append histories only", checker)
	}
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "doppel check:", err)
		return exitUsage
	case *output != "text" && *output != "json":
		fmt.Fprintf(os.Stderr, "doppel check: --output must be text or json, not %q\n", *output)
		return exitUsage
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
	if *noChain {
		encode.ChainFactor = -1
	}
	memLimit, err := parseBytes(*maxMemory)
	if err != nil {
		fmt.Fprintf(os.Stderr, "doppel check: --max-memory: %v\n", err)
		return exitUsage
	}
	if stop, err := startProfile(*prof); err != nil {
		fmt.Fprintln(os.Stderr, "doppel check:", err)
		return exitUsage
	} else {
		defer stop()
	}
	cf := checkFlags{models: models, asJSON: *asJSON || *output == "json", stats: *stats, timeout: *timeout,
		directory: directory, shrinkFor: *shrinkFor, maxConflicts: *maxConflicts, maxMemory: memLimit, severalFiles: fs.NArg() > 1,
		solver: check.SolverOptions{NoTheoryPropagation: *noTheoryProp, ClausalTiling: *clausalTiling, NoCounting: *noCounting, NoMatching: *noMatching, NoWitness: *noWitness, NoPrune: *noPrune, NoRepair: *noRepair, MergedLNS: *mergedLNS, NoSerialSearch: *noSerialSearch, NoSnapshotSearch: *noSnapshotSearch, NoLocalSearch: *noLocalSearch, NoGCursorPins: *noGCursor,
			Heuristic: *heuristic, Restarts: *restarts, ChronoLevels: *chronoLevels, ExportPrefix: *export}}
	worst := exitValid
	for _, file := range fs.Args() {
		code := checkFile(file, cf)
		worst = worseExit(worst, code)
	}
	return worst
}

// worseExit combines the exit codes of several files: bad input, then not valid, then
// unknown, then valid.
func worseExit(a, b int) int {
	rank := map[int]int{exitValid: 0, exitUnknown: 1, exitInvalid: 2, exitUsage: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// modelNames reads --model (or elle-cli's -c / --consistency-models): comma-separated
// model names; elle-cli's checker name list-append is accepted and dropped (it is the
// only workload doppel checks); none means the default.
func modelNames(flagValue string) ([]string, error) {
	var out []string
	for _, m := range strings.Split(flagValue, ",") {
		switch m = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m), ":")); m {
		case "", "list-append":
		case "rw-register", "bank", "counter", "set", "set-full", "long-fork", "cas-register", "mutex", "comments", "sequential":
			return nil, fmt.Errorf("%s: doppel checks list-append histories only", m)
		default:
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		out = []string{defaultModel}
	}
	return out, nil
}

// counterexampleShare: the check keeps 1/counterexampleShare of --timeout (at most
// --shrink) for the counterexamples.
const counterexampleShare = 20

// checkFile checks one history file and prints (and writes) its evidence.
func checkFile(file string, cf checkFlags) int {
	t0 := time.Now() // --timeout counts parsing too
	opts := check.Options{Models: cf.models, Timeout: cf.timeout, MaxConflicts: cf.maxConflicts, MaxMemory: cf.maxMemory, Start: t0, Solver: cf.solver}
	if cf.shrinkFor > 0 && (len(cf.models) > 1 || strings.EqualFold(cf.models[0], "all")) {
		// A model the check cannot decide within --timeout would otherwise leave no
		// time to cut the counterexamples of those it found not valid (often a few
		// transactions, in milliseconds): a twentieth is kept for them. (With one
		// model, a verdict of not valid ends the check and leaves the rest.)
		opts.Reserve = min(cf.shrinkFor, cf.timeout/counterexampleShare)
	}
	endProgress := func() {}
	if isTerminal(os.Stderr) {
		opts.Progress = func(phase string) {
			fmt.Fprintf(os.Stderr, "\r\033[Kdoppel check: %s (%.1fs)", phase, time.Since(t0).Seconds())
		}
		opts.Progress("parsing " + file)
		endProgress = func() { fmt.Fprint(os.Stderr, "\r\033[K") }
	}
	// The limits hold while parsing too: a gigabyte of history takes seconds to read.
	limits, err := check.StartLimits(opts, "parsing "+file)
	if err != nil {
		endProgress()
		fmt.Fprintln(os.Stderr, "doppel check:", err)
		return exitUsage
	}
	h, err := history.ParseFileStop(file, limits.Reached)
	limits.Stop()
	if stopped := (*history.StoppedError)(nil); errors.As(err, &stopped) {
		// Unknown, like a limit reached later, but on no history: a part of one proves
		// nothing, so nothing is checked.
		endProgress()
		res := limits.Unknown(fmt.Sprintf("at line %d", stopped.Line))
		res.Stats.ParseSeconds = time.Since(t0).Seconds()
		return reportResult(file, cf, &history.History{Source: file}, res, nil)
	}
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
		fmt.Fprintf(os.Stderr, "doppel check: %s: no transactions to check (%s)\n", file, what)
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
	var cxs []*shrink.Report
	if res.Valid == check.Invalid && cf.shrinkFor > 0 {
		deadline := time.Now().Add(cf.shrinkFor)
		if cf.timeout > 0 && t0.Add(cf.timeout).Before(deadline) {
			deadline = t0.Add(cf.timeout)
		}
		if opts.Progress != nil {
			opts.Progress("shrinking to a counterexample")
		}
		var failures []string
		cxs, failures = shrink.Counterexamples(h, &res, deadline)
		endProgress()
		for _, f := range failures {
			fmt.Fprintln(os.Stderr, "doppel check:", f)
		}
	}
	return reportResult(file, cf, h, res, cxs)
}

// reportResult prints (and writes) the result of checking file, with its
// counterexamples, and returns the exit code.
func reportResult(file string, cf checkFlags, h *history.History, res check.Result, cxs []*shrink.Report) int {
	if cf.directory != "" {
		dir := cf.directory
		if cf.severalFiles {
			dir = filepath.Join(dir, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
		}
		if err := report.Write(dir, h, &res, cxs); err != nil {
			fmt.Fprintln(os.Stderr, "doppel check: writing the report directory:", err)
			return exitUsage
		}
	}
	if cf.asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		out := jsonResult{Result: res, Counterexamples: cxs}
		if cf.severalFiles {
			out.File = file
		}
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(os.Stderr, "doppel check: writing the report:", err)
			return exitUsage
		}
	} else {
		// Buffered so that a failed write (a full disk, a closed pipe) is seen at Flush
		// and reported, rather than exiting with a verdict nobody received.
		out := bufio.NewWriter(os.Stdout)
		writeReport(out, file, &res, cf.stats, len(cxs) > 0)
		writeCounterexamples(out, cxs)
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
// With counterexamples (shown after it), a proof by cases on the whole history is
// summed up: the counterexample's explanation is the one to follow by hand (--json and
// --directory keep every case).
func writeReport(w io.Writer, source string, res *check.Result, stats, counterexamples bool) {
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
		if counterexamples && len(a.Cases) > 1 {
			fmt.Fprintf(w, "   A proof by cases (attributions of duplicate values; %d shown) over these %d transactions: the counterexample below has a proof to follow by hand (--json and --directory give every case).\n",
				len(a.Cases), len(a.Txns))
		} else {
			fmt.Fprintf(w, "   %s\n", strings.ReplaceAll(a.Explanation, "\n", "\n   "))
		}
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
	switch {
	case s.Transactions == 0:
		// The limits ran out while parsing (a history without transactions is refused).
		fmt.Fprintf(w, "\nno transactions checked: the history was not read in full\n")
	case !s.Encoded() && res.Valid == check.Valid:
		fmt.Fprintf(w, "\n%d transactions, %d operations, %d keys; every model proved by a verified replay\n",
			s.Transactions, s.Operations, s.Keys)
	case !s.Encoded():
		// Some model decided without an encoding, or not decided: no claim about all.
		fmt.Fprintf(w, "\n%d transactions, %d operations, %d keys\n", s.Transactions, s.Operations, s.Keys)
	default:
		fmt.Fprintf(w, "\n%d transactions, %d operations, %d keys (%d fixed, %d open), %d edges\n",
			s.Transactions, s.Operations, s.Keys, s.KeysFixed, s.KeysOpen, s.Edges)
	}
	if stats {
		fmt.Fprintf(w, "problem: %d variables, %d clauses, %d guarded edges; %d models decided without search (%d by a verified replay, %d by a cycle of placed blocks)\n",
			s.Variables, s.Clauses, s.GuardedEdges, s.Witnessed+s.PinRefuted, s.Replayed, s.PinRefuted)
		fmt.Fprintf(w, "solver: %d decisions, %d conflicts (%d by Hall's condition), %d propagations, %d theory propagations (%d acyclicity, %d tiling, %d counting), %d learned clauses, %d chronological backtracks, %d pruned choices\n",
			s.Decisions, s.Conflicts, s.HallConflicts, s.Propagations, s.TheoryProps+s.TilingProps+s.CountProps, s.TheoryProps, s.TilingProps, s.CountProps, s.Learned, s.Chrono, s.Pruned)
		if s.SearchStates > 0 {
			fmt.Fprintf(w, "searches over orders: %d failed states\n", s.SearchStates)
		}
		if s.Searched+s.LocalSearched > 0 {
			fmt.Fprintf(w, "serial orders found where the replays got stuck: %d by the backtracking search, %d by local search\n", s.Searched, s.LocalSearched)
		}
		if s.StrictRaces > 0 {
			fmt.Fprintf(w, "the strict search within windows ran beside its other choice order %d times; that one found the order first %d times\n", s.StrictRaces, s.RaceWonBeside)
		}
		if s.SearchTurns > 0 {
			fmt.Fprintf(w, "the strict search within windows continued in %d turns between solver rounds\n", s.SearchTurns)
		}
		if s.OrientedPairs > 0 {
			fmt.Fprintf(w, "unobserved writers: %d pairs oriented by refinement\n", s.OrientedPairs)
		}
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

// writeCounterexamples prints each counterexample: its transactions, then the
// checker's explanation on it.
func writeCounterexamples(w io.Writer, cxs []*shrink.Report) {
	for _, cx := range cxs {
		where := ""
		if cx.File != "" {
			where = "; written to " + cx.File
		}
		minimal := ""
		if !cx.Minimal {
			minimal = ", not known to be minimal: " + cx.NotMinimal
		}
		fmt.Fprintf(w, "\nCounterexample for %s: %d of the %d transactions, not valid on their own (%d cuts checked in %.2fs%s%s):\n",
			strings.Join(cx.Models, ", "), cx.Transactions, cx.Original, cx.Checks, cx.Seconds, minimal, where)
		if cx.WhyLarge != "" {
			fmt.Fprintf(w, "   Why so large: %s.\n", cx.WhyLarge)
		}
		if cx.Transactions == cx.Original && len(cx.Synthetic) == 0 {
			// The history itself (no smaller cut was verified): listed above already.
			fmt.Fprintf(w, "   (the whole history: its transactions and anomalies are the ones above)\n")
			continue
		}
		synthetic := shrink.SyntheticText(cx.History(), cx.Orig(), cx.Prefixes)
		n := 0
		for _, t := range cx.Txns {
			if t.Line == 0 && slices.Contains(cx.Synthetic, t.Index) && n < len(synthetic) {
				fmt.Fprintf(w, "   - %s\n", synthetic[n])
				n++
				continue
			}
			proc := ""
			if t.Process != "" {
				proc = ", process " + t.Process
			}
			fmt.Fprintf(w, "   - %s (index %d, line %d%s, %s): %s\n", txnLabel(t), t.Index, t.Line, proc, t.Status, t.Ops)
		}
		for _, line := range shrink.ConfinedText(cx.Prefixes) {
			fmt.Fprintf(w, "   %s\n", line)
		}
		for i, a := range cx.Anomalies {
			fmt.Fprintf(w, "   %c. %s: %s\n", 'a'+rune(i%26), a.Type, strings.ReplaceAll(a.Explanation, "\n", "\n      "))
		}
	}
}
