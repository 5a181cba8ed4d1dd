// Package embedded is the one-machine store: vault records stay the
// directory of encrypted files runtime/vault writes (unchanged, so an
// existing vault keeps working), and flows, the ledger and sessions live in
// one bbolt file. bbolt locks the file, so exactly one process uses a state
// file at a time; within it, the refresh section is a per-connection mutex,
// which is sufficient because no other process can share the state.
package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/store/internal/kit"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// SchemaVersion is the layout of the bbolt file this package writes.
const SchemaVersion = 1

var (
	bucketMeta     = []byte("meta")
	bucketLedger   = []byte("ledger")
	bucketFlows    = []byte("flows")
	bucketSessions = []byte("sessions")
	keySchema      = []byte("schema_version")
)

// batchDelay is how long a write waits for concurrent ones to share its
// transaction and disk sync (bbolt's Batch). Every write function below
// may therefore run more than once; each sets only its own results.
const batchDelay = time.Millisecond

// DefaultLockWait bounds the wait for another process's lock on the state
// file (a gateway being replaced releases it as it exits).
const DefaultLockWait = 10 * time.Second

// lockTimeout bounds the tools' own opens of a file (SetSchemaVersion).
const lockTimeout = 2 * time.Second

// Config locates the embedded store.
type Config struct {
	// VaultDir is the vault directory (runtime/vault.Open).
	VaultDir string
	// Path is the bbolt file; default state.db beside VaultDir.
	Path string
	// LockWait bounds the wait for another process holding Path
	// (DefaultLockWait); Open then refuses with ErrUnavailable.
	LockWait time.Duration
	store.Options
}

// DefaultPath is the state file for a vault directory: state.db in its
// parent, so the vault directory keeps holding only records.
func DefaultPath(vaultDir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(vaultDir)), "state.db")
}

// Store is the embedded implementation of store.Store.
type Store struct {
	opts   store.Options
	vault  *vault.Store
	db     *bolt.DB
	box    *kit.Box
	closed atomic.Bool

	refresh kit.KeyedMutex

	wmu   sync.Mutex
	wakes map[string]chan struct{} // ledger key → closed when the entry completes or is released
}

var _ store.Store = (*Store)(nil)

// Open opens (creating when missing) the vault directory and the state
// file. A state file written by a newer version is refused with ErrSchema;
// one another process still holds after LockWait with ErrUnavailable,
// naming the file: two processes never share a ledger file, and a gateway
// that cannot hold its ledger must not serve (the caller refuses to
// start).
//
// Holding the file's lock also proves that every process that wrote to it
// before is gone: their in-flight ledger entries are dead, so Open expires
// their leases at once (a retry resolves them now rather than a lease
// later).
func Open(cfg Config) (*Store, error) {
	opts := cfg.Options.WithDefaults()
	box, err := kit.NewBox(opts.Key)
	if err != nil {
		return nil, err
	}
	vs, err := vault.Open(cfg.VaultDir, opts.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrConfig, err)
	}
	path := cfg.Path
	if path == "" {
		path = DefaultPath(cfg.VaultDir)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("%w: creating %s: %w", store.ErrConfig, filepath.Dir(path), err)
	}
	wait := cfg.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: wait})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("%w: the state file %s is held by another gateway process (waited %v); give each gateway its own ANVIL_STATE_FILE (or ANVIL_VAULT_DIR), or share PostgreSQL (ANVIL_STORE)",
				store.ErrUnavailable, path, wait)
		}
		return nil, fmt.Errorf("%w: opening state file %s: %w", store.ErrConfig, path, err)
	}
	db.MaxBatchDelay = batchDelay
	if err := migrate(db); err != nil {
		db.Close()
		return nil, err
	}
	if err := expireOrphans(db, opts.Now()); err != nil {
		db.Close()
		return nil, err
	}
	return &Store{opts: opts, vault: vs, db: db, box: box, wakes: map[string]chan struct{}{}}, nil
}

// migrate creates the buckets of a new file and refuses an unknown layout.
func migrate(db *bolt.DB) error {
	return db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
		}
		if v := meta.Get(keySchema); v != nil {
			n, err := strconv.Atoi(string(v))
			if err != nil || n < 1 {
				return fmt.Errorf("%w: state file schema version %q is not a version", store.ErrSchema, v)
			}
			if n > SchemaVersion {
				return fmt.Errorf("%w: state file schema version %d is newer than this gateway's %d; upgrade the gateway",
					store.ErrSchema, n, SchemaVersion)
			}
		}
		for _, b := range [][]byte{bucketLedger, bucketFlows, bucketSessions} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
			}
		}
		return meta.Put(keySchema, []byte(strconv.Itoa(SchemaVersion)))
	})
}

