// Package pgtest gives tests a PostgreSQL server: the one ANVIL_TEST_POSTGRES
// names (a DSN), or else a throwaway cluster started with the binaries in
// /usr/lib/postgresql/*/bin (initdb, pg_ctl) in a temporary directory on a
// loopback port, as the postgres user when running as root (the server
// refuses root). When neither exists, Start reports why in one line so the
// caller can skip with it.
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
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names an existing server to test against.
const EnvDSN = "ANVIL_TEST_POSTGRES"

// ErrNoPostgres is Start's error when no server can be had; its text is
// the one line a skipping test prints.
var ErrNoPostgres = errors.New("PostgreSQL tests skipped: ANVIL_TEST_POSTGRES is unset and no PostgreSQL is installed under /usr/lib/postgresql (run scripts/ci-postgres.sh)")

// Server is a PostgreSQL server for tests.
type Server struct {
	DSN   string // superuser DSN (database postgres)
	owned bool   // started here: Stop/Start/Close control it
	dir   string
	bin   string
	port  int
	asPG  bool // run the binaries as the postgres user
}

var schemas atomic.Int64

// binGlob finds initdb (a variable so a test can point it at nothing).
var binGlob = "/usr/lib/postgresql/*/bin/initdb"

// Start returns the server of ANVIL_TEST_POSTGRES, or starts a throwaway
// one. ErrNoPostgres when neither is possible.
func Start() (*Server, error) {
	if dsn := strings.TrimSpace(os.Getenv(EnvDSN)); dsn != "" {
		return &Server{DSN: dsn}, nil
	}
	bins, _ := filepath.Glob(binGlob)
	if len(bins) == 0 {
		return nil, ErrNoPostgres
	}
	sort.Slice(bins, func(i, j int) bool { return version(bins[i]) > version(bins[j]) })
	s := &Server{owned: true, bin: filepath.Dir(bins[0])}
	dir, err := os.MkdirTemp("", "anvil-pg-")
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
		s.asPG = true
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

func version(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// run runs one PostgreSQL binary (as postgres when needed).
func (s *Server) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(s.bin, name)
	var cmd *exec.Cmd
	if s.asPG {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = s.dir
	return cmd.CombinedOutput()
}

// Owned reports whether the server was started here (and can be stopped).
func (s *Server) Owned() bool { return s.owned }

// StartServer starts an owned server (again).
func (s *Server) StartServer() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
		s.port, s.dir)
	if out, err := s.run("pg_ctl", "-D", s.data(), "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("pg_ctl start: %w: %s %s", err, out, log)
	}
	return nil
}

// StopServer stops an owned server, ending every connection (fast mode:
// committed data survives although the test server runs without
// synchronous commit).
func (s *Server) StopServer() error {
	if out, err := s.run("pg_ctl", "-D", s.data(), "-w", "-m", "fast", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %w: %s", err, out)
	}
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
