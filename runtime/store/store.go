// Package store is the gateway's state: vault records, pending OAuth flows,
// the gateway-side idempotency ledger and MCP session records, behind one
// interface with two implementations:
//
//   - runtime/store/embedded, for one machine: vault records stay the
//     directory of encrypted files runtime/vault writes; the other tables
//     live in one bbolt file next to it;
//   - runtime/store/pgstore, for several replicas sharing PostgreSQL
//     (ANVIL_STORE=postgres://…).
//
// runtime/store/backend picks one from the environment. Both pass the same
// behavioural suite (runtime/store/storetest).
//
// Secrets never reach a table in the clear: vault records are the vault's
// AES-256-GCM record bytes (runtime/vault.Sealer), and flow payloads and
// ledger answers are sealed with a key derived from the vault key. OAuth
// states and MCP session ids are stored as SHA-256 digests only.
//
// Every error a Store returns wraps one of the sentinels below, so the
// gateway can map them to its codes; ErrUnavailable is the one that means
// "the database cannot be reached; answer 503 and send nothing upstream".
package store

import (
	"context"
	"errors"
	"time"

	"github.com/anvil-dev/anvil/runtime/vault"
)

// Sentinel errors. Every error a Store returns wraps one of them (vault
// errors keep wrapping runtime/vault's sentinels as well).
var (
	// ErrUnavailable: the backend cannot be reached or is closed. Nothing
	// was changed by the failed call. The gateway answers 503.
	ErrUnavailable = errors.New("store: unavailable")
	// ErrNotFound: no such record (or it expired).
	ErrNotFound = errors.New("store: not found")
	// ErrExists: a record with that key already exists.
	ErrExists = errors.New("store: already exists")
	// ErrForbidden: the record belongs to another caller (an MCP session
	// bound to another token fingerprint).
	ErrForbidden = errors.New("store: record belongs to another caller")
	// ErrFull: a bounded table (pending flows) is full.
	ErrFull = errors.New("store: too many pending records")
	// ErrInFlight: another caller holds a live lease on the entry and it
	// did not complete within Options.Wait (or before Begin's context
	// ended). The gateway answers 409 conflict, retryable, with
	// Retry-After.
	ErrInFlight = errors.New("store: ledger entry is still in flight")
	// ErrLeaseLost: the caller's ledger lease expired and another caller
	// took the entry over; the answer was not recorded.
	ErrLeaseLost = errors.New("store: ledger lease lost")
	// ErrSchema: the database's schema is newer than this binary knows, or
	// is not one it can read.
	ErrSchema = errors.New("store: unsupported schema")
	// ErrConfig: the store's configuration is invalid (ANVIL_STORE, key,
	// paths).
	ErrConfig = errors.New("store: bad configuration")
	// ErrInvalid: an argument is malformed or out of bounds.
	ErrInvalid = errors.New("store: invalid argument")
	// ErrCorrupt: a stored record cannot be decrypted or decoded.
	ErrCorrupt = errors.New("store: stored record is unreadable")
)

// Defaults for Options.
const (
	// DefaultLeaseTTL is short so that a dead owner is detected within
	// seconds: a live one renews a third of the way to each expiry, so
	// two renewals in a row must fail before a live owner loses it.
	DefaultLeaseTTL = 10 * time.Second
	// DefaultWait is how long a repeat of an in-flight call waits for the
	// first to complete before it is answered "in progress".
	DefaultWait        = 2 * time.Second
	DefaultRetention   = 24 * time.Hour
	DefaultSessionIdle = 15 * time.Minute
	DefaultMaxFlows    = 1000
	// DefaultOpTimeout bounds one round trip to the backend, so that a
	// database that stops answering (a half-open connection) costs a
	// caller at most this long, not a TCP timeout.
	DefaultOpTimeout = 5 * time.Second
)

// Bounds on caller-supplied values (untrusted input is bounded).
const (
	MaxKeyLen     = 512     // subject, ledger id, tool, connector, account, fingerprint
	MaxPayloadLen = 8 << 20 // a flow payload or a ledger answer, before sealing
)

