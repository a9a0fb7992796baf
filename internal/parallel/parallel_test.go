package parallel

import (
	"sync/atomic"
	"testing"
)

// TestRunRunsEveryPart: without a stop every part runs to its end.
func TestRunRunsEveryPart(t *testing.T) {
	var ran [3]bool
	if Run(3, func(i int, quit *atomic.Bool) { ran[i] = true }, nil) {
		t.Fatal("stopped without a stop")
	}
	if ran != [3]bool{true, true, true} {
		t.Fatalf("parts run: %v", ran)
	}
}

// TestRunStops: parts that run until quit is raised end when stop says so, and Run
// says it stopped them.
func TestRunStops(t *testing.T) {
	asked := 0
	stopped := Run(2, func(i int, quit *atomic.Bool) {
		for !quit.Load() {
		}
	}, func() bool { asked++; return asked >= 3 })
	if !stopped || asked != 3 {
		t.Fatalf("stopped %v after %d questions, want true after 3", stopped, asked)
	}
}
