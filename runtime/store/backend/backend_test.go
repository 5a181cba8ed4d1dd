package backend

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/embedded"
	"github.com/anvil-dev/anvil/runtime/store/spool"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil || c.Kind != KindEmbedded {
		t.Fatalf("empty: %+v %v", c, err)
	}
	c, err = FromEnv(env(map[string]string{EnvStore: "postgres://u:pw@db:5432/anvil", EnvRetention: "90m"}))
	if err != nil || c.Kind != KindPostgres || c.DSN != "postgres://u:pw@db:5432/anvil" || c.Retention != 90*time.Minute {
		t.Fatalf("postgres: %+v %v", c.Kind, err)
	}
	_, err = FromEnv(env(map[string]string{EnvStore: "mysql://u:pw@db/x"}))
	if !errors.Is(err, store.ErrConfig) || strings.Contains(err.Error(), "pw") {
		t.Fatalf("other scheme: %v", err)
	}
	_, err = FromEnv(env(map[string]string{EnvRetention: "-1h"}))
	if !errors.Is(err, store.ErrConfig) {
		t.Fatalf("bad retention: %v", err)
	}
	c, err = FromEnv(env(map[string]string{EnvLease: "3s"}))
	if err != nil || c.LeaseTTL != 3*time.Second || c.Retention != 0 {
		t.Fatalf("lease: %+v %v", c.Options, err)
	}
	for _, bad := range []string{"500ms", "2h", "soon", "-5s"} {
		_, err = FromEnv(env(map[string]string{EnvLease: bad}))
		if !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), EnvLease) {
			t.Errorf("lease %q: %v", bad, err)
		}
	}
	for v, want := range map[string]time.Duration{"": 0, "0": -1, "0s": -1, "500ms": 500 * time.Millisecond, "30s": 30 * time.Second} {
		c, err = FromEnv(env(map[string]string{EnvWait: v}))
		if err != nil || c.Wait != want {
			t.Errorf("wait %q: %v %v, want %v", v, c.Wait, err, want)
		}
	}
	for _, bad := range []string{"31s", "-1s", "later"} {
		_, err = FromEnv(env(map[string]string{EnvWait: bad}))
		if !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), EnvWait) {
			t.Errorf("wait %q: %v", bad, err)
		}
	}
}

func TestOpenEmbedded(t *testing.T) {
	dir := t.TempDir()
	c, err := FromEnv(env(map[string]string{EnvStateFile: filepath.Join(dir, "s.db")}))
	if err != nil {
		t.Fatal(err)
	}
	c.VaultDir = filepath.Join(dir, "vault")
	c.Key = make([]byte, 32)
	s, err := Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp, ok := s.(*spool.Store)
	if !ok {
		t.Fatalf("got %T", s)
	}
	if _, ok := sp.Store.(*embedded.Store); !ok || sp.Dir() != filepath.Join(dir, "ledger-spool") {
		t.Fatalf("got %T spooling to %s", sp.Store, sp.Dir())
	}
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), Config{Kind: "redis"}); !errors.Is(err, store.ErrConfig) {
		t.Fatalf("unknown kind: %v", err)
	}
}
