// Package mint is a yard's token broker, as Branchyard runs one: it makes an
// Ed25519 signing key with its public JWKS, and mints the compact EdDSA JWTs
// the gateway verifies (turn tokens and connect tokens). `anvil keys init`
// and `anvil token mint` are its command-line faces; the gateway itself only
// verifies (package auth) and never links this package.
//
// A key directory holds two files, each written through a temporary file and
// a rename, so a gateway re-reading jwks.json never sees a partial file:
//
//	signing.jwk.json  the private JWK {kty, crv, kid, use, alg, x, d}, mode 0600
//	jwks.json         {"keys":[public JWK]}, pretty-printed, mode 0644
//
// Tokens carry exactly Branchyard's claims (its client contract, §3.1): the
// header {"alg":"EdDSA","typ":"JWT","kid":…} in that order (which is why the
// token is signed here with crypto/ed25519 rather than through go-jose, whose
// header keys come out sorted), and the payload {iss, aud, sub, iat, exp, jti,
// by_tenant, by_branch, by_turn, by_grants[, by_purpose]}: no nbf, aud a
// string, iat and exp whole seconds, jti 16 random bytes in base64url.
// What the gateway would refuse is refused here, with the reason, before
// anything is signed.
package mint

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/grant"
)

// File names inside a key directory.
const (
	SigningKeyFile = "signing.jwk.json"
	JWKSFile       = "jwks.json"
)

// Limits the gateway enforces on what it verifies, mirrored from package auth
// (its MaxTokenLifetime, MaxConnectLifetime, MaxClaimChars, PurposeConnect;
// the tests hold them equal) rather than imported: package authtest builds
// on mint, and auth's own tests import authtest.
const (
	// DefaultTTL is a token's lifetime (exp − iat) when none is asked for.
	DefaultTTL = 10 * time.Minute
	// MaxTTL: the gateway refuses a token whose exp is more than an hour ahead.
	MaxTTL = time.Hour
	// MaxConnectTTL: the gateway refuses a connect token living longer.
	MaxConnectTTL = 10 * time.Minute
	// MaxClaimLen bounds by_tenant, by_branch and by_turn (UTF-16 code units).
	MaxClaimLen = 256
	// DefaultTenant is by_tenant when none is given (Branchyard's local tenant).
	DefaultTenant = "local"
	// PurposeConnect is the by_purpose of a connect token.
	PurposeConnect = "connect"
)

// Sentinel errors; every returned error wraps one of them.
var (
	// ErrExists: Init found a signing key already in the directory.
	ErrExists = errors.New("a signing key already exists")
	// ErrWrite: the key directory or a key file could not be written.
	ErrWrite = errors.New("cannot write the key files")
	// ErrKey: the signing key file is missing, readable by others, or not an
	// Ed25519 private JWK.
	ErrKey = errors.New("bad signing key")
	// ErrClaims: the claims are not a token the gateway would accept.
	ErrClaims = errors.New("bad token claims")
)

var b64 = base64.RawURLEncoding

// Key is an Ed25519 signing key and its key id.
type Key struct {
	Kid     string
	Private ed25519.PrivateKey
}

// NewKey makes a fresh key whose kid is "by-" and 12 base64url characters
// (9 random bytes), the shape of Branchyard's key ids.
func NewKey() (Key, error) {
	var id [9]byte
	if _, err := rand.Read(id[:]); err != nil {
		return Key{}, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Key{}, err
	}
	return Key{Kid: "by-" + b64.EncodeToString(id[:]), Private: priv}, nil
}

// Public is the key's public half.
func (k Key) Public() ed25519.PublicKey { return k.Private.Public().(ed25519.PublicKey) }

// JWK is an Ed25519 JSON Web Key in Branchyard's key order. D (the 32-byte
// seed) is empty in the public form. Kid, optional in RFC 7517, is left out
// when empty: this package's keys always have one, test keys (package
// authtest) may not.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Kid string `json:"kid,omitempty"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	X   string `json:"x"`
	D   string `json:"d,omitempty"`
}

// JWK is the key's public JWK (use "sig", alg "EdDSA").
func (k Key) JWK() JWK {
	return JWK{Kty: "OKP", Crv: "Ed25519", Kid: k.Kid, Use: "sig", Alg: "EdDSA", X: b64.EncodeToString(k.Public())}
}

// PrivateJWK is the public JWK plus d. It holds the secret: never log it.
func (k Key) PrivateJWK() JWK {
	j := k.JWK()
	j.D = b64.EncodeToString(k.Private.Seed())
	return j
}

// JWKS is the pretty-printed {"keys":[…]} of the keys' public JWKs, with a
// trailing newline.
func JWKS(keys ...Key) []byte {
	set := struct {
		Keys []JWK `json:"keys"`
	}{Keys: make([]JWK, 0, len(keys))}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.JWK())
	}
	b, _ := json.MarshalIndent(set, "", "  ") // strings only: cannot fail
	return append(b, '\n')
}

