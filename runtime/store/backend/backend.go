// Package backend picks the store implementation from the environment:
// ANVIL_STORE empty → runtime/store/embedded (one machine, no database);
// postgres:// or postgresql:// → runtime/store/pgstore.
package backend

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/embedded"
	"github.com/anvil-dev/anvil/runtime/store/pgstore"
	"github.com/anvil-dev/anvil/runtime/store/spool"
)

// Environment variables read by FromEnv.
const (
	// EnvStore selects the backend: empty (embedded) or a PostgreSQL URL.
	EnvStore = "ANVIL_STORE"
	// EnvStateFile overrides the embedded bbolt file (default state.db
	// beside the vault directory).
	EnvStateFile = "ANVIL_STATE_FILE"
	// EnvRetention is how long completed ledger entries replay, as a Go
	// duration ("24h", "90m"); default store.DefaultRetention.
	EnvRetention = "ANVIL_LEDGER_RETENTION"
	// EnvLease is how long a replica that began a keyed write owns its
	// ledger entry without renewing it, as a Go duration, between
	// MinLease and MaxLease; default store.DefaultLeaseTTL. A live owner
	// renews a third of the way to each expiry; once an owner has died
	// (kill -9), its entry is resolved this long after its last renewal
	// at most.
	EnvLease = "ANVIL_LEDGER_LEASE"
	// EnvWait is how long a repeat of an in-flight keyed write waits for
	// the first to finish before it is answered "in progress" (409,
	// Retry-After), as a Go duration up to MaxWait; "0" answers at once;
	// default store.DefaultWait.
	EnvWait = "ANVIL_LEDGER_WAIT"
	// EnvTimeout bounds each round trip to the store (a Go duration from
	// 100ms to 1m; default store.DefaultOpTimeout): a database that stops
	// answering costs a call at most this long per round trip.
	EnvTimeout = "ANVIL_STORE_TIMEOUT"
	// EnvSpool is the directory where answers the store could not record
	// are kept until it can (runtime/store/spool); default ledger-spool
	// beside the vault directory.
	EnvSpool = "ANVIL_LEDGER_SPOOL"
	// EnvLockWait is how long a gateway waits for another process to
	// release the embedded state file before it refuses to start, as a Go
	// duration up to MaxLockWait; default embedded.DefaultLockWait.
	EnvLockWait = "ANVIL_STATE_LOCK_WAIT"
)

// MaxLockWait bounds ANVIL_STATE_LOCK_WAIT.
const MaxLockWait = 5 * time.Minute

// MaxWait bounds ANVIL_LEDGER_WAIT: a repeat is answered, one way or the
// other, well before a client or proxy gives up on it.
const MaxWait = 30 * time.Second

// Bounds of ANVIL_LEDGER_LEASE. Below a second, a store that is slow for a
// moment could let a live owner's lease lapse (and the write go upstream a
// second time); above an hour, a crashed owner blocks its retries for
// longer than any caller waits.
const (
	MinLease = time.Second
	MaxLease = time.Hour
)

// Kinds of backend.
const (
	KindEmbedded = "embedded"
	KindPostgres = "postgres"
)

// Config is what Open needs. The gateway fills Key and VaultDir from its
// vault configuration and the rest from FromEnv.
type Config struct {
	Kind      string        // KindEmbedded or KindPostgres
	DSN       string        // KindPostgres: ANVIL_STORE (a secret: never log it)
	VaultDir  string        // KindEmbedded: the vault directory
	StatePath string        // KindEmbedded: the bbolt file ("" = default)
	LockWait  time.Duration // KindEmbedded: the wait for another holder of the file (0 = default)
	SpoolDir  string        // the ledger spool ("" = DefaultSpoolDir(VaultDir))
	Logf      func(format string, args ...any)
	Logger    *slog.Logger
	store.Options
}

