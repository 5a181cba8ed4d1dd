// Package pgstore is the store for several gateway replicas sharing one
// PostgreSQL database (ANVIL_STORE=postgres://…), through pgx/v5.
//
// The schema is created and migrated by Open (schema.go), versioned in
// anvil_schema_version; a database at a newer version is refused. Single
// use and exclusion come from the database, never from a process mutex: a
// flow is taken with DELETE … RETURNING, a ledger entry is decided under
// SELECT … FOR UPDATE, a refresh runs under pg_advisory_xact_lock.
//
// When the database cannot be reached, every call fails with an error
// wrapping store.ErrUnavailable and changes nothing; Open does not fail for
// it but keeps retrying the schema check in the background with backoff,
// and the pool dials again on each later call.
package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/internal/kit"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// Config configures a PostgreSQL store.
type Config struct {
	// DSN is the postgres:// URL (or key=value string). It may hold a
	// password; it is never logged nor put in an error.
	DSN string
	// Logger receives reconnect notices (never the DSN); nil discards.
	Logger *slog.Logger
	store.Options
}

// Backoff bounds of the background schema check while the database is
// unreachable.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
	// connectTimeout bounds one dial when the DSN sets none.
	connectTimeout = 3 * time.Second
	// minConns is the smallest pool (pool_max_conns) accepted.
	minConns = 4
)

// Store is the PostgreSQL implementation of store.Store.
type Store struct {
	opts   store.Options
	pool   *pgxpool.Pool
	sealer *vault.Sealer
	box    *kit.Box
	log    *slog.Logger

	local   kit.KeyedMutex // per-connection refresh queue within this process
	holders chan struct{}  // bounds pooled connections parked on refresh locks

	mu      sync.Mutex
	ready   bool  // the schema is known to be current
	lastErr error // why not ready
	closed  bool
	stop    chan struct{}
	done    chan struct{}
}

var _ store.Store = (*Store)(nil)

// Open connects and migrates. A bad DSN or key is ErrConfig and a newer
// schema ErrSchema; an unreachable database is not an error here: the
// store starts unready (Ping and every call answer ErrUnavailable) and
// retries in the background until it is reachable.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	opts := cfg.Options.WithDefaults()
	box, err := kit.NewBox(opts.Key)
	if err != nil {
		return nil, err
	}
	sealer, err := vault.NewSealer(opts.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrConfig, err)
	}
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		// The parse error may quote the DSN: leave it out.
		return nil, fmt.Errorf("%w: ANVIL_STORE is not a valid PostgreSQL connection string", store.ErrConfig)
	}
	if pc.ConnConfig.ConnectTimeout <= 0 {
		pc.ConnConfig.ConnectTimeout = connectTimeout
	}
	if pc.MaxConns < minConns {
		pc.MaxConns = minConns // RefreshExclusive keeps half the pool for fn
	}
	pool, err := pgxpool.NewWithConfig(context.WithoutCancel(ctx), pc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrConfig, classify(err))
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{opts: opts, pool: pool, sealer: sealer, box: box, log: log,
		holders: make(chan struct{}, max(1, pc.MaxConns/2))}
	err = s.migrate(ctx)
	switch {
	case err == nil:
		s.ready = true
	case errors.Is(err, store.ErrSchema):
		pool.Close()
		return nil, err
	default:
		s.lastErr = err
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		log.Warn("store: PostgreSQL is unavailable; retrying in the background", "error", err.Error())
		go s.retry()
	}
	return s, nil
}

// retry re-runs migrate with exponential backoff until it succeeds, is
// refused, or the store closes.
func (s *Store) retry() {
	defer close(s.done)
	d := minBackoff
	for {
		select {
		case <-s.stop:
			return
		case <-time.After(d):
		}
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout+5*time.Second)
		err := s.migrate(ctx)
		cancel()
		s.mu.Lock()
		s.lastErr = err
		s.ready = err == nil
		s.mu.Unlock()
		if err == nil {
			s.log.Info("store: PostgreSQL is available")
			return
		}
		if errors.Is(err, store.ErrSchema) {
			s.log.Error("store: PostgreSQL schema refused", "error", err.Error())
			return
		}
		if d *= 2; d > maxBackoff {
			d = maxBackoff
		}
	}
}