// expireOrphans ends the lease of every in-flight ledger entry: this
// process holds the file's lock, so their owners are gone.
func expireOrphans(db *bolt.DB, now time.Time) error {
	err := db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLedger)
		var keys, vals [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var e kit.Entry
			if json.Unmarshal(v, &e) != nil || e.State != kit.StateInFlight || !now.Before(e.LeaseUntil) {
				return nil
			}
			e.LeaseUntil = now
			nv, err := json.Marshal(e)
			if err != nil {
				return err
			}
			keys, vals = append(keys, append([]byte(nil), k...)), append(vals, nv)
			return nil
		})
		if err != nil {
			return err
		}
		for i := range keys {
			if err := b.Put(keys[i], vals[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return nil
}

// SetSchemaVersion overwrites the state file's schema version (tests of
// the refusal of a newer schema). The file must not be open.
func SetSchemaVersion(path string, v int) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(keySchema, []byte(strconv.Itoa(v)))
	})
}

// Close closes the state file; later calls return ErrUnavailable.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.db.Close()
}

// Ping reports ErrUnavailable once closed.
func (s *Store) Ping(ctx context.Context) error { return s.live(ctx) }

func (s *Store) live(ctx context.Context) error {
	if s.closed.Load() {
		return fmt.Errorf("%w: the store is closed", store.ErrUnavailable)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return nil
}

// dbErr maps bbolt failures: a closed database or a failing disk is
// ErrUnavailable; errors already coded pass through.
func dbErr(err error) error {
	if err == nil {
		return nil
	}
	for _, sentinel := range []error{store.ErrNotFound, store.ErrExists, store.ErrForbidden, store.ErrFull,
		store.ErrLeaseLost, store.ErrInvalid, store.ErrCorrupt, store.ErrUnavailable} {
		if errors.Is(err, sentinel) {
			return err
		}
	}
	return fmt.Errorf("%w: state file: %w", store.ErrUnavailable, err)
}

// vaultErr keeps runtime/vault's sentinel and adds ErrUnavailable for a
// storage failure.
func vaultErr(err error) error {
	if err != nil && errors.Is(err, vault.ErrStorage) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}

// GetConnection reads the vault file.
func (s *Store) GetConnection(ctx context.Context, sub, connector, account string) (*vault.Connection, error) {
	if err := s.live(ctx); err != nil {
		return nil, err
	}
	c, err := s.vault.Get(sub, connector, account)
	return c, vaultErr(err)
}

// PutConnection writes the vault file atomically.
func (s *Store) PutConnection(ctx context.Context, c *vault.Connection) error {
	if err := s.live(ctx); err != nil {
		return err
	}
	return vaultErr(s.vault.Put(c))
}

// SetConnectionStatus rewrites the vault file with the new status.
func (s *Store) SetConnectionStatus(ctx context.Context, sub, connector, account, status string) (*vault.Connection, error) {
	if err := s.live(ctx); err != nil {
		return nil, err
	}
	c, err := s.vault.SetStatus(sub, connector, account, status)
	return c, vaultErr(err)
}

// DeleteConnection removes the vault file.
func (s *Store) DeleteConnection(ctx context.Context, sub, connector, account string) error {
	if err := s.live(ctx); err != nil {
		return err
	}
	return vaultErr(s.vault.Delete(sub, connector, account))
}

// ListConnections lists sub's vault files.
func (s *Store) ListConnections(ctx context.Context, sub string) ([]vault.Connection, error) {
	if err := s.live(ctx); err != nil {
		return nil, err
	}
	cs, err := s.vault.List(sub)
	return cs, vaultErr(err)
}

// RefreshExclusive holds a per-connection mutex around fn: the state
// file's lock guarantees no other process shares this store.
func (s *Store) RefreshExclusive(ctx context.Context, sub, connector, account string, fn func(context.Context) error) error {
	if err := s.live(ctx); err != nil {
		return err
	}
	unlock, err := s.refresh.Lock(ctx, vault.Coordinates(sub, connector, account))
	if err != nil {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	defer unlock()
	if err := s.live(ctx); err != nil {
		return err
	}
	return fn(ctx)
}

// flowRecord is a flow as the flows bucket holds it.
type flowRecord struct {
	Sub     string    `json:"sub"`
	Expires time.Time `json:"expires"`
	Payload []byte    `json:"payload"` // sealed
}

// PutFlow stores a flow under the digest of its state.
func (s *Store) PutFlow(ctx context.Context, state string, f store.Flow) error {
	if err := s.live(ctx); err != nil {
		return err
	}
	if err := kit.CheckKeys("state", state, "sub", f.Sub); err != nil {
		return err
	}
	if err := kit.CheckPayload(f.Payload); err != nil {
		return err
	}
	key := []byte(kit.DigestText(state))
	rec, err := json.Marshal(flowRecord{Sub: f.Sub, Expires: f.ExpiresAt.UTC(), Payload: s.box.Seal(f.Payload, "flow:"+string(key))})
	if err != nil {
		return fmt.Errorf("%w: %w", store.ErrInvalid, err)
	}
	now := s.opts.Now()
	return dbErr(s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFlows)
		if b.Get(key) != nil {
			return fmt.Errorf("%w: flow state", store.ErrExists)
		}
		if countKeys(b) >= s.opts.MaxFlows {
			sweepFlows(b, now)
			if countKeys(b) >= s.opts.MaxFlows {
				return fmt.Errorf("%w: %d flows are pending", store.ErrFull, s.opts.MaxFlows)
			}
		}
		return b.Put(key, rec)
	}))
}

