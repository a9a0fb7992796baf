package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib" // also registers the "pgx" database/sql driver
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dialect holds everything that differs between databases: how to open them, the SQL
// of each step of a transaction, and how to read their errors. One value per database.
type dialect struct {
	name     string        // postgresql, mysql, sqlite
	driver   string        // database/sql driver name
	dsn      string        // driver connection string; may hold credentials: never print it
	mysql    *mysql.Config // MySQL opens from this (it carries a logger), not dsn
	redacted string        // the URL without credentials, for messages
	// host is the server's host name or address, or a Unix socket's directory ("/…");
	// "?" when unknown. The nemesis's server faults need it to be this machine.
	host       string
	isolations map[string]string
	// beginSQL returns the statements that start a transaction at the given level
	// (already mapped through isolations).
	beginSQL func(level string) []string
	// SQL templates; %s is the table name.
	createSQL, dropSQL, concatSQL, readSQL, updateSQL, insertSQL string
	backendIDSQL                                                 string // "" if connections cannot be killed
	// sessionSQL runs once per new session connection, best effort: failures
	// (say, a missing privilege) are ignored.
	sessionSQL []string
	killSQL    func(id int64) string
	// certainAbort reports whether err says the transaction was rolled back and will
	// not commit: a serialization failure, deadlock, lock timeout or busy database.
	certainAbort func(err error) bool
	// commit sends COMMIT and returns errCommitRolledBack when the server answers that
	// it rolled the transaction back instead; nil means the default, a plain COMMIT.
	commit func(ctx context.Context, conn *sql.Conn) error
	// inTxnSQL, when set, is asked just before COMMIT whether the server still has the
	// transaction open (1) or has already ended it (0); see mysqlDialect.
	inTxnSQL string
}

// errCommitRolledBack: the server answered COMMIT by rolling the transaction back,
// without an error (PostgreSQL's ROLLBACK command tag for an aborted transaction;
// SQLite's "no transaction is active"). The transaction certainly did not commit.
var errCommitRolledBack = errors.New("the server rolled the transaction back instead of committing it")

// commitTxn sends COMMIT the dialect's way.
func (d *dialect) commitTxn(ctx context.Context, conn *sql.Conn) error {
	if d.commit != nil {
		return d.commit(ctx, conn)
	}
	_, err := conn.ExecContext(ctx, "COMMIT")
	return err
}

// postgresCommit sends COMMIT through pgx itself, since database/sql drops the command
// tag: PostgreSQL answers COMMIT of a transaction that hit an error with the tag
// ROLLBACK and no error, which through ExecContext looks like a commit.
func postgresCommit(ctx context.Context, conn *sql.Conn) error {
	return conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("unexpected PostgreSQL driver connection %T", driverConn)
		}
		tag, err := c.Conn().Exec(ctx, "COMMIT")
		if err != nil {
			return err
		}
		if tag.String() == "ROLLBACK" {
			return errCommitRolledBack
		}
		return nil
	})
}

// Isolation levels as doppel names them; each dialect maps the ones it has.
const (
	Serializable    = "serializable"
	RepeatableRead  = "repeatable-read"
	Snapshot        = "snapshot"
	ReadCommitted   = "read-committed"
	ReadUncommitted = "read-uncommitted"
)

// openDialect parses a database URL: postgres://…, postgresql://…, mysql://… or
// sqlite:PATH. Credentials come from the URL or the drivers' usual environment
// variables (PGPASSWORD, MYSQL_PWD).
func openDialect(rawURL string) (*dialect, error) {
	switch {
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		return postgresDialect(rawURL)
	case strings.HasPrefix(rawURL, "mysql://"), strings.HasPrefix(rawURL, "mariadb://"):
		return mysqlDialect(rawURL)
	case strings.HasPrefix(rawURL, "sqlite:"):
		return sqliteDialect(strings.TrimPrefix(strings.TrimPrefix(rawURL, "sqlite:"), "//"))
	}
	return nil, fmt.Errorf("%w: database URL must start with postgres://, postgresql://, mysql:// or sqlite: (got %q)",
		ErrConfig, RedactURL(rawURL))
}

