//go:build unix

package vault

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// within fails the test when f does not return within two seconds (it
// would block for ever on a FIFO opened for reading with no writer).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

// TestFIFORecordDoesNotBlock is the regression test for finding 7 of issue
// 15: a FIFO where a record belongs is refused without blocking, and the
// store's lock is not held by a reader stuck on it, so Put (for that
// connection and any other) and List go on.
func TestFIFORecordDoesNotBlock(t *testing.T) {
	s, dir := openStore(t)
	fifo := filepath.Join(dir, FileName("local:ada", "github", "default"))
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	within(t, "Get", func() {
		if _, err := s.Get("local:ada", "github", "default"); !errors.Is(err, ErrUnreadable) {
			t.Errorf("Get on a FIFO: %v, want ErrUnreadable", err)
		}
	})
	within(t, "Put", func() {
		for _, acct := range []string{"other", "default"} {
			if err := s.Put(&Connection{Sub: "local:ada", Connector: "github", Account: acct, Kind: KindStatic, Secret: "k"}); err != nil {
				t.Errorf("Put %s: %v", acct, err)
			}
		}
	})
	within(t, "List", func() {
		if l, err := s.List("local:ada"); err != nil || len(l) != 2 {
			t.Errorf("List: %d, %v", len(l), err)
		}
	})
	key := filepath.Join(t.TempDir(), "key")
	if err := syscall.Mkfifo(key, 0o600); err != nil {
		t.Fatal(err)
	}
	within(t, "LoadKey", func() {
		if _, err := LoadKey(key); !errors.Is(err, ErrKey) {
			t.Errorf("LoadKey on a FIFO: %v", err)
		}
	})
}

// TestOpenRemovesStaleTemps: temporary records a crash left behind are
// removed when the store opens; a fresh one (another process writing now)
// and records stay.
func TestOpenRemovesStaleTemps(t *testing.T) {
	s, dir := openStore(t)
	if err := s.Put(&Connection{Sub: "s", Connector: "c", Account: "a", Kind: KindStatic, Secret: "k"}); err != nil {
		t.Fatal(err)
	}
	old, fresh := filepath.Join(dir, ".tmp-123"), filepath.Join(dir, ".tmp-456")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * StaleTempAge)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, testKey(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temp: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temp removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName("s", "c", "a"))); err != nil {
		t.Errorf("record removed: %v", err)
	}
}
