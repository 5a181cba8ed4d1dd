// Package kit holds what both store backends share so that they cannot
// drift apart: the sealing of flow payloads and ledger answers, the digests
// of bearer-like keys, argument bounds, and the ledger's decision rule.
package kit

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// boxInfo is the HKDF info of the payload key: a key derived from the vault
// key, so payload ciphertexts can never be confused with vault records.
const boxInfo = "anvil/store/payload/v1"

// Box seals payloads (flow payloads, ledger answers) with AES-256-GCM under
// a key derived from the vault key; the additional data binds each sealed
// value to its table and key, so a value copied to another row does not open.
type Box struct{ aead cipher.AEAD }

// NewBox derives the payload key from the vault key.
func NewBox(vaultKey []byte) (*Box, error) {
	if len(vaultKey) != vault.KeySize {
		return nil, fmt.Errorf("%w: the vault key must be %d bytes", store.ErrConfig, vault.KeySize)
	}
	k, err := hkdf.Key(sha256.New, vaultKey, nil, boxInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("%w: deriving the payload key: %w", store.ErrConfig, err)
	}
	defer clear(k)
	blk, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrConfig, err)
	}
	aead, err := cipher.NewGCM(blk)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrConfig, err)
	}
	return &Box{aead: aead}, nil
}

// Seal returns nonce || ciphertext || tag.
func (b *Box) Seal(plain []byte, aad string) []byte {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand.Read does not fail
	return b.aead.Seal(nonce, nonce, plain, []byte(aad))
}

// Open reverses Seal; a value that does not open under aad is ErrCorrupt.
func (b *Box) Open(sealed []byte, aad string) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, fmt.Errorf("%w: sealed value is too short", store.ErrCorrupt)
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], []byte(aad))
	if err != nil {
		return nil, fmt.Errorf("%w: sealed value does not decrypt", store.ErrCorrupt)
	}
	return plain, nil
}

// SealAnswer encodes and seals a ledger answer for (subject, id).
func (b *Box) SealAnswer(subject, id string, a store.Answer) ([]byte, error) {
	if len(a.Result)+len(a.Effect) > store.MaxPayloadLen {
		return nil, fmt.Errorf("%w: answer is larger than %d bytes", store.ErrInvalid, store.MaxPayloadLen)
	}
	plain, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding answer: %w", store.ErrInvalid, err)
	}
	defer clear(plain)
	return b.Seal(plain, "ledger:"+LedgerAAD(subject, id)), nil
}

// OpenAnswer reverses SealAnswer.
func (b *Box) OpenAnswer(subject, id string, sealed []byte) (*store.Answer, error) {
	plain, err := b.Open(sealed, "ledger:"+LedgerAAD(subject, id))
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	var a store.Answer
	if err := json.Unmarshal(plain, &a); err != nil {
		return nil, fmt.Errorf("%w: answer does not decode", store.ErrCorrupt)
	}
	return &a, nil
}

// LedgerAAD is the canonical text of a ledger entry's key.
func LedgerAAD(subject, id string) string {
	b, _ := json.Marshal([2]string{subject, id})
	return string(b)
}

