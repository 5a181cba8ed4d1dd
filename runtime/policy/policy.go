// Package policy is the identity policy of a gateway in inbound auth mode
// oidc (ANVIL_INBOUND_POLICY_FILE): which OpenID providers it trusts, what
// it publishes as an OAuth protected resource, which upstreams take a token
// exchanged for the caller's, and the rules that turn a verified access
// token's claims (issuer, subject, groups, roles, scopes, tenant) into the
// grant a Branchyard token would carry. Everything after the front hall reads
// only that grant, so a caller admitted by policy is served exactly as one
// admitted by Branchyard.
//
// Deny by default: a caller no rule matches holds an empty grant, so it
// sees no tool and every call is refused. A rule matches when every
// condition it states holds; the grant is the matching rules' entries, in
// rule order (the first entry that allows an operation picks its account,
// as in any grant).
//
// The file is YAML, decoded strictly by [Load] and [Decode]: an unknown or
// repeated key, a value of the wrong type or out of range, a missing key,
// an alias or a second document is an error carrying its file:line:col and
// a policy/… code, and a file with any error is not used (the gateway
// refuses to start, or keeps the policy it had on reload).
// schemas/anvil.policy.schema.json is the same grammar as a JSON Schema,
// for editors; the tests keep the two in step.
package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/anvil-dev/anvil/runtime/grant"
)

// Policy is a decoded, valid policy file. It is read-only once decoded and
// safe for concurrent use.
type Policy struct {
	// File is the path the policy was read from (positions name it).
	File     string
	Resource Resource
	// Issuers are the trusted OpenID providers, in file order.
	Issuers []Issuer
	// Rules map claims to grants, in file order.
	Rules []Rule
	// Upstreams are the connectors that take an exchanged token, sorted by
	// connector id.
	Upstreams []Upstream

	memo grantMemo
}

// Resource is what the gateway publishes as a protected resource (RFC 9728)
// and accepts as its audience.
type Resource struct {
	// Audiences are accepted in a token's aud beside the gateway's resource
	// URI (ANVIL_INBOUND_AUDIENCE): the application ID URI or client ID an
	// identity provider that ignores RFC 8707 puts there instead.
	Audiences []string
	// ScopesSupported is the metadata's scopes_supported; empty: every
	// scope a rule requires, in rule order.
	ScopesSupported []string
	// DefaultScopes is the scope parameter of a 401 challenge: what an MCP
	// client asks for on its first login (the baseline); empty: none.
	DefaultScopes []string
	// ScopePrefix is put before every scope the gateway publishes or
	// challenges for, and taken off the token's scopes before rules read
	// them (Entra ID: api://<app>/ is requested, the token's scp holds the
	// bare names).
	ScopePrefix string
	// OmitResource leaves resource out of the protected resource metadata,
	// for identity providers that refuse the RFC 8707 resource parameter
	// MCP clients derive from it (Entra ID's v2 endpoints). Clients that
	// follow RFC 9728 strictly then cannot use the metadata.
	OmitResource bool
}

// Issuer is a trusted OpenID provider.
type Issuer struct {
	// Issuer is the iss its tokens carry, exactly; its metadata is read
	// from OpenID discovery (<issuer>/.well-known/openid-configuration) or,
	// failing that, RFC 8414.
	Issuer string
	// JWKSURI overrides the metadata's jwks_uri.
	JWKSURI string
	// Audiences are accepted in aud for this issuer's tokens, beside the
	// resource URI and Resource.Audiences.
	Audiences []string
	// Algorithms are the JWS algorithms accepted: RS256, ES256, EdDSA.
	// Default RS256 and ES256.
	Algorithms []string
	// AuthorizedParties, when set, are the only clients whose tokens are
	// taken: a token's azp (or, without one, client_id) must be one of them.
	AuthorizedParties []string
	// SubjectPrefix is put before sub to make the person's key (their
	// connections, ledger and sessions); required, and distinct, when more
	// than one issuer is trusted, so two providers' subjects never meet.
	SubjectPrefix string
	// Claims names the claims rules read.
	Claims ClaimNames
	// Introspection, when set, verifies this issuer's opaque access tokens
	// (RFC 7662); at most one issuer may have it.
	Introspection *Introspection
}

// ClaimNames are the names of the claims rules read (defaults: scope,
// groups, roles, tenant; Entra ID: scp, groups, roles, tid).
type ClaimNames struct {
	Scope, Groups, Roles, Tenant string
}

