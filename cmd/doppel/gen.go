package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"doppel/history"
	"doppel/workload"
)

func init() {
	commands["gen"] = command{summary: "generate a list-append history from a simulated database", run: runGen}
}

func runGen(args []string) int {
	fs := flag.NewFlagSet("doppel gen", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: doppel gen [flags]\n\nWrites the history of a workload run against a simulated database.\n\nflags:")
		fs.PrintDefaults()
	}
	spec := workload.DefaultSpec()
	spec.RegisterFlags(fs)
	behaviour := fs.String("behaviour", string(workload.SimSerializable), "simulated database: serializable, snapshot or faulty")
	info := fs.Float64("info", 0, "fraction of transactions that complete with :info (committed or not, at random)")
	fail := fs.Float64("fail", 0, "fraction of transactions that abort (:fail)")
	faults := fs.String("faults", strings.Join(workload.AllFaults, ","), "faults of --behaviour faulty, comma-separated")
	faultRate := fs.Float64("fault-rate", 0.01, "fraction of transactions in which --behaviour faulty injects a fault")
	stale := fs.Float64("stale", 0, "--behaviour snapshot: fraction of transactions whose snapshot lags (as a replica's), taken up to --stale-commits commits before the latest")
	staleCommits := fs.Int("stale-commits", 10, "how many commits a --stale snapshot lags at most")
	inject := fs.String("inject", "", "inject one instance of each of these anomalies into --behaviour serializable, comma-separated: "+strings.Join(workload.AllInjections, ", ")+"\n(their invoke :index values are printed on stderr)")
	injectAt := fs.Float64("inject-at", workload.DefaultInjectAt, "fraction of the run at which --inject injects")
	format := fs.String("format", "edn", "output format: edn or json")
	out := fs.String("out", "", "output file (default stdout)")
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		return genUsage("unexpected arguments: %v", fs.Args())
	}
	if err := spec.Validate(); err != nil {
		return genUsage("%v", err)
	}
	opt := workload.SimOptions{
		Behaviour:    workload.Behaviour(*behaviour),
		Info:         *info,
		Fail:         *fail,
		FaultRate:    *faultRate,
		Stale:        *stale,
		StaleCommits: *staleCommits,
	}
	for _, f := range strings.Split(*faults, ",") {
		if f = strings.TrimSpace(f); f != "" {
			opt.Faults = append(opt.Faults, f)
		}
	}
	for _, kind := range strings.Split(*inject, ",") {
		if kind = strings.TrimSpace(kind); kind != "" {
			opt.Inject = append(opt.Inject, kind)
		}
	}
	opt.InjectAt = *injectAt
	if err := opt.Validate(); err != nil {
		return genUsage("%v", err)
	}
	var write func(io.Writer, *history.Event) error
	switch *format {
	case "edn":
		write = history.WriteEDN
	case "json":
		write = history.WriteJSON
	default:
		return genUsage("format must be edn or json, got %q", *format)
	}

	var dst io.Writer = os.Stdout
	var file *os.File
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintf(os.Stderr, "doppel gen: %v\n", err)
			return exitUsage
		}
		file, dst = f, f
	}
	w := bufio.NewWriterSize(dst, 1<<16)
	injected, err := workload.SimulateInjected(spec, opt, func(e *history.Event) error { return write(w, e) })
	for _, in := range injected {
		fmt.Fprintln(os.Stderr, in)
	}
	if err == nil {
		err = w.Flush()
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "doppel gen: %v\n", err)
		if errors.Is(err, workload.ErrCannotInject) {
			return exitUsage // the workload flags leave no room for the anomaly
		}
		return 1
	}
	return 0
}

func genUsage(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "doppel gen: "+format+"\n", args...)
	return exitUsage
}
