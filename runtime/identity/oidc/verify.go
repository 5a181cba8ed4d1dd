package oidc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// looksLikeJWS reports whether token has a JWS's shape: three segments
// whose first decodes to a JSON object with an alg. Such a token is
// verified as a JWT and never sent to introspection.
func looksLikeJWS(token string) bool {
	head, _, ok := strings.Cut(token, ".")
	if !ok || strings.Count(token, ".") != 2 {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return false
	}
	var h map[string]json.RawMessage
	if json.Unmarshal(raw, &h) != nil {
		return false
	}
	_, ok = h["alg"]
	return ok
}

// unverifiedIssuer reads a compact JWT's iss without verifying anything: it
// only picks which trusted issuer's keys verify the token (an iss no issuer
// has is refused, and nothing is fetched for it).
func unverifiedIssuer(token string) (string, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	var p struct {
		Iss json.RawMessage `json:"iss"`
	}
	if json.Unmarshal(raw, &p) != nil || kind(p.Iss) != '"' {
		return "", false
	}
	var iss string
	if json.Unmarshal(p.Iss, &iss) != nil {
		return "", false
	}
	return iss, true
}

// verifySignature parses token as a compact JWS signed with one of is's
// algorithms, finds its key (by kid, refreshing the key set once for an
// unknown kid) and checks the signature. It returns the payload and the
// kid and key that verified it.
func (is *issuer) verifySignature(ctx context.Context, token string) ([]byte, string, *jose.JSONWebKey, *failure) {
	algs := make([]jose.SignatureAlgorithm, len(is.cfg.Algorithms))
	for i, a := range is.cfg.Algorithms {
		algs[i] = jose.SignatureAlgorithm(a)
	}
	jws, err := jose.ParseSignedCompact(token, algs)
	if err != nil {
		var alg *jose.ErrUnexpectedSignatureAlgorithm
		if errors.As(err, &alg) {
			return nil, "", nil, invalidToken(msgAlgorithm)
		}
		return nil, "", nil, invalidToken(msgMalformed)
	}
	if len(jws.Signatures) != 1 {
		return nil, "", nil, invalidToken(msgMalformed)
	}
	h := jws.Signatures[0].Header
	kid, alg := h.KeyID, h.Algorithm
	set, err := is.currentKeys(ctx)
	if err != nil {
		return nil, "", nil, invalidToken(msgKeysUnread)
	}
	key, ok := set.lookup(kid)
	if !ok && kid != "" {
		fresh, err := is.refreshKeys(ctx)
		if err != nil {
			return nil, "", nil, invalidToken(msgKeysUnread)
		}
		if fresh != nil {
			key, ok = fresh.lookup(kid)
		}
	}
	if !ok || !keyFits(key, alg) {
		return nil, "", nil, invalidToken(msgBadSignature)
	}
	payload, err := jws.Verify(key.Key)
	if err != nil {
		return nil, "", nil, invalidToken(msgBadSignature)
	}
	return payload, kid, key, nil
}

// keyStillServes reports whether the key that verified a remembered token
// is still in the issuer's key set now (a rotated-out key, or a set that
// cannot be read, ends every token it verified).
func (is *issuer) keyStillServes(ctx context.Context, kid string, key *jose.JSONWebKey) bool {
	set, err := is.currentKeys(ctx)
	if err != nil {
		return false
	}
	k, ok := set.lookup(kid)
	return ok && k == key
}
