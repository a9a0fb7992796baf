// Package nemesis disturbs a database server on this machine the way Jepsen's nemeses
// disturb a cluster's nodes: it restarts the server cleanly, kills it (SIGKILL) and
// starts it again, or pauses its processes (SIGSTOP) and resumes them (SIGCONT).
//
// It knows two kinds of servers, as Debian installs them:
//
//   - PostgreSQL: found through its data directory's postmaster.pid; restarted and
//     started with pg_ctlcluster (the cluster is read from config_file, which Debian
//     keeps in /etc/postgresql/VERSION/CLUSTER/).
//   - MariaDB (or MySQL): found through @@pid_file; stopped with SIGTERM and started
//     with start-stop-daemon --start --background --exec on the server's executable.
//
// Privileges: the database account must be allowed to read the settings used to find
// the server (PostgreSQL: superuser or pg_read_all_settings, for data_directory and
// config_file; MariaDB: any account reads @@pid_file). The operating-system user must
// be root or the server's own user (postgres, mysql): it reads the pid file, signals
// the server's processes, and starts the server (pg_ctlcluster as root or the
// cluster's owner; start-stop-daemon as root, mariadbd then switching to the user of
// its configuration). Find and Check say which is missing before anything runs.
package nemesis

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Faults a run can compose (--nemesis kill-conn,restart,kill,pause).
const (
	KillConn = "kill-conn" // terminate a random client connection (SQL; not this package)
	Restart  = "restart"   // clean restart of the server
	Kill     = "kill"      // SIGKILL the server's processes; start it again later
	Pause    = "pause"     // SIGSTOP the server's processes; SIGCONT them later
)

// ServerFaults are the faults that act on the server itself, through this package.
var ServerFaults = []string{Restart, Kill, Pause}

// Server is a PostgreSQL or MariaDB server on this machine. Its methods are safe for
// one goroutine at a time, except EnsureRunning, which may follow any of them.
type Server struct {
	Kind    string // postgresql or mysql
	Name    string // for the history and messages, e.g. "postgresql 15/main"
	pidFile string
	exe     string // the server's executable, as /proc/PID/exe names it
	// PostgreSQL's cluster, for pg_ctlcluster; "" when config_file is not Debian's.
	version, cluster string
	ownerUID         int // owner of the server's process
	// Ready returns nil once the server accepts connections; the caller supplies it
	// (it knows how to connect). It is called until it succeeds or ctx ends.
	Ready func(ctx context.Context) error

	mu     sync.Mutex
	paused []int // processes stopped by Pause, until Resume
}

