package workload

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int64
		bad  bool
	}{
		{in: "", want: []int64{}},
		{in: "7", want: []int64{7}},
		{in: "1,2,1,-3", want: []int64{1, 2, 1, -3}},
		{in: "1,,2", bad: true},
		{in: "1,", bad: true},
		{in: ",1", bad: true},
		{in: "1,x", bad: true},
		{in: "99999999999999999999", bad: true},
	} {
		got, err := parseList(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("parseList(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) || got == nil {
			t.Errorf("parseList(%q) = %#v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, secret string }{
		{"postgres://bob:s3cret@db:5432/test", "s3cret"},
		{"mysql://root:hunter2@127.0.0.1:3306/test?tls=false", "hunter2"},
		{"postgres://db/test?password=pw123&sslmode=disable", "pw123"},
		{"postgres://bob:p%40ss@db/x", "p@ss"},
		{"mysql://a:%zz@host/db", "%zz"}, // unparseable
	} {
		got := RedactURL(tc.in)
		if strings.Contains(got, tc.secret) {
			t.Errorf("RedactURL(%q) = %q, still holds the password", tc.in, got)
		}
	}
	if got := RedactURL("postgres://bob@db/test"); got != "postgres://bob@db/test" {
		t.Errorf("RedactURL changed a URL without a password: %q", got)
	}
}

func TestMySQLURLToDSN(t *testing.T) {
	d, err := openDialect("mysql://root:p%40ss%2Fw@db.example:3307/test?tls=false&innodb_lock_wait_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mysql.ParseDSN(d.dsn)
	if err != nil {
		t.Fatalf("the DSN %q does not parse: %v", d.dsn, err)
	}
	if cfg.User != "root" || cfg.Passwd != "p@ss/w" || cfg.Net != "tcp" || cfg.Addr != "db.example:3307" || cfg.DBName != "test" {
		t.Errorf("DSN config = user %q pass %q net %q addr %q db %q", cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName)
	}
	if cfg.Params["innodb_lock_wait_timeout"] != "5" {
		t.Errorf("system variable lost: params %v", cfg.Params)
	}
	if !cfg.InterpolateParams {
		t.Error("interpolateParams is off")
	}
	if strings.Contains(d.redacted, "p@ss") || strings.Contains(d.redacted, "p%40ss") {
		t.Errorf("redacted URL holds the password: %q", d.redacted)
	}

	d, err = openDialect("mysql://root@localhost/test")
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = mysql.ParseDSN(d.dsn); err != nil || cfg.Addr != "localhost:3306" {
		t.Errorf("default port: addr %q, err %v", cfg.Addr, err)
	}
}

func TestOpenDialect(t *testing.T) {
	for _, u := range []string{"postgres://u@h/db", "postgresql://u@h/db", "mysql://u@h/db", "sqlite:/tmp/x.db"} {
		if _, err := openDialect(u); err != nil {
			t.Errorf("openDialect(%q): %v", u, err)
		}
	}
	for _, u := range []string{"", "oracle://h/db", "sqlite:", "/tmp/x.db"} {
		if _, err := openDialect(u); !errors.Is(err, ErrConfig) {
			t.Errorf("openDialect(%q) = %v, want ErrConfig", u, err)
		}
	}
}

func TestIsolationLevels(t *testing.T) {
	pg, _ := openDialect("postgres://u@h/db")
	my, _ := openDialect("mysql://u@h/db")
	lite, _ := openDialect("sqlite:/tmp/x.db")
	for _, tc := range []struct {
		d     *dialect
		level string
		want  string // "" = not supported
	}{
		{pg, Serializable, "SERIALIZABLE"},
		{pg, RepeatableRead, "REPEATABLE READ"},
		{pg, Snapshot, "REPEATABLE READ"},
		{pg, ReadCommitted, "READ COMMITTED"},
		{my, Serializable, "SERIALIZABLE"},
		{my, RepeatableRead, "REPEATABLE READ"},
		{my, Snapshot, ""},
		{lite, Serializable, "IMMEDIATE"},
		{lite, RepeatableRead, ""},
		{pg, "serialisable", ""},
	} {
		got, err := tc.d.levelSQL(tc.level)
		if tc.want == "" {
			if !errors.Is(err, ErrConfig) {
				t.Errorf("%s %s: got %q, %v; want ErrConfig", tc.d.name, tc.level, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %s: got %q, %v; want %q", tc.d.name, tc.level, got, err, tc.want)
		}
	}
}

func TestCertainAbort(t *testing.T) {
	my, _ := openDialect("mysql://u@h/db")
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&mysql.MySQLError{Number: 1213}, true},
		{&mysql.MySQLError{Number: 1205}, true},
		{&mysql.MySQLError{Number: 1020}, true},
		{&mysql.MySQLError{Number: 1062}, false},
		{mysql.ErrInvalidConn, false},
		{errors.New("x"), false},
	} {
		if got := my.certainAbort(tc.err); got != tc.want {
			t.Errorf("mysql certainAbort(%v) = %v", tc.err, got)
		}
	}
	pg, _ := openDialect("postgres://u@h/db")
	for _, tc := range []struct {
		code string
		want bool
	}{{"40001", true}, {"40P01", true}, {"57P01", false}, {"23505", false}} {
		err := fmt.Errorf("append: %w", &pgconn.PgError{Code: tc.code})
		if got := pg.certainAbort(err); got != tc.want {
			t.Errorf("postgresql certainAbort(SQLSTATE %s) = %v", tc.code, got)
		}
	}
}
