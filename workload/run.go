package workload

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/nemesis"
	"doppel/report"
	"doppel/shrink"
)

// Append implementations.
const (
	// AppendConcat appends on the server: an upsert that concatenates.
	AppendConcat = "concat"
	// AppendRMW reads the list and writes back the longer list in the same transaction.
	AppendRMW = "rmw"
)

// RunConfig is one run of a list-append workload against a database.
type RunConfig struct {
	// DB is postgres://…, postgresql://…, mysql://… or sqlite:PATH; empty means an
	// SQLite file in OutDir.
	DB        string
	Isolation string // serializable (default), repeatable-read, snapshot, read-committed, read-uncommitted
	Append    string // concat (default) or rmw
	Spec      Spec   // Spec.Txns is the total; 0 means unbounded (then Duration must be set)
	// Duration, when positive, stops issuing transactions after this long.
	Duration time.Duration
	OutDir   string // created if missing; must not already hold a history
	Format   string // edn (default), json or both
	// Models to check; empty means DefaultModels for the database and isolation.
	Models []string
	Keep   bool // keep the table (it is dropped otherwise)
	// Nemesis is "" or a comma-separated list of faults: kill-conn (terminate a
	// random client connection), restart (clean server restart), kill (SIGKILL the
	// server, start it an interval later), pause (SIGSTOP its processes, SIGCONT an
	// interval later). Every NemesisInterval (default one second) one of them, at
	// random, acts. Server faults need a server on this machine and the privileges
	// package nemesis names; they are checked before the workload starts.
	Nemesis         string
	NemesisInterval time.Duration
	// DrainTimeout bounds the wait for in-flight transactions once ctx is cancelled
	// (default 10s); TxnTimeout bounds one transaction (default 30s). Both end in
	// cancelling the statement, which records the transaction as fail or info.
	DrainTimeout time.Duration
	TxnTimeout   time.Duration
	SkipCheck    bool
	// Progress, if set, receives a one-line status every second ("\r…"); Log, if set,
	// receives notes (table name, chosen models).
	Progress io.Writer
	Log      io.Writer
	// CheckOptions are passed to check.Check (Models is overridden).
	CheckOptions check.Options
}

// RunResult describes a finished run.
type RunResult struct {
	Database        string // the URL without credentials
	Dialect         string // postgresql, mysql, sqlite
	Isolation       string
	Append          string
	Table           string
	OutDir          string
	Files           []string // history files written
	Events          []history.Event
	History         *history.History // nil if the events did not form a history (a bug)
	Models          []string
	ModelNote       string // why these models, when chosen by default
	sessions        int    // sessions asked for
	sessionsRefused int    // see SessionsNeverConnected
	Checked         bool
	Check           check.Result
	// Transactions by outcome; Kills counts connections the nemesis terminated.
	OK, Fail, Info, Unfinished int
	Kills                      int
	// Outcomes counts the transactions by outcome and cause (SQLSTATE, MySQL error
	// number, lost connection, ...): ok first, then fail and info, most frequent first.
	Outcomes []Outcome
	// NemesisActions counts the nemesis actions that succeeded (a kill and its start
	// are two; kill-conn counts in Kills); the history has them all as :nemesis ops.
	NemesisActions int
	// Sessions that ever had a connection: fewer than Spec.Sessions means some never
	// could connect (the server's connection limit, say) and the run was less
	// concurrent than asked. Reconnects counts connections opened after a session's
	// first (after a kill, a lost connection or an :info); ConnectErrors the failed
	// attempts, the first of which is FirstConnectError.
	SessionsConnected int
	Reconnects        int
	ConnectErrors     int
	FirstConnectError string
	Interrupted       bool // ctx was cancelled before the workload ended: the history is partial
	// ReadsObserved counts the reads of ok transactions that returned a non-empty list.
	ReadsObserved int
	Elapsed       time.Duration
	CheckTime     time.Duration
}

// SessionsNeverConnected is the number of sessions that tried to connect, failed, and
// never had a connection before the run ended. A session that had not connected yet
// when a small budget was spent by the others does not count: nothing refused it.
func (r *RunResult) SessionsNeverConnected() int { return r.sessionsRefused }