// Find identifies the server that db is connected to, which must run on this machine.
// kind is postgresql or mysql; host is the host the connection goes to ("" or a
// socket directory for a Unix socket).
func Find(ctx context.Context, db *sql.DB, kind, host string) (*Server, error) {
	if err := CheckLocal(host); err != nil {
		return nil, err
	}
	s := &Server{Kind: kind}
	var port string
	switch kind {
	case "postgresql":
		var dataDir, configFile string
		err := db.QueryRowContext(ctx, "SELECT current_setting('data_directory'), current_setting('config_file'), current_setting('port')").
			Scan(&dataDir, &configFile, &port)
		if err != nil {
			return nil, fmt.Errorf("cannot read the server's data_directory and config_file (%v): the database user must be a superuser or have pg_read_all_settings", err)
		}
		s.pidFile = filepath.Join(dataDir, "postmaster.pid")
		// Debian: /etc/postgresql/VERSION/CLUSTER/postgresql.conf.
		if parts := strings.Split(filepath.Clean(configFile), "/"); len(parts) == 6 && parts[1] == "etc" && parts[2] == "postgresql" {
			s.version, s.cluster = parts[3], parts[4]
			s.Name = "postgresql " + s.version + "/" + s.cluster
		} else {
			s.Name = "postgresql " + dataDir
		}
	case "mysql":
		var pidFile, dataDir, version string
		err := db.QueryRowContext(ctx, "SELECT @@pid_file, @@datadir, @@port, @@version").Scan(&pidFile, &dataDir, &port, &version)
		if err != nil {
			return nil, fmt.Errorf("cannot read the server's @@pid_file: %v", err)
		}
		if !filepath.IsAbs(pidFile) {
			pidFile = filepath.Join(dataDir, pidFile)
		}
		s.pidFile = pidFile
		s.Name = "mysql"
		if strings.Contains(strings.ToLower(version), "mariadb") {
			s.Name = "mariadb"
		}
		s.Name += " " + pidFile
	default:
		return nil, fmt.Errorf("server faults need PostgreSQL or MariaDB/MySQL, not %s", kind)
	}
	pid, filePort, err := s.readPIDFile()
	if err != nil {
		return nil, err
	}
	if kind == "postgresql" && filePort != "" && filePort != port {
		return nil, fmt.Errorf("%s says port %s, the server says %s: the file belongs to another server", s.pidFile, filePort, port)
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return nil, fmt.Errorf("cannot see the server's process %d (%v): run as root or as the server's user", pid, err)
	}
	base := filepath.Base(exe)
	want := map[string][]string{"postgresql": {"postgres"}, "mysql": {"mariadbd", "mysqld"}}[kind]
	if !slices.Contains(want, base) {
		return nil, fmt.Errorf("process %d of %s is %s, not %s: the pid file is stale or not this server's", pid, s.pidFile, exe, strings.Join(want, " or "))
	}
	s.exe = exe
	st, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	if err != nil {
		return nil, err
	}
	s.ownerUID = int(st.Sys().(*syscall.Stat_t).Uid)
	return s, nil
}

// Check reports, before a run starts, whether this process may inflict faults on the
// server: signal its processes and start it again.
func (s *Server) Check(faults []string) error {
	pid, _, err := s.readPIDFile()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return fmt.Errorf("cannot signal %s's process %d (%v): run as root or as %s", s.Name, pid, err, s.ownerName())
	}
	needStart := slices.Contains(faults, Restart) || slices.Contains(faults, Kill)
	if !needStart {
		return nil
	}
	euid := os.Geteuid()
	switch s.Kind {
	case "postgresql":
		if s.version == "" {
			return fmt.Errorf("%s: restart and kill start PostgreSQL again with pg_ctlcluster, which needs a Debian cluster (config_file in /etc/postgresql/VERSION/CLUSTER/)", s.Name)
		}
		if _, err := exec.LookPath("pg_ctlcluster"); err != nil {
			return fmt.Errorf("%s: restart and kill need pg_ctlcluster (Debian's postgresql-common): %v", s.Name, err)
		}
		if euid != 0 && euid != s.ownerUID {
			return fmt.Errorf("%s: pg_ctlcluster must run as root or as the cluster's owner %s", s.Name, s.ownerName())
		}
	case "mysql":
		if _, err := exec.LookPath("start-stop-daemon"); err != nil {
			return fmt.Errorf("%s: restart and kill start the server again with start-stop-daemon: %v", s.Name, err)
		}
		if euid != 0 && euid != s.ownerUID {
			return fmt.Errorf("%s: starting %s needs root (it then runs as the user its configuration names) or %s", s.Name, s.exe, s.ownerName())
		}
	}
	if s.Ready == nil {
		return errors.New("nemesis: Server.Ready is not set")
	}
	return nil
}

func (s *Server) ownerName() string {
	if u, err := user.LookupId(strconv.Itoa(s.ownerUID)); err == nil {
		return "the server's user " + u.Username
	}
	return fmt.Sprintf("the server's user (uid %d)", s.ownerUID)
}

// readPIDFile returns the server's main process id and, for PostgreSQL, the port its
// postmaster.pid records (line 4).
func (s *Server) readPIDFile() (pid int, port string, err error) {
	b, err := os.ReadFile(s.pidFile)
	if err != nil {
		return 0, "", fmt.Errorf("cannot read the server's pid file (%v): run as root or as the server's user", err)
	}
	lines := strings.Split(string(b), "\n")
	pid, err = strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return 0, "", fmt.Errorf("%s: no process id on its first line", s.pidFile)
	}
	if s.Kind == "postgresql" && len(lines) > 3 {
		port = strings.TrimSpace(lines[3])
	}
	return pid, port, nil
}

