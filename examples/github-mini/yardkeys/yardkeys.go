// Package yardkeys is github-mini's stand-in for a Branchyard yard's token
// broker: it makes an Ed25519 signing key with its public JWKS, and mints
// compact EdDSA JWTs (turn and connect tokens) signed with that key.
//
// Files written by [Keygen] into a directory (created 0700 if missing):
//
//	signing.jwk.json  the private JWK {kty:"OKP", crv:"Ed25519", x, d, kid, alg:"EdDSA", use:"sig"}, mode 0600
//	jwks.json         {"keys":[public JWK]}, pretty-printed, mode 0644
//
// Both are written through a temporary file in the same directory and
// renamed into place, so a gateway reading jwks.json never sees a partial
// file. Each Keygen call makes a new key and replaces both files.
package yardkeys

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// File names inside a key directory.
const (
	SigningKeyFile = "signing.jwk.json"
	JWKSFile       = "jwks.json"
)

// DefaultTTL is the token lifetime used when [MintOptions.TTL] is zero.
const DefaultTTL = 600 * time.Second

// Sentinel errors; returned errors wrap one of them.
var (
	// ErrWrite: the key directory or a key file could not be written.
	ErrWrite = errors.New("yardkeys: cannot write keys")
	// ErrKey: the signing key file is missing or not an Ed25519 private JWK.
	ErrKey = errors.New("yardkeys: bad signing key")
	// ErrClaims: the claims cannot be encoded as JSON.
	ErrClaims = errors.New("yardkeys: bad claims")
)

// Result is what [Keygen] made. Its JSON form is {"kid":…,"jwksPath":…}.
type Result struct {
	// Kid is the key id, "yard-" plus 8 hex characters.
	Kid string `json:"kid"`
	// JWKSPath is the absolute path of the written jwks.json.
	JWKSPath string `json:"jwksPath"`
}

// JWK is an Ed25519 JSON Web Key as written by [Keygen]. D is empty in the
// public form.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	D   string `json:"d,omitempty"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
}

// JWKS is a JSON Web Key Set.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// MintOptions tune [Mint].
type MintOptions struct {
	// TTL is exp − iat, truncated to whole seconds. Zero means 600 s; a
	// negative TTL mints an already expired token.
	TTL time.Duration
	// Now is the issue time (iat); zero means time.Now().
	Now time.Time
}

var b64 = base64.RawURLEncoding

// Keygen makes a new Ed25519 key pair with kid "yard-" + the first 8
// characters of a random UUID, and writes dir/signing.jwk.json (0600) and
// dir/jwks.json (0644), creating dir with mode 0700 when it does not exist.
func Keygen(dir string) (Result, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrWrite, err)
	}
	kid := "yard-" + newUUID()[:8]
	public := JWK{Kty: "OKP", Crv: "Ed25519", X: b64.EncodeToString(pub), Kid: kid, Alg: "EdDSA", Use: "sig"}
	private := public
	private.D = b64.EncodeToString(priv.Seed())

	if err := writeJSONFile(filepath.Join(abs, SigningKeyFile), private, 0o600); err != nil {
		return Result{}, err
	}
	jwksPath := filepath.Join(abs, JWKSFile)
	if err := writeJSONFile(jwksPath, JWKS{Keys: []JWK{public}}, 0o644); err != nil {
		return Result{}, err
	}
	return Result{Kid: kid, JWKSPath: jwksPath}, nil
}

// Mint signs a compact JWT with dir/signing.jwk.json.
//
// The header is exactly {"alg":"EdDSA","typ":"JWT","kid":"<kid>"}. The
// payload is {iat, exp: iat+ttl, jti: <random UUID>, ...claims}: a claim
// named iat, exp or jti replaces the generated value in place, and the
// other claims follow in sorted key order (Go maps have no order). The
// signature is Ed25519 over "<header>.<payload>", all parts base64url
// without padding.
func Mint(dir string, claims map[string]any, opts MintOptions) (string, error) {
	priv, kid, err := loadSigningKey(filepath.Join(dir, SigningKeyFile))
	if err != nil {
		return "", err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	ttl := opts.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	iat := now.Unix()
	base := map[string]any{"iat": iat, "exp": iat + int64(ttl/time.Second), "jti": newUUID()}
	keys := []string{"iat", "exp", "jti"}
	rest := make([]string, 0, len(claims))
	for k := range claims {
		if _, fixed := base[k]; !fixed {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	keys = append(keys, rest...)
	for k, v := range claims {
		base[k] = v
	}

	var payload bytes.Buffer
	payload.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			payload.WriteByte(',')
		}
		kb, _ := marshal(k)
		vb, err := marshal(base[k])
		if err != nil {
			return "", fmt.Errorf("%w: claim %q: %v", ErrClaims, k, err)
		}
		payload.Write(kb)
		payload.WriteByte(':')
		payload.Write(vb)
	}
	payload.WriteByte('}')

	header, err := marshal(struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid"`
	}{"EdDSA", "JWT", kid})
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrKey, err)
	}
	input := b64.EncodeToString(header) + "." + b64.EncodeToString(payload.Bytes())
	sig := ed25519.Sign(priv, []byte(input))
	return input + "." + b64.EncodeToString(sig), nil
}

// loadSigningKey reads a private Ed25519 JWK and checks that d and x agree.
func loadSigningKey(path string) (ed25519.PrivateKey, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("%w: %s not found (run keygen first)", ErrKey, path)
		}
		return nil, "", fmt.Errorf("%w: cannot read %s", ErrKey, path)
	}
	var k JWK
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, "", fmt.Errorf("%w: %s is not a JWK", ErrKey, filepath.Base(path))
	}
	if k.Kty != "OKP" || k.Crv != "Ed25519" || k.Kid == "" {
		return nil, "", fmt.Errorf("%w: %s is not an Ed25519 key with a kid", ErrKey, filepath.Base(path))
	}
	seed, err := b64.DecodeString(k.D)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, "", fmt.Errorf("%w: %s has no valid private part", ErrKey, filepath.Base(path))
	}
	priv := ed25519.NewKeyFromSeed(seed)
	if x, err := b64.DecodeString(k.X); err != nil || !bytes.Equal(x, priv.Public().(ed25519.PublicKey)) {
		return nil, "", fmt.Errorf("%w: %s public and private parts differ", ErrKey, filepath.Base(path))
	}
	return priv, k.Kid, nil
}

// writeJSONFile writes v pretty-printed (two-space indent, trailing newline)
// to path through a temporary file and a rename.
func writeJSONFile(path string, v any, mode os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWrite, err)
	}
	data = append(data, '\n')
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWrite, err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		_ = tmp.Close()
		_ = os.Remove(name)
		return fmt.Errorf("%w: %s: %v", ErrWrite, filepath.Base(path), err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(name, path); err != nil {
		_ = os.Remove(name)
		return fmt.Errorf("%w: %s: %v", ErrWrite, filepath.Base(path), err)
	}
	return nil
}

// marshal encodes v as compact JSON without HTML escaping (like
// JavaScript's JSON.stringify).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// newUUID returns a random (version 4) UUID in its 36-character form.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