// Introspection is an RFC 7662 client.
type Introspection struct {
	// Endpoint overrides the metadata's introspection_endpoint.
	Endpoint string
	// ClientID and the secret in the environment variable ClientSecretEnv
	// authenticate the gateway (HTTP Basic).
	ClientID, ClientSecretEnv string
	// CacheSeconds is how long an active answer is reused (never past the
	// token's exp); default 30, 0 to 300.
	CacheSeconds int
}

// Rule gives its grants (and the connect routes) to callers its Match
// admits.
type Rule struct {
	Name  string
	Match Match
	// Grants are the entries the rule gives, Branchyard's grant grammar.
	Grants grant.List
	// Connect lets matching callers use the connect routes (/connect/*)
	// to connect their own upstream accounts.
	Connect bool
}

// Match is a rule's conditions. Every one stated must hold: the token's
// issuer, subject (its sub, without prefix), tenant is one of the listed;
// one of its groups, one of its roles is listed; and it carries every
// listed scope. An empty Match admits every verified caller.
type Match struct {
	Issuers, Subjects, Groups, Roles, Tenants []string
	Scopes                                    []string
}

// Upstream is a connector whose calls carry a token obtained by RFC 8693
// token exchange for the caller's own, instead of a stored connection.
type Upstream struct {
	Connector     string
	TokenExchange TokenExchange
}

// TokenExchange is where and how a caller's token is exchanged.
type TokenExchange struct {
	// Issuer is the provider the exchange is asked of; it must be a
	// trusted issuer, and only its callers' tokens are exchanged. Default:
	// the one issuer, when only one is trusted.
	Issuer string
	// TokenEndpoint overrides the issuer metadata's token_endpoint.
	TokenEndpoint string
	// ClientID and the secret in ClientSecretEnv authenticate the gateway.
	ClientID, ClientSecretEnv string
	// Audience is the audience parameter (the upstream's identifier), and
	// Resource the resource parameter (RFC 8707), when set.
	Audience, Resource string
	// Scopes are the scope parameter; empty: none sent.
	Scopes []string
}

// Claims are what a verified token says about its caller, as rules read
// them. Scopes are without the resource's ScopePrefix.
type Claims struct {
	Issuer, Subject, Tenant string
	Groups, Roles, Scopes   []string
}

// Decision is what the policy gives a caller.
type Decision struct {
	// Rules are the names of the matching rules, in order.
	Rules []string
	// Grants are the matching rules' entries, in order; callers with the
	// same matching rules share one list (treat it as read-only).
	Grants grant.List
	// Connect is set when a matching rule allows the connect routes.
	Connect bool
}

// Decide applies the rules to c.
func (p *Policy) Decide(c Claims) Decision {
	var matched []int
	for i := range p.Rules {
		if p.Rules[i].Match.admits(c, nil) {
			matched = append(matched, i)
		}
	}
	return p.decision(matched)
}

// decision is the Decision of the rules at the indexes matched.
func (p *Policy) decision(matched []int) Decision {
	d := Decision{Rules: make([]string, 0, len(matched))}
	for _, i := range matched {
		d.Rules = append(d.Rules, p.Rules[i].Name)
		d.Connect = d.Connect || p.Rules[i].Connect
	}
	d.Grants = p.memo.grants(p, matched)
	return d
}

// Option is a way for a caller to widen its grant: the whole scope set a
// rule requires (without prefix), and the grant the caller would then hold.
type Option struct {
	Scopes []string
	Grants grant.List
}

// StepUp lists the options of a caller: for each rule that admits c except
// for scopes it lacks, the rule's scopes and the grant c would hold with
// them; fewest missing scopes first, then in rule order.
func (p *Policy) StepUp(c Claims) []Option {
	type cand struct {
		missing int
		opt     Option
	}
	var cands []cand
	for i := range p.Rules {
		r := &p.Rules[i]
		missing := 0
		if !r.Match.admits(c, &missing) || missing == 0 {
			continue
		}
		wider := c
		wider.Scopes = union(c.Scopes, r.Match.Scopes)
		cands = append(cands, cand{missing, Option{Scopes: slices.Clone(r.Match.Scopes), Grants: p.Decide(wider).Grants}})
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return a.missing - b.missing })
	out := make([]Option, len(cands))
	for i, c := range cands {
		out[i] = c.opt
	}
	return out
}