// Restart stops the server cleanly and starts it again, and waits until it accepts
// connections. The note says what happened, for the history.
func (s *Server) Restart(ctx context.Context) (string, error) {
	old, _, err := s.readPIDFile()
	if err != nil {
		return "", err
	}
	switch s.Kind {
	case "postgresql":
		// Fast shutdown (pg_ctlcluster's default): sessions are terminated, the server
		// checkpoints and stops, then starts; pg_ctl waits until it is ready.
		if err := s.run(ctx, "pg_ctlcluster", "--skip-systemctl-redirect", s.version, s.cluster, "restart"); err != nil {
			return "", err
		}
	case "mysql":
		// SIGTERM is MariaDB's clean shutdown.
		if err := syscall.Kill(old, syscall.SIGTERM); err != nil {
			return "", fmt.Errorf("SIGTERM %d: %v", old, err)
		}
		if err := waitGone(ctx, []int{old}); err != nil {
			return "", err
		}
		if err := s.startMySQL(ctx); err != nil {
			return "", err
		}
	}
	pid, err := s.waitReady(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s restarted: pid %d, then %d", s.Name, old, pid), nil
}

// Kill sends SIGKILL to the server's main process and all its children at once, as a
// crash or the OOM killer would, and waits until they are gone. Start brings it back.
func (s *Server) Kill(ctx context.Context) (string, error) {
	pid, _, err := s.readPIDFile()
	if err != nil {
		return "", err
	}
	// Stop the main process first so that it forks nothing while we list its children
	// (PostgreSQL's backends); a backend left alive would keep the shared memory and
	// the server could not start again.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return "", fmt.Errorf("SIGSTOP %d: %v", pid, err)
	}
	pids := append([]int{pid}, children(pid)...)
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL) // a child may have exited meanwhile
	}
	if err := waitGone(ctx, pids); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s killed: SIGKILL to pid %d%s", s.Name, pid, childrenNote(len(pids)-1)), nil
}

// Start starts the server after Kill and waits until it accepts connections. A start
// after which no server process runs is tried again, twice, a second apart (a
// just-killed server's files and processes can take a moment to go).
func (s *Server) Start(ctx context.Context) (string, error) {
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		switch s.Kind {
		case "postgresql":
			err = s.run(ctx, "pg_ctlcluster", "--skip-systemctl-redirect", s.version, s.cluster, "start")
		case "mysql":
			err = s.startMySQL(ctx)
		}
		if err == nil {
			var pid int
			if pid, err = s.waitReadyOrExit(ctx); err == nil {
				return fmt.Sprintf("%s started: pid %d", s.Name, pid), nil
			}
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(time.Second):
		}
	}
	return "", err
}

// waitReadyOrExit is waitReady, but gives up early when no process of the server's
// executable runs (the start did not take).
func (s *Server) waitReadyOrExit(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	begin := time.Now()
	for {
		err := s.Ready(ctx)
		if err == nil {
			pid, _, err := s.readPIDFile()
			return pid, err
		}
		if time.Since(begin) > 5*time.Second && !s.anyProcess() {
			return 0, fmt.Errorf("%s did not start: no %s process runs (%v)", s.Name, s.exe, err)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%s does not accept connections: %v", s.Name, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// anyProcess reports whether some process runs the server's executable.
func (s *Server) anyProcess() bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if p, err := strconv.Atoi(e.Name()); err == nil {
			if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p)); err == nil && exe == s.exe {
				return true
			}
		}
	}
	return false
}

func (s *Server) startMySQL(ctx context.Context) error {
	return s.run(ctx, "start-stop-daemon", "--start", "--oknodo", "--background", "--exec", s.exe)
}