// TxnsPerSecond is the rate of completed transactions (any outcome).
func (r *RunResult) TxnsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK+r.Fail+r.Info) / r.Elapsed.Seconds()
}

// DefaultModels picks the models a run checks when none are given: what the
// isolation level promises on that database.
func DefaultModels(dialectName, isolation string) (models []string, note string) {
	switch isolation {
	case "", Serializable:
		return []string{"strict-serializable"}, "serializable isolation on a single server should be strict-serializable"
	case Snapshot:
		return []string{"snapshot-isolation"}, "snapshot isolation"
	case RepeatableRead:
		switch dialectName {
		case "postgresql":
			return []string{"snapshot-isolation"}, "PostgreSQL's REPEATABLE READ is snapshot isolation"
		}
		// InnoDB reads from a snapshot but updates the latest committed version, so lost
		// updates (G-single) and write skew are allowed: read committed is what it keeps.
		return []string{"read-committed"}, dialectName + "'s REPEATABLE READ (InnoDB) reads a snapshot but writes the latest version: read committed"
	case ReadCommitted:
		return []string{"read-committed"}, "read committed"
	case ReadUncommitted:
		return []string{"read-uncommitted"}, "read uncommitted"
	}
	return []string{"read-uncommitted"}, "read-uncommitted, the weakest model doppel checks; " +
		isolation + " is weaker, so anomalies are expected"
}

// Run creates a fresh table, runs the workload with one connection per session while
// recording every transaction, drops the table (unless Keep) and checks the history.
// Cancelling ctx stops issuing transactions; in-flight ones get DrainTimeout to finish,
// and the history recorded so far is still checked. Errors wrap ErrConfig for bad
// configuration and are *DBError when the database cannot be used.
func Run(ctx context.Context, cfg RunConfig) (*RunResult, error) {
	r, err := newRunner(cfg)
	if err != nil {
		return nil, err
	}
	return r.run(ctx)
}

type runner struct {
	cfg   RunConfig
	d     *dialect
	level string // the database's name of the isolation level
	st    statements
	db    *sql.DB
	rec   *recorder
	res   *RunResult
	// Shared progress of the sessions.
	remaining          atomic.Int64 // transactions left to issue; < 0 when unbounded
	ok, fail, info     atomic.Int64
	kills              atomic.Int64
	nemesisActions     atomic.Int64
	outcomes           outcomeTally
	faults             []string        // the nemesis's faults, parsed from cfg.Nemesis
	server             *nemesis.Server // the local server the faults act on, if any
	backendIDs         []atomic.Int64  // server connection id per session, 0 when none
	killed             []atomic.Bool   // the nemesis killed the session's current connection
	connectedSessions  atomic.Int64
	refusedSessions    atomic.Int64 // failed to connect and never did
	reconnects         atomic.Int64
	connectErrors      atomic.Int64
	firstConnectErr    atomic.Pointer[string]
	fatalMu            sync.Mutex
	fatal              error
	stopIssuing        chan struct{} // closed when no new transaction may start
	stopOnce           sync.Once
	issueCtx           context.Context // cancelled with stopIssuing: connecting
	cancelIssue        context.CancelFunc
	opCtx              context.Context // in-flight statements; cancelled after the drain
	cancelOps          context.CancelFunc
	inTxnSQL           string // the dialect's inTxnSQL when the server has it
	connectBackoffBase time.Duration
	connectBackoffMax  time.Duration
}

