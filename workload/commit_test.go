package workload

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"doppel/history"
)

// testRunner is a runner connected to url with its table created (dropped at cleanup),
// for driving the runner's own transaction steps by hand.
func testRunner(t *testing.T, url string) *runner {
	t.Helper()
	r, err := newRunner(RunConfig{DB: url, Spec: smallSpec(10), OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if r.db, err = r.d.open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.db.Close() })
	r.res.Table = fmt.Sprintf("doppel_test_%d", time.Now().UnixNano())
	r.st = r.d.statements(r.res.Table, r.level)
	ctx := context.Background()
	if _, err := r.db.ExecContext(ctx, r.st.create); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.db.ExecContext(context.Background(), r.st.drop) })
	r.probeInTxn(ctx)
	return r
}

func testConn(t *testing.T, r *runner) *sql.Conn {
	t.Helper()
	conn, err := r.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func mustExec(t *testing.T, conn *sql.Conn, queries ...string) {
	t.Helper()
	for _, q := range queries {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// requireRolledBackCommit drives the runner's commit step on conn, whose transaction
// the server has already rolled back, and wants :fail; then the connection must still
// run a transaction that commits.
func requireRolledBackCommit(t *testing.T, r *runner, conn *sql.Conn) {
	t.Helper()
	ops := []history.Op{{Append: true, Key: 1, Value: 5}}
	out := r.commit(context.Background(), conn, ops, ops)
	if out.typ != history.TypeFail || !strings.Contains(out.errText, "rolled the transaction back") {
		t.Fatalf("commit of a rolled-back transaction: %v %q, want fail", out.typ, out.errText)
	}
	if out.connBroken {
		t.Error("the connection was given up after a clean rollback")
	}
	if out := r.txn(context.Background(), conn, ops); out.typ != history.TypeOK {
		t.Fatalf("the next transaction on the connection: %v %q", out.typ, out.errText)
	}
}

// PostgreSQL answers COMMIT of a transaction that hit an error with the tag ROLLBACK
// and no error: through database/sql alone that looks like a commit.
func TestPostgresCommitAfterErrorIsFail(t *testing.T) {
	r := testRunner(t, serverURL(t, envPostgres))
	conn := testConn(t, r)
	mustExec(t, conn, r.st.begin...)
	if _, err := conn.ExecContext(context.Background(), "SELECT 1/0"); err == nil {
		t.Fatal("SELECT 1/0 did not fail")
	}
	// What the runner would have recorded before: ExecContext("COMMIT") succeeds.
	requireRolledBackCommit(t, r, conn)
}

// MariaDB answers COMMIT with OK after a deadlock rolled the transaction back.
func TestMariaDBCommitAfterDeadlockIsFail(t *testing.T) {
	r := testRunner(t, serverURL(t, envMySQL))
	if r.inTxnSQL == "" {
		t.Skip("the server has no @@in_transaction (MySQL, not MariaDB)")
	}
	ctx := context.Background()
	a, b := testConn(t, r), testConn(t, r)
	row := func(k int) string { return fmt.Sprintf("INSERT INTO %s (k, v) VALUES (%d, '1')", r.res.Table, k) }
	upd := func(k int) string { return fmt.Sprintf("UPDATE %s SET v = '2' WHERE k = %d", r.res.Table, k) }
	mustExec(t, a, row(1), row(2))
	mustExec(t, a, "START TRANSACTION", upd(1))
	mustExec(t, b, "START TRANSACTION", upd(2))
	errA := make(chan error, 1)
	go func() { _, err := a.ExecContext(ctx, upd(2)); errA <- err }() // waits for b
	time.Sleep(100 * time.Millisecond)
	_, errB := b.ExecContext(ctx, upd(1)) // closes the cycle: one of a, b is the victim
	victim, other, err := b, a, errB
	if errB == nil {
		victim, other, err = a, b, <-errA
	} else {
		<-errA
	}
	if err == nil || !r.d.certainAbort(err) {
		t.Fatalf("no deadlock: %v", err)
	}
	mustExec(t, other, "COMMIT")
	// What the runner would have recorded before: COMMIT answers OK.
	requireRolledBackCommit(t, r, victim)
}

// SQLite refuses COMMIT when the transaction is no longer active.
func TestSQLiteCommitAfterRollbackIsFail(t *testing.T) {
	r := testRunner(t, "sqlite:"+filepath.Join(t.TempDir(), "db.sqlite"))
	conn := testConn(t, r)
	mustExec(t, conn, r.st.begin...)
	mustExec(t, conn, "ROLLBACK") // as SQLite does by itself after some errors
	requireRolledBackCommit(t, r, conn)
}