// RedactURL returns the URL with any password removed, for printing.
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		// Unparseable: print only the scheme, which cannot hold a secret.
		if i := strings.Index(rawURL, ":"); i > 0 {
			return rawURL[:i] + ":…"
		}
		return "…"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q := u.Query()
	for k := range q {
		if strings.Contains(strings.ToLower(k), "password") {
			q.Set(k, "xxxxx")
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func postgresDialect(rawURL string) (*dialect, error) {
	var sessionSQL []string
	if !strings.Contains(rawURL, "deadlock_timeout") {
		// PostgreSQL looks for deadlocks only after deadlock_timeout (1s by default),
		// and every transaction queued behind a deadlocked one waits as long: with the
		// contended workloads doppel runs, that divides throughput by five or more.
		// Setting it needs superuser; the URL's own setting wins.
		sessionSQL = []string{"SET deadlock_timeout = '50ms'"}
	}
	host := "?"
	if c, err := pgconn.ParseConfig(rawURL); err == nil {
		host = c.Host
	}
	return &dialect{
		host:       host,
		sessionSQL: sessionSQL,
		name:       "postgresql",
		driver:     "pgx",
		dsn:        rawURL, // pgx reads PGPASSWORD etc. itself
		redacted:   RedactURL(rawURL),
		isolations: map[string]string{
			Serializable:    "SERIALIZABLE",
			RepeatableRead:  "REPEATABLE READ",
			Snapshot:        "REPEATABLE READ", // PostgreSQL's REPEATABLE READ is snapshot isolation
			ReadCommitted:   "READ COMMITTED",
			ReadUncommitted: "READ UNCOMMITTED",
		},
		beginSQL:     func(level string) []string { return []string{"BEGIN ISOLATION LEVEL " + level} },
		createSQL:    "CREATE TABLE %s (k BIGINT PRIMARY KEY, v TEXT NOT NULL)",
		dropSQL:      "DROP TABLE IF EXISTS %s",
		concatSQL:    "INSERT INTO %[1]s AS t (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = t.v || ',' || excluded.v",
		readSQL:      "SELECT v FROM %s WHERE k = $1",
		updateSQL:    "UPDATE %s SET v = $1 WHERE k = $2",
		insertSQL:    "INSERT INTO %s (k, v) VALUES ($1, $2)",
		backendIDSQL: "SELECT pg_backend_pid()",
		killSQL: func(id int64) string {
			return "SELECT pg_terminate_backend(" + strconv.FormatInt(id, 10) + ")"
		},
		certainAbort: func(err error) bool {
			var pe *pgconn.PgError
			if errors.As(err, &pe) {
				// serialization_failure, deadlock_detected
				return pe.Code == "40001" || pe.Code == "40P01"
			}
			return false
		},
		commit: postgresCommit,
	}, nil
}

// mysqlDialect converts mysql://user:pass@host:port/db?params to the driver's DSN.
func mysqlDialect(rawURL string) (*dialect, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot parse MySQL URL %q", ErrConfig, RedactURL(rawURL))
	}
	host := u.Host
	if host == "" {
		host = "127.0.0.1:3306"
	} else if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "3306")
	}
	// Let the driver parse the query parameters (its own options and system variables).
	cfg, err := mysql.ParseDSN("tcp(" + host + ")" + "/?" + u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("%w: bad MySQL URL parameters in %q: %v", ErrConfig, RedactURL(rawURL), err)
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	if cfg.User == "" {
		cfg.User = os.Getenv("USER")
	}
	if cfg.Passwd == "" {
		cfg.Passwd = os.Getenv("MYSQL_PWD")
	}
	// One round trip per statement instead of prepare/execute/close.
	cfg.InterpolateParams = true
	// The driver logs every killed connection to stderr; we record them as errors.
	cfg.Logger = &mysql.NopLogger{}
	host = cfg.Addr
	if cfg.Net == "unix" {
		host = "/" + strings.TrimPrefix(cfg.Addr, "/")
	} else if h, _, err := net.SplitHostPort(cfg.Addr); err == nil {
		host = h
	}
	return &dialect{
		host:     host,
		name:     "mysql",
		driver:   "mysql",
		dsn:      cfg.FormatDSN(),
		mysql:    cfg,
		redacted: RedactURL(rawURL),
		isolations: map[string]string{
			Serializable:    "SERIALIZABLE",
			RepeatableRead:  "REPEATABLE READ",
			ReadCommitted:   "READ COMMITTED",
			ReadUncommitted: "READ UNCOMMITTED",
		},
		beginSQL: func(level string) []string {
			// SET TRANSACTION applies to the next transaction only.
			return []string{"SET TRANSACTION ISOLATION LEVEL " + level, "START TRANSACTION"}
		},
		createSQL:    "CREATE TABLE %s (k BIGINT NOT NULL PRIMARY KEY, v LONGTEXT NOT NULL) ENGINE=InnoDB",
		dropSQL:      "DROP TABLE IF EXISTS %s",
		concatSQL:    "INSERT INTO %s (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', VALUES(v))",
		readSQL:      "SELECT v FROM %s WHERE k = ?",
		updateSQL:    "UPDATE %s SET v = ? WHERE k = ?",
		insertSQL:    "INSERT INTO %s (k, v) VALUES (?, ?)",
		backendIDSQL: "SELECT CONNECTION_ID()",
		killSQL:      func(id int64) string { return "KILL " + strconv.FormatInt(id, 10) },
		certainAbort: func(err error) bool {
			var me *mysql.MySQLError
			if errors.As(err, &me) {
				// ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT (we roll back after it, since
				// InnoDB rolls back only the statement), ER_CHECKREAD (MariaDB's
				// innodb_snapshot_isolation write conflict).
				return me.Number == 1213 || me.Number == 1205 || me.Number == 1020
			}
			return false
		},
		// MariaDB answers COMMIT with OK after a deadlock rolled the transaction back
		// (and runs any statement sent after the deadlock in autocommit mode): the
		// protocol has no ROLLBACK tag, and the driver does not expose the OK packet's
		// in-transaction flag. MariaDB's @@in_transaction is the same flag, one round
		// trip away. MySQL has no such variable; the runner drops the check there.
		inTxnSQL: "SELECT @@in_transaction",
	}, nil
}

