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

			// Told to stop at any of its questions (in the reading, or in naming the
			// keys and values after it), the parse stops there.
			for k := 1; k <= asked; k++ {
				n := 0
				h, err := ParseStop(bytes.NewReader(data), "h", func() bool { n++; return n == k })
				var stopped *StoppedError
				if h != nil || !errors.As(err, &stopped) {
					t.Fatalf("json %v, general path %v, question %d: stopped parse gave %v, %v; want a *StoppedError", json, slow, k, h != nil, err)
				}
				if stopped.File != "h" || stopped.Line < 2 || stopped.Line > lines {
					t.Errorf("json %v, general path %v, question %d: stopped at %s:%d, want inside h's %d lines", json, slow, k, stopped.File, stopped.Line, lines)
				}
				if k == 1 && stopped.Line >= lines/2 {
					t.Errorf("json %v, general path %v: stopped at the first question, at line %d of %d", json, slow, stopped.Line, lines)
				}
				if n != k {
					t.Errorf("json %v, general path %v: the hook was asked %d times, want %d (the parse went on after it fired)", json, slow, n, k)
				}
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

// TestInternerFinishStops: naming more than a chunk of ids asks the stop hook between
// chunks and gives up when it says so.
func TestInternerFinishStops(t *testing.T) {
	in := newInterner()
	for n := int64(0); n < 3*numChunk; n++ {
		in.intID(n * 7)
	}
	asked := 0
	if _, ok := in.finish(func() bool { asked++; return asked == 2 }); ok || asked != 2 {
		t.Fatalf("finish told to stop at its second question: ok %v, asked %d times", ok, asked)
	}
}