// Options tune a Store. The zero value (plus a key) gives the defaults.
type Options struct {
	// Key is the vault key (KeySize bytes). It seals vault records and,
	// through a derived key, flow payloads and ledger answers. Required.
	Key []byte
	// Now is the clock (time.Now by default). Replicas must agree on time
	// within a small fraction of LeaseTTL.
	Now func() time.Time
	// LeaseTTL is how long a Begin that answered OutcomeNew owns its
	// entry without Renew; after it an owner that died no longer blocks a
	// retry (DefaultLeaseTTL).
	LeaseTTL time.Duration
	// Wait bounds how long Begin waits for an in-flight entry another
	// caller holds a live lease on, before it answers ErrInFlight
	// (DefaultWait; negative: answer at once).
	Wait time.Duration
	// OpTimeout bounds each backend round trip (DefaultOpTimeout).
	OpTimeout time.Duration
	// Retention is how long a completed ledger entry is replayed
	// (DefaultRetention); Purge deletes older ones.
	Retention time.Duration
	// SessionIdle is how long an unused MCP session stays valid
	// (DefaultSessionIdle).
	SessionIdle time.Duration
	// MaxFlows bounds the pending OAuth flows (DefaultMaxFlows).
	MaxFlows int
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.Wait == 0 {
		o.Wait = DefaultWait
	} else if o.Wait < 0 {
		o.Wait = 0
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = DefaultSessionIdle
	}
	if o.MaxFlows <= 0 {
		o.MaxFlows = DefaultMaxFlows
	}
	return o
}

// Flow is a pending OAuth authorization-code flow. The store keeps Payload
// (the gateway's encoding of the flow: connector, account, redirect URI,
// PKCE verifier) sealed; Sub and ExpiresAt are stored in the clear.
type Flow struct {
	Sub       string
	ExpiresAt time.Time
	Payload   []byte
}

// LedgerKey names one ledger entry and what it was asked to do. An entry
// is identified by (Subject, ID); Tool and InputHash are what a repeat must
// match to be a replay rather than a conflict.
type LedgerKey struct {
	Subject   string // the caller's token subject
	ID        string // _meta.idempotency_key or Idempotency-Key
	Tool      string // the tool called
	InputHash string // a digest of the call's canonical input
	// TakeOver says what Begin does with a matching entry whose owner's
	// lease expired before it recorded an outcome (the owner died, hung,
	// or lost the store): its write may or may not have reached the
	// upstream. True: the caller can resolve that (the operation sends
	// the same idempotency key upstream, or declares a lookup), and Begin
	// hands it the entry (OutcomeNew, TookOver). False: Begin answers
	// OutcomeUnknown and changes nothing, so the write is never sent
	// again blindly.
	TakeOver bool
}

// Outcome is what Begin decided.
type Outcome int

// Begin outcomes.
const (
	// OutcomeNew: the caller owns the entry and goes upstream, then calls
	// Complete (or Release when nothing was sent upstream).
	OutcomeNew Outcome = iota + 1
	// OutcomeReplay: the entry was completed; Begun.Answer is the first
	// answer. The caller must not go upstream.
	OutcomeReplay
	// OutcomeConflict: the ID was used with another tool or input. The
	// caller refuses the call (REST 409 "conflict").
	OutcomeConflict
	// OutcomeUnknown: an earlier attempt's owner lost its lease without
	// recording an outcome, and the key did not ask to take it over: the
	// caller refuses the call (its outcome is unknown) and sends nothing.
	// The entry is unchanged: the earlier owner may still record its
	// answer, which later repeats then replay.
	OutcomeUnknown
)

// String names the outcome for logs and audit lines.
func (o Outcome) String() string {
	switch o {
	case OutcomeNew:
		return "new"
	case OutcomeReplay:
		return "replay"
	case OutcomeConflict:
		return "conflict"
	case OutcomeUnknown:
		return "outcome_unknown"
	}
	return "unknown"
}

// Answer is the first answer to a ledger entry, replayed verbatim: the
// gateway's result and effect report, in whatever encoding it chooses.
type Answer struct {
	Status int    `json:"status,omitempty"`
	Result []byte `json:"result,omitempty"`
	Effect []byte `json:"effect,omitempty"`
}

// Lease is the ownership of an in-flight ledger entry, valid until Until.
type Lease struct {
	Subject string
	ID      string
	Owner   string // random, unique per Begin that answered OutcomeNew
	Until   time.Time
}

// Begun is Begin's answer.
type Begun struct {
	Outcome Outcome
	// Lease is set for OutcomeNew.
	Lease Lease
	// Answer is set for OutcomeReplay.
	Answer *Answer
	// Waited: the entry was in flight when Begin first saw it.
	Waited bool
	// TookOver: OutcomeNew on an entry whose previous owner's lease had
	// expired (it died or hung); its answer, if any, was never recorded.
	TookOver bool
	// Began is when the entry's current attempt began (OutcomeUnknown:
	// the attempt whose outcome is unknown).
	Began time.Time
}

// Purged counts what Purge deleted.
type Purged struct {
	Ledger   int
	Flows    int
	Sessions int
}

