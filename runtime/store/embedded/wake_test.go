package embedded

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/storetest"
)

// Only a waiting Begin registers a wake channel, and completing the entry
// drops it: replays and conflicts leave nothing behind (a gateway serving
// millions of replays must not grow the table).
func TestWakeChannelsDoNotAccumulate(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{VaultDir: filepath.Join(dir, "vault"), Options: storetest.Options(storetest.NewClock())})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	k := store.LedgerKey{Subject: "s", ID: "i", Tool: "t", InputHash: "h"}
	r, err := s.Begin(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Complete(ctx, r.Lease, store.Answer{Status: 200}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Begin(ctx, k); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Begin(ctx, store.LedgerKey{Subject: "s", ID: "i", Tool: "t", InputHash: "other"}); err != nil {
			t.Fatal(err)
		}
	}
	s.wmu.Lock()
	n := len(s.wakes)
	s.wmu.Unlock()
	if n != 0 {
		t.Fatalf("%d wake channels left", n)
	}
}
