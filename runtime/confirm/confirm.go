// Package confirm signs and checks the state of a confirmation the gateway
// asks a person for (MCP 2026-07-28's requestState, 2025-11-25's
// elicitation): an opaque string that binds the question to who asked
// (subject), what (tool and a digest of the exact arguments), until when
// (expiry) and once (a nonce). The gateway issues it with the question and
// accepts the answer only with a state it signed, unchanged, unexpired, for
// the same subject, tool and arguments, and never twice: a Spender records
// the nonce when the answer is used, in the shared state store when there
// is one (single use across replicas), else in this process only.
//
// The state is signed (HMAC-SHA-256), not encrypted: it holds the subject,
// the tool name and digests, nothing secret. Replicas verify each other's
// states when they share the key (ANVIL_REQUEST_STATE_KEY_FILE).
package confirm

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// KeySize is the signing key's size in bytes.
const KeySize = 32

// MaxStateLen bounds a state the gateway reads (untrusted input).
const MaxStateLen = 2048

// DefaultTTL is how long a question may be answered.
const DefaultTTL = 10 * time.Minute

// version prefixes every state the current format writes.
const version = "anvil-rs1."

// Refusal codes (an envelope's details.code) of an answer that is not
// accepted.
const (
	CodeInvalid  = "confirmation/state_invalid"     // forged, malformed or for another key
	CodeExpired  = "confirmation/state_expired"     // answered after its expiry
	CodeMismatch = "confirmation/arguments_changed" // another subject, tool or arguments
	CodeReplayed = "confirmation/state_replayed"    // its nonce was used before
	CodeDeclined = "confirmation/declined"          // the person said no, or did not answer
	CodeStore    = "confirmation/store_unavailable" // the single-use record could not be written
)

// Error is a refused answer.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Claims are what a state binds.
type Claims struct {
	Subject string
	Tool    string
	Digest  [sha256.Size]byte // of the exact arguments (ArgumentsDigest)
	Expires time.Time         // whole seconds
	Nonce   [16]byte
}

// ArgumentsDigest is the digest a state binds: SHA-256 of the arguments'
// own hash as the audit line records it (audit.InputSHA256, hex).
func ArgumentsDigest(inputSHA256 string) [sha256.Size]byte {
	return sha256.Sum256([]byte("anvil confirm arguments\x00" + inputSHA256))
}

// Spender records that a nonce was used; at most one Spend of a nonce
// succeeds (until expires, after which the state is refused as expired
// anyway). It returns ErrSpent for a nonce used before.
type Spender interface {
	Spend(ctx context.Context, nonce string, subject string, expires time.Time) error
}

// ErrSpent is Spend's answer for a nonce used before.
var ErrSpent = errors.New("confirm: nonce already used")

// Signer issues and checks states.
type Signer struct {
	key   []byte
	ttl   time.Duration
	now   func() time.Time
	spend Spender
}

// Options tune a Signer.
type Options struct {
	TTL   time.Duration    // DefaultTTL when zero
	Now   func() time.Time // time.Now when nil
	Spend Spender          // a process-local record when nil
}

// New returns a Signer with key (KeySize bytes).
func New(key []byte, o *Options) (*Signer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("the request state key must be %d bytes, not %d", KeySize, len(key))
	}
	if o == nil {
		o = &Options{}
	}
	s := &Signer{key: append([]byte(nil), key...), ttl: o.TTL, now: o.Now, spend: o.Spend}
	if s.ttl <= 0 {
		s.ttl = DefaultTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.spend == nil {
		s.spend = NewLocalSpender(s.now)
	}
	return s, nil
}

// NewKey returns a random key (a gateway without a configured key signs
// with one: its states are then good on this process only).
func NewKey() []byte {
	k := make([]byte, KeySize)
	_, _ = rand.Read(k) // never fails (crypto/rand crashes the process instead)
	return k
}

// LoadKey reads a key file: KeySize bytes as hex (white space around it
// ignored), readable by its owner only.
func LoadKey(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("request state key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("request state key %s is readable by others (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("request state key: %w", err)
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(k) != KeySize {
		return nil, fmt.Errorf("request state key %s must hold %d bytes as hex (%d hex digits)", path, KeySize, 2*KeySize)
	}
	return k, nil
}

// Issue returns a state for a question to subject about tool with the
// arguments of digest, and its expiry.
func (s *Signer) Issue(subject, tool string, digest [sha256.Size]byte) (string, time.Time) {
	c := Claims{Subject: subject, Tool: tool, Digest: digest, Expires: s.now().Add(s.ttl).Truncate(time.Second)}
	_, _ = rand.Read(c.Nonce[:])
	payload := encode(&c)
	return version + base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload)), c.Expires
}

