package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"doppel/check"
	"doppel/workload"
)

// Exit codes of doppel run beyond check's: the database could not be used (connect,
// create table, ...); the run was interrupted and its partial history showed no anomaly.
const (
	exitDatabase    = 4
	exitInterrupted = 5
)

const runUsage = `usage: doppel run [flags]

Runs a list-append workload against a database (default: an SQLite file in the output
directory), records the history and checks it. The output directory is a store as
Jepsen's: history.edn and/or history.jsonl (nemesis actions included, as :process
:nemesis ops), run.json (parameters, counts), result.json (verdict, anomalies, outcomes
by cause), index.html and the evidence, latency-raw.svg and rate.svg (latency and
throughput over time, nemesis intervals shaded); a symbolic link "latest" beside it
points at it. --duration runs move to fresh keys every 100 transactions of a session
unless --key-rotate says otherwise.

Hunt mode: --runs N repeats the run N times (0: until interrupted) with seeds
--seed, --seed+1, ..., each in its own directory OUT/run-NNN; only the runs that are
not valid are kept, and a table of all runs is printed at the end (and written to
OUT/hunt.json). Its exit code is the worst of the runs': 1 if any was not valid, else 2
if any was unknown or failed, else 5 if interrupted, else 0.

Nemesis: --nemesis takes a comma-separated list of faults; every --nemesis-interval one
of them, at random, acts:
  kill-conn  terminate a random session's connection (with the run's own account:
             a user may always end its own connections, so no extra privilege)
  restart    clean restart of the server
  kill       SIGKILL the server's processes; start it again an interval later
  pause      SIGSTOP the server's processes; SIGCONT them an interval later
restart, kill and pause need the server on this machine and doppel running as root or
as the server's user (PostgreSQL: a superuser connection, to find the data directory;
Debian's pg_ctlcluster; MariaDB: its pid file and start-stop-daemon). This is checked
before the workload starts, and the server is left running on every way out.

Exit codes:
  0  valid: the history satisfies the models
  1  not valid: an anomaly was found (also when interrupted: it is in the partial history)
  2  unknown: a check limit was reached; or nothing committed / no committed read saw a
     value, so the history could not have shown an anomaly; or the run failed midway
     (writing the history, say: the message says what, and the history so far is kept)
  3  bad flags or configuration (checked before the workload starts)
  4  the database could not be used at the start (connect, create the table)
  5  interrupted (SIGINT/SIGTERM): the partial history was checked and showed no anomaly

Flags:
`

func init() {
	commands["run"] = command{summary: "run a list-append workload against a database and check it", run: runRun}
}

