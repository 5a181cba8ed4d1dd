package oidc_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/anvil-dev/anvil/internal/idptest"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/identity/oidc"
	"github.com/anvil-dev/anvil/runtime/policy"
)

const resource = "http://127.0.0.1:9/mcp"

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// forge is an issuer whose keys the test holds: it serves OpenID
// discovery and a JWKS, and signs whatever claims a test needs.
type forge struct {
	srv     *httptest.Server
	keys    map[string]crypto.Signer // by kid
	algs    map[string]jose.SignatureAlgorithm
	jwksHit atomic.Int64
}

func newForge(t testing.TB) *forge {
	f := &forge{keys: map[string]crypto.Signer{}, algs: map[string]jose.SignatureAlgorithm{}}
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": f.srv.URL, "jwks_uri": f.srv.URL + "/keys", "token_endpoint": f.srv.URL + "/token"})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		f.jwksHit.Add(1)
		var set jose.JSONWebKeySet
		for kid, k := range f.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Public(), KeyID: kid, Algorithm: string(f.algs[kid]), Use: "sig"})
		}
		json.NewEncoder(w).Encode(set)
	})
	f.add(t, "rs1", jose.RS256)
	return f
}

func (f *forge) add(t testing.TB, kid string, alg jose.SignatureAlgorithm) {
	t.Helper()
	var k crypto.Signer
	var err error
	switch alg {
	case jose.RS256:
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.EdDSA:
		_, k, err = ed25519.GenerateKey(rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	f.keys[kid], f.algs[kid] = k, alg
}

func (f *forge) claims(kv ...any) map[string]any {
	now := time.Now().Unix()
	c := map[string]any{"iss": f.srv.URL, "aud": resource, "sub": "ada", "iat": now, "exp": now + 300,
		"scope": "tools:read", "groups": []string{"eng"}}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

// sign signs claims with the key kid.
func (f *forge) sign(t testing.TB, kid string, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: f.algs[kid], Key: f.keys[kid]}, (&jose.SignerOptions{}).WithHeader("kid", kid).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// unsigned builds header.payload.signature by hand.
func unsigned(header, claims map[string]any, sig []byte) string {
	h, _ := json.Marshal(header)
	p, _ := json.Marshal(claims)
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p) + "." + base64.RawURLEncoding.EncodeToString(sig)
}

const rules = `rules:
  - name: readers
    match: {groups: [eng], scopes: ["tools:read"]}
    grants: [{connector: github, operations: ["*"], mode: read}]
  - name: writers
    match: {groups: [eng], scopes: ["tools:write"]}
    grants: [{connector: github, operations: ["*"], mode: write}]
    connect: true
`

func newIdentity(t testing.TB, doc string, opts ...func(*oidc.Config)) *oidc.Identity {
	t.Helper()
	p, err := policy.Decode("policy.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cfg := oidc.Config{Resource: resource, Policy: p, Leeway: 30 * time.Second,
		Getenv: func(k string) string { return map[string]string{"GATEWAY_SECRET": "gateway-secret"}[k] }}
	for _, o := range opts {
		o(&cfg)
	}
	id, err := oidc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func request(tok string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	return r
}

func mustCall(t *testing.T, id *oidc.Identity, tok string) *identity.Caller {
	t.Helper()
	c, ref := id.Authenticate(ctx(t), request(tok))
	if ref != nil {
		t.Fatalf("refused: %+v", ref)
	}
	return c
}

func refused(t *testing.T, id *oidc.Identity, tok, want string) *identity.Refusal {
	t.Helper()
	c, ref := id.Authenticate(ctx(t), request(tok))
	if ref == nil {
		t.Fatalf("accepted (%+v), want a refusal containing %q", c.Principal, want)
	}
	if ref.Status != 401 || !strings.Contains(ref.Message, want) || strings.Contains(ref.Message+ref.Challenge, tok) {
		t.Fatalf("refusal %+v, want 401 containing %q", ref, want)
	}
	return ref
}

// TestForgedClaims: with keys the test holds, every claim check refuses
// what it must, and a good token is the caller the policy makes.
func TestForgedClaims(t *testing.T) {
	f := newForge(t)
	id := newIdentity(t, "version: 1\nissuers: [{issuer: \""+f.srv.URL+"\", authorized_parties: [mcp-host]}]\nresource: {audiences: [api://gw], default_scopes: [\"tools:read\"]}\n"+rules)
	good := f.sign(t, "rs1", f.claims("azp", "mcp-host"))
	c := mustCall(t, id, good)
	p := c.Principal
	if p.Sub != "ada" || p.Issuer != f.srv.URL || len(p.Grants) != 1 || p.Grants[0].Mode != "read" || !c.May(identity.ForTurn) || c.May(identity.ForConnect) ||
		p.Token.Reveal() != good || p.StepUp == nil || p.Unrestricted {
		t.Errorf("caller %+v principal %+v", c, p)
	}
	if s := fmt.Sprintf("%v %+v %#v", p.Token, *p, p.Token); strings.Contains(s, good) {
		t.Error("the subject token prints")
	}
	other := mustCall(t, id, f.sign(t, "rs1", f.claims("azp", "mcp-host", "jti", "another")))
	if other.Fingerprint != c.Fingerprint {
		t.Error("two tokens of one person have two fingerprints")
	}
	if bob := mustCall(t, id, f.sign(t, "rs1", f.claims("azp", "mcp-host", "sub", "bob"))); bob.Fingerprint == c.Fingerprint {
		t.Error("two people share a fingerprint")
	}
	if a := mustCall(t, id, f.sign(t, "rs1", f.claims("client_id", "mcp-host", "azp", nil, "aud", []string{"x", "api://gw"}))); a.Principal.Sub != "ada" {
		t.Errorf("an alias audience and client_id: %+v", a.Principal)
	}

	now := time.Now().Unix()
	for _, c := range []struct {
		name, want string
		claims     map[string]any
	}{
		{"wrong issuer", "issuer", f.claims("iss", "https://elsewhere.example", "azp", "mcp-host")},
		{"wrong audience", "audience", f.claims("aud", "https://other.example/mcp", "azp", "mcp-host")},
		{"no audience", "audience", f.claims("aud", nil, "azp", "mcp-host")},
		{"audience type", "aud", f.claims("aud", 7, "azp", "mcp-host")},
		{"expired", "expired", f.claims("exp", now-120, "azp", "mcp-host")},
		{"no exp", "expiration", f.claims("exp", nil, "azp", "mcp-host")},
		{"not yet valid", "not yet valid", f.claims("nbf", now+600, "azp", "mcp-host")},
		{"issued in the future", "future", f.claims("iat", now+600, "azp", "mcp-host")},
		{"lifetime", "more than a day", f.claims("exp", now+3*86400, "azp", "mcp-host")},
		{"no subject", "subject", f.claims("sub", nil, "azp", "mcp-host")},
		{"long subject", "subject", f.claims("sub", strings.Repeat("a", 257), "azp", "mcp-host")},
		{"subject type", "sub", f.claims("sub", 42, "azp", "mcp-host")},
		{"other client", "client", f.claims("azp", "evil-client")},
		{"no client", "client", f.claims()},
		{"groups type", "groups", f.claims("azp", "mcp-host", "groups", map[string]any{"eng": true})},
		{"scope type", "scope", f.claims("azp", "mcp-host", "scope", []any{"tools:read", 1})},
		{"exp type", "exp", f.claims("azp", "mcp-host", "exp", "tomorrow")},
	} {
		t.Run(c.name, func(t *testing.T) { refused(t, id, f.sign(t, "rs1", c.claims), c.want) })
	}
}

// TestSignatureAttacks: alg none, an HMAC keyed with the public key, a
// key the issuer never published, a tampered payload, an algorithm the
// issuer does not allow and a kid naming another type of key are refused.
func TestSignatureAttacks(t *testing.T) {
	f := newForge(t)
	f.add(t, "ed1", jose.EdDSA)
	f.add(t, "es1", jose.ES256)
	id := newIdentity(t, "version: 1\nissuers: [{issuer: \""+f.srv.URL+"\"}]\n"+rules)
	claims := f.claims()
	mustCall(t, id, f.sign(t, "rs1", claims))
	mustCall(t, id, f.sign(t, "es1", claims))

	refused(t, id, unsigned(map[string]any{"alg": "none", "kid": "rs1"}, claims, nil), "algorithm")
	refused(t, id, unsigned(map[string]any{"alg": "none"}, claims, nil), "algorithm")
	// HS256 with the RSA public key as the HMAC secret: the classic
	// algorithm confusion.
	der, _ := x509.MarshalPKIXPublicKey(f.keys["rs1"].Public())
	head, _ := json.Marshal(map[string]any{"alg": "HS256", "kid": "rs1"})
	body, _ := json.Marshal(claims)
	in := base64.RawURLEncoding.EncodeToString(head) + "." + base64.RawURLEncoding.EncodeToString(body)
	mac := hmac.New(sha256.New, der)
	mac.Write([]byte(in))
	refused(t, id, in+"."+base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), "algorithm")
	// EdDSA is not among the default algorithms (Branchyard's tokens are
	// EdDSA), though the issuer publishes the key.
	refused(t, id, f.sign(t, "ed1", claims), "algorithm")
	// A key the issuer does not publish.
	stranger := newForge(t)
	refused(t, id, stranger.sign(t, "rs1", claims), "signature")
	// The payload changed after signing.
	tok := f.sign(t, "rs1", claims)
	parts := strings.Split(tok, ".")
	widened := f.claims("groups", []string{"eng", "admins"}, "scope", "tools:read tools:write")
	p, _ := json.Marshal(widened)
	refused(t, id, parts[0]+"."+base64.RawURLEncoding.EncodeToString(p)+"."+parts[2], "signature")
	// A header claiming RS256 with the kid of the EC key.
	ec := f.sign(t, "es1", claims)
	ecParts := strings.Split(ec, ".")
	h, _ := json.Marshal(map[string]any{"alg": "RS256", "kid": "es1"})
	refused(t, id, base64.RawURLEncoding.EncodeToString(h)+"."+ecParts[1]+"."+ecParts[2], "signature")
	// Malformed spellings.
	refused(t, id, "a.b.c", "well-formed")
	refused(t, id, tok+"x", "well-formed")
	refused(t, id, strings.Repeat("x", 70000), "too large")

	withEd := newIdentity(t, "version: 1\nissuers: [{issuer: \""+f.srv.URL+"\", algorithms: [EdDSA]}]\n"+rules)
	mustCall(t, withEd, f.sign(t, "ed1", claims))
	refused(t, withEd, f.sign(t, "rs1", claims), "algorithm")
}

// TestUnknownKidRefetchIsRateLimited: a token naming a kid the set lacks
// fetches the set again, but made-up kids cannot make the gateway fetch
// more than once per refresh interval; a key published since is found.
func TestUnknownKidRefetchIsRateLimited(t *testing.T) {
	f := newForge(t)
	id := newIdentity(t, "version: 1\nissuers: [{issuer: \""+f.srv.URL+"\"}]\n"+rules, func(c *oidc.Config) { c.RefreshInterval = time.Hour })
	mustCall(t, id, f.sign(t, "rs1", f.claims()))
	before := f.jwksHit.Load()
	stranger := newForge(t)
	for i := range 20 {
		refused(t, id, stranger.sign(t, "rs1", f.claims("jti", fmt.Sprint(i))), "signature")
		stranger.keys["k"+fmt.Sprint(i)], stranger.algs["k"+fmt.Sprint(i)] = stranger.keys["rs1"], jose.RS256
		refused(t, id, stranger.sign(t, "k"+fmt.Sprint(i), f.claims()), "signature")
	}
	if n := f.jwksHit.Load() - before; n > 1 {
		t.Errorf("%d key set fetches for unknown kids within one interval", n)
	}

	g := newForge(t)
	quick := newIdentity(t, "version: 1\nissuers: [{issuer: \""+g.srv.URL+"\"}]\n"+rules, func(c *oidc.Config) { c.RefreshInterval = time.Millisecond })
	mustCall(t, quick, g.sign(t, "rs1", g.claims()))
	g.add(t, "rs2", jose.RS256)
	time.Sleep(5 * time.Millisecond)
	mustCall(t, quick, g.sign(t, "rs2", g.claims()))
}

// TestRefusalAnswer: a refusal is a 401 with the envelope and a challenge
// naming the RFC 9728 metadata URL and the default scopes.
func TestRefusalAnswer(t *testing.T) {
	f := newForge(t)
	id := newIdentity(t, "version: 1\nissuers: [{issuer: \""+f.srv.URL+"\"}]\nresource: {default_scopes: [\"tools:read\"], scope_prefix: \"api://gw/\"}\n"+rules)
	_, ref := id.Authenticate(ctx(t), request(""))
	rec := httptest.NewRecorder()
	ref.Write(rec)
	if rec.Code != 401 || rec.Body.String() != `{"error":{"code":"invalid_request","message":"No bearer token was presented."}}` ||
		rec.Header().Get("WWW-Authenticate") != `Bearer realm="mcp", error="invalid_request", error_description="No bearer token was presented.", scope="api://gw/tools:read", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"` {
		t.Errorf("%d %q %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
	}
	if id.ResourceMetadataURL() != "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp" {
		t.Error(id.ResourceMetadataURL())
	}
	// The token's scopes are read without the prefix.
	c := mustCall(t, id, f.sign(t, "rs1", f.claims("scope", "api://gw/tools:write")))
	if len(c.Principal.Grants) != 1 || c.Principal.Grants[0].Mode != "write" {
		t.Errorf("prefixed scope: %+v", c.Principal.Grants)
	}
	// Step-up asks for the prefixed scope.
	reader := mustCall(t, id, f.sign(t, "rs1", f.claims("scope", "api://gw/tools:read")))
	opts := reader.Principal.StepUp.Options()
	if len(opts) != 1 || !slices.Equal(opts[0].Scopes, []string{"tools:write"}) {
		t.Fatalf("options %+v", opts)
	}
	up := reader.Principal.StepUp.Challenge(opts[0].Scopes)
	if up.Status != 403 || up.Code != "insufficient_scope" ||
		up.Challenge != `Bearer realm="mcp", error="insufficient_scope", error_description="This call needs the scope api://gw/tools:write; sign in again granting it.", scope="api://gw/tools:write", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"` {
		t.Errorf("step-up %+v", up)
	}
}

// TestPolicyReload: a new policy decides the next request, remembered
// tokens included; one whose secrets are unset is refused and the old one
// kept.
func TestPolicyReload(t *testing.T) {
	f := newForge(t)
	id := newIdentity(t, "version: 1\nissuers: [{issuer: \""+f.srv.URL+"\"}]\n"+rules)
	tok := f.sign(t, "rs1", f.claims())
	if c := mustCall(t, id, tok); len(c.Principal.Grants) != 1 {
		t.Fatal(c.Principal.Grants)
	}
	hits := f.jwksHit.Load()
	p, err := policy.Decode("p2.yaml", []byte("version: 1\nissuers: [{issuer: \""+f.srv.URL+"\"}]\nrules: [{name: none, match: {groups: [ops]}, connect: true}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := id.SetPolicy(p); err != nil {
		t.Fatal(err)
	}
	if c := mustCall(t, id, tok); len(c.Principal.Grants) != 0 || c.May(identity.ForConnect) {
		t.Errorf("after reload: %+v", c.Principal)
	}
	if f.jwksHit.Load() != hits {
		t.Error("an unchanged issuer's keys were fetched again")
	}
	bad, err := policy.Decode("p3.yaml", []byte("version: 1\nissuers: [{issuer: \""+f.srv.URL+"\", introspection: {client_id: g, client_secret_env: UNSET_SECRET}}]\n"+rules))
	if err != nil {
		t.Fatal(err)
	}
	if err := id.SetPolicy(bad); err == nil || !strings.Contains(err.Error(), "UNSET_SECRET") {
		t.Errorf("a policy without its secret: %v", err)
	}
	if id.Policy() != p {
		t.Error("the refused policy replaced the good one")
	}
}

// TestCheckKeys: the keys of every issuer must be readable.
func TestCheckKeys(t *testing.T) {
	f := newForge(t)
	id := newIdentity(t, "version: 1\nissuers: [{issuer: \""+f.srv.URL+"\", subject_prefix: \"a:\"}, {issuer: \"http://127.0.0.1:1\", subject_prefix: \"b:\"}]\n"+rules)
	if err := id.CheckKeys(ctx(t)); err == nil || !strings.Contains(err.Error(), "http://127.0.0.1:1") {
		t.Errorf("an unreachable issuer: %v", err)
	}
	ok := newIdentity(t, "version: 1\nissuers: [{issuer: \""+f.srv.URL+"\"}]\n"+rules)
	if err := ok.CheckKeys(ctx(t)); err != nil {
		t.Error(err)
	}
	// The second issuer's subjects carry its prefix.
	if c := mustCall(t, id, f.sign(t, "rs1", f.claims())); c.Principal.Sub != "a:ada" {
		t.Errorf("prefixed subject %q", c.Principal.Sub)
	}
}

// idp is a real provider (zitadel) with an MCP host client allowed to ask
// for the gateway as its resource, a confidential client, and users.
func idp(t *testing.T) *idptest.Provider {
	return idptest.Start(t, idptest.Options{
		Scopes: []string{"tools:read", "tools:write"},
		Clients: []idptest.Client{
			{ID: "mcp-host", RedirectURIs: []string{"http://127.0.0.1:7777/cb"}, Resources: []string{resource, "https://other.example/mcp"}},
			{ID: "stale", RedirectURIs: []string{"http://127.0.0.1:7777/cb"}, Resources: []string{resource}, Backdate: time.Hour},
			{ID: "web", Secret: "web-secret", RedirectURIs: []string{"http://127.0.0.1:7778/cb"}, Opaque: true, Audience: []string{resource}},
			{ID: "gateway", Secret: "gateway-secret", Audience: []string{"gateway"}},
		},
		Users: []idptest.User{
			{Subject: "user-ada", Username: "ada", Groups: []string{"eng"}, Claims: map[string]any{"tenant": "acme"}},
		},
	})
}

func login(t *testing.T, p *idptest.Provider, client string, resources []string, scopes ...string) string {
	t.Helper()
	tok, err := p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: client, Username: "ada", Scopes: scopes, Resources: resources})
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// TestRealProvider: tokens of a real OpenID provider, found through its
// discovery document: a token for this gateway is its caller; a token for
// another resource, an expired one, one of a provider the policy does not
// trust, and one signed by a key rotated out are refused.
func TestRealProvider(t *testing.T) {
	p := idp(t)
	id := newIdentity(t, "version: 1\nissuers: [{issuer: \""+p.Issuer()+"\"}]\n"+rules)
	tok := login(t, p, "mcp-host", []string{resource}, "openid", "tools:read")
	c := mustCall(t, id, tok)
	if c.Principal.Sub != "user-ada" || c.Principal.Tenant != "acme" || len(c.Principal.Grants) != 1 {
		t.Errorf("caller %+v", c.Principal)
	}
	refused(t, id, login(t, p, "mcp-host", []string{"https://other.example/mcp"}, "tools:read"), "audience")
	refused(t, id, login(t, p, "stale", []string{resource}, "tools:read"), "expired")
	foreign := idp(t)
	refused(t, id, login(t, foreign, "mcp-host", []string{resource}, "tools:read"), "issuer")

	// A rotation that removes the old key ends the old token, remembered
	// or not; a token of the new key is taken.
	if _, err := p.RotateKey(idptest.ES256); err != nil {
		t.Fatal(err)
	}
	rotated := newIdentity(t, "version: 1\nissuers: [{issuer: \""+p.Issuer()+"\"}]\n"+rules, func(c *oidc.Config) { c.RefreshInterval = time.Millisecond })
	refused(t, rotated, tok, "signature")
	time.Sleep(2 * time.Millisecond)
	mustCall(t, rotated, login(t, p, "mcp-host", []string{resource}, "tools:read"))
}

// TestRotationEndsRememberedToken: a remembered token stops working once
// its key leaves the issuer's set, when the set is next fetched.
func TestRotationEndsRememberedToken(t *testing.T) {
	p := idp(t)
	clock := time.Now()
	id := newIdentity(t, "version: 1\nissuers: [{issuer: \""+p.Issuer()+"\"}]\n"+rules, func(c *oidc.Config) {
		c.Now = func() time.Time { return clock }
	})
	tok := login(t, p, "mcp-host", []string{resource}, "tools:read")
	mustCall(t, id, tok)
	if _, err := p.RotateKey(""); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(oidc.KeysTTL + time.Second)
	refused(t, id, tok, "signature")
}

// TestOpaqueTokens: an opaque token goes to the issuer with introspection
// and must come back active and addressed to the gateway.
func TestOpaqueTokens(t *testing.T) {
	p := idp(t)
	id := newIdentity(t, "version: 1\nissuers: [{issuer: \""+p.Issuer()+"\", introspection: {client_id: gateway, client_secret_env: GATEWAY_SECRET, cache_seconds: 0}}]\n"+rules)
	cfg, err := p.OAuth2Config("web", "tools:read")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: "web", Username: "ada", Scopes: cfg.Scopes})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(tok.AccessToken, ".") == 2 {
		t.Fatalf("not an opaque token: %s", tok.AccessToken)
	}
	c := mustCall(t, id, tok.AccessToken)
	if c.Principal.Sub != "user-ada" || len(c.Principal.Grants) != 1 || c.Principal.Issuer != p.Issuer() {
		t.Errorf("caller %+v", c.Principal)
	}
	refused(t, id, "not-a-token-the-provider-issued", "not active")
	refused(t, id, "bad token!", "well-formed")
	noIntrospection := newIdentity(t, "version: 1\nissuers: [{issuer: \""+p.Issuer()+"\"}]\n"+rules)
	refused(t, noIntrospection, tok.AccessToken, "opaque")
}