// Digest is the SHA-256 of a bearer-like key (OAuth state, MCP session id):
// the tables hold only digests, so reading a table does not yield a usable
// state or session id.
func Digest(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

// DigestText is Digest as unpadded base64url, for key-value backends.
func DigestText(s string) string { return base64.RawURLEncoding.EncodeToString(Digest(s)) }

// CheckKeys bounds caller-supplied identifiers: each must be non-empty, at
// most store.MaxKeyLen bytes, and valid UTF-8 without NUL, so that every
// backend holds it as given (PostgreSQL's text refuses NUL and invalid
// UTF-8; that refusal would otherwise read as an outage).
func CheckKeys(kv ...string) error {
	for i := 0; i+1 < len(kv); i += 2 {
		name, v := kv[i], kv[i+1]
		switch {
		case v == "":
			return fmt.Errorf("%w: %s is empty", store.ErrInvalid, name)
		case len(v) > store.MaxKeyLen:
			return fmt.Errorf("%w: %s is longer than %d bytes", store.ErrInvalid, name, store.MaxKeyLen)
		case !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0:
			return fmt.Errorf("%w: %s is not valid UTF-8 without NUL", store.ErrInvalid, name)
		}
	}
	return nil
}

// CheckPayload bounds a flow payload.
func CheckPayload(p []byte) error {
	if len(p) > store.MaxPayloadLen {
		return fmt.Errorf("%w: payload is larger than %d bytes", store.ErrInvalid, store.MaxPayloadLen)
	}
	return nil
}

// NewOwner returns a fresh random lease owner token.
func NewOwner() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Entry states.
const (
	StateInFlight = 1
	StateDone     = 2
)

// Entry is a stored ledger entry as both backends keep it.
type Entry struct {
	Tool       string    `json:"tool"`
	InputHash  string    `json:"input"`
	State      int       `json:"state"`
	Owner      string    `json:"owner,omitempty"`
	LeaseUntil time.Time `json:"lease"`
	Began      time.Time `json:"began,omitzero"` // when the current attempt began
	Done       time.Time `json:"done"`
	Answer     []byte    `json:"answer,omitempty"` // sealed
}

// Action is what Decide tells a backend to do.
type Action int

// Decide's actions.
const (
	Claim    Action = iota + 1 // write a fresh in-flight entry owned by the caller
	TakeOver                   // the same, replacing an entry whose owner's lease expired
	Replay                     // return e.Answer
	Conflict                   // refuse
	Wait                       // another owner holds an unexpired lease: wait and look again
	Unknown                    // the owner's lease expired with no outcome, and the key may not take over: refuse, change nothing
)

// Decide is the ledger rule, applied to the current entry (nil when none)
// inside the backend's atomic section.
func Decide(e *Entry, k store.LedgerKey, now time.Time, retention time.Duration) Action {
	if e == nil || Expired(e, now, retention) {
		return Claim
	}
	if e.Tool != k.Tool || e.InputHash != k.InputHash {
		return Conflict
	}
	if e.State == StateDone {
		return Replay
	}
	if now.Before(e.LeaseUntil) {
		return Wait
	}
	if !k.TakeOver {
		return Unknown
	}
	return TakeOver
}

// Expired reports whether Purge may delete e: completed longer ago than
// retention, or abandoned (lease expired) longer ago than retention.
func Expired(e *Entry, now time.Time, retention time.Duration) bool {
	if e.State == StateDone {
		return !now.Before(e.Done.Add(retention))
	}
	return !now.Before(e.LeaseUntil.Add(retention))
}

// CheckLedgerKey bounds a ledger key.
func CheckLedgerKey(k store.LedgerKey) error {
	return CheckKeys("subject", k.Subject, "ledger id", k.ID, "tool", k.Tool, "input hash", k.InputHash)
}

// Poller paces Begin's waits on an in-flight entry: 2 ms doubling to 100 ms,
// for at most the wait bound (store.Options.Wait) from the first Sleep.
type Poller struct {
	d        time.Duration
	deadline time.Time
	// Wait is the bound; zero answers ErrInFlight at the first Sleep.
	Wait time.Duration
}

// errWaited is Sleep's answer once the wait bound has passed.
var errWaited = errors.New("waited the ledger's wait bound")

// Sleep waits for the next poll, for wake (if not nil) or for ctx; it
// reports ctx's error if it ended, and errWaited once the bound passed.
func (p *Poller) Sleep(ctx context.Context, wake <-chan struct{}) error {
	now := time.Now()
	if p.deadline.IsZero() {
		p.deadline = now.Add(p.Wait)
	}
	left := p.deadline.Sub(now)
	if left <= 0 {
		return errWaited
	}
	switch {
	case p.d == 0:
		p.d = 2 * time.Millisecond
	case p.d < 100*time.Millisecond:
		p.d *= 2
	}
	t := time.NewTimer(min(p.d, left))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-wake:
		return nil
	case <-t.C:
		return nil
	}
}

// WaitError is Begin's error when the wait bound passed or ctx ended
// while waiting.
func WaitError(err error) error {
	return fmt.Errorf("%w: %w", store.ErrInFlight, err)
}

// OpContext bounds one backend round trip by opts.OpTimeout (and ctx).
func OpContext(ctx context.Context, opts store.Options) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, opts.OpTimeout)
}

// KeyedMutex is one mutex per key whose Lock honours a context. The zero
// value is ready; entries are dropped when unused.
type KeyedMutex struct {
	mu sync.Mutex
	m  map[string]chan struct{} // a 1-slot channel per key: full = held
	n  map[string]int           // holders and waiters per key
}

// Lock takes key's mutex or returns ctx's error.
func (k *KeyedMutex) Lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	if k.m == nil {
		k.m, k.n = map[string]chan struct{}{}, map[string]int{}
	}
	ch := k.m[key]
	if ch == nil {
		ch = make(chan struct{}, 1)
		k.m[key] = ch
	}
	k.n[key]++
	k.mu.Unlock()
	drop := func() {
		k.mu.Lock()
		if k.n[key]--; k.n[key] == 0 {
			delete(k.m, key)
			delete(k.n, key)
		}
		k.mu.Unlock()
	}
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		drop()
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() { once.Do(func() { <-ch; drop() }) }, nil
}