func newRunner(cfg RunConfig) (*runner, error) {
	if cfg.Isolation == "" {
		cfg.Isolation = Serializable
	}
	switch cfg.Append {
	case "":
		cfg.Append = AppendConcat
	case AppendConcat, AppendRMW:
	default:
		return nil, fmt.Errorf("%w: --append must be concat or rmw, not %q", ErrConfig, cfg.Append)
	}
	if cfg.Spec.Txns <= 0 && cfg.Duration <= 0 {
		return nil, fmt.Errorf("%w: give a number of transactions or a duration", ErrConfig)
	}
	if err := cfg.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if cfg.Duration < 0 || cfg.DrainTimeout < 0 || cfg.TxnTimeout < 0 || cfg.NemesisInterval < 0 {
		return nil, fmt.Errorf("%w: durations must not be negative", ErrConfig)
	}
	// Everything that can be wrong with the configuration is found here, before the
	// workload runs: a model the checker does not know would otherwise fail only once
	// the whole workload has run.
	for i, m := range cfg.Models {
		canonical, err := check.CanonicalModel(m)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		cfg.Models[i] = canonical
	}
	historyFiles, err := historyFileNames(cfg.Format)
	if err != nil {
		return nil, err
	}
	if cfg.OutDir == "" {
		cfg.OutDir = "doppel-run-" + time.Now().UTC().Format("20060102T150405Z")
	}
	for _, name := range historyFiles {
		if _, err := os.Stat(filepath.Join(cfg.OutDir, name)); err == nil {
			return nil, fmt.Errorf("%w: %s already holds a history (%s): choose another --out", ErrConfig, cfg.OutDir, name)
		}
	}
	if cfg.DB == "" {
		cfg.DB = "sqlite:" + filepath.Join(cfg.OutDir, "db.sqlite")
	}
	faults, err := parseNemesis(cfg.Nemesis)
	if err != nil {
		return nil, err
	}
	if cfg.NemesisInterval <= 0 {
		cfg.NemesisInterval = time.Second
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 10 * time.Second
	}
	if cfg.TxnTimeout <= 0 {
		cfg.TxnTimeout = 30 * time.Second
	}
	d, err := openDialect(cfg.DB)
	if err != nil {
		return nil, err
	}
	level, err := d.levelSQL(cfg.Isolation)
	if err != nil {
		return nil, err
	}
	if len(faults) > 0 && d.backendIDSQL == "" {
		return nil, fmt.Errorf("%w: --nemesis needs a client/server database; %s is embedded", ErrConfig, d.name)
	}
	res := &RunResult{Database: d.redacted, Dialect: d.name, Isolation: cfg.Isolation, Append: cfg.Append, OutDir: cfg.OutDir, sessions: cfg.Spec.Sessions}
	if len(cfg.Models) == 0 {
		res.Models, res.ModelNote = DefaultModels(d.name, cfg.Isolation)
	} else {
		res.Models = cfg.Models
	}
	return &runner{
		cfg: cfg, d: d, level: level, res: res, faults: faults,
		backendIDs:         make([]atomic.Int64, cfg.Spec.Sessions),
		killed:             make([]atomic.Bool, cfg.Spec.Sessions),
		stopIssuing:        make(chan struct{}),
		connectBackoffBase: 20 * time.Millisecond,
		connectBackoffMax:  time.Second,
	}, nil
}

func (r *runner) logf(format string, args ...any) {
	if r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, format+"\n", args...)
	}
}

