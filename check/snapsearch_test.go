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
		events, ok := searchSnapshot(h, in, commitsOf(h), snapGates{}, 0, nil)
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

// TestSnapshotSearchBlameAgainstBruteForce runs the search in runs with blame's bans
// (snapSearch.runs) on the same histories, with a stall of a few units so that most
// runs stop early and name writers to keep out: every execution found must verify,
// on a history the brute force finds snapshot isolated, and some must be found after
// a ban.
func TestSnapshotSearchBlameAgainstBruteForce(t *testing.T) {
	found, banned, afterBan := 0, 0, 0
	eachTinyHistory(*snapshotSearchSeeds, 139, func(seed int, h *history.History, in *encode.Inference, _ bool) {
		for _, g := range []snapGates{{}, {on: true}, {on: true, soft: true}, {on: true, lag: 3}} {
			s := newSnapSearch(h, in, commitsOf(h), g)
			realtime := g.on && !g.soft && g.lag == 0
			if s == nil {
				return
			}
			s.stall = int64(2 + seed%5)
			ok := s.runs(1 << 12)
			if len(s.banned) > 0 {
				banned++
			}
			if !ok {
				continue
			}
			found++
			if len(s.banned) > 0 {
				afterBan++
			}
			if err := verifySI(h, in, s.events, false, realtime); err != nil {
				t.Fatalf("seed %d (real time %v): the execution does not verify: %v\n%s", seed, realtime, err, brute.Format(h))
			}
			if !brute.Check(h, brute.SnapshotIsolation) {
				t.Fatalf("seed %d (real time %v): the search found an execution, the brute force says not snapshot isolated\n%s", seed, realtime, brute.Format(h))
			}
		}
	})
	t.Logf("found %d executions, %d searches banned something, %d found after a ban", found, banned, afterBan)
	if found == 0 || afterBan == 0 {
		t.Fatalf("found %d, %d after a ban: the test no longer reaches the bans", found, afterBan)
	}
}

