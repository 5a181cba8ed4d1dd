// Package pgtest gives tests (and make load) a PostgreSQL server: the one
// ANVIL_TEST_POSTGRES names (a DSN), or else a throwaway cluster started
// with the binaries in /usr/lib/postgresql/*/bin (initdb, pg_ctl) in a
// temporary directory on a loopback port, as the postgres user when running
// as root (the server refuses root), and stopped with the process that
// started it even when that one is killed. When neither exists (or
// ANVIL_TEST_POSTGRES=none), Start says why in one line, which a test binary
// prints once (SkipLine) before skipping its PostgreSQL tests.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names an existing server to test against, or is NoServer.
const EnvDSN = "ANVIL_TEST_POSTGRES"

// NoServer as EnvDSN makes Start behave as on a machine without
// PostgreSQL (ErrNoPostgres) even when one is installed: it is how a test
// checks the skip line, and how a developer skips the slower tests.
const NoServer = "none"

// ErrNoPostgres is wrapped by Start's error when no server can be had;
// that error's text is one line saying why, which a test binary prints
// once when it skips its PostgreSQL tests (SkipLine).
var ErrNoPostgres = errors.New("no PostgreSQL")

// Server is a PostgreSQL server for tests.
type Server struct {
	DSN   string // superuser DSN (database postgres)
	owned bool   // started here: Stop/Start/Close control it
	// durable: an owned server syncs its commits to disk, as a production
	// one does (StartDurable); else fsync and synchronous commit are off.
	durable bool
	dir     string
	bin     string
	port    int
	cred    *syscall.Credential // the postgres user's, when running as root
	proc    *exec.Cmd           // the running postmaster
	exit    chan error          // its Wait result
}

var schemas atomic.Int64

// binGlob finds initdb (a variable so a test can point it at nothing).
var binGlob = "/usr/lib/postgresql/*/bin/initdb"

// SkipLine is the line a test binary prints once, from TestMain, when
// Start failed with err, so that the skip is never silent.
func SkipLine(err error) string { return "PostgreSQL tests skipped: " + err.Error() }

// Start returns the server of ANVIL_TEST_POSTGRES, or starts a throwaway
// one without fsync (fast, and enough for tests). ErrNoPostgres when
// neither is possible.
func Start() (*Server, error) { return start(false) }

// StartDurable is Start with a throwaway server that syncs every commit to
// disk (fsync, synchronous commit and full-page writes on, PostgreSQL's
// defaults), for measurements that compare it with a store that syncs.
func StartDurable() (*Server, error) { return start(true) }

func start(durable bool) (*Server, error) {
	dsn := strings.TrimSpace(os.Getenv(EnvDSN))
	if dsn == NoServer {
		return nil, fmt.Errorf("%w: %s=%s", ErrNoPostgres, EnvDSN, NoServer)
	}
	if dsn != "" {
		return &Server{DSN: dsn}, nil
	}
	bins, _ := filepath.Glob(binGlob)
	if len(bins) == 0 {
		return nil, fmt.Errorf("%w: %s is unset and no PostgreSQL is installed under /usr/lib/postgresql (run scripts/ci-postgres.sh)", ErrNoPostgres, EnvDSN)
	}
	sort.Slice(bins, func(i, j int) bool { return version(bins[i]) > version(bins[j]) })
	s := &Server{owned: true, durable: durable, bin: filepath.Dir(bins[0])}
	removeStale()
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, err
	}
	s.dir = dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and there is no postgres user to run the server as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if out, err := s.run("initdb", "-D", s.data(), "-U", "anvil", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		s.Close()
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		return nil, err
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	if err := s.StartServer(); err != nil {
		s.Close()
		return nil, err
	}
	s.DSN = fmt.Sprintf("postgres://anvil@127.0.0.1:%d/postgres?sslmode=disable", s.port)
	return s, nil
}

// dirPrefix names the temporary directories of throwaway servers.
const dirPrefix = "anvil-pg-"

// removeStale deletes the directories of throwaway servers whose test
// binary was killed (its server died with it, but the directory stayed):
// older than ten minutes and with no live postmaster.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < 10*time.Minute {
			continue
		}
		if pid, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(pid), "\n", 2)[0]))
			if n > 0 && syscall.Kill(n, 0) == nil {
				continue
			}
		}
		os.RemoveAll(d)
	}
}

