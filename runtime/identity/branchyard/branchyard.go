// Package branchyard is the inbound identity of Branchyard's bearer tokens
// (EdDSA JWTs verified against the yard's JWKS by runtime/auth): a turn
// token becomes a Principal with the token's grants, a connect token
// (by_purpose: connect) a caller for the connect routes only.
package branchyard

import (
	"context"
	"errors"
	"net/http"

	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/identity"
)

// Identity verifies Branchyard tokens; it implements identity.Identity and
// identity.KeyChecker.
type Identity struct {
	v        *auth.Verifier
	resource string
}

// New returns the identity verifying with v; resource is the gateway's
// canonical /mcp URL, which a refusal's challenge points at.
func New(v *auth.Verifier, resource string) *Identity {
	return &Identity{v: v, resource: resource}
}

// Authenticate verifies r's bearer token.
func (id *Identity) Authenticate(ctx context.Context, r *http.Request) (*identity.Caller, *identity.Refusal) {
	c, err := id.v.Verify(ctx, r.Header.Get("Authorization"))
	if err != nil {
		return nil, refusal(err, id.resource)
	}
	if c.IsConnect() {
		return identity.NewCaller(identity.Principal{Sub: c.Subject}, c.Fingerprint(), identity.ForConnect), nil
	}
	p := identity.Principal{Sub: c.Subject, Tenant: c.Tenant, Branch: c.Branch, Turn: c.Turn, Grants: c.Grants}
	caller := identity.NewCaller(p, c.Fingerprint(), identity.ForTurn)
	caller.Expires = c.Expiry
	return caller, nil
}

// CheckKeys reports whether the JWKS can be read now.
func (id *Identity) CheckKeys(ctx context.Context) error { return id.v.CheckKeys(ctx) }

// refusal is the answer auth.WriteError gives err.
func refusal(err error, resource string) *identity.Refusal {
	var e *auth.Error
	if !errors.As(err, &e) || e == nil {
		e = &auth.Error{Status: http.StatusUnauthorized, Code: auth.CodeInvalidToken, Message: "Token is invalid."}
	}
	return &identity.Refusal{Status: e.Status, Code: e.Code, Message: e.Message, Challenge: e.WWWAuthenticate(resource)}
}
