package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseStops: a parse whose stop hook says to give up returns a *StoppedError at
// the line it reached (not a history, not a syntax error), on the fast and the
// general path, in EDN and JSON; a hook that never says so changes nothing.
func TestParseStops(t *testing.T) {
	defer func(prev bool) { noFastPath = prev }(noFastPath)
	const txns = 2000 // 4000 lines: several batches
	for _, json := range []bool{false, true} {
		data := syntheticHistory(txns, json)
		lines := bytes.Count(data, []byte("\n"))
		for _, slow := range []bool{false, true} {
			noFastPath = slow
			want, err := Parse(bytes.NewReader(data), "h")
			if err != nil {
				t.Fatal(err)
			}
			asked := 0
			got, err := ParseStop(bytes.NewReader(data), "h", func() bool { asked++; return false })
			if err != nil {
				t.Fatalf("json %v, general path %v: a stop that never fires: %v", json, slow, err)
			}
			if asked == 0 {
				t.Errorf("json %v, general path %v: the stop hook was never asked over %d lines", json, slow, lines)
			}
			equalHistories(t, want, got)

			asked = 0
			h, err := ParseStop(bytes.NewReader(data), "h", func() bool { asked++; return asked == 3 })
			var stopped *StoppedError
			if h != nil || !errors.As(err, &stopped) {
				t.Fatalf("json %v, general path %v: stopped parse gave %v, %v; want a *StoppedError", json, slow, h != nil, err)
			}
			if stopped.File != "h" || stopped.Line < 2 || stopped.Line >= lines {
				t.Errorf("json %v, general path %v: stopped at %s:%d, want inside h's %d lines", json, slow, stopped.File, stopped.Line, lines)
			}
			if asked != 3 {
				t.Errorf("json %v, general path %v: the hook was asked %d times, want 3 (the parse goes on after it fired)", json, slow, asked)
			}
		}
	}
}

// TestParseFileStop: the same through a file, and a stop hook that fires at once.
func TestParseFileStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.edn")
	if err := os.WriteFile(path, syntheticHistory(1000, false), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFileStop(path, func() bool { return true })
	var stopped *StoppedError
	if !errors.As(err, &stopped) || stopped.File != path {
		t.Fatalf("got %v, want a *StoppedError in %s", err, path)
	}
	if h, err := ParseFileStop(path, nil); err != nil || len(h.Txns) != 1000 {
		t.Fatalf("no hook: %v", err)
	}
}

// TestSyntaxErrorBeforeStop: bad input read before the hook fires is reported as bad
// input (exit 3 in the command line tool), not as a limit.
func TestSyntaxErrorBeforeStop(t *testing.T) {
	data := append([]byte("{:type :bogus, :process 0, :f :txn, :value []}\n"), syntheticHistory(1000, false)...)
	_, err := ParseStop(bytes.NewReader(data), "h", func() bool { return true })
	var stopped *StoppedError
	if err == nil || errors.As(err, &stopped) || !strings.HasPrefix(err.Error(), "h:1:") {
		t.Fatalf("got %v, want the error of line 1", err)
	}
}