func sqliteDialect(path string) (*dialect, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: sqlite: needs a file path, e.g. sqlite:/tmp/x.db", ErrConfig)
	}
	// busy_timeout makes BEGIN IMMEDIATE wait for the writer instead of failing at
	// once; WAL lets readers of other connections proceed during a write.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	return &dialect{
		name:     "sqlite",
		driver:   "sqlite",
		dsn:      dsn,
		redacted: "sqlite:" + path,
		// SQLite transactions are serializable; BEGIN IMMEDIATE takes the write lock at
		// once, so transactions never fail to upgrade a read lock (SQLITE_BUSY deadlock).
		isolations: map[string]string{Serializable: "IMMEDIATE"},
		beginSQL:   func(level string) []string { return []string{"BEGIN " + level} },
		createSQL:  "CREATE TABLE %s (k INTEGER PRIMARY KEY, v TEXT NOT NULL)",
		dropSQL:    "DROP TABLE IF EXISTS %s",
		concatSQL:  "INSERT INTO %s (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET v = v || ',' || excluded.v",
		readSQL:    "SELECT v FROM %s WHERE k = ?1",
		updateSQL:  "UPDATE %s SET v = ?1 WHERE k = ?2",
		insertSQL:  "INSERT INTO %s (k, v) VALUES (?1, ?2)",
		certainAbort: func(err error) bool {
			var se *sqlite.Error
			if errors.As(err, &se) {
				c := se.Code() & 0xff // primary result code
				return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
			}
			return false
		},
		commit: sqliteCommit,
	}, nil
}

// sqliteCommit sends COMMIT; SQLite refuses it when the transaction the runner began
// is no longer active, which only a rollback (automatic, after some errors) ends.
func sqliteCommit(ctx context.Context, conn *sql.Conn) error {
	_, err := conn.ExecContext(ctx, "COMMIT")
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_ERROR && strings.Contains(se.Error(), "no transaction is active") {
		return fmt.Errorf("%w (%v)", errCommitRolledBack, err)
	}
	return err
}

// levelSQL maps a doppel isolation level name to the database's own.
func (d *dialect) levelSQL(level string) (string, error) {
	if s, ok := d.isolations[level]; ok {
		return s, nil
	}
	have := make([]string, 0, len(d.isolations))
	for _, l := range []string{Serializable, RepeatableRead, Snapshot, ReadCommitted, ReadUncommitted} {
		if _, ok := d.isolations[l]; ok {
			have = append(have, l)
		}
	}
	return "", fmt.Errorf("%w: %s has no isolation level %q (have: %s)", ErrConfig, d.name, level, strings.Join(have, ", "))
}

// statements are a dialect's SQL with the table name filled in.
type statements struct {
	begin                                      []string
	create, drop, concat, read, update, insert string
}

func (d *dialect) statements(table, level string) statements {
	return statements{
		begin:  d.beginSQL(level),
		create: fmt.Sprintf(d.createSQL, table),
		drop:   fmt.Sprintf(d.dropSQL, table),
		concat: fmt.Sprintf(d.concatSQL, table),
		read:   fmt.Sprintf(d.readSQL, table),
		update: fmt.Sprintf(d.updateSQL, table),
		insert: fmt.Sprintf(d.insertSQL, table),
	}
}

// open opens a connection pool; it does not connect yet.
func (d *dialect) open() (*sql.DB, error) {
	if d.mysql != nil {
		c, err := mysql.NewConnector(d.mysql)
		if err != nil {
			return nil, &DBError{Op: "open " + d.redacted, Err: err}
		}
		return sql.OpenDB(c), nil
	}
	db, err := sql.Open(d.driver, d.dsn)
	if err != nil {
		return nil, &DBError{Op: "open " + d.redacted, Err: err}
	}
	return db, nil
}

// backendID returns the server's id of the connection, for the kill-conn nemesis.
func (d *dialect) backendID(ctx context.Context, conn *sql.Conn) (int64, error) {
	var id int64
	err := conn.QueryRowContext(ctx, d.backendIDSQL).Scan(&id)
	return id, err
}

// DBError is an error talking to the database outside of the workload's transactions
// (connecting, creating the table): the run cannot proceed.
type DBError struct {
	Op  string
	Err error
}

func (e *DBError) Error() string { return "database error: " + e.Op + ": " + e.Err.Error() }
func (e *DBError) Unwrap() error { return e.Err }

// ErrConfig marks errors in the run's configuration (bad URL, unknown level, ...).
var ErrConfig = errors.New("bad configuration")

// parseList parses the stored text of a list; "" is the empty list. The result is
// never nil (nil means an unknown read in history.Op).
func parseList(s string) ([]int64, error) {
	if s == "" {
		return []int64{}, nil
	}
	out := make([]int64, 0, strings.Count(s, ",")+1)
	for field := range strings.SplitSeq(s, ",") {
		v, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("stored list %.40q has a bad element %q", s, field)
		}
		out = append(out, v)
	}
	return out, nil
}
