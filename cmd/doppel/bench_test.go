package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"doppel/bench"
)

// captureBench runs doppel bench with args and returns its exit code and stdout.
func captureBench(t *testing.T, args ...string) (int, []byte) {
	t.Helper()
	code, out := captureStdout(t, runBench, args...)
	return code, []byte(out)
}

// TestBenchChild: --child runs one scenario and prints its measurement as JSON, which
// the parent bench reads back.
func TestBenchChild(t *testing.T) {
	code, out := captureBench(t, "--child", "dupkeys-k10v2-350-s1", "--timeout", "30s", "--models", "serializable")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var m bench.Measurement
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if m.Scenario != "dupkeys-k10v2-350-s1" || m.Txns != 350 || len(m.Verdicts) != 1 ||
		m.Verdicts[0].Valid != "valid" || m.Verdicts[0].Expected != "valid" {
		t.Errorf("got %+v", m)
	}
	if code, _ := captureBench(t, "--child", "no-such-scenario"); code != exitUsage {
		t.Errorf("unknown child scenario: exit %d", code)
	}
}

// TestBenchSelectsHeavyByName: a pattern selects a heavy scenario only when it
// contains the scenario's whole name, or with --heavy.
func TestBenchSelectsHeavyByName(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--scenario", "info2"}, false},
		{[]string{"--scenario", "info2-1m"}, true},
		{[]string{"--scenario", "info2", "--heavy"}, true},
	} {
		pattern, heavy := c.args[1], len(c.args) > 2
		sc, _ := bench.Find("info2-1m")
		if got := selects(regexp.MustCompile(pattern), pattern, heavy, sc); got != c.want {
			t.Errorf("%v selects info2-1m: %v, want %v", c.args, got, c.want)
		}
	}
	// The default set leaves out the hard families, and keeps the Figure 3 points.
	for name, want := range map[string]bool{"inject-g-single-1k": false, "dupkeys-k10v2-350-s1": false, "fig3-left-1000": true} {
		sc, _ := bench.Find(name)
		if got := selects(nil, "", false, sc); got != want {
			t.Errorf("default set has %s: %v, want %v", name, got, want)
		}
	}
}
