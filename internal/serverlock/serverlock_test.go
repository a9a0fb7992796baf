package serverlock

import (
	"os"
	"syscall"
	"testing"
)

// The shared lock admits other shared holders and keeps an exclusive one out; it is
// released when the test ends.
func TestSharedExcludesExclusive(t *testing.T) {
	t.Run("holder", func(t *testing.T) {
		Shared(t)
		other, err := os.Open(Path)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if err := syscall.Flock(int(other.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
			t.Errorf("a second shared holder is refused: %v", err)
		}
		syscall.Flock(int(other.Fd()), syscall.LOCK_UN)
		if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			t.Error("an exclusive holder got in beside a shared one")
			syscall.Flock(int(other.Fd()), syscall.LOCK_UN)
		}
	})
	// After the subtest's cleanup, nothing of this process holds it: an exclusive lock
	// is granted.
	f, err := os.Open(Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Blocks while another test process (workload's) holds it; our own holding is gone,
	// or this would never return (go test's timeout would say so).
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