func (r *runner) run(ctx context.Context) (*RunResult, error) {
	cfg := &r.cfg
	if r.serverFaults() {
		if err := r.findServer(ctx); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, err
	}
	start := time.Now()
	r.res.Table = fmt.Sprintf("doppel_%d", start.UnixNano())
	r.st = r.d.statements(r.res.Table, r.level)

	db, err := r.d.open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxIdleConns(cfg.Spec.Sessions + 2)
	r.db = db
	setupCtx, cancelSetup := context.WithTimeout(ctx, 30*time.Second)
	defer cancelSetup()
	if err := db.PingContext(setupCtx); err != nil {
		return nil, &DBError{Op: "connect to " + r.d.redacted, Err: err}
	}
	if _, err := db.ExecContext(setupCtx, r.st.create); err != nil {
		return nil, &DBError{Op: "create table " + r.res.Table + " on " + r.d.redacted, Err: err}
	}
	r.logf("database %s, table %s, isolation %s, append %s", r.d.redacted, r.res.Table, cfg.Isolation, cfg.Append)
	r.probeInTxn(setupCtx)
	if !cfg.Keep {
		defer func() {
			dropCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := db.ExecContext(dropCtx, r.st.drop); err != nil {
				r.logf("warning: could not drop table %s: %v", r.res.Table, err)
			}
		}()
	}

	rec, files, err := newRecorder(cfg.OutDir, cfg.Format, start)
	if err != nil {
		return nil, err
	}
	if err := LinkLatest(cfg.OutDir); err != nil {
		r.logf("warning: %v", err)
	}
	r.rec = rec
	r.res.Files = files

	if cfg.Spec.Txns > 0 {
		r.remaining.Store(int64(cfg.Spec.Txns))
	} else {
		r.remaining.Store(-1)
	}
	r.opCtx, r.cancelOps = context.WithCancel(context.Background())
	defer r.cancelOps()
	r.issueCtx, r.cancelIssue = context.WithCancel(r.opCtx)
	defer r.cancelIssue()

	// Stop issuing on ctx cancellation or at the deadline; cancel in-flight
	// statements DrainTimeout after that.
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		var deadline <-chan time.Time
		if cfg.Duration > 0 {
			t := time.NewTimer(cfg.Duration)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-ctx.Done():
		case <-deadline:
		case <-watchDone:
			return
		}
		r.stop()
		t := time.NewTimer(cfg.DrainTimeout)
		defer t.Stop()
		select {
		case <-t.C:
			r.cancelOps()
		case <-watchDone:
		}
	}()

	var bg sync.WaitGroup
	bgDone := make(chan struct{})
	if len(r.faults) > 0 {
		bg.Go(func() { r.nemesisLoop(bgDone) })
	}
	if cfg.Progress != nil {
		bg.Go(func() { r.progress(bgDone, start) })
	}

	var sessions sync.WaitGroup
	for s := 0; s < cfg.Spec.Sessions; s++ {
		sessions.Go(func() { r.session(s) })
	}
	sessions.Wait()
	r.res.Elapsed = time.Since(start)
	close(bgDone)
	bg.Wait()
	if cfg.Progress != nil {
		r.printProgress(start)
		fmt.Fprintln(cfg.Progress)
	}
	r.res.Interrupted = ctx.Err() != nil
	r.res.Kills = int(r.kills.Load())
	r.res.NemesisActions = int(r.nemesisActions.Load())
	r.res.Outcomes = r.outcomes.list()
	r.res.SessionsConnected = int(r.connectedSessions.Load())
	r.res.sessionsRefused = int(r.refusedSessions.Load())
	r.res.Reconnects = int(r.reconnects.Load())
	r.res.ConnectErrors = int(r.connectErrors.Load())
	if e := r.firstConnectErr.Load(); e != nil {
		r.res.FirstConnectError = *e
	}
	if n := r.res.SessionsNeverConnected(); n > 0 {
		r.logf("warning: %d of %d sessions never connected (first error: %s): the run was less concurrent than asked",
			n, cfg.Spec.Sessions, r.res.FirstConnectError)
	}

	recErr := rec.close()
	r.res.Events = rec.events
	r.fatalMu.Lock()
	fatal := r.fatal
	r.fatalMu.Unlock()
	if fatal != nil {
		return r.res, fatal
	}
	if recErr != nil {
		return r.res, fmt.Errorf("writing the history: %w", recErr)
	}
	r.countOutcomes()

	h, err := history.FromEvents(r.res.Events)
	if err != nil {
		return r.res, fmt.Errorf("the recorded events do not form a history (a doppel bug): %w", err)
	}
	h.Source = r.res.Files[0]
	r.res.History = h
	if err := r.writeRunInfo(); err != nil {
		return r.res, err
	}
	if err := writePlots(cfg.OutDir, r.res.Events); err != nil {
		return r.res, fmt.Errorf("writing the plots: %w", err)
	}
	if cfg.SkipCheck {
		return r.res, nil
	}
	opts := cfg.CheckOptions
	opts.Models = r.res.Models
	checkStart := time.Now()
	result, err := check.Check(h, opts)
	r.res.CheckTime = time.Since(checkStart)
	if err != nil {
		return r.res, fmt.Errorf("checking: %w", err)
	}
	r.res.Check = result
	r.res.Checked = true
	r.requireEvidence()
	if err := writeJSONFile(filepath.Join(cfg.OutDir, "result.json"), resultFile{Result: r.res.Check, Partial: r.res.Interrupted, Outcomes: r.res.Outcomes}); err != nil {
		return r.res, err
	}
	// The evidence for people, as doppel check --directory writes it.
	var cxs []*shrink.Report
	if result.Valid == check.Invalid {
		cxs, _ = shrink.Counterexamples(h, &r.res.Check, time.Now().Add(shrinkTime))
	}
	if err := report.Write(cfg.OutDir, h, &r.res.Check, cxs); err != nil {
		return r.res, fmt.Errorf("writing the report: %w", err)
	}
	return r.res, nil
}