// TestSnapshotSearchRelaxedGatesAgainstBruteForce runs the search with the gates the
// unguided attempt relaxes (snapshotGates: a lag, soft gates, both; soft gates that
// reach one transaction past the first closed gate, or snapshotClaimFar) on the same
// histories, exhaustively and without :info's horizon: each relaxes the real-time
// gates, so each must find an execution wherever the brute force says strong snapshot
// isolated, every execution must pass verifySI, and some must be found where real-time
// order holds none (the relaxation reaches lagging snapshots).
func TestSnapshotSearchRelaxedGatesAgainstBruteForce(t *testing.T) {
	gates := []snapGates{{on: true, lag: 3}, {on: true, soft: true}, {on: true, soft: true, lag: 2},
		{on: true, soft: true, ahead: 1}, {on: true, soft: true, ahead: snapshotClaimFar}}
	found, beyond := make([]int, len(gates)), make([]int, len(gates))
	strong := 0
	eachTinyHistory(*snapshotSearchSeeds, 149, func(seed int, h *history.History, in *encode.Inference, _ bool) {
		si := brute.Check(h, brute.SnapshotIsolation)
		wantStrong := brute.Check(h, brute.StrongSnapshotIsolation)
		if wantStrong {
			strong++
		}
		for i, g := range gates {
			s := newSnapSearch(h, in, commitsOf(h), g)
			if s == nil {
				if wantStrong {
					t.Fatalf("seed %d: no search set up on a strong snapshot isolated history\n%s", seed, brute.Format(h))
				}
				return
			}
			s.infoHorizon = 0
			if !s.dfs() {
				if wantStrong {
					t.Errorf("seed %d (%+v): strong snapshot isolated by the brute force, the search found no execution\n%s", seed, g, brute.Format(h))
				}
				continue
			}
			found[i]++
			if err := verifySI(h, in, s.events, false, false); err != nil {
				t.Fatalf("seed %d (%+v): the searched execution does not verify: %v\n%s", seed, g, err, brute.Format(h))
			}
			if !si {
				t.Fatalf("seed %d (%+v): the search found an execution, the brute force says not snapshot isolated\n%s", seed, g, brute.Format(h))
			}
			if !wantStrong {
				beyond[i]++
			}
		}
	})
	t.Logf("%d strong snapshot isolated by the brute force; found %v, of them not strong %v (gates %+v)", strong, found, beyond, gates)
	for i := range gates {
		if found[i] < strong || beyond[i] == 0 {
			t.Fatalf("gates %+v: found %d where the brute force has %d strong snapshot isolated, %d beyond", gates[i], found[i], strong, beyond[i])
		}
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
			s := newSnapSearch(h, in, commitsOf(h), snapGates{on: true})
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
	h, in := snapshotIsolatedHistory(t, "snapshot-stale-5000-s3.edn.gz")
	commit := commitsOf(h)
	for _, older := range []bool{false, true} {
		if _, ok := siSchedule(h, in, commit, nil, false, older, nil); ok {
			t.Errorf("the greedy replay (older snapshots %v) found an execution: the test no longer shows the search's use", older)
		}
	}
	events, ok := searchSnapshot(h, in, commit, snapGates{}, snapshotSearchWork(len(h.Txns)), nil)
	if !ok {
		t.Fatal("the search found no snapshot-isolated execution")
	}
	if err := verifySI(h, in, events, false, false); err != nil {
		t.Fatalf("the execution found does not verify: %v", err)
	}
}

// TestSnapshotSearchRelaxedGatesProveStaleInfo: on othergen's lagging snapshots with
// :info transactions (2K, seed 102) the search without gates runs out of work; the
// gates the unguided attempt tries first (snapshotGates) find an execution.
func TestSnapshotSearchRelaxedGatesProveStaleInfo(t *testing.T) {
	h, in := snapshotIsolatedHistory(t, "si-stale-info-2000-s102.edn.gz")
	commit := commitsOf(h)
	work := snapshotSearchWork(len(h.Txns))
	for _, g := range []snapGates{{}, {on: true}} {
		if _, ok := searchSnapshot(h, in, commit, g, work, nil); ok {
			t.Fatalf("gates %+v found an execution: the test no longer shows the relaxed gates' use", g)
		}
	}
	for _, g := range snapshotGates(h) {
		events, ok := searchSnapshot(h, in, commit, g, work, nil)
		if !ok {
			t.Logf("gates %+v: no execution", g)
			continue
		}
		if err := verifySI(h, in, events, false, false); err != nil {
			t.Fatalf("gates %+v: the execution found does not verify: %v", g, err)
		}
		if verifySI(h, in, events, false, true) == nil {
			t.Logf("gates %+v: the execution keeps real-time order too", g)
		}
		// And the whole check, where the relaxed gates come after the serial attempts
		// (relaxedSnapshot): valid, by a search, with a limit on the solver it would
		// otherwise reach.
		res, err := Check(h, Options{Models: []string{"snapshot-isolation"}, MaxConflicts: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid != Valid || res.Stats.Searched == 0 {
			t.Fatalf("the check says %v after %d searched executions", res.Valid, res.Stats.Searched)
		}
		return
	}
	t.Fatal("no relaxed gates found a snapshot-isolated execution")
}

// TestSnapshotSearchBlameGetsBack: on othergen's stale snapshots (3K, seed 14) one run
// of the snapshot search gets stuck below a wrong choice and runs out of work; the
// runs after it, each keeping a writer that blameCandidates names out of a position,
// find an execution.
func TestSnapshotSearchBlameGetsBack(t *testing.T) {
	h, in := snapshotIsolatedHistory(t, "si-stale-3000-s14.edn.gz")
	commit := commitsOf(h)
	work := snapshotSearchWork(len(h.Txns))
	s := newSnapSearch(h, in, commit, snapGates{})
	s.maxWork = work
	if s.dfs() {
		t.Fatal("one run found an execution: the test no longer shows the blame's use")
	}
	events, ok := searchSnapshot(h, in, commit, snapGates{}, work, nil)
	if !ok {
		t.Fatal("the search with blame found no execution")
	}
	if err := verifySI(h, in, events, false, false); err != nil {
		t.Fatalf("the execution found does not verify: %v", err)
	}
}

// snapshotIsolatedHistory reads testdata/search/name, a snapshot-isolated history, and
// infers it; it fails the test on findings.
func snapshotIsolatedHistory(t *testing.T, name string) (*history.History, *encode.Inference) {
	t.Helper()
	h, err := history.ParseFile(filepath.Join("..", "testdata", "search", name))
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	if in.CheckValues(); len(in.Findings) > 0 {
		t.Fatalf("findings on a snapshot-isolated history: %v", in.Findings)
	}
	return h, in
}

// TestRelaxedGatesSearchAgainWithMoreWork: snapshots lagging by up to 30 commits with
// 5% :info (testdata/search/si-lag30-info-3000-s78.edn.gz: doppel gen --behaviour
// snapshot --stale 0.3 --stale-commits 30 --info 0.05 --sessions 16 --ops 4 --keys 30
// --dup-keys 1 --val-domain 3 --txns 3000 --seed 78). Every relaxed gate runs out of
// work at 4x; a second search with 16x proves the history valid. With the second
// search at 4x too (it then ends as the first did) nothing proves it within 100
// conflicts.
func TestRelaxedGatesSearchAgainWithMoreWork(t *testing.T) {
	provedOnlyWith(t, "si-lag30-info-3000-s78.edn.gz", "a second search with 16x the work", func(on bool) (restore func()) {
		saved := relaxedGateMoreWork
		if !on {
			relaxedGateMoreWork = relaxedGateWork
		}
		return func() { relaxedGateMoreWork = saved }
	})
}

// provedOnlyWith checks snapshot isolation on testdata/search's file name with what
// set turns on and off: the relaxed gates prove it with it (one searched execution,
// accepted), and without it nothing does within 100 conflicts.
func provedOnlyWith(t *testing.T, name, what string, set func(on bool) (restore func())) {
	t.Helper()
	h, _ := snapshotIsolatedHistory(t, name)
	for _, on := range []bool{false, true} {
		restore := set(on)
		res, err := Check(h, Options{Models: []string{"snapshot-isolation"}, MaxConflicts: 100})
		restore()
		if err != nil {
			t.Fatal(err)
		}
		proved := res.Valid == Valid && res.Stats.Searched == 1 && res.Stats.ReplayRejected == 0
		if proved != on {
			t.Fatalf("%s %v: %v, %d searched executions, %d rejected", what, on, res.Valid, res.Stats.Searched, res.Stats.ReplayRejected)
		}
		t.Logf("%s %v: %v", what, on, res.Valid)
	}
}

// TestRelaxedGatesClaimFar: 30% of the snapshots up to 300 ms old (30 mean durations),
// 3% :info (testdata/search/si-lagfar-info-3000-s951.edn.gz: python3
// tools/othergen/othergen.py --engine si --txns 3000 --seed 951 --threads 10 --keys 20
// --vals 3 --stale 0.3 --stale-by 300 --info 0.03). A stale reader sits more
// transactions past the first closed gate than the soft gates let start: only the last
// gate, whose reach is snapshotClaimFar, finds the execution. With its reach cut to
// the soft gates' nothing proves the history within 100 conflicts.
func TestRelaxedGatesClaimFar(t *testing.T) {
	provedOnlyWith(t, "si-lagfar-info-3000-s951.edn.gz", "the last gate reaching far", func(on bool) (restore func()) {
		saved := snapshotClaimFar
		if !on {
			snapshotClaimFar = snapshotClaimAhead
		}
		return func() { snapshotClaimFar = saved }
	})
}
