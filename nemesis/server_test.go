package nemesis

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCheckLocal(t *testing.T) {
	for host, local := range map[string]bool{
		"": true, "/var/run/postgresql": true, "localhost": true, "127.0.0.1": true, "::1": true,
		"192.0.2.1": false, // TEST-NET-1: never this machine
	} {
		if err := CheckLocal(host); (err == nil) != local {
			t.Errorf("%q: err %v, want local %v", host, err, local)
		}
	}
}

// fakeServer is a process tree standing in for a server: a shell (the "main
// process", named by a pid file) with one child.
func fakeServer(t *testing.T) (*Server, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep 300 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pidFile := filepath.Join(t.TempDir(), "server.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Wait for the child to exist.
	for i := 0; i < 100 && len(children(pid)) == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if len(children(pid)) != 1 {
		t.Fatalf("the fake server has children %v", children(pid))
	}
	return &Server{Kind: "mysql", Name: "fake", pidFile: pidFile}, pid
}

func state(pid int) byte {
	_, s, _ := procStat(pid)
	return s
}

func TestPauseResume(t *testing.T) {
	s, pid := fakeServer(t)
	child := children(pid)[0]
	if err := s.Check([]string{Pause}); err != nil {
		t.Fatal(err)
	}
	note, err := s.Pause()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "and its 1 children") {
		t.Errorf("note %q", note)
	}
	if state(pid) != 'T' || state(child) != 'T' {
		t.Errorf("after pause: states %c %c, want T T", state(pid), state(child))
	}
	if _, err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	if state(pid) == 'T' || state(child) == 'T' {
		t.Errorf("after resume: states %c %c", state(pid), state(child))
	}
}

func TestKillTakesTheChildren(t *testing.T) {
	s, pid := fakeServer(t)
	child := children(pid)[0]
	if _, err := s.Kill(context.Background()); err != nil {
		t.Fatal(err)
	}
	if processAlive(pid) || processAlive(child) {
		t.Errorf("alive after kill: main %v, child %v", processAlive(pid), processAlive(child))
	}
}

// A pid file that does not name a process of the server's kind is refused.
func TestCheckNeedsAReadablePIDFile(t *testing.T) {
	s := &Server{Kind: "mysql", Name: "fake", pidFile: filepath.Join(t.TempDir(), "missing.pid")}
	if err := s.Check([]string{Pause}); err == nil || !strings.Contains(err.Error(), "pid file") {
		t.Errorf("err %v", err)
	}
}
