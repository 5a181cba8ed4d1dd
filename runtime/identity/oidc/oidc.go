// Package oidc is the inbound identity of auth mode oidc: the gateway as an
// OAuth 2.1 resource server (MCP's authorization specification) taking
// access tokens of the OpenID providers its identity policy trusts
// (runtime/policy), and giving each caller the grant the policy's rules
// give its claims — the same grant type a Branchyard token carries, so
// nothing after the front hall tells the two apart.
//
// A JWT access token is verified against its issuer's keys: the issuer is
// read from the token only to pick one of the trusted issuers (nothing is
// fetched for an unknown iss), whose metadata comes from OpenID discovery
// or RFC 8414 and whose JWKS is cached (KeysTTL) and fetched again for an
// unknown kid at most once per refresh interval. The JWS algorithm must be
// one the issuer allows (RS256 and ES256 by default, EdDSA when listed;
// never none or an HMAC), and the key's type and stated alg must fit it.
// The claims: iss the issuer's exactly; aud naming the gateway's resource
// URI or an alias the policy lists; exp present and not past (with
// leeway), nbf passed, iat not in the future, exp at most a day away; sub
// a non-empty string of at most 256 characters; azp (or client_id) one of
// the issuer's authorized parties when it lists any. An opaque token is
// sent to the one issuer with introspection (RFC 7662) and must come back
// active with the same claims.
//
// Every refusal is 401 (invalid_token, or invalid_request without a
// bearer) with a WWW-Authenticate challenge naming the protected resource
// metadata (RFC 9728) and the policy's default scopes; a call a wider
// scope would allow is refused 403 insufficient_scope by the step-up the
// caller's Principal carries. Verified tokens are remembered (bounded):
// a remembered one is used again only while its key is still in its
// issuer's set, its times still hold, and the policy is the one it was
// decided under.
package oidc

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/policy"
	"github.com/anvil-dev/anvil/runtime/tokencache"
)

// Config configures an Identity.
type Config struct {
	// Resource is the gateway's canonical /mcp URL
	// (ANVIL_INBOUND_AUDIENCE): the audience tokens must name.
	Resource string
	// Policy is the identity policy (required).
	Policy *policy.Policy
	// Leeway is the clock skew allowed on exp, nbf and iat.
	Leeway time.Duration
	// Getenv reads the secrets the policy names; nil reads nothing.
	Getenv func(string) string
	// HTTPClient fetches metadata and keys and posts introspection;
	// default DefaultHTTPClient().
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
	// RefreshInterval is the shortest time between two fetches of an
	// issuer's keys forced by unknown kids; default DefaultRefreshInterval.
	RefreshInterval time.Duration
	// CacheSize bounds the remembered tokens; 0 is DefaultCacheSize, < 0
	// remembers none.
	CacheSize int
}

// DefaultCacheSize is how many verified tokens an Identity remembers.
const DefaultCacheSize = 4096

// Identity verifies OIDC access tokens; it implements identity.Identity
// and identity.KeyChecker. SetPolicy swaps the policy while it serves.
type Identity struct {
	resource    string
	metadataURL string
	leeway      float64
	now         func() time.Time
	client      *http.Client
	interval    time.Duration
	getenv      func(string) string

	setMu sync.Mutex // orders SetPolicy calls
	state atomic.Pointer[state]
	cache *tokencache.Cache[*verified]
}

// state is what one policy makes of the identity: its issuers (with their
// cached metadata and keys) and the challenge's default scope.
type state struct {
	policy        *policy.Policy
	issuers       map[string]*issuer
	introspector  *introspector
	defaultScope  string
	resourceAlias map[string]bool
}