// shrinkTime bounds the search for counterexamples after a run (as doppel check's
// --shrink default).
const shrinkTime = 20 * time.Second

// resultFile is result.json: the checker's result, and whether the history is partial
// (the run was interrupted).
type resultFile struct {
	check.Result
	Partial bool `json:"partial"`
	// Outcomes are the transactions by outcome and cause.
	Outcomes []Outcome `json:"outcomes"`
}

// requireEvidence turns a valid verdict into unknown when the history could not have
// shown an anomaly: no transaction committed, or no committed read saw any value (a
// misconfigured run, a timeout too short, a server refusing every transaction). An
// invalid verdict stands: it is proven by what was recorded.
func (r *runner) requireEvidence() {
	res := r.res
	var why string
	switch {
	case res.OK == 0:
		why = fmt.Sprintf("no transaction committed (%d fail, %d info): the history cannot show an anomaly", res.Fail, res.Info)
	case res.ReadsObserved == 0:
		why = fmt.Sprintf("no committed read saw a value (%d ok transactions): the history cannot show an anomaly", res.OK)
	default:
		return
	}
	c := &res.Check
	if c.Valid != check.Valid {
		return
	}
	c.Valid, c.Message = check.Unknown, why
	for i := range c.Models {
		if c.Models[i].Valid == check.Valid {
			c.Models[i].Valid, c.Models[i].Message = check.Unknown, why
		}
	}
}

// probeInTxn keeps the dialect's in-transaction check if the server has it (MariaDB
// does, MySQL does not).
func (r *runner) probeInTxn(ctx context.Context) {
	if r.d.inTxnSQL == "" {
		return
	}
	var inTxn int
	if err := r.db.QueryRowContext(ctx, r.d.inTxnSQL).Scan(&inTxn); err != nil {
		r.logf("note: %s fails (%v): a COMMIT the server answers after silently rolling back cannot be told from a commit", r.d.inTxnSQL, errorText(err))
		return
	}
	r.inTxnSQL = r.d.inTxnSQL
}

func (r *runner) stop() {
	r.stopOnce.Do(func() {
		close(r.stopIssuing)
		if r.cancelIssue != nil {
			r.cancelIssue()
		}
	})
}

func (r *runner) stopping() bool {
	select {
	case <-r.stopIssuing:
		return true
	default:
		return false
	}
}

// setFatal records an error that ends the run and stops all sessions.
func (r *runner) setFatal(err error) {
	r.fatalMu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.fatalMu.Unlock()
	r.stop()
}

// takeTxn claims one transaction of the budget.
func (r *runner) takeTxn() bool {
	for {
		n := r.remaining.Load()
		if n < 0 {
			return true
		}
		if n == 0 {
			return false
		}
		if r.remaining.CompareAndSwap(n, n-1) {
			if n == 1 {
				// The budget is spent: wake sessions still waiting to connect.
				r.stop()
			}
			return true
		}
	}
}

// countOutcomes tallies completions, and invokes left open (an interrupted run).
func (r *runner) countOutcomes() {
	open := 0
	for i := range r.res.Events {
		if r.res.Events[i].IsNemesis() {
			continue
		}
		switch r.res.Events[i].Type {
		case history.TypeInvoke:
			open++
		case history.TypeOK:
			r.res.OK++
			open--
			for _, op := range r.res.Events[i].Value {
				if !op.Append && len(op.Read) > 0 {
					r.res.ReadsObserved++
				}
			}
		case history.TypeFail:
			r.res.Fail++
			open--
		case history.TypeInfo:
			r.res.Info++
			open--
		}
	}
	r.res.Unfinished = open
}

