package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/internal/pgtest"
	"github.com/anvil-dev/anvil/internal/testinput"
	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/pgstore"
	"github.com/anvil-dev/anvil/runtime/store/storetest"
)

// server is the PostgreSQL every test of the package shares (a fresh
// schema each); nil with skipReason set when there is none.
var (
	server     *pgtest.Server
	skipReason error
)

func TestMain(m *testing.M) {
	if os.Getenv(storetest.EnvCrashChild) == "1" {
		// TestKill9's child uses its parent's server and is killed: it
		// must not start one of its own (it could never stop it).
		os.Exit(m.Run())
	}
	server, skipReason = pgtest.Start()
	if skipReason != nil {
		// One clear line, printed even without -v.
		fmt.Println(pgtest.SkipLine(skipReason))
	}
	code := m.Run()
	if server != nil {
		server.Close()
	}
	os.Exit(code)
}

func need(t testing.TB) *pgtest.Server {
	t.Helper()
	if server == nil {
		testinput.Missing(t, "%s (scripts/ci-postgres.sh installs PostgreSQL)", pgtest.SkipLine(skipReason))
	}
	return server
}

func open(t testing.TB, dsn string, opts store.Options) *pgstore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := pgstore.Open(ctx, pgstore.Config{DSN: dsn, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func freshDSN(t testing.TB) string {
	dsn, err := need(t).NewSchema()
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// backend runs the suite on a fresh schema per test; each replica is its
// own pool, as separate gateway processes would have.
type backend struct {
	mu   sync.Mutex
	dsns map[store.Store]string
}

func (b *backend) Open(t *testing.T, opts store.Options, n int) []store.Store {
	dsn := freshDSN(t)
	out := make([]store.Store, n)
	for i := range out {
		out[i] = open(t, dsn, opts)
	}
	b.mu.Lock()
	for _, s := range out {
		b.dsns[s] = dsn
	}
	b.mu.Unlock()
	return out
}

func (b *backend) Raw(t *testing.T, s store.Store) []byte {
	b.mu.Lock()
	dsn := b.dsns[s]
	b.mu.Unlock()
	ctx := context.Background()
	var all []byte
	for _, table := range []string{"anvil_vault", "anvil_flows", "anvil_ledger", "anvil_sessions"} {
		var text string
		if err := pgtest.QueryRow(ctx, dsn, `SELECT coalesce(string_agg(t::text, ''), '') FROM `+table+` t`, &text); err != nil {
			t.Fatal(err)
		}
		all = append(all, text...)
	}
	return all
}

func (b *backend) OpenNewerSchema(t *testing.T, opts store.Options) error {
	dsn := freshDSN(t)
	open(t, dsn, opts).Close()
	if err := pgtest.Exec(dsn, `INSERT INTO `+pgstore.VersionTable+` (version) VALUES ($1)`, pgstore.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := pgstore.Open(ctx, pgstore.Config{DSN: dsn, Options: opts})
	if err == nil {
		s.Close()
	}
	return err
}

// Unreachable: a loopback port nothing listens on.
func (b *backend) Unreachable(t *testing.T, opts store.Options) (store.Store, error) {
	return open(t, deadDSN(t), opts), nil
}

func deadDSN(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return fmt.Sprintf("postgres://anvil:hunter2@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", port)
}

func TestSuite(t *testing.T) {
	need(t)
	storetest.Run(t, &backend{dsns: map[store.Store]string{}})
}

// An unreachable database's errors and logs never show the password of
// the DSN.
func TestUnreachableKeepsPasswordOut(t *testing.T) {
	var logs strings.Builder
	dsn := deadDSN(t)
	s, err := pgstore.Open(context.Background(), pgstore.Config{DSN: dsn,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Options: storetest.Options(storetest.NewClock())})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.GetConnection(context.Background(), "u", "c", "a")
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	time.Sleep(300 * time.Millisecond) // a background retry or two
	pingErr := s.Ping(context.Background())
	s.Close()
	for _, text := range []string{err.Error(), pingErr.Error(), logs.String()} {
		if strings.Contains(text, "hunter2") {
			t.Fatalf("password shown: %s", text)
		}
	}
	if !strings.Contains(logs.String(), "unavailable") {
		t.Fatalf("no reconnect notice logged: %q", logs.String())
	}
}

// Replicas starting together on an empty database migrate once.
func TestConcurrentMigration(t *testing.T) {
	dsn := freshDSN(t)
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := pgstore.Open(context.Background(), pgstore.Config{DSN: dsn, Options: storetest.Options(storetest.NewClock())})
			if err == nil {
				err = s.Ping(context.Background())
				s.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := pgtest.QueryRow(context.Background(), dsn, `SELECT count(*) FROM `+pgstore.VersionTable, &n); err != nil {
		t.Fatal(err)
	}
	if n != pgstore.SchemaVersion {
		t.Fatalf("%d version rows, want %d", n, pgstore.SchemaVersion)
	}
}

// A bad DSN is a configuration error that does not echo the DSN (it may
// hold a password).
func TestBadDSN(t *testing.T) {
	_, err := pgstore.Open(context.Background(), pgstore.Config{DSN: "postgres://u:sekrit@[::1/x", Options: storetest.Options(storetest.NewClock())})
	if !errors.Is(err, store.ErrConfig) {
		t.Fatalf("err = %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "sekrit") {
		t.Fatalf("error quotes the password: %v", err)
	}
}

// The database going down mid-run makes calls fail with ErrUnavailable
// (never a hang, never a password in the error); when it comes back the
// same store works again, and a store opened while it was down becomes
// ready by itself.
func TestReconnect(t *testing.T) {
	srv := need(t)
	if !srv.Owned() {
		t.Skip("the server of ANVIL_TEST_POSTGRES is not stopped by tests")
	}
	dsn := freshDSN(t)
	opts := storetest.Options(storetest.NewClock())
	s := open(t, dsn, opts)
	ctx := context.Background()
	if err := s.CreateSession(ctx, "sid", "fp"); err != nil {
		t.Fatal(err)
	}
	if err := srv.StopServer(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = srv.StartServer()
		}
	}()
	c, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	err := s.CheckSession(c, "sid", "fp")
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("while down: %v", err)
	}
	late := open(t, dsn, opts) // opened while down: unready, retrying
	if err := late.Ping(c); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("late store while down: %v", err)
	}
	if err := srv.StartServer(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	deadline := time.Now().Add(20 * time.Second)
	for {
		e1 := s.CheckSession(ctx, "sid", "fp")
		e2 := late.CheckSession(ctx, "sid", "fp")
		if e1 == nil && e2 == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not back after restart: %v / %v", e1, e2)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func BenchmarkLedger(b *testing.B) {
	s := open(b, freshDSN(b), store.Options{Key: storetest.TestKey()})
	storetest.BenchLedger(b, s)
}

// A replica killed with SIGKILL mid-call loses no vault record, and its
// half-done ledger entry blocks a retry on another replica only until its
// lease expires.
func TestKill9(t *testing.T) {
	opts := store.Options{Key: storetest.TestKey(), LeaseTTL: storetest.CrashLease}
	if os.Getenv(storetest.EnvCrashChild) == "1" {
		s, err := pgstore.Open(context.Background(), pgstore.Config{DSN: os.Getenv("CRASH_DSN"), Options: opts})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		storetest.CrashChild(s)
	}
	dsn := freshDSN(t)
	storetest.Kill9(t, "TestKill9", []string{"CRASH_DSN=" + dsn}, func() store.Store { return open(t, dsn, opts) })
}

// Without PostgreSQL every test of this package passes or skips, and the
// binary says so in exactly one line.
func TestNoPostgresSkipsWithOneLine(t *testing.T) {
	pgtest.CheckSkipLine(t, ".")
}
