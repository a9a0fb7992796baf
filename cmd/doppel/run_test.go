package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"doppel/check"
	"doppel/workload"
)

// captureRun runs doppel run with args and returns its exit code and stdout.
func captureRun(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return captureStdout(t, runRun, args...)
}

func TestRunExitCodes(t *testing.T) {
	out := func() string { return filepath.Join(t.TempDir(), "run") }
	small := []string{"--txns", "40", "--sessions", "2", "--keys", "4"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"valid", small, exitValid, "VALID"},
		{"nothing committed", append([]string{"--txn-timeout", "1ns"}, small...), exitUnknown, "no transaction committed"},
		{"no reads", append([]string{"--reads", "0"}, small...), exitUnknown, "no committed read saw a value"},
		{"unknown model", append([]string{"--model", "read-uncommitless"}, small...), exitUsage, ""},
		{"read uncommitted", append([]string{"--model", ":PL-1"}, small...), exitValid, "read-uncommitted"},
		{"model alias", append([]string{"--model", ":PL-2"}, small...), exitValid, "read-committed"},
		{"bad format", append([]string{"--format", "xml"}, small...), exitUsage, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := out()
			code, stdout := captureRun(t, append([]string{"--out", dir}, tc.args...)...)
			if code != tc.code || !strings.Contains(stdout, tc.out) {
				t.Fatalf("exit %d, want %d; output:\n%s", code, tc.code, stdout)
			}
			if tc.code == exitUsage {
				if _, err := os.Stat(dir); err == nil {
					t.Error("a refused configuration created the output directory")
				}
			}
		})
	}
}

func TestRunExitCodeInterrupted(t *testing.T) {
	for _, tc := range []struct {
		valid       check.Validity
		interrupted bool
		code        int
	}{
		{check.Valid, false, exitValid},
		{check.Invalid, false, exitInvalid},
		{check.Unknown, false, exitUnknown},
		{check.Valid, true, exitInterrupted},
		{check.Unknown, true, exitInterrupted},
		// An anomaly in a partial history is an anomaly.
		{check.Invalid, true, exitInvalid},
	} {
		res := &workload.RunResult{Interrupted: tc.interrupted, Check: check.Result{Valid: tc.valid}}
		if got := runExitCode(res); got != tc.code {
			t.Errorf("%v, interrupted %v: exit %d, want %d", tc.valid, tc.interrupted, got, tc.code)
		}
	}
}

// Hunt mode: every run in its own directory; valid runs are removed, the others kept
// with their history and report; a table of all runs at the end.
func TestRunHunt(t *testing.T) {
	small := []string{"--txns", "30", "--sessions", "2", "--keys", "4", "--seed", "7"}
	t.Run("valid runs are not kept", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "hunt")
		code, stdout := captureRun(t, append([]string{"--out", dir, "--runs", "3"}, small...)...)
		if code != exitValid {
			t.Fatalf("exit %d:\n%s", code, stdout)
		}
		for _, want := range []string{"run  seed", "1    7 ", "3    9 ", "3 runs, 0 kept"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("no %q in:\n%s", want, stdout)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "run-001")); err == nil {
			t.Error("a valid run was kept")
		}
		var rows []huntRow
		readJSONFile(t, filepath.Join(dir, "hunt.json"), &rows)
		if len(rows) != 3 || rows[2].Seed != 9 || rows[0].Verdict != "valid" || rows[0].OK == 0 {
			t.Errorf("hunt.json: %+v", rows)
		}
	})
	t.Run("runs that are not valid are kept", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "hunt")
		code, stdout := captureRun(t, append([]string{"--out", dir, "--runs", "2", "--txn-timeout", "1ns"}, small...)...)
		if code != exitUnknown {
			t.Fatalf("exit %d, want %d:\n%s", code, exitUnknown, stdout)
		}
		for _, run := range []string{"run-001", "run-002"} {
			for _, f := range []string{"history.edn", "result.json", "index.html", "latency-raw.svg"} {
				if _, err := os.Stat(filepath.Join(dir, run, f)); err != nil {
					t.Error(err)
				}
			}
		}
		if target, _ := os.Readlink(filepath.Join(dir, "latest")); target != "run-002" {
			t.Errorf("latest -> %q", target)
		}
		if !strings.Contains(stdout, "2 runs, 2 kept") || !strings.Contains(stdout, "no transaction committed") {
			t.Errorf("table:\n%s", stdout)
		}
	})
}

// --duration runs rotate keys unless --key-rotate says otherwise.
func TestRunDurationRotatesKeys(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--duration", "200ms"}, defaultDurationKeyRotate},
		{[]string{"--duration", "200ms", "--key-rotate", "0"}, 0},
		{[]string{"--txns", "20"}, 0},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		if code, out := captureRun(t, append([]string{"--out", dir, "--sessions", "2", "--keys", "50"}, tc.args...)...); code != exitValid {
			t.Fatalf("%v: exit %d\n%s", tc.args, code, out)
		}
		var info struct {
			Spec workload.Spec `json:"spec"`
		}
		readJSONFile(t, filepath.Join(dir, "run.json"), &info)
		if info.Spec.KeyRotate != tc.want {
			t.Errorf("%v: key_rotate %d, want %d", tc.args, info.Spec.KeyRotate, tc.want)
		}
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
