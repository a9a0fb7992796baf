package workload

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/internal/serverlock"
)

// disturbedServerURL is serverURL for tests that restart, kill or pause the server:
// they hold the servers' lock exclusively, and the server must answer when they end.
func disturbedServerURL(t *testing.T, env string) string {
	t.Helper()
	u := os.Getenv(env)
	if u == "" {
		t.Skipf("%s is not set", env)
	}
	serverlock.Exclusive(t)
	t.Cleanup(func() { requireServerAnswers(t, u) })
	return u
}

// requireServerAnswers fails t unless a new connection to the server answers at once:
// the nemesis must leave it running.
func requireServerAnswers(t *testing.T, url string) {
	t.Helper()
	d, err := openDialect(url)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{d: d}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.serverReady(ctx); err != nil {
		t.Errorf("the server does not answer after the test: %v", err)
	}
}

// nemesisOps returns the :f of each nemesis event, in order, and fails t unless every
// action is an invoke and a completion of the same :f, the completion saying what was
// done (not "failed: …").
func nemesisOps(t *testing.T, events []history.Event) []string {
	t.Helper()
	var fs []string
	var open *history.Event
	for i := range events {
		e := &events[i]
		if !e.IsNemesis() {
			continue
		}
		if open == nil {
			open = e
			continue
		}
		if e.F != open.F {
			t.Fatalf("nemesis :%s invoked at %d, completed as :%s at %d", open.F, open.Index, e.F, e.Index)
		}
		if strings.HasPrefix(e.Note, "failed") {
			t.Errorf("nemesis :%s failed: %s", e.F, e.Note)
		}
		fs = append(fs, e.F)
		open = nil
	}
	if open != nil {
		t.Errorf("nemesis :%s at %d never completed", open.F, open.Index)
	}
	return fs
}

// nemesisRunConfig is a short SERIALIZABLE run with a fault every second. It lasts
// long enough for a fault's whole cycle and some transactions after it: Debian's
// pg_ctlcluster takes about three seconds to start PostgreSQL.
func nemesisRunConfig(url, faults string) RunConfig {
	spec := smallSpec(0)
	spec.Keys, spec.KeyRotate = 20, 50
	return RunConfig{DB: url, Spec: spec, Duration: 7 * time.Second, Nemesis: faults, NemesisInterval: time.Second}
}

// Each server fault keeps a SERIALIZABLE run valid, is recorded in the history as
// Jepsen records it, does not end the run (transactions commit after it), and leaves
// the server running.
func TestNemesisServerFaults(t *testing.T) {
	for _, db := range []struct{ name, env string }{{"postgresql", envPostgres}, {"mariadb", envMySQL}} {
		t.Run(db.name, func(t *testing.T) {
			url := disturbedServerURL(t, db.env)
			for _, tc := range []struct {
				fault string
				want  []string // the :f of the actions, in order, one cycle
			}{
				{NemesisRestart, []string{"restart"}},
				{NemesisKill, []string{"kill", "start"}},
				{NemesisPause, []string{"pause", "resume"}},
			} {
				t.Run(tc.fault, func(t *testing.T) {
					res := runUntilCommitsAfterFault(t, nemesisRunConfig(url, tc.fault), len(tc.want))
					fs := nemesisOps(t, res.Events)
					if len(fs) < len(tc.want) || len(fs)%len(tc.want) != 0 {
						t.Fatalf("nemesis actions %v, want cycles of %v", fs, tc.want)
					}
					for i, f := range fs {
						if f != tc.want[i%len(tc.want)] {
							t.Fatalf("nemesis actions %v, want cycles of %v", fs, tc.want)
						}
					}
					if res.NemesisActions != len(fs) {
						t.Errorf("%d actions counted, %d in the history", res.NemesisActions, len(fs))
					}
					requireCommitsAfterFirstCycle(t, res, len(tc.want))
					requireValidOrKnownSSIShape(t, res)
				})
			}
		})
	}
}

// All faults composed, as --nemesis kill-conn,restart,kill,pause.
func TestNemesisComposed(t *testing.T) {
	for _, db := range []struct{ name, env string }{{"postgresql", envPostgres}, {"mariadb", envMySQL}} {
		t.Run(db.name, func(t *testing.T) {
			url := disturbedServerURL(t, db.env)
			cfg := nemesisRunConfig(url, "kill-conn,restart,kill,pause")
			cfg.NemesisInterval = 500 * time.Millisecond
			cfg.Format = "both" // checkRecording parses both files, nemesis events included
			res := runForTest(t, cfg)
			fs := nemesisOps(t, res.Events)
			if len(fs) == 0 {
				t.Fatal("no nemesis action")
			}
			t.Logf("nemesis actions: %v", fs)
			requireValidOrKnownSSIShape(t, res)
		})
	}
}

