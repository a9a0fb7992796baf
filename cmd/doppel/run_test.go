package main

import (
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
		{"unknown model", append([]string{"--model", "consistent-view"}, small...), exitUsage, ""},
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
