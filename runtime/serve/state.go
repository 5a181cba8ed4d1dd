package serve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/backend"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// purgeEvery is how often a gateway deletes expired state (ledger entries
// past their retention, expired flows, idle sessions).
const purgeEvery = 5 * time.Minute

// openState opens the gateway's state store (docs/state.md) from the
// environment: ANVIL_STORE (empty: the embedded store beside the vault
// directory; postgres://…: shared by replicas), ANVIL_STATE_FILE,
// ANVIL_STATE_LOCK_WAIT and the ANVIL_LEDGER_* tuning (read by
// backend.FromEnv).
// The store seals everything under the vault key, so without one (key nil) the embedded default is skipped — the gateway
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
	c.Key, c.VaultDir, c.Logf = key, vaultDir, g.logf
	// An embedded state file another gateway process still holds after
	// the lock wait refuses the start (the error names the file): a
	// gateway never serves without the ledger it was configured with.
	st, err := backend.Open(context.Background(), c)
	if err != nil {
		return err
	}
	g.state = st
	if c.Kind == backend.KindPostgres {
		// Replicas share vault records, pending flows and refreshes
		// through the store; one gateway keeps its vault directory (the
		// embedded store's records are those same files).
		g.records = stateVault{st}
		g.sharedFlows = stateFlows{st}
	}
	g.exec.Ledger = st
	g.exec.LedgerFailed = func(err error) { g.logf("anvil: recording an answer in the idempotency ledger failed: %v", err) }
	// A store that keeps the fleet's shared audit trail (PostgreSQL) gets
	// this gateway's audit records shipped into it (docs/state.md).
	inner := st
	if u, ok := st.(interface{ Unwrap() store.Store }); ok {
		inner = u.Unwrap()
	}
	if sink, ok := inner.(audit.Sink); ok && g.exec.Audit != nil {
		g.stopShip = g.exec.Audit.Ship(sink, g.logf)
	}
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
	if g.stopShip != nil {
		g.stopShip()
		g.stopShip = nil
	}
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

// stateTimeout bounds one vault operation on the shared store.
const stateTimeout = 10 * time.Second

// stateVault is connect.Records over a shared store: every read goes to the
// store, so a reconnect on one replica is what every replica's next call
// uses, and refreshes are exclusive across replicas (connect.Exclusive).
type stateVault struct{ s store.Store }

func stateCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), stateTimeout)
}

func (v stateVault) Get(sub, connector, account string) (*vault.Connection, error) {
	ctx, cancel := stateCtx()
	defer cancel()
	return v.s.GetConnection(ctx, sub, connector, account)
}

func (v stateVault) Put(c *vault.Connection) error {
	ctx, cancel := stateCtx()
	defer cancel()
	return v.s.PutConnection(ctx, c)
}

func (v stateVault) SetStatus(sub, connector, account, status string) (*vault.Connection, error) {
	ctx, cancel := stateCtx()
	defer cancel()
	return v.s.SetConnectionStatus(ctx, sub, connector, account, status)
}

func (v stateVault) List(sub string) ([]vault.Connection, error) {
	ctx, cancel := stateCtx()
	defer cancel()
	return v.s.ListConnections(ctx, sub)
}

// Lock is unused: connect.Service prefers RefreshExclusive when a vault
// has it. It returns a no-op so the type is a connect.Vault.
func (stateVault) Lock(string, string, string) func() { return func() {} }

func (v stateVault) RefreshExclusive(ctx context.Context, sub, connector, account string, fn func(ctx context.Context) error) error {
	return v.s.RefreshExclusive(ctx, sub, connector, account, fn)
}

// stateFlows is connect.SharedFlows over the shared store.
type stateFlows struct{ s store.Store }

func (f stateFlows) PutFlow(ctx context.Context, state, sub string, expires time.Time, payload []byte) error {
	err := f.s.PutFlow(ctx, state, store.Flow{Sub: sub, ExpiresAt: expires, Payload: payload})
	if errors.Is(err, store.ErrFull) {
		return fmt.Errorf("%w: %w", connect.ErrFlowsFull, err)
	}
	return err
}

func (f stateFlows) TakeFlow(ctx context.Context, state string) ([]byte, error) {
	fl, err := f.s.TakeFlow(ctx, state)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
		return nil, fmt.Errorf("%w: %w", connect.ErrFlowNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	return fl.Payload, nil
}
