package embedded_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/embedded"
	"github.com/anvil-dev/anvil/runtime/store/storetest"
)

// backend runs the suite on files in a test's temporary directory.
type backend struct {
	mu   sync.Mutex
	dirs map[store.Store]string
}

func (b *backend) open(t *testing.T, dir string, opts store.Options) (*embedded.Store, error) {
	return embedded.Open(embedded.Config{VaultDir: filepath.Join(dir, "vault"), Path: filepath.Join(dir, "state.db"), Options: opts})
}

func (b *backend) Open(t *testing.T, opts store.Options, n int) []store.Store {
	dir := t.TempDir()
	s, err := b.open(t, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b.mu.Lock()
	b.dirs[s] = dir
	b.mu.Unlock()
	out := make([]store.Store, n)
	for i := range out {
		out[i] = s // bbolt admits one process: every "replica" is this one
	}
	return out
}

func (b *backend) Raw(t *testing.T, s store.Store) []byte {
	b.mu.Lock()
	dir := b.dirs[s]
	b.mu.Unlock()
	var all []byte
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		all = append(all, data...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func (b *backend) OpenNewerSchema(t *testing.T, opts store.Options) error {
	dir := t.TempDir()
	s, err := b.open(t, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := embedded.SetSchemaVersion(filepath.Join(dir, "state.db"), embedded.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	s, err = b.open(t, dir, opts)
	if err == nil {
		s.Close()
	}
	return err
}

// Unreachable: a closed store.
func (b *backend) Unreachable(t *testing.T, opts store.Options) (store.Store, error) {
	s, err := b.open(t, t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	return s, nil
}

func TestSuite(t *testing.T) {
	storetest.Run(t, &backend{dirs: map[store.Store]string{}})
}

// A state file another process (here: another handle) holds is refused
// as unavailable after the bounded lock wait, never a hang, and the refusal
// names the file, the wait and what to do. An open waiting for the lock
// takes the file once its holder releases it.
func TestStateFileHeld(t *testing.T) {
	dir := t.TempDir()
	b := &backend{}
	opts := storetest.Options(storetest.NewClock())
	s, err := b.open(t, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	path := filepath.Join(dir, "state.db")
	open := func(wait time.Duration) <-chan error {
		done := make(chan error, 1)
		go func() {
			s2, err := embedded.Open(embedded.Config{VaultDir: filepath.Join(dir, "vault"), Path: path, LockWait: wait, Options: opts})
			if err == nil {
				s2.Close()
			}
			done <- err
		}()
		return done
	}
	select {
	case err = <-open(300 * time.Millisecond):
	case <-time.After(30 * time.Second): // a hang guard
		t.Fatal("hung: the second open did not give up after its 300ms lock wait")
	}
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "ANVIL_STATE_FILE") ||
		!strings.Contains(err.Error(), "waited 300ms") {
		t.Fatalf("second open = %v", err)
	}

	// A waiter with a wait far longer than the test wakes when the holder
	// lets go: success is the event (a wait run out would be an error).
	waiter := open(time.Hour)
	select {
	case err := <-waiter:
		t.Fatalf("an open returned while the file was held: %v", err)
	default:
	}
	s.Close()
	select {
	case err := <-waiter:
		if err != nil {
			t.Fatalf("the waiter, once the holder closed: %v", err)
		}
	case <-time.After(30 * time.Second): // a hang guard
		t.Fatal("hung: the waiter did not take the file its holder released")
	}
}

// TestOrphansExpireOnOpen: the process that opens a state file holds its
// lock, so the in-flight entries found there belong to a process that is
// gone: their leases end at once, and a retry resolves them without
// waiting out a lease.
func TestOrphansExpireOnOpen(t *testing.T) {
	dir := t.TempDir()
	b := &backend{}
	clock := storetest.NewClock()
	opts := storetest.Options(clock) // a one-minute lease on a clock that does not move
	s, err := b.open(t, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	k := store.LedgerKey{Subject: "a", ID: "orphan", Tool: "t", InputHash: "h"}
	if _, err := s.Begin(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	s.Close() // the owner is gone without completing
	s, err = b.open(t, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Begin(context.Background(), k)
	if err != nil || r.Outcome != store.OutcomeUnknown {
		t.Fatalf("retry after reopening = %+v, %v; want outcome unknown at once", r, err)
	}
}

// Records written by runtime/vault before the store existed are read, and
// the state file sits beside the vault directory, not in it.
func TestDefaultPathBesideVault(t *testing.T) {
	dir := t.TempDir()
	vd := filepath.Join(dir, "vault")
	if got := embedded.DefaultPath(vd); got != filepath.Join(dir, "state.db") {
		t.Fatalf("default path = %s", got)
	}
	s, err := embedded.Open(embedded.Config{VaultDir: vd, Options: storetest.Options(storetest.NewClock())})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(filepath.Join(dir, "state.db")); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkLedger(b *testing.B) {
	dir := b.TempDir()
	s, err := embedded.Open(embedded.Config{VaultDir: filepath.Join(dir, "vault"), Options: store.Options{Key: storetest.TestKey()}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchLedger(b, s)
}

// A gateway killed with SIGKILL mid-call loses no vault record, releases
// the state file, and its half-done ledger entry blocks a retry only until
// its lease expires.
func TestKill9(t *testing.T) {
	open := func(dir string) *embedded.Store {
		s, err := embedded.Open(embedded.Config{VaultDir: filepath.Join(dir, "vault"),
			Options: store.Options{Key: storetest.TestKey(), LeaseTTL: storetest.CrashLease}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if os.Getenv(storetest.EnvCrashChild) == "1" {
		storetest.CrashChild(open(os.Getenv("CRASH_DIR")))
	}
	dir := t.TempDir()
	storetest.Kill9(t, "TestKill9", []string{"CRASH_DIR=" + dir}, func() store.Store {
		s := open(dir)
		t.Cleanup(func() { s.Close() })
		return s
	})
}
