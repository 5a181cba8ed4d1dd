// Package authtest makes Branchyard-style signing keys, JWKS files and turn
// tokens, well-formed or not, for tests of packages that verify them. It is
// not used by the gateway itself; operators mint with package mint (anvil
// keys init, anvil token mint).
//
// A key is an Ed25519 pair with a kid; its public JWK is
// {"kty":"OKP","crv":"Ed25519","kid":…,"use":"sig","alg":"EdDSA","x":…}.
// Tokens are compact JWS with the header {"alg":"EdDSA","typ":"JWT","kid":…}.
package authtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	jose "github.com/go-jose/go-jose/v4"
)

// Key is an Ed25519 signing key with its key id.
type Key struct {
	Kid     string
	Public  ed25519.PublicKey
	Private ed25519.PrivateKey
}

// JWK is a public Ed25519 JSON Web Key, in Branchyard's key order.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Kid string `json:"kid,omitempty"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	X   string `json:"x"`
}

// PrivateJWK is a private Ed25519 JSON Web Key: the public fields plus d, the
// 32-byte seed.
type PrivateJWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	Kid string `json:"kid,omitempty"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	X   string `json:"x"`
	D   string `json:"d"`
}

// NewKey makes a fresh Ed25519 key with the given kid. It reads
// crypto/rand, which does not fail on supported platforms; should it fail,
// the key is derived from an all-zero seed and Public is still consistent.
func NewKey(kid string) Key {
	seed := make([]byte, ed25519.SeedSize)
	_, _ = io.ReadFull(rand.Reader, seed)
	return KeyFromSeed(kid, seed)
}

// KeyFromSeed makes the key for a 32-byte seed; a seed of another length is
// padded or cut to 32 bytes.
func KeyFromSeed(kid string, seed []byte) Key {
	s := make([]byte, ed25519.SeedSize)
	copy(s, seed)
	priv := ed25519.NewKeyFromSeed(s)
	return Key{Kid: kid, Public: priv.Public().(ed25519.PublicKey), Private: priv}
}

// JWK is the key's public JWK with use "sig" and alg "EdDSA".
func (k Key) JWK() JWK {
	return JWK{Kty: "OKP", Crv: "Ed25519", Kid: k.Kid, Use: "sig", Alg: "EdDSA", X: b64(k.Public)}
}

// PrivateJWK is the key's private JWK (what anvil keys init writes to
// signing.jwk.json). It holds the secret seed: never log it.
func (k Key) PrivateJWK() PrivateJWK {
	return PrivateJWK{Kty: "OKP", Crv: "Ed25519", Kid: k.Kid, Use: "sig", Alg: "EdDSA", X: b64(k.Public), D: b64(k.Private.Seed())}
}

// ParsePrivateJWK reads a private Ed25519 JWK (as PrivateJWK writes it). The
// error never contains key material.
func ParsePrivateJWK(b []byte) (Key, error) {
	var j PrivateJWK
	if err := json.Unmarshal(b, &j); err != nil {
		return Key{}, errors.New("authtest: the signing key is not a JSON object")
	}
	if j.Kty != "OKP" || j.Crv != "Ed25519" {
		return Key{}, errors.New("authtest: the signing key is not an Ed25519 key")
	}
	seed, err := base64.RawURLEncoding.DecodeString(j.D)
	if err != nil || len(seed) != ed25519.SeedSize {
		return Key{}, errors.New("authtest: the signing key's d is not a base64url 32-byte seed")
	}
	k := KeyFromSeed(j.Kid, seed)
	if j.X != "" && j.X != b64(k.Public) {
		return Key{}, errors.New("authtest: the signing key's x does not match its d")
	}
	return k, nil
}

// JWKS is the pretty-printed JSON of {"keys":[…]} for the keys' public JWKs.
func JWKS(keys ...Key) []byte {
	set := struct {
		Keys []JWK `json:"keys"`
	}{Keys: make([]JWK, 0, len(keys))}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.JWK())
	}
	b, _ := json.MarshalIndent(set, "", "  ") // plain strings: cannot fail
	return append(b, '\n')
}

// WriteJWKS replaces path with the keys' public JWKS atomically (a temporary
// file in the same directory, then a rename), mode 0644, as Branchyard does
// on rotation.
func WriteJWKS(path string, keys ...Key) error {
	return WriteFileAtomic(path, JWKS(keys...), 0o644)
}

// WriteFileAtomic writes data to a temporary sibling of path and renames it
// into place with the given mode.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("authtest: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp, mode)); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("authtest: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("authtest: %w", err)
	}
	return nil
}

// Mint signs claims with go-jose as a compact JWT whose header is
// {"alg":"EdDSA","typ":"JWT","kid":key.Kid} (kid left out when empty). The
// claims are signed exactly as given (add iat, exp, jti yourself). It returns
// "" only if claims cannot be encoded as JSON.
func Mint(key Key, claims map[string]any) string {
	payload, err := json.Marshal(claims)
	if err != nil {
		return ""
	}
	s, err := SignPayload(key, payload)
	if err != nil {
		return ""
	}
	return s
}

// SignPayload signs an arbitrary payload with go-jose under the header
// {"alg":"EdDSA","typ":"JWT","kid":…}.
func SignPayload(key Key, payload []byte) (string, error) {
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if key.Kid != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), key.Kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: key.Private}, opts)
	if err != nil {
		return "", fmt.Errorf("authtest: %w", err)
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("authtest: %w", err)
	}
	s, err := obj.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("authtest: %w", err)
	}
	return s, nil
}

// SignRaw builds a compact token from raw header and payload bytes, signing
// base64url(header) "." base64url(payload) with Ed25519 directly. It lets
// tests produce headers go-jose would refuse to write (alg none, a header that
// is not an object, …).
func SignRaw(key Key, header, payload []byte) string {
	input := b64(header) + "." + b64(payload)
	return input + "." + b64(ed25519.Sign(key.Private, []byte(input)))
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