// session runs transactions on its own connection until the budget is spent or the
// run stops. After an :info outcome the transaction may still commit later, so the
// session continues as a new process (process += sessions) on a new connection.
func (r *runner) session(s int) {
	sessions := int64(r.cfg.Spec.Sessions)
	process := int64(s)
	src := NewTxnSource(r.cfg.Spec, s)
	var conn *sql.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	connected := false
	for !r.stopping() {
		if conn == nil {
			var failed bool
			if conn, failed = r.connect(s); conn == nil {
				if failed && !connected {
					r.refusedSessions.Add(1)
				}
				return // the run stopped while connecting
			}
			if connected {
				r.reconnects.Add(1)
			} else {
				connected = true
				r.connectedSessions.Add(1)
			}
		}
		if !r.takeTxn() {
			return
		}
		ops := src.Next()
		r.rec.record(history.Event{Type: history.TypeInvoke, Process: process, Value: ops})
		if err := r.rec.failed(); err != nil {
			r.setFatal(fmt.Errorf("writing the history: %w", err))
			return
		}
		ctx, cancel := context.WithTimeout(r.opCtx, r.cfg.TxnTimeout)
		out := r.txn(ctx, conn, ops)
		cancel()
		if out.typ != history.TypeOK && r.killed[s].Load() {
			// Say in the history why the connection went away.
			out.errText = "connection killed by the nemesis: " + out.errText
			out.cause = "connection killed by the nemesis"
			out.connBroken = true
		}
		r.rec.record(history.Event{Type: out.typ, Process: process, Value: out.ops, Error: out.errText})
		r.outcomes.add(out.typ, out.cause, out.errText)
		switch out.typ {
		case history.TypeOK:
			r.ok.Add(1)
		case history.TypeFail:
			r.fail.Add(1)
		case history.TypeInfo:
			r.info.Add(1)
			process += sessions
		}
		if out.typ == history.TypeInfo || out.connBroken {
			r.backendIDs[s].Store(0)
			conn.Close()
			conn = nil
		}
		if out.fatal != nil {
			r.setFatal(out.fatal)
			return
		}
	}
}

// connect opens session s's connection, retrying with exponential backoff (capped at
// connectBackoffMax) for as long as the run lasts: a nemesis, a restarting server or a
// full server makes connecting fail for a while. It returns nil once the run stops, and
// whether an attempt failed before the run stopped.
func (r *runner) connect(s int) (conn *sql.Conn, failed bool) {
	backoff := r.connectBackoffBase
	var firstFailure time.Time
	for attempt := 1; ; attempt++ {
		conn, err := r.openSessionConn(s)
		if err == nil {
			if attempt > 1 {
				r.logf("session %d: connected after %d attempts (%.1fs)", s, attempt, time.Since(firstFailure).Seconds())
			}
			return conn, failed
		}
		if r.stopping() {
			return nil, failed
		}
		failed = true
		r.connectErrors.Add(1)
		text := errorText(err)
		r.firstConnectErr.CompareAndSwap(nil, &text)
		if attempt == 1 {
			firstFailure = time.Now()
			r.logf("session %d: cannot connect (%s); retrying, backing off up to %v", s, text, r.connectBackoffMax)
		}
		select {
		case <-time.After(backoff):
		case <-r.stopIssuing:
			return nil, failed
		}
		backoff = min(2*backoff, r.connectBackoffMax)
	}
}

// openSessionConn makes one attempt at opening session s's connection.
func (r *runner) openSessionConn(s int) (*sql.Conn, error) {
	ctx, cancel := context.WithTimeout(r.issueCtx, 10*time.Second)
	defer cancel()
	conn, err := r.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	for _, q := range r.d.sessionSQL {
		_, _ = conn.ExecContext(ctx, q) // best effort, see sessionSQL
	}
	if slices.Contains(r.faults, NemesisKillConn) {
		id, err := r.d.backendID(ctx, conn)
		if err != nil {
			conn.Close()
			return nil, err
		}
		r.killed[s].Store(false)
		r.backendIDs[s].Store(id)
	}
	return conn, nil
}

// txnOutcome is how one transaction ended.
type txnOutcome struct {
	typ        history.Type // TypeOK, TypeFail or TypeInfo
	ops        []history.Op // the completion's ops: reads filled in when ok
	errText    string
	cause      string // what ended it when not ok: see errorCause
	connBroken bool   // the connection may be unusable: open a new one
	fatal      error  // the run must stop (the database returned something impossible)
}