func runRun(args []string) int {
	flags := flag.NewFlagSet("doppel run", flag.ContinueOnError)
	flags.SetOutput(os.Stderr)
	spec := workload.DefaultSpec()
	var (
		cfg      workload.RunConfig
		models   string
		duration time.Duration
	)
	flags.StringVar(&cfg.DB, "db", "", "database URL: postgres://user@host:port/db, mysql://user:pass@host:port/db or sqlite:PATH\n(default: an SQLite file in the output directory; passwords may also come from PGPASSWORD / MYSQL_PWD)")
	flags.StringVar(&cfg.Isolation, "isolation", workload.Serializable, "isolation level: serializable, repeatable-read, snapshot, read-committed, read-uncommitted (as the database has them)")
	flags.StringVar(&cfg.Append, "append", workload.AppendConcat, "append implementation: concat (server-side concatenation) or rmw (read, then write back the longer list)")
	spec.RegisterFlags(flags)
	flags.DurationVar(&duration, "duration", 0, "run for this long (then --txns is a cap only if given explicitly)")
	flags.StringVar(&cfg.OutDir, "out", "", "output directory (default ./doppel-run-<timestamp>)")
	flags.StringVar(&models, "model", "", "models to check, comma-separated (default: what the isolation level promises; printed)")
	flags.BoolVar(&cfg.Keep, "keep", false, "keep the table (it is dropped at the end otherwise)")
	flags.StringVar(&cfg.Nemesis, "nemesis", "", "faults, comma-separated: kill-conn, restart, kill, pause (see above)")
	flags.DurationVar(&cfg.NemesisInterval, "nemesis-interval", time.Second, "time between nemesis actions")
	flags.StringVar(&cfg.Format, "format", "edn", "history file format: edn, json or both")
	flags.DurationVar(&cfg.DrainTimeout, "drain-timeout", 10*time.Second, "on interrupt, how long in-flight transactions may take to finish")
	flags.DurationVar(&cfg.TxnTimeout, "txn-timeout", 30*time.Second, "cancel a transaction after this long (recorded as fail or info)")
	maxMemory := flags.String("max-memory", defaultMaxMemory(), "the check of the history gives up (verdict unknown) when it holds this much memory (e.g. 4GiB); 0 means no limit; the default is 3/4 of this machine's memory")
	var runs int
	flags.IntVar(&runs, "runs", 1, "hunt mode: repeat the run this many times with new seeds (0: until interrupted); keep the runs that are not valid")
	flags.Usage = func() {
		fmt.Fprint(os.Stderr, runUsage)
		flags.PrintDefaults()
	}
	if err := parseFlags(flags, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitValid
		}
		return exitUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "doppel run: unexpected arguments %q\n", flags.Args())
		return exitUsage
	}
	given := map[string]bool{}
	flags.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if duration > 0 && !given["txns"] {
		spec.Txns = 0 // run for the duration only
	}
	if duration > 0 && !given["key-rotate"] {
		// Every read returns a key's whole list: without rotation, lists grow for as
		// long as the run lasts and reads and checks slow down with them.
		spec.KeyRotate = defaultDurationKeyRotate
	}
	if runs < 0 {
		fmt.Fprintln(os.Stderr, "doppel run: --runs must be >= 0 (0: until interrupted)")
		return exitUsage
	}
	memLimit, err := parseBytes(*maxMemory)
	if err != nil {
		fmt.Fprintf(os.Stderr, "doppel run: --max-memory: %v\n", err)
		return exitUsage
	}
	cfg.CheckOptions.MaxMemory = memLimit
	cfg.Spec = spec
	cfg.Duration = duration
	if models != "" {
		for m := range strings.SplitSeq(models, ",") {
			if m = strings.TrimSpace(m); m != "" {
				cfg.Models = append(cfg.Models, m)
			}
		}
	}
	if cfg.OutDir == "" {
		cfg.OutDir = "doppel-run-" + time.Now().UTC().Format("20060102T150405Z")
	}
	if st, err := os.Stderr.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		cfg.Progress = os.Stderr
	}
	cfg.Log = os.Stderr

	// The first SIGINT stops issuing transactions; the default handler is restored
	// then, so a second one ends the process (the history on disk stays checkable) —
	// unless the nemesis restarts, kills or pauses the server: then later signals are
	// ignored, so that the server is always left running.
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	serverFaults := workload.HasServerFaults(cfg.Nemesis)
	finished := make(chan struct{}) // closed before stopSignals cancels ctx on return
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		select {
		case <-finished:
			return // not a signal: the command is returning
		default:
		}
		if serverFaults {
			fmt.Fprintf(os.Stderr, "\ninterrupted: leaving the server running, letting in-flight transactions finish (up to %v)\n", cfg.DrainTimeout)
			return
		}
		stopSignals()
		fmt.Fprintf(os.Stderr, "\ninterrupted: letting in-flight transactions finish (up to %v); interrupt again to quit now\n", cfg.DrainTimeout)
	}()

	if runs != 1 {
		return hunt(ctx, cfg, runs)
	}
	res, err := workload.Run(ctx, cfg)
	if err != nil {
		return runErrorCode(res, err)
	}
	printRunReport(os.Stdout, res)
	return runExitCode(res)
}

// defaultDurationKeyRotate is --key-rotate for --duration runs that do not set it.
const defaultDurationKeyRotate = 100

