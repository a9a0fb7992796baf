package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestGenDeterministicAndFormats(t *testing.T) {
	dir := t.TempDir()
	gen := func(name string, args ...string) []byte {
		t.Helper()
		out := filepath.Join(dir, name)
		if code := runGen(append(args, "--out", out)); code != 0 {
			t.Fatalf("gen %v: exit %d", args, code)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	args := []string{"--txns", "50", "--behaviour", "faulty", "--fault-rate", "0.5", "--info", "0.1"}
	a, b := gen("a.edn", args...), gen("b.edn", args...)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatal("same flags gave different histories")
	}
	if !bytes.HasPrefix(a, []byte("{:index 0,")) || bytes.Count(a, []byte("\n")) != 100 {
		t.Fatalf("unexpected EDN output:\n%.200s", a)
	}
	j := gen("a.json", append(args, "--format", "json")...)
	if !bytes.HasPrefix(j, []byte(`{"index":0,`)) || bytes.Count(j, []byte("\n")) != 100 {
		t.Fatalf("unexpected JSON output:\n%.200s", j)
	}
}

func TestGenInject(t *testing.T) {
	dir := t.TempDir()
	plain, injected := filepath.Join(dir, "plain.edn"), filepath.Join(dir, "injected.edn")
	args := []string{"--txns", "200", "--dup-keys", "1", "--val-domain", "3", "--keys", "20"}
	if code := runGen(append(args, "--out", plain)); code != 0 {
		t.Fatalf("gen: exit %d", code)
	}
	if code := runGen(append(args, "--out", injected, "--inject", "lost-update,write-skew", "--inject-at", "0.3")); code != 0 {
		t.Fatalf("gen --inject: exit %d", code)
	}
	if code, out := captureCheck(t, plain); code != exitValid {
		t.Errorf("without injection: exit %d\n%s", code, out)
	}
	if code, out := captureCheck(t, injected); code != exitInvalid {
		t.Errorf("with injection: exit %d\n%s", code, out)
	}
}

func TestGenBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--keys", "0"},
		{"--format", "xml"},
		{"--behaviour", "eventual"},
		{"--behaviour", "faulty", "--faults", "lost-update,gremlins"},
		{"--info", "0.7", "--fail", "0.7"},
		{"--inject", "dirty-write"},
		{"--inject", "g-single", "--behaviour", "snapshot"},
		{"--inject", "g-single", "--inject-at", "2"},
		{"--inject", "lost-update", "--dup-keys", "0"},
		{"--no-such-flag"},
		{"extra"},
	} {
		if code := runGen(args); code != exitUsage {
			t.Errorf("gen %v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
