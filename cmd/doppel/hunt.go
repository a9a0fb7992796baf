package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"doppel/check"
	"doppel/workload"
)

// huntRow is one run of a hunt, as the summary table and hunt.json show it.
type huntRow struct {
	Run       int      `json:"run"`
	Seed      int64    `json:"seed"`
	Txns      int      `json:"txns"`
	OK        int      `json:"ok"`
	Fail      int      `json:"fail"`
	Info      int      `json:"info"`
	Verdict   string   `json:"verdict"` // valid, invalid, unknown, or error
	Anomalies []string `json:"anomalies,omitempty"`
	Dir       string   `json:"dir,omitempty"` // kept (not valid); "" when removed
	Message   string   `json:"message,omitempty"`
}

// hunt repeats the run with seeds Seed, Seed+1, ... (runs times; 0 until interrupted),
// each in OUT/run-NNN. A valid run's directory is removed; every other is kept with
// its history and report. The summary table goes to stdout and OUT/hunt.json.
func hunt(ctx context.Context, base workload.RunConfig, runs int) int {
	root := base.OutDir
	if err := os.MkdirAll(root, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "doppel run: %v\n", err)
		return exitUsage
	}
	var rows []huntRow
	code := exitValid
	lastKept := ""
	for i := 1; runs == 0 || i <= runs; i++ {
		if ctx.Err() != nil {
			break
		}
		cfg := base
		cfg.Spec.Seed = base.Spec.Seed + int64(i-1)
		cfg.OutDir = filepath.Join(root, fmt.Sprintf("run-%03d", i))
		fmt.Fprintf(os.Stderr, "run %d (seed %d): %s\n", i, cfg.Spec.Seed, cfg.OutDir)
		res, err := workload.Run(ctx, cfg)
		row := huntRow{Run: i, Seed: cfg.Spec.Seed, Dir: cfg.OutDir}
		if err != nil {
			c := runErrorCode(res, err)
			if c == exitUsage || c == exitDatabase {
				// The configuration or the database is wrong: every run would fail so.
				os.Remove(cfg.OutDir)
				code = c
				break
			}
			row.Verdict, row.Message = "error", err.Error()
			code = worseHuntCode(code, exitUnknown)
		} else {
			row.Txns, row.OK, row.Fail, row.Info = res.OK+res.Fail+res.Info, res.OK, res.Fail, res.Info
			row.Verdict, row.Anomalies, row.Message = res.Check.Valid.String(), res.Check.AnomalyTypes, res.Check.Message
			if res.Check.Valid != check.Valid {
				printRunReport(os.Stdout, res)
				fmt.Fprintln(os.Stdout)
			}
			code = worseHuntCode(code, runExitCode(res))
		}
		if row.Verdict == check.Valid.String() {
			if err := os.RemoveAll(cfg.OutDir); err != nil {
				fmt.Fprintf(os.Stderr, "doppel run: %v\n", err)
			}
			row.Dir = ""
		} else {
			lastKept = cfg.OutDir
		}
		rows = append(rows, row)
		fmt.Fprintf(os.Stderr, "run %d: %s, %d txns\n", i, row.Verdict, row.Txns)
	}
	// latest points at the last run kept (the valid ones are gone).
	if err := relinkLatest(root, lastKept); err != nil {
		fmt.Fprintf(os.Stderr, "doppel run: %v\n", err)
	}
	printHuntTable(os.Stdout, rows)
	if b, err := json.MarshalIndent(rows, "", "  "); err == nil {
		if err := os.WriteFile(filepath.Join(root, "hunt.json"), append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "doppel run: %v\n", err)
		}
	}
	if ctx.Err() != nil && code == exitValid {
		return exitInterrupted
	}
	return code
}

// worseHuntCode: an anomaly found beats everything, then unknown, then interrupted.
func worseHuntCode(a, b int) int {
	rank := map[int]int{exitValid: 0, exitInterrupted: 1, exitUnknown: 2, exitInvalid: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// relinkLatest points root/latest at dir, or removes it when no run was kept.
func relinkLatest(root, dir string) error {
	link := filepath.Join(root, "latest")
	if dir == "" {
		if st, err := os.Lstat(link); err == nil && st.Mode()&os.ModeSymlink != 0 {
			return os.Remove(link)
		}
		return nil
	}
	return workload.LinkLatest(dir)
}

func printHuntTable(w io.Writer, rows []huntRow) {
	fmt.Fprintf(w, "%-4s %-6s %7s %7s %7s %6s  %-9s %s\n", "run", "seed", "txns", "ok", "fail", "info", "verdict", "anomalies")
	kept := 0
	for _, r := range rows {
		anomalies := strings.Join(r.Anomalies, ",")
		if r.Verdict == "error" || (anomalies == "" && r.Message != "" && r.Verdict != check.Valid.String()) {
			anomalies = clipText(r.Message, 60)
		}
		fmt.Fprintf(w, "%-4d %-6d %7d %7d %7d %6d  %-9s %s\n", r.Run, r.Seed, r.Txns, r.OK, r.Fail, r.Info, r.Verdict, anomalies)
		if r.Dir != "" {
			kept++
		}
	}
	fmt.Fprintf(w, "%d runs, %d kept (not valid)\n", len(rows), kept)
}