// countKeys counts a bucket's keys as this transaction sees them (bbolt's
// Stats reads committed pages only).
func countKeys(b *bolt.Bucket) int {
	n := 0
	_ = b.ForEach(func(_, _ []byte) error { n++; return nil })
	return n
}

// sweepFlows deletes the flows that expired by now and counts them.
func sweepFlows(b *bolt.Bucket, now time.Time) int {
	return sweep(b, func(v []byte) bool {
		var r flowRecord
		return json.Unmarshal(v, &r) != nil || !now.Before(r.Expires)
	})
}

// TakeFlow deletes and returns the flow in one write transaction, so one
// taker wins.
func (s *Store) TakeFlow(ctx context.Context, state string) (*store.Flow, error) {
	if err := s.live(ctx); err != nil {
		return nil, err
	}
	if err := kit.CheckKeys("state", state); err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	key := []byte(kit.DigestText(state))
	var raw []byte
	err := s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFlows)
		v := b.Get(key)
		if v == nil {
			return fmt.Errorf("%w: flow state", store.ErrNotFound)
		}
		raw = append([]byte(nil), v...)
		return b.Delete(key)
	})
	if err != nil {
		return nil, dbErr(err)
	}
	var r flowRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%w: flow record", store.ErrCorrupt)
	}
	if !s.opts.Now().Before(r.Expires) {
		return nil, fmt.Errorf("%w: flow state expired", store.ErrNotFound)
	}
	payload, err := s.box.Open(r.Payload, "flow:"+string(key))
	if err != nil {
		return nil, err
	}
	return &store.Flow{Sub: r.Sub, ExpiresAt: r.Expires, Payload: payload}, nil
}

// wake returns the channel closed when the ledger entry key next completes
// or is released.
func (s *Store) wake(key string) <-chan struct{} {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	ch := s.wakes[key]
	if ch == nil {
		ch = make(chan struct{})
		s.wakes[key] = ch
	}
	return ch
}

func (s *Store) notify(key string) {
	s.wmu.Lock()
	if ch := s.wakes[key]; ch != nil {
		close(ch)
		delete(s.wakes, key)
	}
	s.wmu.Unlock()
}