// Pause stops the server's main process and its children with SIGSTOP: connections
// stay open and nothing answers, as in a long GC pause or a stalled VM.
func (s *Server) Pause() (string, error) {
	pid, _, err := s.readPIDFile()
	if err != nil {
		return "", err
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return "", fmt.Errorf("SIGSTOP %d: %v", pid, err)
	}
	s.mu.Lock()
	s.paused = append(s.paused, pid)
	s.mu.Unlock()
	kids := children(pid)
	for _, p := range kids {
		if syscall.Kill(p, syscall.SIGSTOP) == nil {
			s.mu.Lock()
			s.paused = append(s.paused, p)
			s.mu.Unlock()
		}
	}
	return fmt.Sprintf("%s paused: SIGSTOP to pid %d%s", s.Name, pid, childrenNote(len(kids))), nil
}

func childrenNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" and its %d children", n)
}

// Resume sends SIGCONT to every process Pause stopped.
func (s *Server) Resume() (string, error) {
	s.mu.Lock()
	pids := s.paused
	s.paused = nil
	s.mu.Unlock()
	var firstErr error
	for _, p := range pids {
		if err := syscall.Kill(p, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) && firstErr == nil {
			firstErr = fmt.Errorf("SIGCONT %d: %v", p, err)
		}
	}
	if firstErr != nil {
		return "", firstErr
	}
	return fmt.Sprintf("%s resumed: SIGCONT to %d processes", s.Name, len(pids)), nil
}

// EnsureRunning undoes whatever fault is in force — resumes paused processes, starts a
// server that was killed or is not running — and waits until the server accepts
// connections. Runs call it on every way out, so that the server is left running.
func (s *Server) EnsureRunning(ctx context.Context) error {
	s.mu.Lock()
	paused := len(s.paused) > 0
	s.mu.Unlock()
	if paused {
		if _, err := s.Resume(); err != nil {
			return err
		}
	}
	if pid, _, err := s.readPIDFile(); err != nil || !processAlive(pid) {
		_, err := s.Start(ctx)
		return err
	}
	_, err := s.waitReady(ctx)
	return err
}

// waitReady waits until Ready succeeds, then returns the server's new main pid.
func (s *Server) waitReady(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var err error
	for {
		if err = s.Ready(ctx); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%s does not accept connections: %v", s.Name, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	pid, _, err := s.readPIDFile()
	return pid, err
}

// run runs a command and returns its output in the error when it fails.
func (s *Server) run(ctx context.Context, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// children returns the processes whose parent is pid (from /proc).
func children(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, ok := procStat(p); ok && ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// procStat returns a process's parent and state from /proc/PID/stat.
func procStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}

// processAlive: the process exists and is not a zombie.
func processAlive(pid int) bool {
	_, state, ok := procStat(pid)
	return ok && state != 'Z'
}

// waitGone waits until none of pids exists. A zombie still counts for a while: its
// pid answers kill(pid, 0), so PostgreSQL would take it for a postmaster still
// running its socket's lock file, and refuse to start; on this machine's init, zombies
// are reaped within moments. After zombieGrace the zombies are let be.
func waitGone(ctx context.Context, pids []int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	start := time.Now()
	const zombieGrace = 10 * time.Second
	for {
		left := -1
		for _, p := range pids {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p, &ws, syscall.WNOHANG, nil) // reaps it if it is ours
			_, state, ok := procStat(p)
			if ok && (state != 'Z' || time.Since(start) < zombieGrace) {
				left = p
				break
			}
		}
		if left < 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("process %d did not exit", left)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// CheckLocal returns an error unless host (a name, an address, or a Unix socket
// directory) is this machine: server faults act on processes of this machine.
func CheckLocal(host string) error {
	if ok, why := isLocalHost(host); !ok {
		return fmt.Errorf("the server at %s is not on this machine (%s): server faults need a local server", host, why)
	}
	return nil
}

func isLocalHost(host string) (bool, string) {
	if host == "" || strings.HasPrefix(host, "/") || host == "localhost" {
		return true, ""
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return false, err.Error()
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false, err.Error()
	}
	for _, ip := range ips {
		if ip.IsLoopback() {
			return true, ""
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return true, ""
			}
		}
	}
	return false, "no address of this machine's interfaces"
}