// Accept checks an answer's state against who answers and what they
// would run, then spends its nonce: nil means run the call, once.
func (s *Signer) Accept(ctx context.Context, state, subject, tool string, digest [sha256.Size]byte) *Error {
	c, payload, mac, err := Parse(state)
	if err != nil {
		return &Error{Code: CodeInvalid, Message: "The confirmation's request state is not one this gateway issued."}
	}
	if !hmac.Equal(mac, s.mac(payload)) {
		return &Error{Code: CodeInvalid, Message: "The confirmation's request state is not one this gateway issued."}
	}
	if !s.now().Before(c.Expires) {
		return &Error{Code: CodeExpired, Message: "The confirmation expired before it was answered; call the tool again to be asked again."}
	}
	if c.Subject != subject || c.Tool != tool || c.Digest != digest {
		return &Error{Code: CodeMismatch, Message: "The confirmation was given for another call: the tool or its arguments changed since the question; call it again to be asked again."}
	}
	if err := s.spend.Spend(ctx, hex.EncodeToString(c.Nonce[:]), subject, c.Expires); err != nil {
		if errors.Is(err, ErrSpent) {
			return &Error{Code: CodeReplayed, Message: "This confirmation was used already; each answer runs the call once."}
		}
		return &Error{Code: CodeStore, Message: "The confirmation could not be recorded as used, so the call was not run; try again shortly."}
	}
	return nil
}

func (s *Signer) mac(payload []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(version))
	h.Write(payload)
	return h.Sum(nil)
}

// Payload layout: expiry (8 bytes, Unix seconds, big-endian), nonce (16),
// digest (32), subject length (2) and bytes, tool length (2) and bytes.
const fixedLen = 8 + 16 + sha256.Size

func encode(c *Claims) []byte {
	b := make([]byte, 0, fixedLen+4+len(c.Subject)+len(c.Tool))
	b = binary.BigEndian.AppendUint64(b, uint64(c.Expires.Unix()))
	b = append(b, c.Nonce[:]...)
	b = append(b, c.Digest[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(c.Subject)))
	b = append(b, c.Subject...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(c.Tool)))
	return append(b, c.Tool...)
}

var errMalformed = errors.New("confirm: malformed request state")

// Parse reads a state's claims, payload and MAC without checking the MAC
// (Accept does). It refuses anything over MaxStateLen or not exactly in
// the current format.
func Parse(state string) (c Claims, payload, mac []byte, err error) {
	if len(state) > MaxStateLen || !strings.HasPrefix(state, version) {
		return c, nil, nil, errMalformed
	}
	p, m, ok := strings.Cut(state[len(version):], ".")
	if !ok {
		return c, nil, nil, errMalformed
	}
	if payload, err = base64.RawURLEncoding.Strict().DecodeString(p); err != nil {
		return c, nil, nil, errMalformed
	}
	if mac, err = base64.RawURLEncoding.Strict().DecodeString(m); err != nil || len(mac) != sha256.Size {
		return c, nil, nil, errMalformed
	}
	if len(payload) < fixedLen+4 {
		return c, nil, nil, errMalformed
	}
	exp := binary.BigEndian.Uint64(payload)
	if exp > 1<<40 {
		return c, nil, nil, errMalformed
	}
	c.Expires = time.Unix(int64(exp), 0)
	copy(c.Nonce[:], payload[8:24])
	copy(c.Digest[:], payload[24:fixedLen])
	rest := payload[fixedLen:]
	var sub, tool string
	if sub, rest, ok = lengthPrefixed(rest); !ok {
		return c, nil, nil, errMalformed
	}
	if tool, rest, ok = lengthPrefixed(rest); !ok || len(rest) != 0 {
		return c, nil, nil, errMalformed
	}
	c.Subject, c.Tool = sub, tool
	return c, payload, mac, nil
}

func lengthPrefixed(b []byte) (string, []byte, bool) {
	if len(b) < 2 {
		return "", nil, false
	}
	n := int(binary.BigEndian.Uint16(b))
	if len(b) < 2+n {
		return "", nil, false
	}
	return string(b[2 : 2+n]), b[2+n:], true
}

// LocalSpender records spent nonces in this process (a gateway without a
// shared store: single use holds on this replica only).
type LocalSpender struct {
	mu    sync.Mutex
	spent map[string]time.Time // nonce -> expiry
	now   func() time.Time
}

// MaxLocalNonces bounds LocalSpender's record; beyond it an answer is
// refused (CodeStore) until expired nonces are dropped.
const MaxLocalNonces = 100000

// NewLocalSpender returns an empty record.
func NewLocalSpender(now func() time.Time) *LocalSpender {
	if now == nil {
		now = time.Now
	}
	return &LocalSpender{spent: map[string]time.Time{}, now: now}
}

// Spend records nonce, or returns ErrSpent.
func (l *LocalSpender) Spend(_ context.Context, nonce, _ string, expires time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.spent[nonce]; ok {
		return ErrSpent
	}
	if len(l.spent) >= MaxLocalNonces {
		now := l.now()
		for n, exp := range l.spent {
			if !now.Before(exp) {
				delete(l.spent, n)
			}
		}
		if len(l.spent) >= MaxLocalNonces {
			return errors.New("confirm: too many confirmations pending")
		}
	}
	l.spent[nonce] = expires
	return nil
}