// Interrupting a run while the server is paused or killed leaves it running.
func TestNemesisRestoresOnInterrupt(t *testing.T) {
	for _, db := range []struct{ name, env string }{{"postgresql", envPostgres}, {"mariadb", envMySQL}} {
		t.Run(db.name, func(t *testing.T) {
			url := disturbedServerURL(t, db.env)
			for _, fault := range []string{NemesisPause, NemesisKill} {
				t.Run(fault, func(t *testing.T) {
					cfg := nemesisRunConfig(url, fault)
					cfg.Duration, cfg.NemesisInterval = time.Hour, time.Second
					cfg.OutDir = t.TempDir()
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					// The fault acts after 1 s and holds for 1 s: interrupt once it has
					// acted (its invoke and completion are in the history).
					go cancelWhenHistory(ctx, cancel, cfg.OutDir, 1, func(nemesisLines, _ int) bool { return nemesisLines >= 2 })
					res, err := Run(ctx, cfg)
					if err != nil {
						t.Fatal(err)
					}
					if !res.Interrupted {
						t.Error("not marked interrupted")
					}
					checkRecording(t, cfg, res)
					fs := nemesisOps(t, res.Events)
					want := map[string][]string{NemesisPause: {"pause", "resume"}, NemesisKill: {"kill", "start"}}[fault]
					if strings.Join(fs, " ") != strings.Join(want, " ") {
						t.Errorf("nemesis actions %v, want %v", fs, want)
					}
					requireServerAnswers(t, url)
					requireValidOrKnownSSIShape(t, res)
				})
			}
		})
	}
}

// MDEV-26642 is still found when the server crashes and pauses during the run.
func TestNemesisMariaDBRepeatableReadStillLosesOwnWrites(t *testing.T) {
	url := disturbedServerURL(t, envMySQL)
	for attempt := 1; ; attempt++ {
		spec := mdevSpec(0)
		spec.KeyRotate = 100
		res := runForTest(t, RunConfig{DB: url, Isolation: RepeatableRead, Append: AppendRMW, Spec: spec, Models: []string{"serializable"},
			Duration: 5 * time.Second, Nemesis: "kill,pause", NemesisInterval: time.Second})
		if len(nemesisOps(t, res.Events)) == 0 {
			t.Fatal("no nemesis action")
		}
		lost := lostOwnWrites(res.Events)
		if len(lost) > 0 || attempt == 3 {
			if len(lost) == 0 {
				t.Fatal("no transaction lost its own write (MDEV-26642 not reproduced)")
			}
			requireVerdict(t, res, check.Invalid, "internal")
			return
		}
	}
}

// runUntilCommitsAfterFault runs cfg until the nemesis has completed its first cycle
// of actions (a cycle of `actions` invokes and completions) and 20 transactions have
// committed after it, then interrupts it; it never lasts more than a minute. How long
// the server takes to come back depends on the machine's load (pg_ctlcluster alone
// waits seconds), so the test waits for the fact it asserts, not for a fixed time.
func runUntilCommitsAfterFault(t *testing.T, cfg RunConfig, actions int) *RunResult {
	t.Helper()
	cfg.OutDir = t.TempDir()
	cfg.Duration = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cancelWhenHistory(ctx, cancel, cfg.OutDir, actions, func(_, okAfter int) bool { return okAfter >= 20 })
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkRecording(t, cfg, res)
	t.Logf("%s %s: %d ok, %d fail, %d info in %.1fs, %.0f txns/s", res.Dialect, cfg.Nemesis, res.OK, res.Fail, res.Info, res.Elapsed.Seconds(), res.TxnsPerSecond())
	return res
}

// cancelWhenHistory polls the history file in dir every 50 ms and cancels once done
// holds for the nemesis lines so far and the :ok completions after the first fault's
// cycle of actions (the first 2*cycle nemesis lines).
func cancelWhenHistory(ctx context.Context, cancel func(), dir string, cycle int, done func(nemesisLines, okAfter int) bool) {
	for ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		b, _ := os.ReadFile(filepath.Join(dir, HistoryEDN))
		nemesisLines, okAfter := 0, 0
		for line := range strings.SplitSeq(string(b), "\n") {
			switch {
			case strings.Contains(line, ":process :nemesis"):
				nemesisLines++
			case nemesisLines >= 2*cycle && strings.Contains(line, ":type :ok"):
				okAfter++
			}
		}
		if done(nemesisLines, okAfter) {
			cancel()
			return
		}
	}
}

// requireCommitsAfterFirstCycle: the run went on after the first fault's cycle (its
// actions, each an invoke and a completion) ended: the server came back.
func requireCommitsAfterFirstCycle(t *testing.T, res *RunResult, actions int) {
	t.Helper()
	var faultEnd int64 = -1
	seen := 0
	for _, e := range res.Events {
		if e.IsNemesis() {
			if seen++; seen == 2*actions {
				faultEnd = e.Time
			}
			continue
		}
		if faultEnd >= 0 && e.Type == history.TypeOK && e.Time > faultEnd {
			return
		}
	}
	t.Errorf("no transaction committed after the first fault (ended at %.2fs)", float64(faultEnd)/1e9)
}

// requireValidOrKnownSSIShape wants a valid verdict, or for PostgreSQL the known
// SERIALIZABLE G2-item shape only (see TestPostgresSerializable).
func requireValidOrKnownSSIShape(t *testing.T, res *RunResult) {
	t.Helper()
	if r := &res.Check; res.Dialect == "postgresql" && r.Valid == check.Invalid && res.History != nil && knownSSIShape(t, r, res.History) {
		t.Logf("PostgreSQL SERIALIZABLE committed the known G2-item: %s", r.Anomalies[0].Explanation)
		return
	}
	requireVerdict(t, res, check.Valid, "")
}