// New returns the identity of cfg, refusing a policy whose secrets are not
// set (policy.CheckSecrets) and a resource that is not an absolute URL.
func New(cfg Config) (*Identity, error) {
	u, err := url.Parse(cfg.Resource)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, errors.New("oidc: the resource must be the gateway's absolute /mcp URL")
	}
	id := &Identity{
		resource: cfg.Resource,
		// RFC 9728 section 3.1: the well-known path goes between the host
		// and the resource's path.
		metadataURL: u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.EscapedPath(), "/"),
		leeway:      cfg.Leeway.Seconds(),
		now:         cfg.Now,
		client:      cfg.HTTPClient,
		interval:    cfg.RefreshInterval,
		getenv:      cfg.Getenv,
	}
	if id.now == nil {
		id.now = time.Now
	}
	if id.client == nil {
		id.client = DefaultHTTPClient()
	}
	if id.interval <= 0 {
		id.interval = DefaultRefreshInterval
	}
	if id.getenv == nil {
		id.getenv = func(string) string { return "" }
	}
	switch {
	case cfg.CacheSize == 0:
		id.cache = newTokenCache(DefaultCacheSize)
	case cfg.CacheSize > 0:
		id.cache = newTokenCache(cfg.CacheSize)
	}
	if err := id.SetPolicy(cfg.Policy); err != nil {
		return nil, err
	}
	return id, nil
}

// SetPolicy makes p the policy from the next request on (a reload). A
// policy whose secrets are not set is refused and the current one kept.
// Issuers whose settings did not change keep their cached metadata and
// keys; tokens remembered under the old policy are decided again.
func (id *Identity) SetPolicy(p *policy.Policy) error {
	if p == nil {
		return errors.New("oidc: no policy")
	}
	if err := p.CheckSecrets(id.getenv); err != nil {
		return err
	}
	id.setMu.Lock()
	defer id.setMu.Unlock()
	old := id.state.Load()
	st := &state{policy: p, issuers: map[string]*issuer{}, resourceAlias: map[string]bool{id.resource: true}}
	for _, a := range p.Resource.Audiences {
		st.resourceAlias[a] = true
	}
	for _, cfg := range p.Issuers {
		var is *issuer
		if old != nil {
			if prev := old.issuers[cfg.Issuer]; prev != nil && reflect.DeepEqual(prev.cfg, cfg) {
				is = prev
			}
		}
		if is == nil {
			is = newIssuer(cfg, id.client, id.now, id.interval)
		}
		st.issuers[cfg.Issuer] = is
		if cfg.Introspection != nil {
			st.introspector = &introspector{is: is, clientID: cfg.Introspection.ClientID, clientSecret: id.getenv(cfg.Introspection.ClientSecretEnv)}
		}
	}
	st.defaultScope = strings.Join(p.Prefixed(p.Resource.DefaultScopes), " ")
	id.state.Store(st)
	return nil
}

// Policy is the policy in force.
func (id *Identity) Policy() *policy.Policy { return id.state.Load().policy }

// Resource is the gateway's resource URI.
func (id *Identity) Resource() string { return id.resource }

// ResourceMetadataURL is where the protected resource metadata is served,
// as challenges name it: the RFC 9728 well-known URL of the resource.
func (id *Identity) ResourceMetadataURL() string { return id.metadataURL }

// TokenEndpoint is the token endpoint in the metadata of the trusted
// issuer iss (for token exchange).
func (id *Identity) TokenEndpoint(ctx context.Context, iss string) (string, error) {
	is := id.state.Load().issuers[iss]
	if is == nil {
		return "", fmt.Errorf("oidc: %s is not a trusted issuer", iss)
	}
	m, err := is.metadata(ctx)
	if err != nil || m.TokenEndpoint == "" {
		return "", fmt.Errorf("oidc: the token endpoint of %s is unknown (its metadata cannot be read)", iss)
	}
	return m.TokenEndpoint, nil
}

// CheckKeys reports whether every trusted issuer's keys can be had now
// (fetched, or cached): the gateway is not ready while one cannot.
func (id *Identity) CheckKeys(ctx context.Context) error {
	st := id.state.Load()
	for _, cfg := range st.policy.Issuers {
		if _, err := st.issuers[cfg.Issuer].currentKeys(ctx); err != nil {
			return fmt.Errorf("the keys of %s cannot be read", cfg.Issuer)
		}
	}
	return nil
}

