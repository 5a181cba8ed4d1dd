// Package identity is who calls the gateway. An Identity verifies the
// credentials an HTTP request carries and yields a Caller: the Principal the
// executor decides grants for, the fingerprint an MCP session is bound to,
// and the purpose the credential was issued for (turn or connect). Every
// implementation yields the same types, so nothing after the front hall
// depends on how the caller was verified: None (the local person of inbound
// auth mode none) lives here, Branchyard's EdDSA tokens in
// runtime/identity/branchyard, and OAuth 2.1 access tokens of OpenID
// providers, whose grants come from a policy file, in runtime/identity/oidc.
package identity

import (
	"time"

	"context"
	"net/http"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/grant"
)

// Principal is who makes a call: the verified claims of a turn token, the
// grants a policy gives an OIDC access token, or the local caller when
// inbound auth is off.
type Principal struct {
	// Sub is the person: the token's subject (in OIDC mode with the
	// issuer's subject prefix), the key of their connections and ledger.
	Sub    string
	Tenant string
	Branch string
	Turn   string
	Grants grant.List
	// Unrestricted skips grant checks (inbound auth mode none, loopback only).
	Unrestricted bool
	// Issuer is the iss of an OIDC access token, which the audit line
	// records beside sub; "" in the other modes.
	Issuer string
	// Token is the caller's own access token (OIDC), which RFC 8693 token
	// exchange trades for an upstream token; the zero value otherwise. It
	// never prints.
	Token SubjectToken
	// StepUp, when set, names the scopes that would widen the grant: a call
	// it would allow is refused with an insufficient_scope challenge
	// instead of policy_denied (OIDC).
	StepUp StepUp
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
	// Expires is when the credential stops being valid; zero when it does
	// not expire (the local person). What the gateway lets a client cache
	// for this caller never outlives it.
	Expires time.Time
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

// SubjectToken is a caller's access token, kept for RFC 8693 token
// exchange. Its value is reachable only through Reveal: formatting it (%v,
// %+v, %#v, %s) or encoding it as JSON writes "[redacted]", so a principal
// logged or marshalled by mistake does not leak it.
type SubjectToken struct{ raw string }

// NewSubjectToken wraps a verified access token.
func NewSubjectToken(raw string) SubjectToken { return SubjectToken{raw: raw} }

// Reveal returns the token, for the token exchange request only.
func (t SubjectToken) Reveal() string { return t.raw }

// IsZero reports whether there is no token.
func (t SubjectToken) IsZero() bool { return t.raw == "" }

const redacted = "[redacted]"

// String, GoString and MarshalJSON write "[redacted]".
func (t SubjectToken) String() string               { return redacted }
func (t SubjectToken) GoString() string             { return redacted }
func (t SubjectToken) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
func (t SubjectToken) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// ScopeOption is a way to widen a caller's grant: with Scopes (the whole set
// its policy rule requires) the caller would hold Grants.
type ScopeOption struct {
	Scopes []string
	Grants grant.List
}

// StepUp is what a caller could become with more scopes (RFC 6750
// insufficient_scope, MCP's step-up authorization).
type StepUp interface {
	// Options lists the ways to widen the grant, fewest missing scopes
	// first; it is computed only when a call is refused.
	Options() []ScopeOption
	// Challenge is the 403 refusal asking for scopes.
	Challenge(scopes []string) *Refusal
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

// Challenge is a Bearer WWW-Authenticate challenge (RFC 6750 section 3):
//
//	Bearer realm="mcp", error="<Error>", error_description="<Description>"[, scope="<Scope>"][, resource_metadata="<ResourceMetadata>"]
//
// with double quotes and backslashes in the values written as ' and
// control characters as spaces, so no value can end its parameter early.
// Empty Scope and ResourceMetadata are left out.
type Challenge struct {
	Error, Description string
	// Scope is the space-separated scopes a step-up asks for.
	Scope string
	// ResourceMetadata is the URL of the protected resource metadata
	// (RFC 9728), from which an MCP client discovers the authorization
	// servers.
	ResourceMetadata string
}

// String renders the challenge.
func (c Challenge) String() string {
	b := make([]byte, 0, 96+len(c.Description)+len(c.Scope)+len(c.ResourceMetadata))
	b = append(b, `Bearer realm="mcp"`...)
	for _, p := range [...]struct{ name, value string }{
		{"error", c.Error}, {"error_description", c.Description}, {"scope", c.Scope}, {"resource_metadata", c.ResourceMetadata},
	} {
		if p.value == "" && (p.name == "scope" || p.name == "resource_metadata") {
			continue
		}
		b = append(b, ", "...)
		b = append(b, p.name...)
		b = append(b, `="`...)
		b = appendQuoteSafe(b, p.value)
		b = append(b, '"')
	}
	return string(b)
}

// appendQuoteSafe appends s with '"' and '\' written as ' and control
// characters as spaces.
func appendQuoteSafe(b []byte, s string) []byte {
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			r = '\''
		case r < 0x20 || r == 0x7f:
			r = ' '
		}
		b = utf8.AppendRune(b, r)
	}
	return b
}