// Close stops the background retry and closes the pool.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	stop, done := s.stop, s.done
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	s.pool.Close()
	return nil
}

// usable reports ErrUnavailable (or the schema refusal) until the schema
// is known current, and once closed.
func (s *Store) usable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("%w: the store is closed", store.ErrUnavailable)
	case !s.ready && errors.Is(s.lastErr, store.ErrSchema):
		return s.lastErr
	case !s.ready:
		return fmt.Errorf("%w: PostgreSQL has not been reachable yet", store.ErrUnavailable)
	}
	return nil
}

// Ping checks the schema state and a round trip.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.usable(); err != nil {
		return err
	}
	ctx, cancel := kit.OpContext(ctx, s.opts)
	defer cancel()
	return classify(s.pool.Ping(ctx))
}

// classify codes an error from pgx: every failure to talk to the database
// (dial, I/O, server shutting down, a query that failed for any reason)
// is ErrUnavailable; coded errors pass through. The text of a pgx error
// names host, user and database, never the password.
func classify(err error) error {
	if err == nil {
		return nil
	}
	for _, sentinel := range []error{store.ErrNotFound, store.ErrExists, store.ErrForbidden, store.ErrFull,
		store.ErrLeaseLost, store.ErrInvalid, store.ErrCorrupt, store.ErrUnavailable, store.ErrSchema,
		store.ErrInFlight, vault.ErrNotFound, vault.ErrUnreadable, vault.ErrInvalid} {
		if errors.Is(err, sentinel) {
			return err
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 22 (data exception: a value the column cannot hold, such
		// as NUL or invalid UTF-8 in text) is the argument's fault, not an
		// outage: retrying it would fail the same way.
		if strings.HasPrefix(pe.Code, "22") {
			return fmt.Errorf("%w: PostgreSQL refused a value (error %s)", store.ErrInvalid, pe.Code)
		}
		return fmt.Errorf("%w: PostgreSQL error %s", store.ErrUnavailable, pe.Code)
	}
	return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
}

// tx runs fn in a transaction on a ready store, within Options.OpTimeout,
// and codes its error.
func (s *Store) tx(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	if err := s.usable(); err != nil {
		return err
	}
	ctx, cancel := kit.OpContext(ctx, s.opts)
	defer cancel()
	return classify(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(ctx, tx) }))
}

// exec runs one statement on a ready store, within Options.OpTimeout, and
// returns rows affected.
func (s *Store) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	if err := s.usable(); err != nil {
		return 0, err
	}
	ctx, cancel := kit.OpContext(ctx, s.opts)
	defer cancel()
	tag, err := s.pool.Exec(ctx, sql, args...)
	if err != nil {
		return 0, classify(err)
	}
	return tag.RowsAffected(), nil
}

// coordsDigest is the vault file name without ".json".
func coordsDigest(sub, connector, account string) string {
	sum := sha256.Sum256([]byte(vault.Coordinates(sub, connector, account)))
	return hex.EncodeToString(sum[:])
}

func notFound(connector, account string) error {
	return fmt.Errorf("%w: connector %s, account %s", vault.ErrNotFound, connector, account)
}

