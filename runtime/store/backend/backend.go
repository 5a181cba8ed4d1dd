// Package backend picks the store implementation from the environment:
// ANVIL_STORE empty → runtime/store/embedded (one machine, no database);
// postgres:// or postgresql:// → runtime/store/pgstore.
package backend

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/embedded"
	"github.com/anvil-dev/anvil/runtime/store/pgstore"
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
)

// Kinds of backend.
const (
	KindEmbedded = "embedded"
	KindPostgres = "postgres"
)

// Config is what Open needs. The gateway fills Key and VaultDir from its
// vault configuration and the rest from FromEnv.
type Config struct {
	Kind      string // KindEmbedded or KindPostgres
	DSN       string // KindPostgres: ANVIL_STORE (a secret: never log it)
	VaultDir  string // KindEmbedded: the vault directory
	StatePath string // KindEmbedded: the bbolt file ("" = default)
	Logger    *slog.Logger
	store.Options
}

// FromEnv reads ANVIL_STORE, ANVIL_STATE_FILE and ANVIL_LEDGER_RETENTION.
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
	if r := strings.TrimSpace(getenv(EnvRetention)); r != "" {
		d, err := time.ParseDuration(r)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("%w: %s must be a positive duration such as 24h (got %q)", store.ErrConfig, EnvRetention, r)
		}
		c.Retention = d
	}
	return c, nil
}

// Open opens the configured backend.
func Open(ctx context.Context, c Config) (store.Store, error) {
	switch c.Kind {
	case KindEmbedded, "":
		return embedded.Open(embedded.Config{VaultDir: c.VaultDir, Path: c.StatePath, Options: c.Options})
	case KindPostgres:
		return pgstore.Open(ctx, pgstore.Config{DSN: c.DSN, Logger: c.Logger, Options: c.Options})
	}
	return nil, fmt.Errorf("%w: unknown store kind %q", store.ErrConfig, c.Kind)
}