// txn runs one transaction. Every error before COMMIT is sent means the transaction
// did not commit: we stop there and roll back, and a server rolls back a transaction
// whose connection is lost; so those are :fail. At COMMIT only a certain abort is
// :fail; anything else (lost connection, timeout, unknown error) is :info.
func (r *runner) txn(ctx context.Context, conn *sql.Conn, ops []history.Op) txnOutcome {
	for _, q := range r.st.begin {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return r.failed(conn, ops, "begin", err)
		}
	}
	done := make([]history.Op, len(ops))
	copy(done, ops)
	for i := range done {
		op := &done[i]
		if op.Append {
			if err := r.appendValue(ctx, conn, op.Key, op.Value); err != nil {
				return r.failed(conn, ops, "append", err)
			}
			continue
		}
		text, err := r.readText(ctx, conn, op.Key)
		if err != nil {
			return r.failed(conn, ops, "read", err)
		}
		list, err := parseList(text)
		if err != nil {
			out := r.failed(conn, ops, "read", err)
			out.fatal = &DBError{Op: fmt.Sprintf("read key %d", op.Key), Err: err}
			return out
		}
		op.Read = list
	}
	return r.commit(ctx, conn, ops, done)
}

// failed is the outcome of a transaction that certainly did not commit: it ends it.
func (r *runner) failed(conn *sql.Conn, ops []history.Op, step string, err error) txnOutcome {
	out := txnOutcome{typ: history.TypeFail, ops: ops, errText: step + ": " + errorText(err), cause: errorCause(err)}
	if !errors.Is(err, errCommitRolledBack) { // that one is over already
		out.connBroken = !r.rollback(conn)
	}
	return out
}

// commit ends a transaction whose statements all succeeded: ok only when the server
// says it committed. ops are the invoke's micro-ops, done the same with reads filled in.
func (r *runner) commit(ctx context.Context, conn *sql.Conn, ops, done []history.Op) txnOutcome {
	if r.inTxnSQL != "" {
		var inTxn int
		if err := conn.QueryRowContext(ctx, r.inTxnSQL).Scan(&inTxn); err != nil {
			return r.failed(conn, ops, "commit", err) // COMMIT was not sent
		}
		if inTxn == 0 {
			return r.failed(conn, ops, "commit", fmt.Errorf("%w: it had ended before COMMIT (%s = 0)", errCommitRolledBack, r.inTxnSQL))
		}
	}
	if err := r.d.commitTxn(ctx, conn); err != nil {
		if errors.Is(err, errCommitRolledBack) || r.d.certainAbort(err) {
			// SQLite keeps the transaction open after a busy COMMIT: end it.
			return r.failed(conn, ops, "commit", err)
		}
		return txnOutcome{typ: history.TypeInfo, ops: ops, errText: "commit: " + errorText(err), cause: errorCause(err), connBroken: true}
	}
	return txnOutcome{typ: history.TypeOK, ops: done}
}

// rollback ends a failed transaction; false means the connection should be replaced.
func (r *runner) rollback(conn *sql.Conn) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := conn.ExecContext(ctx, "ROLLBACK")
	return err == nil
}

// readText returns the stored list of key; a missing row is the empty list.
func (r *runner) readText(ctx context.Context, conn *sql.Conn, key int64) (string, error) {
	var text string
	err := conn.QueryRowContext(ctx, r.st.read, key).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return text, err
}

func (r *runner) appendValue(ctx context.Context, conn *sql.Conn, key, value int64) error {
	v := strconv.FormatInt(value, 10)
	if r.cfg.Append == AppendConcat {
		_, err := conn.ExecContext(ctx, r.st.concat, key, v)
		return err
	}
	// Read-modify-write: the plain read a client would do, then write back the
	// longer list. Under MariaDB's REPEATABLE READ this is what exposes MDEV-26642.
	var old string
	err := conn.QueryRowContext(ctx, r.st.read, key).Scan(&old)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = conn.ExecContext(ctx, r.st.insert, key, v)
	case err == nil:
		_, err = conn.ExecContext(ctx, r.st.update, old+","+v, key)
	}
	return err
}