// GetConnection reads and opens one record.
func (s *Store) GetConnection(ctx context.Context, sub, connector, account string) (*vault.Connection, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	ctx, cancel := kit.OpContext(ctx, s.opts)
	defer cancel()
	var rec []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM anvil_vault WHERE coords_digest = $1`,
		coordsDigest(sub, connector, account)).Scan(&rec)
	if isNoRows(err) {
		return nil, notFound(connector, account)
	}
	if err != nil {
		return nil, classify(err)
	}
	return s.sealer.Open(rec, sub, connector, account)
}

// getForUpdate reads and opens one record, locking its row; nil, nil when
// there is none.
func (s *Store) getForUpdate(ctx context.Context, tx pgx.Tx, sub, connector, account string) (*vault.Connection, error) {
	var rec []byte
	err := tx.QueryRow(ctx, `SELECT record FROM anvil_vault WHERE coords_digest = $1 FOR UPDATE`,
		coordsDigest(sub, connector, account)).Scan(&rec)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s.sealer.Open(rec, sub, connector, account)
}

// upsert seals c and writes it.
func (s *Store) upsert(ctx context.Context, tx pgx.Tx, c *vault.Connection) error {
	rec, err := s.sealer.Seal(c)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `INSERT INTO anvil_vault (coords_digest, sub, connector, account, record, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (coords_digest) DO UPDATE SET record = EXCLUDED.record, updated_at = EXCLUDED.updated_at`,
		coordsDigest(c.Sub, c.Connector, c.Account), c.Sub, c.Connector, c.Account, rec, s.opts.Now())
	return err
}

// PutConnection keeps the previous CreatedAt, as runtime/vault does.
func (s *Store) PutConnection(ctx context.Context, c *vault.Connection) error {
	if err := c.Normalize(); err != nil {
		return err
	}
	if err := kit.CheckKeys("sub", c.Sub, "connector", c.Connector, "account", c.Account); err != nil {
		return fmt.Errorf("%w: %w", vault.ErrInvalid, err)
	}
	return s.tx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		now := vault.FormatTime(s.opts.Now())
		c.CreatedAt = now
		if old, err := s.getForUpdate(ctx, tx, c.Sub, c.Connector, c.Account); err == nil && old != nil && old.CreatedAt != "" {
			c.CreatedAt = old.CreatedAt
		} else if err != nil && !errors.Is(err, vault.ErrUnreadable) {
			return err
		}
		c.UpdatedAt = now
		return s.upsert(ctx, tx, c)
	})
}

// SetConnectionStatus rewrites a record under its row lock.
func (s *Store) SetConnectionStatus(ctx context.Context, sub, connector, account, status string) (*vault.Connection, error) {
	if status != vault.StatusActive && status != vault.StatusNeedsReconnect {
		return nil, fmt.Errorf("%w: status must be %q or %q", vault.ErrInvalid, vault.StatusActive, vault.StatusNeedsReconnect)
	}
	var out *vault.Connection
	err := s.tx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		c, err := s.getForUpdate(ctx, tx, sub, connector, account)
		if err != nil {
			return err
		}
		if c == nil {
			return notFound(connector, account)
		}
		c.Status, c.UpdatedAt = status, vault.FormatTime(s.opts.Now())
		out = c
		return s.upsert(ctx, tx, c)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteConnection deletes one row.
func (s *Store) DeleteConnection(ctx context.Context, sub, connector, account string) error {
	n, err := s.exec(ctx, `DELETE FROM anvil_vault WHERE coords_digest = $1`, coordsDigest(sub, connector, account))
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound(connector, account)
	}
	return nil
}

// ListConnections opens sub's records, skipping unreadable ones, sorted as
// runtime/vault sorts (byte order, not the database's collation).
func (s *Store) ListConnections(ctx context.Context, sub string) ([]vault.Connection, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	ctx, cancel := kit.OpContext(ctx, s.opts)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT connector, account, record FROM anvil_vault WHERE sub = $1`, sub)
	if err != nil {
		return nil, classify(err)
	}
	var out []vault.Connection
	var connector, account string
	var rec []byte
	_, err = pgx.ForEachRow(rows, []any{&connector, &account, &rec}, func() error {
		if c, err := s.sealer.Open(rec, sub, connector, account); err == nil {
			out = append(out, *c)
		}
		return nil
	})
	if err != nil {
		return nil, classify(err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Connector != out[j].Connector {
			return out[i].Connector < out[j].Connector
		}
		return out[i].Account < out[j].Account
	})
	return out, nil
}