// Authenticate verifies r's bearer token and gives its caller the
// policy's grant.
func (id *Identity) Authenticate(ctx context.Context, r *http.Request) (*identity.Caller, *identity.Refusal) {
	st := id.state.Load()
	tok, ok := auth.BearerToken(r.Header.Get("Authorization"))
	if !ok {
		return nil, id.refusal(st, &failure{code: "invalid_request", msg: msgNoBearer})
	}
	if len(tok) > auth.MaxTokenBytes {
		return nil, id.refusal(st, invalidToken(msgTooLarge))
	}
	now := unixSeconds(id.now())
	key := tokencache.Key(tok)
	if id.cache != nil {
		if ent, ok := id.cache.Get(key); ok {
			if ent.st == st && id.stillValid(ctx, ent, now) {
				return identity.NewCaller(ent.principal, ent.fingerprint, ent.purpose), nil
			}
			id.cache.Remove(key)
		}
	}
	ent, f := id.verify(ctx, st, tok, now)
	if f != nil {
		return nil, id.refusal(st, f)
	}
	if id.cache != nil {
		id.cache.Put(key, ent, now)
	}
	return identity.NewCaller(ent.principal, ent.fingerprint, ent.purpose), nil
}

// verified is a verified token and the caller it makes.
type verified struct {
	st     *state
	is     *issuer
	claims *tokenClaims
	// kid and key verified a JWT; key is nil for an introspected token,
	// which is remembered until until (seconds).
	kid   string
	key   *jose.JSONWebKey
	until float64

	principal   identity.Principal
	fingerprint string
	purpose     identity.Purpose
}

// stillValid reports whether a remembered token may be used again now.
func (id *Identity) stillValid(ctx context.Context, v *verified, now float64) bool {
	if v.claims.checkTimes(now, id.leeway) != nil {
		return false
	}
	if v.key == nil {
		return now < v.until
	}
	return v.is.keyStillServes(ctx, v.kid, v.key)
}

// verify is the full verification of a token not remembered.
func (id *Identity) verify(ctx context.Context, st *state, tok string, now float64) (*verified, *failure) {
	var (
		is      *issuer
		members map[string]json.RawMessage
		v       = &verified{st: st, until: math.Inf(1)}
	)
	switch {
	case strings.Count(tok, ".") == 2:
		if !auth.WellFormedCompact(tok) || !looksLikeJWS(tok) {
			return nil, invalidToken(msgMalformed)
		}
		iss, ok := unverifiedIssuer(tok)
		if is = st.issuers[iss]; !ok || is == nil {
			return nil, invalidToken(msgIssuer)
		}
		payload, kid, key, f := is.verifySignature(ctx, tok)
		if f != nil {
			return nil, f
		}
		if kind(payload) != '{' || json.Unmarshal(payload, &members) != nil {
			return nil, invalidToken(msgNotObject)
		}
		v.kid, v.key = kid, key
	case st.introspector == nil:
		return nil, invalidToken(msgOpaque)
	case !b64token(tok):
		return nil, invalidToken("Token is not a well-formed bearer token.")
	default:
		is = st.introspector.is
		var f *failure
		if members, f = st.introspector.introspect(ctx, tok); f != nil {
			return nil, f
		}
		if _, ok := members["iss"]; !ok {
			// The answer comes from the issuer itself.
			members["iss"], _ = json.Marshal(is.cfg.Issuer)
		}
		v.until = now + float64(is.cfg.Introspection.CacheSeconds)
	}
	c, f := readClaims(members, is.cfg.Claims)
	if f != nil {
		return nil, f
	}
	audience := func(a string) bool { return st.resourceAlias[a] || slices.Contains(is.cfg.Audiences, a) }
	if f := c.check(&is.cfg, audience, now, id.leeway); f != nil {
		return nil, f
	}
	v.is, v.claims = is, c
	pc := c.policyClaims(st.policy)
	d := st.policy.Decide(pc)
	v.principal = identity.Principal{
		Sub: is.cfg.SubjectPrefix + c.sub, Tenant: c.tenant, Grants: d.Grants,
		Issuer: c.iss, Token: identity.NewSubjectToken(tok),
		StepUp: &stepUp{id: id, st: st, claims: pc},
	}
	v.fingerprint = fingerprint(c.iss, c.sub)
	v.purpose = identity.ForTurn
	if d.Connect {
		v.purpose |= identity.ForConnect
	}
	return v, nil
}