// Begin applies kit.Decide inside one write transaction per look.
func (s *Store) Begin(ctx context.Context, k store.LedgerKey) (store.Begun, error) {
	if err := kit.CheckLedgerKey(k); err != nil {
		return store.Begun{}, err
	}
	key := kit.LedgerAAD(k.Subject, k.ID)
	p := kit.Poller{Wait: s.opts.Wait}
	waited := false
	for {
		if err := s.live(context.WithoutCancel(ctx)); err != nil {
			return store.Begun{}, err
		}
		var wake <-chan struct{}
		var out store.Begun
		var act kit.Action
		var sealed []byte
		err := s.db.Batch(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketLedger)
			var cur *kit.Entry
			if v := b.Get([]byte(key)); v != nil {
				cur = new(kit.Entry)
				if err := json.Unmarshal(v, cur); err != nil {
					return fmt.Errorf("%w: ledger entry", store.ErrCorrupt)
				}
			}
			now := s.opts.Now()
			act = kit.Decide(cur, k, now, s.opts.Retention)
			switch act {
			case kit.Claim, kit.TakeOver:
				out.Lease = store.Lease{Subject: k.Subject, ID: k.ID, Owner: kit.NewOwner(), Until: now.Add(s.opts.LeaseTTL)}
				out.Began = now
				e := kit.Entry{Tool: k.Tool, InputHash: k.InputHash, State: kit.StateInFlight, Owner: out.Lease.Owner, LeaseUntil: out.Lease.Until, Began: now}
				v, err := json.Marshal(e)
				if err != nil {
					return err
				}
				return b.Put([]byte(key), v)
			case kit.Replay:
				sealed = cur.Answer
			case kit.Unknown:
				out.Began = cur.Began
			case kit.Wait:
				// Registered under bbolt's writer lock: the owner's
				// Complete commits after this, so its notify sees it.
				wake = s.wake(key)
			}
			return nil
		})
		if err != nil {
			return store.Begun{}, dbErr(err)
		}
		switch act {
		case kit.Claim, kit.TakeOver:
			out.Outcome, out.Waited, out.TookOver = store.OutcomeNew, waited, act == kit.TakeOver
			return out, nil
		case kit.Conflict:
			return store.Begun{Outcome: store.OutcomeConflict, Waited: waited}, nil
		case kit.Unknown:
			return store.Begun{Outcome: store.OutcomeUnknown, Waited: waited, Began: out.Began}, nil
		case kit.Replay:
			a, err := s.box.OpenAnswer(k.Subject, k.ID, sealed)
			if err != nil {
				return store.Begun{}, err
			}
			return store.Begun{Outcome: store.OutcomeReplay, Answer: a, Waited: waited}, nil
		}
		waited = true
		if err := p.Sleep(ctx, wake); err != nil {
			return store.Begun{}, kit.WaitError(err)
		}
	}
}

// owned runs fn on the entry l owns, inside one write transaction.
func (s *Store) owned(ctx context.Context, l store.Lease, fn func(b *bolt.Bucket, key []byte, e *kit.Entry) error) error {
	if err := s.live(ctx); err != nil {
		return err
	}
	key := []byte(kit.LedgerAAD(l.Subject, l.ID))
	return dbErr(s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLedger)
		v := b.Get(key)
		var e kit.Entry
		if v == nil || json.Unmarshal(v, &e) != nil || e.State != kit.StateInFlight || e.Owner != l.Owner {
			return fmt.Errorf("%w: ledger id %q", store.ErrLeaseLost, l.ID)
		}
		return fn(b, key, &e)
	}))
}

func put(b *bolt.Bucket, key []byte, e *kit.Entry) error {
	v, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return b.Put(key, v)
}

// Complete stores the sealed answer and wakes local waiters.
func (s *Store) Complete(ctx context.Context, l store.Lease, a store.Answer) error {
	sealed, err := s.box.SealAnswer(l.Subject, l.ID, a)
	if err != nil {
		return err
	}
	err = s.owned(ctx, l, func(b *bolt.Bucket, key []byte, e *kit.Entry) error {
		e.State, e.Owner, e.Done, e.Answer = kit.StateDone, "", s.opts.Now(), sealed
		return put(b, key, e)
	})
	if err == nil {
		s.notify(kit.LedgerAAD(l.Subject, l.ID))
	}
	return err
}

// Release deletes the entry and wakes local waiters (one of them claims it).
func (s *Store) Release(ctx context.Context, l store.Lease) error {
	err := s.owned(ctx, l, func(b *bolt.Bucket, key []byte, _ *kit.Entry) error { return b.Delete(key) })
	if err == nil {
		s.notify(kit.LedgerAAD(l.Subject, l.ID))
	}
	return err
}

// Renew moves the lease's expiry to now + LeaseTTL.
func (s *Store) Renew(ctx context.Context, l store.Lease) (store.Lease, error) {
	err := s.owned(ctx, l, func(b *bolt.Bucket, key []byte, e *kit.Entry) error {
		l.Until = s.opts.Now().Add(s.opts.LeaseTTL)
		e.LeaseUntil = l.Until
		return put(b, key, e)
	})
	return l, err
}

