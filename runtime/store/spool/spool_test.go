package spool_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/embedded"
	"github.com/anvil-dev/anvil/runtime/store/spool"
	"github.com/anvil-dev/anvil/runtime/store/storetest"
)

// flaky is a store whose Complete fails unavailable while down is set, as
// a database that stopped between a keyed write's Begin and its Complete.
type flaky struct {
	store.Store
	down atomic.Bool
}

func (f *flaky) Complete(ctx context.Context, l store.Lease, a store.Answer) error {
	if f.down.Load() {
		return store.ErrUnavailable
	}
	return f.Store.Complete(ctx, l, a)
}

func open(t *testing.T, dir string) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(embedded.Config{VaultDir: filepath.Join(dir, "vault"),
		Options: store.Options{Key: storetest.TestKey(), LeaseTTL: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

var key = store.LedgerKey{Subject: "alice", ID: "t k1", Tool: "t", InputHash: "h"}

// TestSpoolKeepsTheAnswer: the store is down when the answer comes back;
// the answer is spooled (Complete answers nil), this process replays it
// from the spool, and it is recorded once the store is back, after which
// the spool is empty and every reader of the store replays it.
func TestSpoolKeepsTheAnswer(t *testing.T) {
	dir := t.TempDir()
	inner := &flaky{Store: open(t, dir)}
	s, err := spool.Wrap(inner, filepath.Join(dir, "spool"), storetest.TestKey(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b, err := s.Begin(ctx, key)
	if err != nil || b.Outcome != store.OutcomeNew {
		t.Fatalf("Begin: %+v %v", b, err)
	}
	inner.down.Store(true)
	if err := s.Complete(ctx, b.Lease, store.Answer{Status: 201, Result: []byte("made")}); err != nil {
		t.Fatalf("Complete with the store down: %v", err)
	}
	if p := s.Pending(); len(p) != 1 {
		t.Fatalf("pending: %v", p)
	}
	// The spool file holds no answer in the clear.
	raw, _ := os.ReadFile(filepath.Join(s.Dir(), s.Pending()[0]))
	if len(raw) == 0 || bytes.Contains(raw, []byte("made")) {
		t.Fatalf("spool file: %q", raw)
	}
	r, err := s.Begin(ctx, key)
	if err != nil || r.Outcome != store.OutcomeReplay || string(r.Answer.Result) != "made" {
		t.Fatalf("repeat while spooled: %+v %v", r, err)
	}
	inner.down.Store(false)
	waitFor(t, "the spool to be replayed", func() bool { return len(s.Pending()) == 0 })
	r, err = inner.Store.Begin(ctx, key)
	if err != nil || r.Outcome != store.OutcomeReplay || string(r.Answer.Result) != "made" || r.Answer.Status != 201 {
		t.Fatalf("store after the replay: %+v %v", r, err)
	}
}

// TestSpoolSurvivesARestart: a process that spooled an answer and died
// before replaying it leaves the file; the next process on the spool
// records it.
func TestSpoolSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	spoolDir := filepath.Join(dir, "spool")
	inner := &flaky{Store: open(t, dir)}
	s, err := spool.Wrap(inner, spoolDir, storetest.TestKey(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, _ := s.Begin(ctx, key)
	inner.down.Store(true)
	if err := s.Complete(ctx, b.Lease, store.Answer{Result: []byte("kept")}); err != nil {
		t.Fatal(err)
	}
	s.Close() // the process ends with the store still down
	if entries, _ := os.ReadDir(spoolDir); len(entries) != 1 {
		t.Fatalf("spool after the stop: %v", entries)
	}
	s2, err := spool.Wrap(open(t, dir), spoolDir, storetest.TestKey(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	waitFor(t, "the replay after the restart", func() bool { return len(s2.Pending()) == 0 })
	r, err := s2.Begin(ctx, key)
	if err != nil || r.Outcome != store.OutcomeReplay || string(r.Answer.Result) != "kept" {
		t.Fatalf("after the restart: %+v %v", r, err)
	}
}

// TestSpoolYieldsToATakeover: when another caller took the entry over
// before the spool could record the answer, the spooled answer is dropped
// and the takeover's stays the recorded one.
func TestSpoolYieldsToATakeover(t *testing.T) {
	dir := t.TempDir()
	clock := storetest.NewClock()
	emb, err := embedded.Open(embedded.Config{VaultDir: filepath.Join(dir, "vault"),
		Options: store.Options{Key: storetest.TestKey(), LeaseTTL: time.Minute, Now: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	inner := &flaky{Store: emb}
	s, err := spool.Wrap(inner, filepath.Join(dir, "spool"), storetest.TestKey(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b, _ := s.Begin(ctx, key)
	inner.down.Store(true)
	_ = s.Complete(ctx, b.Lease, store.Answer{Result: []byte("old owner")})
	clock.Advance(2 * time.Minute)
	k := key
	k.TakeOver = true
	tk, err := emb.Begin(ctx, k)
	if err != nil || !tk.TookOver {
		t.Fatalf("takeover: %+v %v", tk, err)
	}
	if err := emb.Complete(ctx, tk.Lease, store.Answer{Result: []byte("new owner")}); err != nil {
		t.Fatal(err)
	}
	inner.down.Store(false)
	waitFor(t, "the spool to give way", func() bool { return len(s.Pending()) == 0 })
	r, err := emb.Begin(ctx, key)
	if err != nil || string(r.Answer.Result) != "new owner" {
		t.Fatalf("recorded: %+v %v", r, err)
	}
}