// refreshKey is the advisory lock key of a connection's refresh section.
func refreshKey(sub, connector, account string) int64 {
	sum := sha256.Sum256([]byte("refresh\x00" + vault.Coordinates(sub, connector, account)))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// RefreshExclusive holds pg_advisory_xact_lock in a transaction on one
// pooled connection while fn runs; the lock goes with the transaction, so
// a replica that dies mid-refresh releases it when its connection drops.
//
// Two local gates come first, neither of which is the exclusion itself:
// a per-connection mutex, so the callers of one replica queue in memory
// rather than each parking a database connection on the lock, and a
// semaphore that leaves half the pool free, so fn's own store calls always
// find a connection while lock holders wait.
func (s *Store) RefreshExclusive(ctx context.Context, sub, connector, account string, fn func(context.Context) error) error {
	if err := s.usable(); err != nil {
		return err
	}
	unlock, err := s.local.Lock(ctx, vault.Coordinates(sub, connector, account))
	if err != nil {
		return classify(err)
	}
	defer unlock()
	select {
	case s.holders <- struct{}{}:
	case <-ctx.Done():
		return classify(ctx.Err())
	}
	defer func() { <-s.holders }()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return classify(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // releases the lock
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, refreshKey(sub, connector, account)); err != nil {
		return classify(err)
	}
	return fn(ctx)
}

// PutFlow inserts a flow unless the state is taken or the table is full.
func (s *Store) PutFlow(ctx context.Context, state string, f store.Flow) error {
	if err := kit.CheckKeys("state", state, "sub", f.Sub); err != nil {
		return err
	}
	if err := kit.CheckPayload(f.Payload); err != nil {
		return err
	}
	digest := kit.Digest(state)
	sealed := s.box.Seal(f.Payload, "flow:"+kit.DigestText(state))
	now := s.opts.Now()
	return s.tx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM anvil_flows WHERE expires_at > $1`, now).Scan(&n); err != nil {
			return err
		}
		if n >= s.opts.MaxFlows {
			return fmt.Errorf("%w: %d flows are pending", store.ErrFull, s.opts.MaxFlows)
		}
		tag, err := tx.Exec(ctx, `INSERT INTO anvil_flows (state_digest, sub, expires_at, payload) VALUES ($1, $2, $3, $4)
			ON CONFLICT (state_digest) DO NOTHING`, digest, f.Sub, f.ExpiresAt, sealed)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: flow state", store.ErrExists)
		}
		return nil
	})
}

// TakeFlow deletes the row and returns what it held: one statement, so
// one taker wins across replicas.
func (s *Store) TakeFlow(ctx context.Context, state string) (*store.Flow, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	if err := kit.CheckKeys("state", state); err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	ctx, cancel := kit.OpContext(ctx, s.opts)
	defer cancel()
	var f store.Flow
	var sealed []byte
	err := s.pool.QueryRow(ctx, `DELETE FROM anvil_flows WHERE state_digest = $1 RETURNING sub, expires_at, payload`,
		kit.Digest(state)).Scan(&f.Sub, &f.ExpiresAt, &sealed)
	if isNoRows(err) {
		return nil, fmt.Errorf("%w: flow state", store.ErrNotFound)
	}
	if err != nil {
		return nil, classify(err)
	}
	if !s.opts.Now().Before(f.ExpiresAt) {
		return nil, fmt.Errorf("%w: flow state expired", store.ErrNotFound)
	}
	if f.Payload, err = s.box.Open(sealed, "flow:"+kit.DigestText(state)); err != nil {
		return nil, err
	}
	return &f, nil
}

// Begin decides under the entry's row lock; a Wait polls with backoff.
func (s *Store) Begin(ctx context.Context, k store.LedgerKey) (store.Begun, error) {
	if err := kit.CheckLedgerKey(k); err != nil {
		return store.Begun{}, err
	}
	p := kit.Poller{Wait: s.opts.Wait}
	waited := false
	for {
		out, act, err := s.beginOnce(ctx, k)
		if err != nil {
			if ctx.Err() != nil && waited {
				return store.Begun{}, kit.WaitError(ctx.Err())
			}
			return store.Begun{}, err
		}
		out.Waited = waited
		switch act {
		case kit.Claim, kit.TakeOver, kit.Replay, kit.Conflict, kit.Unknown:
			return out, nil
		}
		waited = true
		if err := p.Sleep(ctx, nil); err != nil {
			return store.Begun{}, kit.WaitError(err)
		}
	}
}

// errRaced: another replica inserted the entry between our read and insert.
var errRaced = errors.New("ledger insert raced")

// beginOnce is one look at the entry; act is kit.Wait when it must look
// again, or 0 when it raced an insert.
func (s *Store) beginOnce(ctx context.Context, k store.LedgerKey) (store.Begun, kit.Action, error) {
	var out store.Begun
	var act kit.Action
	err := s.tx(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var e kit.Entry
		var owner *string
		var done, began *time.Time
		err := tx.QueryRow(ctx, `SELECT tool, input_hash, state, owner, lease_until, done_at, answer, began_at
			FROM anvil_ledger WHERE subject = $1 AND ledger_id = $2 FOR UPDATE`, k.Subject, k.ID).
			Scan(&e.Tool, &e.InputHash, &e.State, &owner, &e.LeaseUntil, &done, &e.Answer, &began)
		var cur *kit.Entry
		switch {
		case isNoRows(err):
		case err != nil:
			return err
		default:
			if owner != nil {
				e.Owner = *owner
			}
			if done != nil {
				e.Done = *done
			}
			if began != nil {
				e.Began = *began
			}
			cur = &e
		}
		now := s.opts.Now()
		act = kit.Decide(cur, k, now, s.opts.Retention)
		switch act {
		case kit.Claim, kit.TakeOver:
			out.Outcome, out.TookOver = store.OutcomeNew, act == kit.TakeOver
			out.Lease = store.Lease{Subject: k.Subject, ID: k.ID, Owner: kit.NewOwner(), Until: now.Add(s.opts.LeaseTTL)}
			out.Began = now
			tag, err := tx.Exec(ctx, `INSERT INTO anvil_ledger (subject, ledger_id, tool, input_hash, state, owner, lease_until, began_at)
				VALUES ($1, $2, $3, $4, 1, $5, $6, $8)
				ON CONFLICT (subject, ledger_id) DO UPDATE SET tool = EXCLUDED.tool, input_hash = EXCLUDED.input_hash,
					state = 1, owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until, done_at = NULL, answer = NULL,
					began_at = EXCLUDED.began_at
				WHERE $7`, k.Subject, k.ID, k.Tool, k.InputHash, out.Lease.Owner, out.Lease.Until, cur != nil, now)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return errRaced
			}
		case kit.Replay:
			a, err := s.box.OpenAnswer(k.Subject, k.ID, e.Answer)
			if err != nil {
				return err
			}
			out.Outcome, out.Answer = store.OutcomeReplay, a
		case kit.Conflict:
			out.Outcome = store.OutcomeConflict
		case kit.Unknown:
			out.Outcome, out.Began = store.OutcomeUnknown, e.Began
		}
		return nil
	})
	if errors.Is(err, errRaced) {
		return store.Begun{}, kit.Wait, nil
	}
	return out, act, err
}

// Complete stores the answer if the lease still owns the entry.
func (s *Store) Complete(ctx context.Context, l store.Lease, a store.Answer) error {
	sealed, err := s.box.SealAnswer(l.Subject, l.ID, a)
	if err != nil {
		return err
	}
	return s.owned(ctx, l, `UPDATE anvil_ledger SET state = 2, owner = NULL, done_at = $4, answer = $5
		WHERE subject = $1 AND ledger_id = $2 AND state = 1 AND owner = $3`, s.opts.Now(), sealed)
}

// Release deletes the entry if the lease still owns it.
func (s *Store) Release(ctx context.Context, l store.Lease) error {
	return s.owned(ctx, l, `DELETE FROM anvil_ledger WHERE subject = $1 AND ledger_id = $2 AND state = 1 AND owner = $3`)
}

// Renew extends the lease if it still owns the entry.
func (s *Store) Renew(ctx context.Context, l store.Lease) (store.Lease, error) {
	until := s.opts.Now().Add(s.opts.LeaseTTL)
	err := s.owned(ctx, l, `UPDATE anvil_ledger SET lease_until = $4
		WHERE subject = $1 AND ledger_id = $2 AND state = 1 AND owner = $3`, until)
	if err != nil {
		return l, err
	}
	l.Until = until
	return l, nil
}

// Abandon ends the lease now if it still owns the entry.
func (s *Store) Abandon(ctx context.Context, l store.Lease) error {
	return s.owned(ctx, l, `UPDATE anvil_ledger SET lease_until = $4
		WHERE subject = $1 AND ledger_id = $2 AND state = 1 AND owner = $3`, s.opts.Now())
}

// owned runs a statement conditioned on the lease (subject $1, id $2,
// owner $3) and reports ErrLeaseLost when it matched nothing.
func (s *Store) owned(ctx context.Context, l store.Lease, sql string, more ...any) error {
	n, err := s.exec(ctx, sql, append([]any{l.Subject, l.ID, l.Owner}, more...)...)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: ledger id %q", store.ErrLeaseLost, l.ID)
	}
	return nil
}

// CreateSession inserts a session unless its id is taken.
func (s *Store) CreateSession(ctx context.Context, id, fingerprint string) error {
	if err := kit.CheckKeys("session id", id, "fingerprint", fingerprint); err != nil {
		return err
	}
	n, err := s.exec(ctx, `INSERT INTO anvil_sessions (id_digest, fingerprint, last_seen) VALUES ($1, $2, $3)
		ON CONFLICT (id_digest) DO NOTHING`, kit.Digest(id), fingerprint, s.opts.Now())
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: session id", store.ErrExists)
	}
	return nil
}

// CheckSession touches a live session of the same fingerprint in one
// statement; only a miss costs a second look to say why.
func (s *Store) CheckSession(ctx context.Context, id, fingerprint string) error {
	if err := kit.CheckKeys("session id", id); err != nil {
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	now := s.opts.Now()
	cut := now.Add(-s.opts.SessionIdle)
	digest := kit.Digest(id)
	n, err := s.exec(ctx, `UPDATE anvil_sessions SET last_seen = $3 WHERE id_digest = $1 AND fingerprint = $2 AND last_seen > $4`,
		digest, fingerprint, now, cut)
	if err != nil || n == 1 {
		return err
	}
	qctx, cancel := kit.OpContext(ctx, s.opts)
	defer cancel()
	var fp string
	var seen time.Time
	err = s.pool.QueryRow(qctx, `SELECT fingerprint, last_seen FROM anvil_sessions WHERE id_digest = $1`, digest).Scan(&fp, &seen)
	switch {
	case isNoRows(err):
		return fmt.Errorf("%w: session", store.ErrNotFound)
	case err != nil:
		return classify(err)
	case !seen.After(cut):
		return fmt.Errorf("%w: session expired", store.ErrNotFound)
	}
	return fmt.Errorf("%w: session", store.ErrForbidden)
}

// DeleteSession deletes one session.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	n, err := s.exec(ctx, `DELETE FROM anvil_sessions WHERE id_digest = $1`, kit.Digest(id))
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: session", store.ErrNotFound)
	}
	return nil
}

// Purge deletes expired rows of the three tables in one transaction; the
// ledger rule is kit.Expired's, written as SQL.
func (s *Store) Purge(ctx context.Context) (store.Purged, error) {
	now := s.opts.Now()
	cut := now.Add(-s.opts.Retention)
	var out store.Purged
	if err := s.usable(); err != nil {
		return out, err
	}
	// Not bounded by OpTimeout: a day's entries may take longer to delete
	// than one call's round trip; the caller bounds it.
	err := classify(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range []struct {
			n   *int
			sql string
			arg time.Time
		}{
			{&out.Ledger, `DELETE FROM anvil_ledger WHERE (state = 2 AND done_at <= $1) OR (state = 1 AND lease_until <= $1)`, cut},
			{&out.Flows, `DELETE FROM anvil_flows WHERE expires_at <= $1`, now},
			{&out.Sessions, `DELETE FROM anvil_sessions WHERE last_seen <= $1`, now.Add(-s.opts.SessionIdle)},
		} {
			tag, err := tx.Exec(ctx, q.sql, q.arg)
			if err != nil {
				return err
			}
			*q.n = int(tag.RowsAffected())
		}
		return nil
	}))
	return out, err
}
