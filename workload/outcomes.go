package workload

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"doppel/history"
)

// Outcome counts the transactions that ended one way for one cause: a SQLSTATE, a
// MySQL error number, a lost connection, a timeout. "ok" has no cause.
type Outcome struct {
	Type    string `json:"type"` // ok, fail or info
	Cause   string `json:"cause,omitempty"`
	Count   int    `json:"count"`
	Example string `json:"example,omitempty"` // the first error text of the cause
}

// Names of the SQLSTATEs and MySQL errors a run meets most; others print as the bare
// code.
var (
	sqlstateNames = map[string]string{
		"40001": "serialization_failure", "40P01": "deadlock_detected", "25P02": "in_failed_sql_transaction",
		"57P01": "admin_shutdown", "57P02": "crash_shutdown", "57P03": "cannot_connect_now", "57014": "query_canceled",
		"08006": "connection_failure", "08003": "connection_does_not_exist", "53300": "too_many_connections",
	}
	mysqlErrorNames = map[uint16]string{
		1213: "ER_LOCK_DEADLOCK", 1205: "ER_LOCK_WAIT_TIMEOUT", 1020: "ER_CHECKREAD", 1927: "ER_CONNECTION_KILLED",
		1053: "ER_SERVER_SHUTDOWN", 1062: "ER_DUP_ENTRY", 1317: "ER_QUERY_INTERRUPTED", 1040: "ER_CON_COUNT_ERROR", 1180: "ER_ERROR_DURING_COMMIT",
	}
)

// errorCause names what ended a transaction: the database's error code when it gave
// one, else the kind of failure.
func errorCause(err error) string {
	var pe *pgconn.PgError
	var me *mysql.MySQLError
	var ne net.Error
	switch {
	case errors.Is(err, errCommitRolledBack):
		return "COMMIT answered by a rollback"
	case errors.As(err, &pe):
		if name := sqlstateNames[pe.Code]; name != "" {
			return "SQLSTATE " + pe.Code + " " + name
		}
		return "SQLSTATE " + pe.Code
	case errors.As(err, &me):
		if name := mysqlErrorNames[me.Number]; name != "" {
			return fmt.Sprintf("MySQL error %d %s", me.Number, name)
		}
		return fmt.Sprintf("MySQL error %d", me.Number)
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout (--txn-timeout)"
	case errors.Is(err, context.Canceled):
		return "cancelled at the end of the run"
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &ne):
		return "connection lost"
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return "connection lost"
	}
	return "other error"
}

// outcomeTally counts outcomes by type and cause as sessions record them.
type outcomeTally struct {
	mu     sync.Mutex
	counts map[[2]string]*Outcome
}

func (t *outcomeTally) add(typ history.Type, cause, errText string) {
	name := [...]string{history.TypeOK: "ok", history.TypeFail: "fail", history.TypeInfo: "info"}[typ]
	if typ == history.TypeOK {
		cause = ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[[2]string]*Outcome{}
	}
	k := [2]string{name, cause}
	o := t.counts[k]
	if o == nil {
		o = &Outcome{Type: name, Cause: cause, Example: errText}
		t.counts[k] = o
	}
	o.Count++
}

// list returns the outcomes: ok first, then fail and info, most frequent cause first.
func (t *outcomeTally) list() []Outcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Outcome, 0, len(t.counts))
	for _, o := range t.counts {
		out = append(out, *o)
	}
	rank := map[string]int{"ok": 0, "fail": 1, "info": 2}
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.Type != b.Type {
			return rank[a.Type] < rank[b.Type]
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Cause < b.Cause
	})
	return out
}