// ParsePrivateJWK reads a private Ed25519 JWK with a kid and checks that x,
// when present, is d's public key. Its errors wrap [ErrKey] and never contain
// key material.
func ParsePrivateJWK(b []byte) (Key, error) {
	var j JWK
	if err := json.Unmarshal(b, &j); err != nil {
		return Key{}, fmt.Errorf("%w: not a JSON object", ErrKey)
	}
	if j.Kty != "OKP" || j.Crv != "Ed25519" {
		return Key{}, fmt.Errorf("%w: not an Ed25519 key", ErrKey)
	}
	if j.Kid == "" {
		return Key{}, fmt.Errorf("%w: no kid", ErrKey)
	}
	seed, err := b64.DecodeString(j.D)
	if err != nil || len(seed) != ed25519.SeedSize {
		return Key{}, fmt.Errorf("%w: d is not a base64url 32-byte seed", ErrKey)
	}
	k := Key{Kid: j.Kid, Private: ed25519.NewKeyFromSeed(seed)}
	if j.X != "" && j.X != b64.EncodeToString(k.Public()) {
		return Key{}, fmt.Errorf("%w: x does not match d", ErrKey)
	}
	return k, nil
}

// Init makes a new key in dir (created 0700 when missing) and writes
// signing.jwk.json (0600) and jwks.json (0644). It never replaces a signing
// key: when dir already holds one it returns an error wrapping [ErrExists]
// and changes nothing, since every token minted with the old key would stop
// verifying.
func Init(dir string) (Key, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Key{}, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	keyPath := filepath.Join(dir, SigningKeyFile)
	if _, err := os.Lstat(keyPath); err == nil {
		return Key{}, fmt.Errorf("%w: %s", ErrExists, keyPath)
	}
	k, err := NewKey()
	if err != nil {
		return Key{}, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	priv, _ := json.MarshalIndent(k.PrivateJWK(), "", "  ") // strings only
	// The signing key goes first, and only where none is (even one made
	// meanwhile): the JWKS of a key that was never stored would lock out the
	// tokens of the key that was.
	if err := putFile(keyPath, append(priv, '\n'), 0o600, false); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Key{}, fmt.Errorf("%w: %s", ErrExists, keyPath)
		}
		return Key{}, err
	}
	if err := WriteJWKS(filepath.Join(dir, JWKSFile), k); err != nil {
		_ = os.Remove(keyPath) // ours: Init may run again
		return Key{}, err
	}
	return k, nil
}

// Load reads dir/signing.jwk.json. A key file that its group or others may
// read is refused, as the vault refuses such a key file.
func Load(dir string) (Key, error) {
	path := filepath.Join(dir, SigningKeyFile)
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Key{}, fmt.Errorf("%w: %s not found (run anvil keys init %s first)", ErrKey, path, dir)
		}
		return Key{}, fmt.Errorf("%w: %v", ErrKey, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return Key{}, fmt.Errorf("%w: %s has mode %04o; it must be readable by its owner only (chmod 600)", ErrKey, path, perm)
	}
	if fi.Size() > 64<<10 {
		return Key{}, fmt.Errorf("%w: %s is too large for a JWK", ErrKey, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %v", ErrKey, err)
	}
	k, err := ParsePrivateJWK(b)
	if err != nil {
		return Key{}, fmt.Errorf("%w (%s)", err, path)
	}
	return k, nil
}

// WriteJWKS replaces path with the keys' public JWKS (mode 0644) through
// [WriteFileAtomic], so a gateway re-reading it sees the old key set or the
// new one, never part of one: this is how a rotation publishes its keys.
func WriteJWKS(path string, keys ...Key) error {
	return WriteFileAtomic(path, JWKS(keys...), 0o644)
}

// WriteFileAtomic replaces path with data at the given mode: the bytes go to
// a synced temporary sibling, which is then renamed over path, so path holds
// either its old content or all of data. Errors wrap [ErrWrite].
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	return putFile(path, data, mode, true)
}

// putFile writes data to a temporary sibling of path with the given mode,
// then moves it into place: replacing path when replace is true, otherwise
// failing with an error wrapping fs.ErrExist when path exists. Errors wrap
// [ErrWrite].
func putFile(path string, data []byte, mode os.FileMode, replace bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWrite, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a rename or a link: removes nothing, or the spare name
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr, os.Chmod(tmp, mode)); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrWrite, path, err)
	}
	if replace {
		err = os.Rename(tmp, path)
	} else {
		err = os.Link(tmp, path) // fails when path exists, even if it appeared meanwhile
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrWrite, path, err)
	}
	return nil
}

