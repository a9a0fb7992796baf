package check

import (
	"path/filepath"
	"testing"

	"doppel/encode"
	"doppel/history"
)

// TestSIRepairBlamesTheHolder: on othergen's snapshot store (testdata/search), the
// replay guided by process and real-time order gets stuck where a writer's block is
// due at a key that a started writer of the same value holds; the repair must name
// that holder's choice. Before blame named holders for such key waits, the repairs had
// nothing to undo and gave up after 54.
func TestSIRepairBlamesTheHolder(t *testing.T) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", "si-engine-plain-5000-s44.edn.gz"))
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	commit := commitsOf(h)
	events, ok, repairs := siScheduleRepaired(h, in, commit, orderGuide(in, commit), false, false, nil, nil)
	if !ok {
		t.Fatalf("the repaired replay got stuck after %d repairs", repairs)
	}
	if err := verifySI(h, in, events, false, false); err != nil {
		t.Fatalf("after %d repairs: %v", repairs, err)
	}
	t.Logf("%d repairs", repairs)
}