// Store is the gateway's shared state. Implementations are safe for
// concurrent use; the PostgreSQL one also across processes. Every method
// honours ctx and returns an error wrapping ErrUnavailable, without having
// changed anything, when the backend cannot be reached.
type Store interface {
	// GetConnection returns the vault record for the coordinates, or an
	// error wrapping vault.ErrNotFound (missing) or vault.ErrUnreadable
	// (will not decrypt under these coordinates).
	GetConnection(ctx context.Context, sub, connector, account string) (*vault.Connection, error)
	// PutConnection normalises and stores c, replacing any record at its
	// coordinates (keeping the previous CreatedAt, setting UpdatedAt); only
	// the vault's ciphertext is stored. The next GetConnection on any
	// replica sees it.
	PutConnection(ctx context.Context, c *vault.Connection) error
	// SetConnectionStatus changes a stored connection's status and returns
	// the updated connection (vault.ErrNotFound when missing).
	SetConnectionStatus(ctx context.Context, sub, connector, account, status string) (*vault.Connection, error)
	// DeleteConnection removes a record (vault.ErrNotFound when missing).
	DeleteConnection(ctx context.Context, sub, connector, account string) error
	// ListConnections returns sub's readable connections sorted by
	// connector, then account.
	ListConnections(ctx context.Context, sub string) ([]vault.Connection, error)
	// RefreshExclusive runs fn while holding the exclusive section for the
	// coordinates: at most one fn per coordinates runs at a time across
	// every process sharing the store. fn should re-read the record first
	// (another holder may have refreshed it). Waiting honours ctx; fn's
	// error is returned unchanged.
	RefreshExclusive(ctx context.Context, sub, connector, account string, fn func(ctx context.Context) error) error

	// PutFlow records a pending flow under state (ErrExists if taken,
	// ErrFull when MaxFlows unexpired flows are pending).
	PutFlow(ctx context.Context, state string, f Flow) error
	// TakeFlow removes and returns the flow for state. Across every
	// replica, at most one TakeFlow of a state succeeds; the others, and
	// any take of an unknown or expired state, get ErrNotFound.
	TakeFlow(ctx context.Context, state string) (*Flow, error)

	// Begin records intent to run a write under k before it goes upstream
	// and decides: OutcomeNew (the caller owns a lease and must Complete
	// or Release), OutcomeReplay (a completed entry with the same tool and
	// input: its first answer), OutcomeConflict (same subject and ID,
	// other tool or input). While another caller, on any replica, holds an
	// unexpired lease on a matching entry, Begin waits up to Options.Wait
	// for it to complete and then replays (Waited is set), else returns
	// ErrInFlight (also when ctx ends first). A matching entry whose
	// owner's lease expired before an outcome was recorded is taken over
	// (OutcomeNew, TookOver) when k.TakeOver is set, and answered
	// OutcomeUnknown, unchanged, otherwise. An entry completed longer ago
	// than Retention counts as absent.
	Begin(ctx context.Context, k LedgerKey) (Begun, error)
	// Complete records the first answer of the entry the lease owns and
	// wakes its waiters. It succeeds after the lease expired as long as
	// nobody took the entry over (an answer that arrives late, or is
	// replayed from a spool once the store is back, is still recorded);
	// ErrLeaseLost when another caller took it over (the answer is then
	// not stored).
	Complete(ctx context.Context, l Lease, a Answer) error
	// Release deletes the in-flight entry the lease owns, for a call that
	// sent nothing upstream, so a retry starts afresh (ErrLeaseLost as
	// for Complete).
	Release(ctx context.Context, l Lease) error
	// Renew extends the lease by LeaseTTL from now, for an upstream call
	// that outlives it (ErrLeaseLost as for Complete).
	Renew(ctx context.Context, l Lease) (Lease, error)
	// Abandon ends the lease at once without an outcome, for an owner
	// that cannot tell whether its write acted (it took over an unknown
	// outcome and could not resolve it): the entry stays in flight, so
	// the next Begin sees its outcome as unknown rather than sending the
	// write again (ErrLeaseLost as for Complete).
	Abandon(ctx context.Context, l Lease) error

	// CreateSession records a new MCP session bound to the token
	// fingerprint (ErrExists if the id is taken).
	CreateSession(ctx context.Context, id, fingerprint string) error
	// CheckSession accepts a session only for the fingerprint it was
	// created with (ErrForbidden otherwise; ErrNotFound when unknown or
	// idle longer than SessionIdle) and marks it used.
	CheckSession(ctx context.Context, id, fingerprint string) error
	// DeleteSession forgets a session (ErrNotFound when unknown).
	DeleteSession(ctx context.Context, id string) error

	// Purge deletes ledger entries completed longer ago than Retention
	// (and abandoned in-flight entries whose lease expired that long ago),
	// expired flows and idle sessions.
	Purge(ctx context.Context) (Purged, error)
	// Ping reports whether the backend is reachable and its schema ready
	// (nil) or not (ErrUnavailable, ErrSchema): /readyz.
	Ping(ctx context.Context) error
	// Close releases the backend; later calls return ErrUnavailable.
	Close() error
}
