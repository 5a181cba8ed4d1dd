// Package authtest makes Branchyard-style signing keys, JWKS files and turn
// tokens, well-formed or not, for tests of packages that verify them. It is
// not used by the gateway itself; operators mint with package mint (anvil
// keys init, anvil token mint).
//
// Keys, JWKs, JWKS bytes and atomic JWKS writes are package mint's, so tests
// publish keys exactly as the broker does. What is only for tests lives here:
// keys with any kid (or none) and from a fixed seed, and tokens over
// arbitrary claims or raw header and payload bytes, for attack tests that the
// broker, which refuses what the gateway would refuse, cannot sign.
//
// A key's public JWK is
// {"kty":"OKP","crv":"Ed25519","kid":…,"use":"sig","alg":"EdDSA","x":…}
// (kid left out when empty). Tokens are compact JWS with the header
// {"alg":"EdDSA","typ":"JWT","kid":…}.
package authtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/anvil-dev/anvil/runtime/auth/mint"
)

// Key is an Ed25519 signing key with its key id: mint's key. A test key's
// Kid may be empty, for tokens and JWKS entries without a kid.
type Key = mint.Key

// JWK is mint's Ed25519 JSON Web Key, in Branchyard's key order.
type JWK = mint.JWK

// NewKey makes a fresh Ed25519 key with the given kid. It reads
// crypto/rand, which does not fail on supported platforms; should it fail,
// the key is derived from an all-zero seed and is still a valid key.
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
	return Key{Kid: kid, Private: ed25519.NewKeyFromSeed(s)}
}

// JWKS is the pretty-printed JSON of {"keys":[…]} for the keys' public JWKs
// ([mint.JWKS]).
func JWKS(keys ...Key) []byte { return mint.JWKS(keys...) }

// WriteJWKS replaces path with the keys' public JWKS atomically, mode 0644,
// as a yard does on rotation ([mint.WriteJWKS]).
func WriteJWKS(path string, keys ...Key) error { return mint.WriteJWKS(path, keys...) }

// WriteFileAtomic replaces path with data at the given mode through a
// temporary sibling and a rename ([mint.WriteFileAtomic]), for tests that
// publish a hand-written JWKS.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	return mint.WriteFileAtomic(path, data, mode)
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
