package workload

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"doppel/history"
	"doppel/nemesis"
)

// NemesisKillConn terminates random client connections from an admin connection.
const NemesisKillConn = nemesis.KillConn

// Nemesis faults that act on the server itself (see package nemesis).
const (
	NemesisRestart = nemesis.Restart
	NemesisKill    = nemesis.Kill
	NemesisPause   = nemesis.Pause
)

// NemesisFaults lists the faults --nemesis composes.
var NemesisFaults = []string{NemesisKillConn, NemesisRestart, NemesisKill, NemesisPause}

// parseNemesis splits --nemesis kill-conn,restart,... into known faults, each once.
func parseNemesis(spec string) ([]string, error) {
	var faults []string
	for f := range strings.SplitSeq(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(NemesisFaults, f) {
			return nil, fmt.Errorf("%w: unknown --nemesis fault %q (known: %s)", ErrConfig, f, strings.Join(NemesisFaults, ", "))
		}
		if !slices.Contains(faults, f) {
			faults = append(faults, f)
		}
	}
	return faults, nil
}

// HasServerFaults reports whether a --nemesis list has faults that act on the server
// itself (restart, kill, pause), which leave it down or paused for a while.
func HasServerFaults(spec string) bool {
	faults, err := parseNemesis(spec)
	return err == nil && slices.ContainsFunc(faults, func(f string) bool { return slices.Contains(nemesis.ServerFaults, f) })
}

// serverFaults reports whether the run disturbs the server itself.
func (r *runner) serverFaults() bool {
	return slices.ContainsFunc(r.faults, func(f string) bool { return slices.Contains(nemesis.ServerFaults, f) })
}

// findServer identifies the local server the run's server faults act on, and checks
// that this process may restart, kill or pause it: before the workload starts.
func (r *runner) findServer(ctx context.Context) error {
	if err := nemesis.CheckLocal(r.d.host); err != nil {
		return fmt.Errorf("%w: --nemesis %s: %v", ErrConfig, r.cfg.Nemesis, err)
	}
	admin, err := r.d.open()
	if err != nil {
		return err
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		return &DBError{Op: "connect to " + r.d.redacted, Err: err}
	}
	srv, err := nemesis.Find(ctx, admin, r.d.name, r.d.host)
	if err != nil {
		return fmt.Errorf("%w: --nemesis %s: %v", ErrConfig, r.cfg.Nemesis, err)
	}
	srv.Ready = r.serverReady
	if err := srv.Check(r.faults); err != nil {
		return fmt.Errorf("%w: --nemesis %s: %v", ErrConfig, r.cfg.Nemesis, err)
	}
	r.server = srv
	r.logf("nemesis: %s on %s, every %v", strings.Join(r.faults, ", "), srv.Name, r.cfg.NemesisInterval)
	return nil
}

// serverReady is nil once a new connection to the server answers a query.
func (r *runner) serverReady(ctx context.Context) error {
	db, err := r.d.open()
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var one int
	return db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// recordNemesis writes one nemesis event (Jepsen's :process :nemesis, :type :info).
func (r *runner) recordNemesis(f, note string) {
	r.rec.record(history.Event{Type: history.TypeInfo, F: f, Note: note})
}

// nemesisLoop picks one of the run's faults at random every NemesisInterval until the
// run stops. A fault with two halves (kill then start, pause then resume) holds for an
// interval between them. On the way out, whatever happened, the server is left
// running.
func (r *runner) nemesisLoop(done <-chan struct{}) {
	var admin *sql.DB
	if slices.Contains(r.faults, NemesisKillConn) {
		var err error
		if admin, err = r.d.open(); err != nil {
			r.logf("nemesis: %v", err)
			return
		}
		defer admin.Close()
		admin.SetMaxOpenConns(1)
	}
	if r.server != nil {
		defer r.restoreServer()
	}
	for r.nemesisSleep(done) {
		switch f := r.faults[rand.IntN(len(r.faults))]; f {
		case NemesisKillConn:
			r.killConn(admin)
		case NemesisRestart:
			if !r.serverAction(f, r.server.Restart) {
				return
			}
		case NemesisKill:
			if !r.serverAction(f, r.server.Kill) {
				return
			}
			r.nemesisSleep(done)
			if !r.serverAction("start", r.server.Start) {
				return
			}
		case NemesisPause:
			if !r.serverAction(f, func(context.Context) (string, error) { return r.server.Pause() }) {
				return
			}
			r.nemesisSleep(done)
			if !r.serverAction("resume", func(context.Context) (string, error) { return r.server.Resume() }) {
				return
			}
		}
	}
}

// nemesisSleep waits one NemesisInterval; false when the run stops first.
func (r *runner) nemesisSleep(done <-chan struct{}) bool {
	t := time.NewTimer(r.cfg.NemesisInterval)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-r.stopIssuing:
		return false
	case <-t.C:
		return true
	}
}

// serverAction records the invoke of nemesis action f, runs it, and records its
// completion with what happened. False when it failed: the loop stops and the
// deferred restore takes over.
func (r *runner) serverAction(f string, act func(context.Context) (string, error)) bool {
	r.recordNemesis(f, r.server.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	note, err := act(ctx)
	if err != nil {
		r.recordNemesis(f, "failed: "+err.Error())
		r.logf("nemesis: %s failed: %v", f, err)
		return false
	}
	r.nemesisActions.Add(1)
	r.recordNemesis(f, note)
	return true
}

// restoreServer leaves the server running: resumes it if paused, starts it if killed
// or down. A server that cannot be brought back ends the run with an error.
func (r *runner) restoreServer() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := r.server.EnsureRunning(ctx); err != nil {
		r.setFatal(fmt.Errorf("the nemesis could not leave %s running: %w", r.server.Name, err))
	}
}

// killConn kills a random session's connection from the admin pool.
func (r *runner) killConn(admin *sql.DB) {
	s := rand.IntN(len(r.backendIDs))
	id := r.backendIDs[s].Load()
	if id == 0 {
		return
	}
	// Mark first: the session may see its connection die before ExecContext returns.
	r.killed[s].Store(true)
	r.recordNemesis(NemesisKillConn, "session "+strconv.Itoa(s)+", connection "+strconv.FormatInt(id, 10))
	ctx, cancel := context.WithTimeout(r.opCtx, 5*time.Second)
	_, err := admin.ExecContext(ctx, r.d.killSQL(id))
	cancel()
	if err == nil {
		r.kills.Add(1)
		r.recordNemesis(NemesisKillConn, "killed")
		return
	}
	if r.backendIDs[s].Load() == id {
		r.killed[s].Store(false)
	}
	r.recordNemesis(NemesisKillConn, "failed: "+errorText(err))
}