// FromEnv reads ANVIL_STORE, ANVIL_STORE_TIMEOUT, ANVIL_STATE_FILE,
// ANVIL_STATE_LOCK_WAIT, ANVIL_LEDGER_SPOOL, ANVIL_LEDGER_RETENTION,
// ANVIL_LEDGER_LEASE and ANVIL_LEDGER_WAIT.
// Errors wrap store.ErrConfig and never quote ANVIL_STORE.
func FromEnv(getenv func(string) string) (Config, error) {
	var c Config
	u := strings.TrimSpace(getenv(EnvStore))
	switch {
	case u == "":
		c.Kind = KindEmbedded
	case strings.HasPrefix(u, "postgres://"), strings.HasPrefix(u, "postgresql://"):
		c.Kind, c.DSN = KindPostgres, u
	default:
		return c, fmt.Errorf("%w: %s must be empty (embedded store) or a postgres:// URL", store.ErrConfig, EnvStore)
	}
	c.StatePath = getenv(EnvStateFile)
	c.SpoolDir = strings.TrimSpace(getenv(EnvSpool))
	var err error
	if c.Retention, err = duration(getenv, EnvRetention, "24h", 1, 0); err != nil {
		return c, err
	}
	if c.LeaseTTL, err = duration(getenv, EnvLease, "10s", MinLease, MaxLease); err != nil {
		return c, err
	}
	if c.OpTimeout, err = duration(getenv, EnvTimeout, "5s", 100*time.Millisecond, time.Minute); err != nil {
		return c, err
	}
	if c.LockWait, err = duration(getenv, EnvLockWait, "30s", time.Millisecond, MaxLockWait); err != nil {
		return c, err
	}
	if strings.TrimSpace(getenv(EnvWait)) != "" {
		if c.Wait, err = duration(getenv, EnvWait, "2s", 0, MaxWait); err != nil {
			return c, err
		}
		if c.Wait == 0 {
			c.Wait = -1 // store.Options: answer at once
		}
	}
	return c, nil
}

// duration reads the Go duration in variable name: 0 when unset (the
// store's default), else one within [lo, hi] (hi 0: unbounded).
func duration(getenv func(string) string, name, example string, lo, hi time.Duration) (time.Duration, error) {
	r := strings.TrimSpace(getenv(name))
	if r == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(r)
	if r == "0" {
		d, err = 0, nil
	}
	if err != nil || d < lo || hi > 0 && d > hi {
		bound := "a positive duration"
		if hi > 0 {
			bound = fmt.Sprintf("a duration from %v to %v", lo, hi)
		}
		return 0, fmt.Errorf("%w: %s must be %s such as %s (got %q)", store.ErrConfig, name, bound, example, r)
	}
	return d, nil
}

// DefaultSpoolDir is the ledger spool of a vault directory: ledger-spool
// in its parent, beside the default state file.
func DefaultSpoolDir(vaultDir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(vaultDir)), "ledger-spool")
}

// Open opens the configured backend, wrapped in its ledger spool
// (runtime/store/spool): an answer the backend cannot record when it
// arrives is kept on disk and recorded once it can.
func Open(ctx context.Context, c Config) (store.Store, error) {
	var s store.Store
	var err error
	switch c.Kind {
	case KindEmbedded, "":
		s, err = embedded.Open(embedded.Config{VaultDir: c.VaultDir, Path: c.StatePath, LockWait: c.LockWait, Options: c.Options})
	case KindPostgres:
		s, err = pgstore.Open(ctx, pgstore.Config{DSN: c.DSN, Logger: c.Logger, Options: c.Options})
	default:
		return nil, fmt.Errorf("%w: unknown store kind %q", store.ErrConfig, c.Kind)
	}
	if err != nil {
		return nil, err
	}
	dir := c.SpoolDir
	if dir == "" {
		dir = DefaultSpoolDir(c.VaultDir)
	}
	sp, err := spool.Wrap(s, dir, c.Key, c.Logf)
	if err != nil {
		s.Close()
		return nil, err
	}
	return sp, nil
}