// policyClaims are the claims as p's rules read them.
func (c *tokenClaims) policyClaims(p *policy.Policy) policy.Claims {
	return policy.Claims{Issuer: c.iss, Subject: c.sub, Tenant: c.tenant, Groups: c.groups, Roles: c.roles, Scopes: p.Unprefixed(c.scopes)}
}

// PolicyClaims reads a token's claims (a JWT's payload, or an
// introspection answer) as p's rules read them: its iss must be one of p's
// issuers, whose claim names are read and type-checked as for a verified
// token, and sub must be a non-empty string of at most 256 characters.
// Nothing else is checked — no signature, audience or time — so it tells
// what a token would be granted, not whether it would be taken (anvil
// policy check). It returns the claims and the issuer's settings.
func PolicyClaims(p *policy.Policy, members map[string]json.RawMessage) (policy.Claims, *policy.Issuer, error) {
	iss, ok := stringClaim(members, "iss")
	is := p.Issuer(iss)
	if !ok || is == nil {
		return policy.Claims{}, nil, errors.New(msgIssuer)
	}
	c, f := readClaims(members, is.Claims)
	if f != nil {
		return policy.Claims{}, nil, errors.New(f.msg)
	}
	if c.sub == "" || canon.UTF16Len(c.sub) > MaxSubjectChars {
		return policy.Claims{}, nil, errors.New(msgSubject)
	}
	return c.policyClaims(p), is, nil
}

// fingerprint identifies the person an MCP session is bound to: the
// base64url SHA-256 of iss and sub. A session outlives the token that
// opened it (a refreshed or stepped-up token of the same person continues
// it), and never passes to another person.
func fingerprint(iss, sub string) string {
	sum := sha256.Sum256([]byte("oidc\x00" + iss + "\x00" + sub))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// b64token reports whether tok is an RFC 6750 b64token: an opaque token
// worth sending to introspection.
func b64token(tok string) bool {
	end := len(tok)
	for end > 0 && tok[end-1] == '=' {
		end--
	}
	if end == 0 {
		return false
	}
	for i := 0; i < end; i++ {
		c := tok[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return false
		}
	}
	return true
}

// refusal is the 401 answer of a failure.
func (id *Identity) refusal(st *state, f *failure) *identity.Refusal {
	return &identity.Refusal{
		Status: http.StatusUnauthorized, Code: f.code, Message: f.msg,
		Challenge: identity.Challenge{Error: f.code, Description: f.msg, Scope: st.defaultScope, ResourceMetadata: id.metadataURL}.String(),
	}
}

// stepUp is identity.StepUp over the policy a token was decided under.
type stepUp struct {
	id     *Identity
	st     *state
	claims policy.Claims
}

// Options are the policy's step-up options for the caller's claims.
func (s *stepUp) Options() []identity.ScopeOption {
	opts := s.st.policy.StepUp(s.claims)
	out := make([]identity.ScopeOption, len(opts))
	for i, o := range opts {
		out[i] = identity.ScopeOption{Scopes: o.Scopes, Grants: o.Grants}
	}
	return out
}

// Challenge is the 403 insufficient_scope refusal asking for scopes (with
// the resource's prefix).
func (s *stepUp) Challenge(scopes []string) *identity.Refusal {
	scope := strings.Join(s.st.policy.Prefixed(scopes), " ")
	msg := "This call needs the scope " + scope + "; sign in again granting it."
	return &identity.Refusal{
		Status: http.StatusForbidden, Code: "insufficient_scope", Message: msg,
		Challenge: identity.Challenge{Error: "insufficient_scope", Description: msg, Scope: scope, ResourceMetadata: s.id.metadataURL}.String(),
	}
}

func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
