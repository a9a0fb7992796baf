// Package serverlock keeps tests that use this machine's database servers from
// disturbing each other. `go test ./...` runs packages in parallel processes, and a
// test that restarts, kills or pauses a server would break another package's test
// running against it. Every test that uses a server holds one lock file shared; a test
// that disturbs a server holds it exclusively (flock(2), so it works across processes
// and worktrees on one machine, and a crashed test releases it).
package serverlock

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// Path is the lock file.
var Path = filepath.Join(os.TempDir(), "doppel-test-db-servers.lock")

var (
	mu        sync.Mutex
	holders   int  // tests of this process holding the lock
	exclusive bool // the current holding is exclusive
	file      *os.File
)

// Shared takes the lock shared for t's duration: the servers stay up meanwhile.
func Shared(t testing.TB) { take(t, false) }

// Exclusive takes the lock exclusively for t's duration: no other test uses a server
// meanwhile, so t may restart, kill or pause one (and must leave it running).
func Exclusive(t testing.TB) { take(t, true) }

func take(t testing.TB, excl bool) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if holders > 0 {
		// Tests of one package run one at a time; a subtest inherits its parent's
		// holding. Upgrading would deadlock against our own shared holding.
		if excl && !exclusive {
			t.Fatal("serverlock: the exclusive lock is asked while this test already holds it shared")
		}
		holders++
		t.Cleanup(release)
		return
	}
	// Read-only is enough for flock, so another user's test can open a file root made.
	f, err := os.OpenFile(Path, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		t.Fatalf("serverlock: %v", err)
	}
	how := syscall.LOCK_SH
	if excl {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		t.Fatalf("serverlock: flock %s: %v", Path, err)
	}
	file, exclusive, holders = f, excl, 1
	t.Cleanup(release)
}

func release() {
	mu.Lock()
	defer mu.Unlock()
	holders--
	if holders == 0 {
		file.Close() // releases the flock
		file = nil
	}
}