// Claims are what a token says beyond its times and jti.
type Claims struct {
	// Issuer (iss) is the yard's issuer, Audience (aud) the gateway's /mcp
	// URL, Subject (sub) the principal. All three are required.
	Issuer, Audience, Subject string
	// Tenant is by_tenant ([DefaultTenant] when empty); Branch and Turn are
	// by_branch and by_turn, empty for a connect token or a person's token.
	// Each is any string the gateway takes: at most [MaxClaimLen] UTF-16
	// code units of valid UTF-8 (a turn is usually a 1-based decimal
	// number, but a branch token carries an earlier turn and the contract
	// asks only for a string).
	Tenant, Branch, Turn string
	// Grants is by_grants: a JSON grant list as package grant parses it. It
	// is written in grant's canonical form; nil or empty means [].
	Grants []byte
	// Purpose is by_purpose: "" for a turn token, [PurposeConnect] for a
	// connect token (which must have no grants, branch or turn).
	Purpose string
	// TTL is exp − iat, in whole seconds: zero means [DefaultTTL]; at most
	// [MaxTTL], and [MaxConnectTTL] for a connect token.
	TTL time.Duration
}

// payload is the claim set in Branchyard's order.
type payload struct {
	Iss     string          `json:"iss"`
	Aud     string          `json:"aud"`
	Sub     string          `json:"sub"`
	Iat     int64           `json:"iat"`
	Exp     int64           `json:"exp"`
	JTI     string          `json:"jti"`
	Tenant  string          `json:"by_tenant"`
	Branch  string          `json:"by_branch"`
	Turn    string          `json:"by_turn"`
	Grants  json.RawMessage `json:"by_grants"`
	Purpose string          `json:"by_purpose,omitempty"`
}

// Mint signs a token for c, issued at now. Claims the gateway would refuse
// are an error wrapping [ErrClaims] that names the claim.
func (k Key) Mint(c Claims, now time.Time) (string, error) {
	p, err := c.payload(now)
	if err != nil {
		return "", err
	}
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", fmt.Errorf("%w: %v", ErrClaims, err)
	}
	p.JTI = b64.EncodeToString(jti[:])
	return k.sign(p)
}

func (c Claims) payload(now time.Time) (payload, error) {
	bad := func(format string, args ...any) (payload, error) {
		return payload{}, fmt.Errorf("%w: "+format, append([]any{ErrClaims}, args...)...)
	}
	for _, req := range []struct{ name, v string }{{"iss", c.Issuer}, {"aud", c.Audience}, {"sub", c.Subject}} {
		if req.v == "" {
			return bad("%s is required", req.name)
		}
	}
	tenant := c.Tenant
	if tenant == "" {
		tenant = DefaultTenant
	}
	for _, s := range []struct{ name, v string }{{"by_tenant", tenant}, {"by_branch", c.Branch}, {"by_turn", c.Turn}} {
		if !utf8.ValidString(s.v) {
			return bad("%s is not valid UTF-8", s.name) // JSON would carry another string
		}
		if len(utf16.Encode([]rune(s.v))) > MaxClaimLen {
			return bad("%s is longer than %d characters", s.name, MaxClaimLen)
		}
	}
	grants := []byte("[]")
	if len(bytes.TrimSpace(c.Grants)) > 0 {
		l, err := grant.Parse(c.Grants)
		if err != nil {
			return bad("by_grants: %v", err)
		}
		grants, _ = l.MarshalJSON() // cannot fail
	}
	ttl := c.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	switch c.Purpose {
	case "":
	case PurposeConnect:
		if string(grants) != "[]" || c.Branch != "" || c.Turn != "" {
			return bad("a connect token has no grants, branch or turn")
		}
		if ttl > MaxConnectTTL {
			return bad("a connect token lives at most %v, not %v", MaxConnectTTL, ttl)
		}
	default:
		return bad("by_purpose may only be %q", PurposeConnect)
	}
	if ttl < time.Second || ttl > MaxTTL {
		return bad("the lifetime must be from 1s to %v, not %v", MaxTTL, ttl)
	}
	iat := now.Unix()
	return payload{
		Iss: c.Issuer, Aud: c.Audience, Sub: c.Subject,
		Iat: iat, Exp: iat + int64(ttl/time.Second),
		Tenant: tenant, Branch: c.Branch, Turn: c.Turn,
		Grants: grants, Purpose: c.Purpose,
	}, nil
}

// sign writes the compact JWS of p under the header
// {"alg":"EdDSA","typ":"JWT","kid":…}: Ed25519 over
// base64url(header) "." base64url(payload), every part unpadded.
func (k Key) sign(p payload) (string, error) {
	header, err := marshal(struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid"`
	}{"EdDSA", "JWT", k.Kid})
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrKey, err)
	}
	body, err := marshal(p)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrClaims, err)
	}
	input := b64.EncodeToString(header) + "." + b64.EncodeToString(body)
	return input + "." + b64.EncodeToString(ed25519.Sign(k.Private, []byte(input))), nil
}

// marshal is compact JSON without HTML escaping, as JSON.stringify writes it.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