// admits reports whether m admits c. With missing non-nil, the scope
// condition is not checked but counted: *missing is the number of m's
// scopes c lacks.
func (m *Match) admits(c Claims, missing *int) bool {
	if !anyOf(m.Issuers, c.Issuer) || !anyOf(m.Subjects, c.Subject) || !anyOf(m.Tenants, c.Tenant) ||
		!intersects(m.Groups, c.Groups) || !intersects(m.Roles, c.Roles) {
		return false
	}
	n := 0
	for _, s := range m.Scopes {
		if !slices.Contains(c.Scopes, s) {
			n++
		}
	}
	if missing != nil {
		*missing = n
		return true
	}
	return n == 0
}

// anyOf: an empty condition holds; otherwise v must be listed (an empty v
// never is: the decoder refuses empty strings).
func anyOf(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }

func intersects(list, have []string) bool {
	if len(list) == 0 {
		return true
	}
	for _, h := range have {
		if slices.Contains(list, h) {
			return true
		}
	}
	return false
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// ScopesSupported is what the protected resource metadata publishes:
// Resource.ScopesSupported, or every scope a rule requires, in order, each
// with the ScopePrefix.
func (p *Policy) ScopesSupported() []string {
	list := p.Resource.ScopesSupported
	if len(list) == 0 {
		for _, r := range p.Rules {
			list = union(list, r.Match.Scopes)
		}
	}
	return p.Prefixed(list)
}

// Prefixed returns scopes with the ScopePrefix.
func (p *Policy) Prefixed(scopes []string) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = p.Resource.ScopePrefix + s
	}
	return out
}

// Unprefixed returns a token's scopes with the ScopePrefix taken off those
// that carry it.
func (p *Policy) Unprefixed(scopes []string) []string {
	if p.Resource.ScopePrefix == "" {
		return scopes
	}
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = strings.TrimPrefix(s, p.Resource.ScopePrefix)
	}
	return out
}

// Issuer returns the trusted issuer with iss, or nil.
func (p *Policy) Issuer(iss string) *Issuer {
	for i := range p.Issuers {
		if p.Issuers[i].Issuer == iss {
			return &p.Issuers[i]
		}
	}
	return nil
}

// Upstream returns the token exchange of a connector, or nil.
func (p *Policy) Upstream(connector string) *Upstream {
	i, ok := slices.BinarySearchFunc(p.Upstreams, connector, func(u Upstream, c string) int { return strings.Compare(u.Connector, c) })
	if !ok {
		return nil
	}
	return &p.Upstreams[i]
}

// grantMemo shares one grant list among callers whose tokens match the
// same rules: the generated gateway compiles a grant list once per list
// (fleet's grant table), so shared lists are compiled once.
type grantMemo struct {
	mu sync.Mutex
	m  map[string]grant.List
}

// maxMemo bounds the memo; beyond it lists are built per call.
const maxMemo = 4096

func (g *grantMemo) grants(p *Policy, matched []int) grant.List {
	if len(matched) == 0 {
		return grant.List{}
	}
	var kb []byte
	for _, i := range matched {
		kb = strconv.AppendInt(kb, int64(i), 36)
		kb = append(kb, ',')
	}
	key := string(kb)
	g.mu.Lock()
	l, ok := g.m[key]
	g.mu.Unlock()
	if ok {
		return l
	}
	l = grant.List{}
	for _, i := range matched {
		l = append(l, p.Rules[i].Grants...)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]grant.List{}
	}
	if prev, ok := g.m[key]; ok {
		return prev
	}
	if len(g.m) < maxMemo {
		g.m[key] = l
	}
	return l
}

// CheckSecrets reports the environment variables the policy names for
// secrets (introspection and token exchange client secrets) that getenv
// finds empty: a policy is usable only when every one is set.
func (p *Policy) CheckSecrets(getenv func(string) string) error {
	var missing []string
	need := func(name, what string) {
		if name != "" && getenv(name) == "" {
			missing = append(missing, name+" ("+what+")")
		}
	}
	for _, is := range p.Issuers {
		if is.Introspection != nil {
			need(is.Introspection.ClientSecretEnv, "the introspection secret of "+is.Issuer)
		}
	}
	for _, u := range p.Upstreams {
		need(u.TokenExchange.ClientSecretEnv, "the token exchange secret of upstream "+u.Connector)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: %s not set", p.File, strings.Join(missing, ", "))
	}
	return nil
}