// errorText is an error as recorded in the history: one line.
func errorText(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func (r *runner) progress(done <-chan struct{}, start time.Time) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			r.printProgress(start)
		}
	}
}

func (r *runner) printProgress(start time.Time) {
	ok, fail, info := r.ok.Load(), r.fail.Load(), r.info.Load()
	n := ok + fail + info
	rate := float64(n) / time.Since(start).Seconds()
	fmt.Fprintf(r.cfg.Progress, "\r%d txns  %.0f/s  %d ok  %d fail  %d info  ", n, rate, ok, fail, info)
	if k := r.kills.Load(); k > 0 {
		fmt.Fprintf(r.cfg.Progress, "%d kills  ", k)
	}
}

// runInfo is run.json: what was run, for whoever reads the history later.
type runInfo struct {
	Database  string `json:"database"`
	Table     string `json:"table"`
	Isolation string `json:"isolation"`
	Append    string `json:"append"`
	Spec      Spec   `json:"spec"`
	Nemesis   string `json:"nemesis,omitempty"`
	// NemesisInterval in seconds; NemesisActions counts server actions that succeeded.
	NemesisInterval float64  `json:"nemesis_interval,omitempty"`
	NemesisActions  int      `json:"nemesis_actions,omitempty"`
	Models          []string `json:"models"`
	Files           []string `json:"files"`
	OK              int      `json:"ok"`
	Fail            int      `json:"fail"`
	Info            int      `json:"info"`
	Unfinished      int      `json:"unfinished"`
	ReadsObserved   int      `json:"reads_observed"`
	Kills           int      `json:"kills"`
	// Sessions that never connected ran no transaction: the run was less concurrent
	// than spec.sessions says.
	SessionsConnected      int     `json:"sessions_connected"`
	SessionsNeverConnected int     `json:"sessions_never_connected"`
	Reconnects             int     `json:"reconnects"`
	ConnectErrors          int     `json:"connect_errors"`
	FirstConnectError      string  `json:"first_connect_error,omitempty"`
	Interrupted            bool    `json:"interrupted"`
	Seconds                float64 `json:"seconds"`
	TxnsPerSecond          float64 `json:"txns_per_second"`
}

func (r *runner) writeRunInfo() error {
	res := r.res
	var interval float64
	if len(r.faults) > 0 {
		interval = r.cfg.NemesisInterval.Seconds()
	}
	files := make([]string, len(res.Files))
	for i, f := range res.Files {
		files[i] = filepath.Base(f)
	}
	return writeJSONFile(filepath.Join(r.cfg.OutDir, "run.json"), runInfo{
		Database: res.Database, Table: res.Table, Isolation: r.cfg.Isolation, Append: r.cfg.Append,
		Spec: r.cfg.Spec, Nemesis: r.cfg.Nemesis, NemesisInterval: interval, Models: res.Models, Files: files,
		OK: res.OK, Fail: res.Fail, Info: res.Info, Unfinished: res.Unfinished, ReadsObserved: res.ReadsObserved,
		Kills: res.Kills, NemesisActions: res.NemesisActions, SessionsConnected: res.SessionsConnected, SessionsNeverConnected: res.SessionsNeverConnected(),
		Reconnects: res.Reconnects, ConnectErrors: res.ConnectErrors, FirstConnectError: res.FirstConnectError,
		Interrupted: res.Interrupted, Seconds: res.Elapsed.Seconds(), TxnsPerSecond: res.TxnsPerSecond(),
	})
}

// LinkLatest points the symbolic link "latest" beside dir at dir, as Jepsen's store
// does, replacing an older link (never anything else).
func LinkLatest(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	link := filepath.Join(filepath.Dir(abs), "latest")
	if st, err := os.Lstat(link); err == nil && st.Mode()&os.ModeSymlink == 0 {
		return fmt.Errorf("%s exists and is not a symbolic link: not updated", link)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", link, os.Getpid())
	os.Remove(tmp)
	if err := os.Symlink(filepath.Base(abs), tmp); err != nil {
		return fmt.Errorf("cannot link %s: %v", link, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cannot link %s: %v", link, err)
	}
	return nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
