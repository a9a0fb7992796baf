package workload

import (
	"encoding/json"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/internal/serverlock"
)

// faultProxy forwards TCP connections to a database server. down() is an outage: it
// stops listening and cuts every forwarded connection; up() listens again on the same
// address. With limit > 0, connections beyond limit at once are closed on accept, as a
// server at its connection limit refuses them.
type faultProxy struct {
	t      testing.TB
	target string
	addr   string
	limit  int
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool // client side of each forwarded connection
}

func newFaultProxy(t testing.TB, target string, limit int) *faultProxy {
	p := &faultProxy{t: t, target: target, limit: limit, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *faultProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(client)
		}
	}()
}

func (p *faultProxy) forward(client net.Conn) {
	p.mu.Lock()
	if p.ln == nil || p.limit > 0 && len(p.conns) >= p.limit {
		p.mu.Unlock()
		client.Close()
		return
	}
	p.conns[client] = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, client)
		p.mu.Unlock()
		client.Close()
	}()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(server, client); done <- struct{}{} }()
	go func() { io.Copy(client, server); done <- struct{}{} }()
	<-done
}

func (p *faultProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

func (p *faultProxy) up() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Errorf("proxy cannot listen again on %s: %v", p.addr, err)
		return
	}
	p.serve(ln)
}

// proxied returns the database URL rewritten to go through a new proxy.
func proxied(t *testing.T, rawURL string, limit int) (string, *faultProxy) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	if u.Port() == "" {
		port := "5432"
		if u.Scheme == "mysql" || u.Scheme == "mariadb" {
			port = "3306"
		}
		target = net.JoinHostPort(u.Hostname(), port)
	}
	p := newFaultProxy(t, target, limit)
	u.Host = p.addr
	return u.String(), p
}

func serverURLs(t *testing.T) map[string]string {
	urls := map[string]string{}
	for name, env := range map[string]string{"postgresql": envPostgres, "mysql": envMySQL} {
		if u := os.Getenv(env); u != "" {
			urls[name] = u
		}
	}
	if len(urls) == 0 {
		t.Skipf("neither %s nor %s is set", envPostgres, envMySQL)
	}
	serverlock.Shared(t)
	return urls
}

// A server that goes away mid-run and comes back: the sessions reconnect, the run goes
// on, and what was in flight is recorded as fail or info.
func TestRunSurvivesOutage(t *testing.T) {
	for name, rawURL := range serverURLs(t) {
		t.Run(name, func(t *testing.T) {
			dbURL, proxy := proxied(t, rawURL, 0)
			spec := smallSpec(0)
			spec.Keys = 200 // short lists: the run is unbounded
			const outageAt, outage = time.Second, 3 * time.Second
			upAt := make(chan time.Time, 1)
			start := time.Now()
			go func() {
				time.Sleep(outageAt)
				proxy.down()
				time.Sleep(outage)
				upAt <- time.Now()
				proxy.up()
			}()
			res := runForTest(t, RunConfig{DB: dbURL, Spec: spec, Duration: outageAt + outage + 2*time.Second})
			if res.Interrupted {
				t.Fatal("interrupted")
			}
			// Completions after the server came back (times are since the run's start).
			upNanos := (<-upAt).Sub(start).Nanoseconds()
			okAfter := 0
			for _, e := range res.Events {
				if e.Type == history.TypeOK && e.Time > upNanos {
					okAfter++
				}
			}
			if okAfter == 0 {
				t.Error("no transaction committed after the outage")
			}
			if res.ConnectErrors == 0 || res.Reconnects < spec.Sessions {
				t.Errorf("%d failed connection attempts, %d reconnections: the outage was not seen", res.ConnectErrors, res.Reconnects)
			}
			if res.SessionsConnected != spec.Sessions {
				t.Errorf("%d sessions connected, want %d", res.SessionsConnected, spec.Sessions)
			}
			// Exponential backoff capped at one second: a few attempts per session and
			// second of outage, not a busy loop.
			if max := spec.Sessions * (int(outage/time.Second) + 8); res.ConnectErrors > max {
				t.Errorf("%d failed connection attempts in a %v outage, want at most %d", res.ConnectErrors, outage, max)
			}
			requireValidOrKnownPostgresBug(t, res)
		})
	}
}

// Sessions that cannot connect (the server's connection limit) are reported, not
// silently dropped; the run still finishes its budget with the others.
func TestRunReportsSessionsThatNeverConnected(t *testing.T) {
	for name, rawURL := range serverURLs(t) {
		t.Run(name, func(t *testing.T) {
			dbURL, _ := proxied(t, rawURL, 3)
			// A budget long enough for every session's first attempt to end before it
			// is spent. With 100 transactions (~0.13 s) the count below came out one
			// short twice in whole-suite runs (2026-12-05, never alone): likely a
			// session still in its first attempt when the others spent the budget,
			// which counts as neither connected nor refused, as it should.
			spec := smallSpec(1000)
			spec.Sessions = 5
			cfg := RunConfig{DB: dbURL, Spec: spec, OutDir: t.TempDir()}
			res := runForTest(t, cfg)
			if res.SessionsConnected == 0 || res.SessionsConnected > 3 || res.SessionsNeverConnected() != 5-res.SessionsConnected {
				t.Errorf("%d sessions connected, %d never did; the proxy lets 3 connect", res.SessionsConnected, res.SessionsNeverConnected())
			}
			if res.FirstConnectError == "" {
				t.Error("no connection error kept")
			}
			var info struct {
				SessionsConnected      int    `json:"sessions_connected"`
				SessionsNeverConnected int    `json:"sessions_never_connected"`
				FirstConnectError      string `json:"first_connect_error"`
			}
			readJSON(t, filepath.Join(cfg.OutDir, "run.json"), &info)
			if info.SessionsNeverConnected != res.SessionsNeverConnected() || info.SessionsConnected != res.SessionsConnected || info.FirstConnectError == "" {
				t.Errorf("run.json says %+v", info)
			}
		})
	}
}

// requireValidOrKnownPostgresBug wants a valid verdict; PostgreSQL 15's SERIALIZABLE
// rarely commits a G2-item among INSERT … ON CONFLICT appends (see
// TestPostgresSerializable), which alone is the database's anomaly, not a false alarm.
func requireValidOrKnownPostgresBug(t *testing.T, res *RunResult) {
	t.Helper()
	if r := &res.Check; res.Dialect == "postgresql" && r.Valid == check.Invalid &&
		len(r.AnomalyTypes) > 0 && !strings.Contains(strings.Join(r.AnomalyTypes, " "), "G0") &&
		allPrefixed(r.AnomalyTypes, "G2-item") {
		t.Logf("PostgreSQL SERIALIZABLE committed a G2-item (known SSI bug): %s", r.Anomalies[0].Explanation)
		return
	}
	requireVerdict(t, res, check.Valid, "")
}

func allPrefixed(types []string, prefix string) bool {
	for _, s := range types {
		if !strings.HasPrefix(s, prefix) {
			return false
		}
	}
	return true
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
