// Package identity is who calls the gateway. An Identity verifies the
// credentials an HTTP request carries and yields a Caller: the Principal the
// executor decides grants for, the fingerprint an MCP session is bound to,
// and the purpose the credential was issued for (turn or connect). Every
// implementation yields the same types, so nothing after the front hall
// depends on how the caller was verified: None (the local person of inbound
// auth mode none) lives here, Branchyard's EdDSA tokens in
// runtime/identity/branchyard.
package identity

import (
	"context"
	"net/http"

	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/grant"
)

// Principal is who makes a call: the verified claims of a turn token, or the
// local caller when inbound auth is off.
type Principal struct {
	Sub    string
	Tenant string
	Branch string
	Turn   string
	Grants grant.List
	// Unrestricted skips grant checks (inbound auth mode none, loopback only).
	Unrestricted bool
}

// Subject is p's Sub, or "" for no principal.
func (p *Principal) Subject() string {
	if p == nil {
		return ""
	}
	return p.Sub
}

// Purpose is what a verified credential may be used for: the routes it
// opens. A Caller's Purpose may hold both (the local person).
type Purpose uint8

const (
	// ForTurn lists and calls tools: /mcp, /call/<tool>, /tools.
	ForTurn Purpose = 1 << iota
	// ForConnect connects the person's upstream accounts: /connect/*.
	ForConnect
)

// Caller is a verified inbound identity.
type Caller struct {
	// Principal is who calls, with the grants the executor decides on.
	Principal *Principal
	// Fingerprint identifies the credential an MCP session is bound to: a
	// session answers only requests whose caller has the same fingerprint.
	Fingerprint string
	// Purpose is what the credential was issued for.
	Purpose Purpose
}

// May reports whether the caller's credential opens routes of purpose p.
func (c *Caller) May(p Purpose) bool { return c != nil && c.Purpose&p != 0 }

// NewCaller returns a Caller of p (a copy) with its fingerprint and
// purpose. The Caller and its Principal are one allocation: a request
// verifies its caller once, and the executor keeps only the Principal.
func NewCaller(p Principal, fingerprint string, purpose Purpose) *Caller {
	b := &struct {
		c Caller
		p Principal
	}{p: p}
	b.c = Caller{Principal: &b.p, Fingerprint: fingerprint, Purpose: purpose}
	return &b.c
}

// LocalSub is the subject, and the session fingerprint, of the local person
// in auth mode none.
const LocalSub = "local"

// Local returns the local person of auth mode none: unrestricted, for every
// route, a fresh Caller each time (callers may keep it).
func Local() *Caller {
	return NewCaller(Principal{Sub: LocalSub, Unrestricted: true}, LocalSub, ForTurn|ForConnect)
}

// Identity verifies the caller of a request. Implementations are safe for
// concurrent use and fail closed: a request whose credential cannot be
// verified, for whatever reason, gets a Refusal, never a Caller.
type Identity interface {
	// Authenticate verifies the credentials r carries (its Authorization
	// header). It reads no body.
	Authenticate(ctx context.Context, r *http.Request) (*Caller, *Refusal)
}

// KeyChecker is an Identity whose verification reads keys that may become
// unreadable (a JWKS file or URL); /readyz reports the gateway not ready
// while CheckKeys fails.
type KeyChecker interface {
	CheckKeys(ctx context.Context) error
}

// Refusal is a request refused for its credential: Status (401) with the
// WWW-Authenticate challenge Challenge (RFC 6750, with resource_metadata
// naming the protected-resource metadata when the gateway's URL is https)
// and the error envelope {"error":{"code":Code,"message":Message}}. Code
// is a bounded label (invalid_token, invalid_request) that metrics may
// count; Message never holds the credential.
type Refusal struct {
	Status    int
	Code      string
	Message   string
	Challenge string
}

// Write answers the refusal.
func (e *Refusal) Write(w http.ResponseWriter) {
	status := e.Status
	if status == 0 {
		status = http.StatusUnauthorized
	}
	if e.Challenge != "" {
		w.Header().Set("WWW-Authenticate", e.Challenge)
	}
	envelope.WriteSimple(w, status, e.Code, e.Message)
}

// None is inbound auth mode none: every request is the local person
// (Local), with every tool unrestricted. The front hall serves it only to
// loopback requests.
type None struct{}

// Authenticate returns the local person.
func (None) Authenticate(context.Context, *http.Request) (*Caller, *Refusal) { return Local(), nil }
