package idptest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Signing algorithms the provider can sign tokens with.
const (
	RS256 = string(jose.RS256)
	ES256 = string(jose.ES256)
	EdDSA = string(jose.EdDSA)
)

// verifyAlgs are the algorithms zitadel's own verifiers (token exchange,
// introspection and userinfo of JWT access tokens) accept: every one the
// provider can sign with, so a rotation to another algorithm keeps those
// endpoints working.
var verifyAlgs = []string{RS256, ES256, EdDSA}

// signingKey is one key pair. It is both zitadel's op.SigningKey (the
// private half signs) and op.Key (the public half is published in the JWKS).
type signingKey struct {
	id      string
	alg     jose.SignatureAlgorithm
	private crypto.Signer
}

var (
	_ op.SigningKey = (*signingKey)(nil)
	_ op.Key        = (*publicKey)(nil)
)

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return k.alg }
func (k *signingKey) Key() any                                    { return k.private }
func (k *signingKey) ID() string                                  { return k.id }

// publicKey is the JWKS view of a signingKey: it never exposes the private
// half, so a key set cannot leak a signing key whatever zitadel does with it.
type publicKey struct{ k *signingKey }

func (p publicKey) ID() string                         { return p.k.id }
func (p publicKey) Algorithm() jose.SignatureAlgorithm { return p.k.alg }
func (p publicKey) Use() string                        { return "sig" }
func (p publicKey) Key() any                           { return p.k.private.Public() }

// newSigningKey generates a fresh key for alg ("" is RS256) with a random
// key ID. RSA keys are 2048 bits: the smallest size verifiers accept, so
// tests pay the least for a rotation.
func newSigningKey(alg string) (*signingKey, error) {
	if alg == "" {
		alg = RS256
	}
	var (
		priv crypto.Signer
		err  error
	)
	switch alg {
	case RS256:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case EdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, fmt.Errorf("idptest: signing algorithm %q is not supported (use %s, %s or %s)", alg, RS256, ES256, EdDSA)
	}
	if err != nil {
		return nil, fmt.Errorf("idptest: generate %s key: %w", alg, err)
	}
	return &signingKey{id: randomID(12), alg: jose.SignatureAlgorithm(alg), private: priv}, nil
}