// Abandon moves the lease's expiry to now and wakes local waiters.
func (s *Store) Abandon(ctx context.Context, l store.Lease) error {
	err := s.owned(ctx, l, func(b *bolt.Bucket, key []byte, e *kit.Entry) error {
		e.LeaseUntil = s.opts.Now()
		return put(b, key, e)
	})
	if err == nil {
		s.notify(kit.LedgerAAD(l.Subject, l.ID))
	}
	return err
}

// sessionRecord is a session as the sessions bucket holds it.
type sessionRecord struct {
	Fingerprint string    `json:"fp"`
	LastSeen    time.Time `json:"seen"`
}

// CreateSession stores the session under the digest of its id.
func (s *Store) CreateSession(ctx context.Context, id, fingerprint string) error {
	if err := s.live(ctx); err != nil {
		return err
	}
	if err := kit.CheckKeys("session id", id, "fingerprint", fingerprint); err != nil {
		return err
	}
	key := []byte(kit.DigestText(id))
	v, _ := json.Marshal(sessionRecord{Fingerprint: fingerprint, LastSeen: s.opts.Now().UTC()})
	return dbErr(s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSessions)
		if b.Get(key) != nil {
			return fmt.Errorf("%w: session id", store.ErrExists)
		}
		return b.Put(key, v)
	}))
}

// CheckSession checks the fingerprint and the idle time and marks the
// session used.
func (s *Store) CheckSession(ctx context.Context, id, fingerprint string) error {
	if err := s.live(ctx); err != nil {
		return err
	}
	if err := kit.CheckKeys("session id", id); err != nil {
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	key := []byte(kit.DigestText(id))
	return dbErr(s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSessions)
		var r sessionRecord
		v := b.Get(key)
		if v == nil || json.Unmarshal(v, &r) != nil {
			return fmt.Errorf("%w: session", store.ErrNotFound)
		}
		now := s.opts.Now()
		if !now.Before(r.LastSeen.Add(s.opts.SessionIdle)) {
			_ = b.Delete(key)
			return fmt.Errorf("%w: session expired", store.ErrNotFound)
		}
		if r.Fingerprint != fingerprint {
			return fmt.Errorf("%w: session", store.ErrForbidden)
		}
		r.LastSeen = now.UTC()
		nv, _ := json.Marshal(r)
		return b.Put(key, nv)
	}))
}

// DeleteSession removes the session.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if err := s.live(ctx); err != nil {
		return err
	}
	key := []byte(kit.DigestText(id))
	return dbErr(s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSessions)
		if b.Get(key) == nil {
			return fmt.Errorf("%w: session", store.ErrNotFound)
		}
		return b.Delete(key)
	}))
}

// Purge sweeps the three buckets in one write transaction.
func (s *Store) Purge(ctx context.Context) (store.Purged, error) {
	if err := s.live(ctx); err != nil {
		return store.Purged{}, err
	}
	var out store.Purged
	now := s.opts.Now()
	err := s.db.Batch(func(tx *bolt.Tx) error {
		out.Flows = sweepFlows(tx.Bucket(bucketFlows), now)
		out.Ledger = sweep(tx.Bucket(bucketLedger), func(v []byte) bool {
			var e kit.Entry
			return json.Unmarshal(v, &e) != nil || kit.Expired(&e, now, s.opts.Retention)
		})
		out.Sessions = sweep(tx.Bucket(bucketSessions), func(v []byte) bool {
			var r sessionRecord
			return json.Unmarshal(v, &r) != nil || !now.Before(r.LastSeen.Add(s.opts.SessionIdle))
		})
		return nil
	})
	// Waiters whose owner died and whose own context ended leave their
	// channel behind; waking every waiter (they simply look again) drops
	// those too.
	s.wmu.Lock()
	for k, ch := range s.wakes {
		close(ch)
		delete(s.wakes, k)
	}
	s.wmu.Unlock()
	return out, dbErr(err)
}

// sweep deletes the keys whose value dead accepts and counts them.
func sweep(b *bolt.Bucket, dead func(v []byte) bool) int {
	var keys [][]byte
	_ = b.ForEach(func(k, v []byte) error {
		if dead(v) {
			keys = append(keys, append([]byte(nil), k...))
		}
		return nil
	})
	for _, k := range keys {
		_ = b.Delete(k)
	}
	return len(keys)
}