// runErrorCode prints a run's error and returns the exit code for it.
func runErrorCode(res *workload.RunResult, err error) int {
	if res != nil && len(res.Files) > 0 {
		fmt.Fprintf(os.Stderr, "doppel run: history so far kept in %s\n", strings.Join(res.Files, ", "))
	}
	var dbErr *workload.DBError
	var pathErr *fs.PathError
	switch {
	case errors.Is(err, workload.ErrConfig):
		fmt.Fprintf(os.Stderr, "doppel run: %v\n", err)
		return exitUsage
	case errors.As(err, &dbErr):
		fmt.Fprintf(os.Stderr, "doppel run: %v\n", err)
		return exitDatabase
	case errors.As(err, &pathErr):
		fmt.Fprintf(os.Stderr, "doppel run: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(os.Stderr, "doppel run: %v\n", err)
	return exitUnknown
}

// runExitCode: an anomaly found is found, interrupted or not; otherwise an interrupted
// run has its own code, since its partial history says less than a finished one.
func runExitCode(res *workload.RunResult) int {
	if res.Check.Valid == check.Invalid {
		return exitInvalid
	}
	if res.Interrupted {
		return exitInterrupted
	}
	if res.Check.Valid == check.Valid {
		return exitValid
	}
	return exitUnknown
}

// runMaxAnomalies bounds the anomalies printed; result.json has them all.
const runMaxAnomalies = 5

// runMaxExplanation bounds each printed explanation, in bytes.
const runMaxExplanation = 600

// clipText shortens s to about n bytes for the terminal.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " …(see result.json)"
}

// printOutcomes prints the transactions by outcome and cause.
func printOutcomes(w io.Writer, outcomes []workload.Outcome) {
	for i, o := range outcomes {
		label := "outcomes:"
		if i > 0 {
			label = ""
		}
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%-10s %7d %-4s %s", label, o.Count, o.Type, o.Cause), " "))
	}
}

func printRunReport(w io.Writer, res *workload.RunResult) {
	fmt.Fprintf(w, "database:  %s (table %s)\n", res.Database, res.Table)
	fmt.Fprintf(w, "history:   %s (%d events)\n", strings.Join(res.Files, ", "), len(res.Events))
	fmt.Fprintf(w, "store:     %s (run.json, result.json, index.html, %s, %s)\n", res.OutDir, workload.PlotLatency, workload.PlotRate)
	n := res.OK + res.Fail + res.Info
	fmt.Fprintf(w, "run:       %d transactions in %.2fs, %.0f txns/s (%d ok, %d fail, %d info",
		n, res.Elapsed.Seconds(), res.TxnsPerSecond(), res.OK, res.Fail, res.Info)
	if res.Unfinished > 0 {
		fmt.Fprintf(w, ", %d unfinished", res.Unfinished)
	}
	if res.Kills > 0 {
		fmt.Fprintf(w, ", %d connections killed", res.Kills)
	}
	fmt.Fprintln(w, ")")
	printOutcomes(w, res.Outcomes)
	if res.NemesisActions > 0 || res.Kills > 0 {
		fmt.Fprintf(w, "nemesis:   %d server actions, %d connections killed (in the history as :process :nemesis)\n", res.NemesisActions, res.Kills)
	}
	if res.Reconnects > 0 || res.ConnectErrors > 0 {
		fmt.Fprintf(w, "           %d reconnections, %d failed connection attempts\n", res.Reconnects, res.ConnectErrors)
	}
	if n := res.SessionsNeverConnected(); n > 0 {
		fmt.Fprintf(w, "sessions:  %d tried to connect and never could (first error: %s): the run was less concurrent than asked\n", n, res.FirstConnectError)
	}
	if res.Interrupted {
		fmt.Fprintln(w, "           interrupted: the history is partial")
	}
	if res.ModelNote != "" {
		fmt.Fprintf(w, "model:     %s (default: %s)\n", strings.Join(res.Models, ", "), res.ModelNote)
	} else {
		fmt.Fprintf(w, "model:     %s\n", strings.Join(res.Models, ", "))
	}
	if !res.Checked {
		return
	}
	r := &res.Check
	fmt.Fprintf(w, "check:     %.3fs\n", res.CheckTime.Seconds())
	partial := ""
	if res.Interrupted {
		partial = " (of the partial history)"
	}
	fmt.Fprintf(w, "verdict:   %s%s\n", strings.ToUpper(r.Valid.String()), partial)
	if r.Message != "" {
		fmt.Fprintf(w, "           %s\n", r.Message)
	}
	if len(r.Models) > 1 {
		for _, m := range r.Models {
			fmt.Fprintf(w, "  %-28s %s", m.Model, m.Valid)
			if len(m.AnomalyTypes) > 0 {
				fmt.Fprintf(w, " (%s)", strings.Join(m.AnomalyTypes, ", "))
			}
			fmt.Fprintln(w)
		}
	}
	if len(r.AnomalyTypes) > 0 {
		fmt.Fprintf(w, "anomalies: %s\n", strings.Join(r.AnomalyTypes, ", "))
	}
	for i, a := range r.Anomalies {
		if i == runMaxAnomalies {
			fmt.Fprintf(w, "... and %d more in %s/result.json\n", len(r.Anomalies)-i, res.OutDir)
			break
		}
		fmt.Fprintf(w, "\n%s", a.Type)
		if a.Key != "" {
			fmt.Fprintf(w, " on key %s", a.Key)
		}
		fmt.Fprintf(w, ": %s\n", clipText(a.Explanation, runMaxExplanation))
		// Explanations name transactions T<index>, as in the history file.
		name := make(map[int]string, len(a.Txns))
		for _, t := range a.Txns {
			name[t.ID] = fmt.Sprintf("T%d", t.Index)
			fmt.Fprintf(w, "  T%d (process %s, %s): %s\n", t.Index, t.Process, t.Status, clipText(t.Ops, runMaxExplanation))
		}
		for _, s := range a.Steps {
			fmt.Fprintf(w, "    %s -%s-> %s: %s\n", name[s.From], s.Kind, name[s.To], clipText(s.Why, runMaxExplanation))
		}
	}
}
