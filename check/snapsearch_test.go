package check

import (
	"flag"
	"path/filepath"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
)

var snapshotSearchSeeds = flag.Int("snapshot-search-seeds", 4000, "random tiny histories for TestSnapshotSearchAgainstBruteForce")

// TestSnapshotSearchAgainstBruteForce runs the backtracking search for a
// snapshot-isolated execution (searchSnapshot) alone on random tiny duplicate-heavy
// histories: every execution it finds must pass verifySI and the history must be
// snapshot isolated by the brute force. Without a work bound, and with fewer
// transactions than its window, the search is exhaustive (commits that strand nobody
// and starts that change nothing another transaction needs are never worse than
// later ones), so it must find one wherever the brute force says snapshot isolated: a
// rule that cuts a state it should not fails here.
func TestSnapshotSearchAgainstBruteForce(t *testing.T) {
	found, valid, checked := 0, 0, 0
	eachTinyHistory(*snapshotSearchSeeds, 131, func(seed int, h *history.History, in *encode.Inference, _ bool) {
		checked++
		want := brute.Check(h, brute.SnapshotIsolation)
		if want {
			valid++
		}
		events, ok := searchSnapshot(h, in, commitsOf(h), false, 0, nil)
		if !ok {
			if want {
				t.Errorf("seed %d: snapshot isolated by the brute force, the search found no execution\n%s", seed, brute.Format(h))
			}
			return
		}
		found++
		if err := verifySI(h, in, events, false, false); err != nil {
			t.Fatalf("seed %d: the searched execution does not verify: %v\n%s", seed, err, brute.Format(h))
		}
		if !want {
			t.Fatalf("seed %d: the search found an execution, the brute force says not snapshot isolated\n%s", seed, brute.Format(h))
		}
	})
	t.Logf("%d histories checked, %d snapshot isolated by the brute force, the search found %d", checked, valid, found)
	if found == 0 || found != valid {
		t.Fatalf("the search found %d of %d snapshot-isolated histories", found, valid)
	}
}

// TestSnapshotSearchWithinRealTimeAgainstBruteForce runs the search within real-time
// order (searchSnapshot with realtime) on the same histories: every execution it finds
// must pass verifySI with real-time order, and the history must be snapshot isolated
// by the brute force. Without :info's horizon (pastHorizon, a heuristic) the gated
// search is exhaustive too, so it must find one wherever the brute force says strong
// snapshot isolated (process order besides real time: a stronger condition); with the
// horizon it may find fewer.
func TestSnapshotSearchWithinRealTimeAgainstBruteForce(t *testing.T) {
	found, strong, horizonFound := 0, 0, 0
	eachTinyHistory(*snapshotSearchSeeds, 137, func(seed int, h *history.History, in *encode.Inference, _ bool) {
		si := brute.Check(h, brute.SnapshotIsolation)
		wantStrong := brute.Check(h, brute.StrongSnapshotIsolation)
		if wantStrong {
			strong++
		}
		for _, horizon := range []bool{false, true} {
			s := newSnapSearch(h, in, commitsOf(h), true)
			if s == nil {
				if wantStrong {
					t.Fatalf("seed %d: no search set up on a strong snapshot isolated history\n%s", seed, brute.Format(h))
				}
				return
			}
			if !horizon {
				s.infoHorizon = 0
			}
			ok := s.dfs()
			if !ok {
				if wantStrong && !horizon {
					t.Errorf("seed %d: strong snapshot isolated by the brute force, the gated search found no execution\n%s", seed, brute.Format(h))
				}
				continue
			}
			if horizon {
				horizonFound++
			} else {
				found++
			}
			if err := verifySI(h, in, s.events, false, true); err != nil {
				t.Fatalf("seed %d (horizon %v): the searched execution does not verify with real-time order: %v\n%s", seed, horizon, err, brute.Format(h))
			}
			if !si {
				t.Fatalf("seed %d: the gated search found an execution, the brute force says not snapshot isolated\n%s", seed, brute.Format(h))
			}
		}
	})
	t.Logf("%d strong snapshot isolated by the brute force; the gated search found %d, %d with the horizon", strong, found, horizonFound)
	if found == 0 || found < strong || horizonFound == 0 {
		t.Fatalf("the gated search found %d (%d with the horizon) where the brute force has %d strong snapshot isolated", found, horizonFound, strong)
	}
}

// TestSnapshotSearchProvesStaleSnapshots: on a snapshot store whose snapshots lag (`doppel
// gen --behaviour snapshot --stale 0.1 --sessions 10 --ops 4 --keys 20 --dup-keys 1
// --val-domain 3 --txns 5000 --seed 3`: a tenth of the transactions read the state of
// up to 10 commits before the latest) the greedy snapshot replays get stuck, and the
// solver found nothing in 30 s; the search finds an execution.
func TestSnapshotSearchProvesStaleSnapshots(t *testing.T) {
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", "snapshot-stale-5000-s3.edn.gz"))
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	if in.CheckValues(); len(in.Findings) > 0 {
		t.Fatalf("findings on a snapshot-isolated history: %v", in.Findings)
	}
	commit := commitsOf(h)
	for _, older := range []bool{false, true} {
		if _, ok := siSchedule(h, in, commit, nil, false, older, nil); ok {
			t.Errorf("the greedy replay (older snapshots %v) found an execution: the test no longer shows the search's use", older)
		}
	}
	events, ok := searchSnapshot(h, in, commit, false, snapshotSearchWork(len(h.Txns)), nil)
	if !ok {
		t.Fatal("the search found no snapshot-isolated execution")
	}
	if err := verifySI(h, in, events, false, false); err != nil {
		t.Fatalf("the execution found does not verify: %v", err)
	}
}
