package check

import (
	"path/filepath"
	"testing"

	"doppel/encode"
	"doppel/history"
)

// TestRepairCopyCap: a repair whose replay copies would exceed maxRepairCopy is not
// tried (a stuck replay of a million transactions copied itself to 17 GB); below the
// cap, the same stuck replay of hard-350 is repaired.
func TestRepairCopyCap(t *testing.T) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "limits", "hard-350.edn"))
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	commit := commitsOf(h)
	if _, ok := schedule(h, in, commit, nil, false, nil); ok {
		t.Fatal("the replay of hard-350 is not stuck: the test needs one that is")
	}
	if _, ok, n := scheduleRepaired(h, in, commit, nil, false, nil, nil); !ok || n == 0 {
		t.Fatalf("repaired: ok %v after %d repairs, want ok after some", ok, n)
	}
	defer func(c int64) { maxRepairCopy = c }(maxRepairCopy)
	maxRepairCopy = 1 << 10
	if _, ok, n := scheduleRepaired(h, in, commit, nil, false, nil, nil); ok || n != 0 {
		t.Fatalf("above the cap: ok %v after %d repairs, want no repair", ok, n)
	}
	if _, ok, n := siScheduleRepaired(h, in, commit, nil, false, false, nil, nil); ok || n != 0 {
		t.Fatalf("snapshot replay above the cap: ok %v after %d repairs, want no repair", ok, n)
	}
}
