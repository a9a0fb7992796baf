package check

import (
	"path/filepath"
	"testing"

	"doppel/encode"
	"doppel/history"
)

// TestSIReplayOlderSnapshots: othergen's snapshot store with stale snapshots (20% of
// transactions take theirs up to 10 ms before their invoke, as from a lagging
// replica; testdata/search/README.md) is snapshot isolated, not strongly. The replay
// guided by process and real-time order holds such a reader back until its order
// predecessors commit, a commit then strands it, and the replay is stuck (its repairs
// too); letting it start there (older) replays the history, which verifySI accepts
// and real-time order does not.
func TestSIReplayOlderSnapshots(t *testing.T) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", "si-stale-500-s16.edn.gz"))
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	commit := commitsOf(h)
	guide := orderGuide(in, commit)
	if _, ok, n := siScheduleRepaired(h, in, commit, guide, false, false, nil, nil); ok {
		t.Fatalf("the repaired guided replay went through without older snapshots (%d repairs): the history no longer tests them", n)
	}
	events, ok, n := siScheduleRepaired(h, in, commit, guide, false, true, nil, nil)
	if !ok {
		t.Fatalf("the repaired guided replay with older snapshots got stuck after %d repairs", n)
	}
	if err := verifySI(h, in, events, false, false); err != nil {
		t.Fatal(err)
	}
	if err := verifySI(h, in, events, true, true); err == nil {
		t.Error("the replay keeps process and real-time order: its snapshots are not older than the guide's")
	}
	// The checker: snapshot isolation valid, strong snapshot isolation not.
	res, err := Check(h, Options{Models: []string{"snapshot-isolation", "strong-snapshot-isolation"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Models[0].Valid; got != Valid {
		t.Errorf("snapshot isolation: %v, want valid", got)
	}
	if got := res.Models[1].Valid; got != Invalid {
		t.Errorf("strong snapshot isolation: %v, want not valid", got)
	}
}

// TestSIReplayUnstartsWriteOnly: on another history of the same store, the repaired
// replay with older snapshots got stuck where a started transaction that reads nothing
// held a key, its commit waiting for a reader that appends to that key: the two wait
// on each other. Its start is undone and the reader started (unstartWriteOnly).
func TestSIReplayUnstartsWriteOnly(t *testing.T) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", "si-stale-500-s14.edn.gz"))
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	commit := commitsOf(h)
	events, ok, n := siScheduleRepaired(h, in, commit, orderGuide(in, commit), false, true, nil, nil)
	if !ok {
		t.Fatalf("the repaired guided replay with older snapshots got stuck after %d repairs", n)
	}
	if err := verifySI(h, in, events, false, false); err != nil {
		t.Fatal(err)
	}
}