func version(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// run runs one PostgreSQL binary (as postgres when needed).
func (s *Server) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	return cmd.CombinedOutput()
}

// Owned reports whether the server was started here (and can be stopped).
func (s *Server) Owned() bool { return s.owned }

// StartServer starts an owned server (again). The postmaster is a direct
// child with a parent-death signal, so a test binary that is killed (or
// times out) takes its server down with it instead of leaking it.
func (s *Server) StartServer() error {
	logf, err := os.OpenFile(filepath.Join(s.dir, "log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := []string{"-D", s.data(), "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"}
	if !s.durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	s.proc, s.exit = cmd, make(chan error, 1)
	go func() { s.exit <- cmd.Wait() }()
	dsn := fmt.Sprintf("postgres://anvil@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", s.port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		conn, err := pgx.Connect(ctx, dsn)
		if err == nil {
			conn.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		select {
		case werr := <-s.exit:
			s.exit <- werr
			log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
			return fmt.Errorf("postgres exited: %v: %s", werr, log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = s.StopServer()
			return fmt.Errorf("postgres did not accept connections within 60s: %w", err)
		}
	}
}

// StopServer stops an owned server, ending every connection (fast
// shutdown: committed data survives although the test server runs without
// synchronous commit).
func (s *Server) StopServer() error {
	if s.proc == nil {
		return nil
	}
	_ = s.proc.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exit:
	case <-time.After(30 * time.Second):
		_ = s.proc.Process.Kill()
		<-s.exit
	}
	s.proc = nil
	return nil
}

// Close stops an owned server and removes its directory.
func (s *Server) Close() {
	if !s.owned || s.dir == "" {
		return
	}
	_ = s.StopServer()
	os.RemoveAll(s.dir)
}

// NewSchema creates a fresh schema and returns a DSN whose search_path is
// it, so each test has its own empty tables on the shared server.
func (s *Server) NewSchema() (string, error) {
	name := fmt.Sprintf("anvil_t%d_%d", os.Getpid(), schemas.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		return "", err
	}
	return WithSearchPath(s.DSN, name)
}

// WithSearchPath adds search_path=schema to a URL DSN.
func WithSearchPath(dsn, schema string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("%s must be a postgres:// URL", EnvDSN)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Exec runs one statement on dsn (test set-up, such as a newer schema row).
func Exec(dsn, sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql, args...)
	return err
}

// QueryRow runs one query on dsn and scans its single row into dest.
func QueryRow(ctx context.Context, dsn, sql string, dest ...any) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dest...)
}

// CheckSkipLine runs this test binary again, without -v, as on a machine
// without PostgreSQL (ANVIL_TEST_POSTGRES=none) and outside CI, running
// only the tests that match run (a -test.run pattern naming PostgreSQL
// tests; the calling test itself is left out). The run must pass and print
// the skip line first, then only the loud line internal/testinput prints
// per skipped test ("!!! SKIPPING <test>: " and the skip line), then PASS.
// It is how a package checks that its PostgreSQL tests never skip
// silently, nor fail without PostgreSQL outside CI.
func CheckSkipLine(t *testing.T, run string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.skip=^"+t.Name()+"$", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") { // under CI a missing input fails (internal/testinput)
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, EnvDSN+"="+NoServer)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the run without PostgreSQL failed: %v\n%s", err, out)
	}
	want := SkipLine(fmt.Errorf("%w: %s=%s", ErrNoPostgres, EnvDSN, NoServer))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	ok := len(lines) >= 2 && lines[0] == want && lines[len(lines)-1] == "PASS"
	for i := 1; ok && i < len(lines)-1; i++ {
		l := lines[i]
		name, rest, found := strings.Cut(strings.TrimPrefix(l, "!!! SKIPPING "), ": ")
		if !strings.HasPrefix(l, "!!! SKIPPING ") || !found || name == "" || !strings.HasPrefix(rest, want) {
			ok = false
		}
	}
	if !ok {
		t.Fatalf("without PostgreSQL the tests printed\n%s\nwant\n%s\nthen only lines \"!!! SKIPPING <test>: %s…\", then PASS", out, want, want)
	}
}
