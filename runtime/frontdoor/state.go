package frontdoor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/backend"
)

// purgeEvery is how often a gateway deletes expired state (ledger entries
// past their retention, expired flows, idle sessions).
const purgeEvery = 5 * time.Minute

// openState opens the gateway's state store (docs/state.md) from the
// environment: ANVIL_STORE (empty: the embedded store beside the vault
// directory; postgres://…: shared by replicas), ANVIL_STATE_FILE and
// ANVIL_LEDGER_RETENTION. The store seals everything under the vault key,
// so without one (key nil) the embedded default is skipped — the gateway
// then runs without an idempotency ledger and says so — while a configured
// ANVIL_STORE without a key refuses to start.
func (g *Gateway) openState(key []byte, vaultDir string) error {
	c, err := backend.FromEnv(g.cfg.Getenv)
	if err != nil {
		return err
	}
	if key == nil {
		if c.Kind == backend.KindPostgres {
			return fmt.Errorf("%w: %s needs ANVIL_VAULT_KEY_FILE (the store seals its records with the vault key)", store.ErrConfig, backend.EnvStore)
		}
		g.logf("anvil: no vault key (ANVIL_VAULT_KEY_FILE): running without the idempotency ledger; a retried write reaches the upstream again")
		return nil
	}
	c.Key, c.VaultDir = key, vaultDir
	st, err := backend.Open(context.Background(), c)
	if err != nil {
		return err
	}
	g.state = st
	g.exec.Ledger = st
	g.exec.LedgerFailed = func(err error) { g.logf("anvil: recording an answer in the idempotency ledger failed: %v", err) }
	return nil
}

// purgeState deletes expired state; Serve calls it every purgeEvery.
func (g *Gateway) purgeState(ctx context.Context) {
	if g.state == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := g.state.Purge(ctx); err != nil && !errors.Is(err, context.Canceled) {
		g.logf("anvil: purging expired gateway state failed: %v", err)
	}
}

// StateReady reports whether the state store answers (nil also when the
// gateway runs without one): /readyz reports the store down otherwise.
func (g *Gateway) StateReady(ctx context.Context) error {
	if g.state == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return g.state.Ping(ctx)
}

// Close releases the state store. Serve calls it when it returns; a
// gateway used only through Handler (tests) calls it itself.
func (g *Gateway) Close() error {
	if g.state == nil {
		return nil
	}
	return g.state.Close()
}

// purgeLoop purges expired state every purgeEvery until done is closed.
func (g *Gateway) purgeLoop(done <-chan struct{}) {
	if g.state == nil {
		return
	}
	t := time.NewTicker(purgeEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			g.purgeState(context.Background())
		case <-done:
			return
		}
	}
}
