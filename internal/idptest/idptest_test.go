package idptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/anvil-dev/anvil/internal/idptest"
)

// The resource (an MCP gateway) and the upstream it exchanges tokens for.
const (
	gatewayResource = "http://127.0.0.1:9/mcp"
	upstreamAud     = "https://upstream.test/api"
	publicRedirect  = "http://127.0.0.1:7777/callback"
)

var alice = idptest.User{
	Subject:  "user-alice",
	Username: "alice",
	Password: "correct horse",
	Name:     "Alice Example",
	Email:    "alice@example.test",
	Groups:   []string{"eng", "oncall"},
	Roles:    []string{"reader"},
	Claims:   map[string]any{"tenant": "acme"},
}

// options are a provider with a public client (an MCP host: PKCE, loopback
// redirect, may ask for the gateway as a resource), a confidential web
// client with opaque tokens, and the gateway itself (a confidential client
// that introspects and exchanges tokens addressed to it).
func options() idptest.Options {
	return idptest.Options{
		Scopes: []string{"tools:read", "tools:write"},
		Clients: []idptest.Client{
			{ID: "mcp-host", RedirectURIs: []string{publicRedirect}, Resources: []string{gatewayResource}},
			{ID: "web", Secret: "web-secret", RedirectURIs: []string{"http://127.0.0.1:7778/cb"}, Opaque: true},
			{ID: "gateway", Secret: "gateway-secret", Audience: []string{gatewayResource}, ExchangeAudiences: []string{upstreamAud}},
		},
		Users: []idptest.User{alice, {Subject: "user-bob", Username: "bob"}},
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func getJSON(t *testing.T, u string, out any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %s", u, resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// verify checks a JWT's signature against the provider's JWKS, fetched now,
// with go-jose, and its iss and exp, as a resource server would; it
// returns the claims.
func verify(t *testing.T, p *idptest.Provider, token string) (map[string]any, error) {
	t.Helper()
	var jwks jose.JSONWebKeySet
	getJSON(t, p.JWKSURL(), &jwks)
	jws, err := jose.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA})
	if err != nil {
		return nil, err
	}
	keys := jwks.Key(jws.Signatures[0].Header.KeyID)
	if len(keys) != 1 {
		return nil, fmt.Errorf("no key %q in the JWKS", jws.Signatures[0].Header.KeyID)
	}
	if keys[0].Algorithm != jws.Signatures[0].Header.Algorithm || !keys[0].IsPublic() {
		return nil, fmt.Errorf("JWKS key %+v does not match the token's alg %s", keys[0], jws.Signatures[0].Header.Algorithm)
	}
	payload, err := jws.Verify(keys[0])
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, err
	}
	if claims["iss"] != p.Issuer() {
		return nil, fmt.Errorf("iss %v, want %s", claims["iss"], p.Issuer())
	}
	if exp, _ := claims["exp"].(float64); time.Unix(int64(exp), 0).Before(time.Now()) {
		return claims, errors.New("expired")
	}
	return claims, nil
}

func mustVerify(t *testing.T, p *idptest.Provider, token string) map[string]any {
	t.Helper()
	c, err := verify(t, p, token)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return c
}

func audience(c map[string]any) []string {
	switch a := c["aud"].(type) {
	case string:
		return []string{a}
	case []any:
		var out []string
		for _, v := range a {
			out = append(out, fmt.Sprint(v))
		}
		return out
	}
	return nil
}

// postForm posts a form to the token or introspection endpoint with HTTP
// Basic client authentication and decodes the JSON answer.
func postForm(t *testing.T, endpoint, user, pass string, form url.Values) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	_ = json.Unmarshal(body, &out)
	return resp.StatusCode, out
}

func TestDiscoveryAndMetadata(t *testing.T) {
	p := idptest.Start(t, options())
	if !strings.HasPrefix(p.Issuer(), "http://127.0.0.1:") {
		t.Fatalf("issuer %s", p.Issuer())
	}
	for _, path := range []string{"/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"} {
		var md struct {
			Issuer          string   `json:"issuer"`
			AuthEndpoint    string   `json:"authorization_endpoint"`
			TokenEndpoint   string   `json:"token_endpoint"`
			JWKS            string   `json:"jwks_uri"`
			Introspection   string   `json:"introspection_endpoint"`
			Grants          []string `json:"grant_types_supported"`
			PKCE            []string `json:"code_challenge_methods_supported"`
			Scopes          []string `json:"scopes_supported"`
			IDTokenAlgs     []string `json:"id_token_signing_alg_values_supported"`
			TokenAuthMethod []string `json:"token_endpoint_auth_methods_supported"`
		}
		getJSON(t, p.Issuer()+path, &md)
		if md.Issuer != p.Issuer() || md.TokenEndpoint != p.Endpoint().TokenURL || md.AuthEndpoint != p.Endpoint().AuthURL ||
			md.JWKS != p.JWKSURL() || md.Introspection != p.IntrospectionURL() {
			t.Errorf("%s: endpoints %+v", path, md)
		}
		for _, g := range []string{"authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange"} {
			if !slices.Contains(md.Grants, g) {
				t.Errorf("%s: grant_types_supported %v lacks %s", path, md.Grants, g)
			}
		}
		if !slices.Equal(md.PKCE, []string{"S256"}) || !slices.Equal(md.IDTokenAlgs, []string{"RS256"}) ||
			!slices.Contains(md.Scopes, "tools:read") || !slices.Contains(md.Scopes, "offline_access") ||
			!slices.Contains(md.TokenAuthMethod, "none") || !slices.Contains(md.TokenAuthMethod, "client_secret_post") {
			t.Errorf("%s: %+v", path, md)
		}
	}
	// The MCP Go SDK's client accepts the metadata at both well-known paths.
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		asm, err := oauthex.GetAuthServerMeta(ctx(t), p.Issuer()+path, p.Issuer(), http.DefaultClient)
		if err != nil || asm == nil || asm.TokenEndpoint != p.Endpoint().TokenURL {
			t.Errorf("MCP Go SDK reading %s: %+v %v", path, asm, err)
		}
	}
	var jwks jose.JSONWebKeySet
	getJSON(t, p.JWKSURL(), &jwks)
	if len(jwks.Keys) != 1 || !jwks.Keys[0].IsPublic() || jwks.Keys[0].KeyID != p.KeyIDs()[0] || jwks.Keys[0].Use != "sig" {
		t.Fatalf("JWKS %+v", jwks)
	}
}

// A public client runs code + PKCE by hand, from a loopback redirect on
// another port than the registered one (RFC 8252), and gets a JWT access
// token with the user's claims, and an ID token.
func TestAuthCodePKCEPublicClient(t *testing.T) {
	p := idptest.Start(t, options())
	cfg, err := p.OAuth2Config("mcp-host", "openid", "profile", "email", "tools:read")
	if err != nil {
		t.Fatal(err)
	}
	cfg.RedirectURL = "http://127.0.0.1:45678/callback"
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("nonce", "n-1"))
	r, err := p.Login(ctx(t), authURL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != "state-1" || r.Code == "" || r.URL.Host != "127.0.0.1:45678" || r.URL.Path != "/callback" {
		t.Fatalf("redirect %+v", r)
	}
	if _, err := cfg.Exchange(ctx(t), r.Code, oauth2.VerifierOption("wrong-"+verifier)); err == nil {
		t.Fatal("a wrong code_verifier was accepted")
	}
	// The failed attempt did not use the code up.
	tok, err := cfg.Exchange(ctx(t), r.Code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken != "" {
		t.Error("a refresh token without offline_access")
	}
	c := mustVerify(t, p, tok.AccessToken)
	if c["sub"] != "user-alice" || c["client_id"] != "mcp-host" || c["scope"] != "openid profile email tools:read" ||
		c["email"] != "alice@example.test" || c["tenant"] != "acme" || fmt.Sprint(c["groups"]) != "[eng oncall]" || fmt.Sprint(c["roles"]) != "[reader]" {
		t.Errorf("access token claims %v", c)
	}
	if aud := audience(c); !slices.Equal(aud, []string{"mcp-host"}) {
		t.Errorf("aud %v, want the client ID", aud)
	}
	if life := lifetime(c); life != 5*time.Minute {
		t.Errorf("the token lives %v (exp - iat), want the default 5m", life)
	}
	idc := mustVerify(t, p, tok.Extra("id_token").(string))
	if idc["nonce"] != "n-1" || idc["email"] != "alice@example.test" || idc["name"] != "Alice Example" || !slices.Contains(audience(idc), "mcp-host") {
		t.Errorf("ID token claims %v", idc)
	}
	if _, err := cfg.Exchange(ctx(t), r.Code, oauth2.VerifierOption(verifier)); err == nil {
		t.Fatal("an authorization code was accepted twice")
	}
	var info map[string]any
	resp, err := cfg.Client(ctx(t), tok).Get(p.Issuer() + "/userinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || info["sub"] != "user-alice" || info["email"] != "alice@example.test" || info["preferred_username"] != "alice" || fmt.Sprint(info["groups"]) != "[eng oncall]" {
		t.Errorf("userinfo %v %v", info, err)
	}
}

// Without a code_challenge a public client is refused at /authorize.
func TestPublicClientNeedsPKCE(t *testing.T) {
	p := idptest.Start(t, options())
	cfg, _ := p.OAuth2Config("mcp-host", "openid")
	_, err := p.Login(ctx(t), cfg.AuthCodeURL("s"), "alice")
	var ae *idptest.AuthorizationError
	if !errors.As(err, &ae) || ae.Code != "invalid_request" {
		t.Fatalf("err %v, want invalid_request", err)
	}
}

func TestRefreshRotates(t *testing.T) {
	p := idptest.Start(t, options())
	tok, err := p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: "web", Username: "alice", Scopes: []string{"openid", "offline_access", "tools:read", "tools:write"}})
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == "" {
		t.Fatal("no refresh token for offline_access")
	}
	cfg, _ := p.OAuth2Config("web")
	// Narrow the scopes at refresh (RFC 6749 section 6).
	status, out := postForm(t, p.Endpoint().TokenURL, "web", "web-secret", url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "scope": {"tools:read"},
	})
	if status != http.StatusOK || out["scope"] != "tools:read" || out["refresh_token"] == "" || out["access_token"] == tok.AccessToken {
		t.Fatalf("refresh: %d %v", status, out)
	}
	if _, err := cfg.TokenSource(ctx(t), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
		t.Fatal("a rotated-out refresh token was accepted")
	}
	// The rotated token keeps the grant's full scopes.
	next, err := cfg.TokenSource(ctx(t), &oauth2.Token{RefreshToken: out["refresh_token"].(string)}).Token()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(next.Extra("scope")) != "openid offline_access tools:read tools:write" {
		t.Errorf("scope after the narrowed refresh: %v", next.Extra("scope"))
	}
}

// RFC 8707: the resource parameter sets the token's aud; one the client may
// not ask for is refused with invalid_target.
func TestResourceIndicators(t *testing.T) {
	p := idptest.Start(t, options())
	tok, err := p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: "mcp-host", Username: "bob", Scopes: []string{"tools:read"}, Resources: []string{gatewayResource}})
	if err != nil {
		t.Fatal(err)
	}
	if aud := audience(mustVerify(t, p, tok.AccessToken)); !slices.Equal(aud, []string{gatewayResource}) {
		t.Errorf("aud %v, want the resource", aud)
	}
	// At the token endpoint a resource must be one granted at /authorize.
	cfg, _ := p.OAuth2Config("mcp-host", "tools:read")
	for res, ok := range map[string]bool{gatewayResource: true, "https://elsewhere.test/": false} {
		verifier := oauth2.GenerateVerifier()
		r, err := p.Login(ctx(t), cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", gatewayResource)), "bob")
		if err != nil {
			t.Fatal(err)
		}
		tok, err := cfg.Exchange(ctx(t), r.Code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", res))
		if (err == nil) != ok {
			t.Errorf("resource %s at the token endpoint: %v", res, err)
		}
		if ok && !slices.Equal(audience(mustVerify(t, p, tok.AccessToken)), []string{res}) {
			t.Errorf("aud of a token for %s", res)
		}
	}
	_, err = p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: "mcp-host", Username: "bob", Scopes: []string{"tools:read"}, Resources: []string{"https://elsewhere.test/"}})
	var ae *idptest.AuthorizationError
	if !errors.As(err, &ae) || ae.Code != "invalid_target" {
		t.Fatalf("err %v, want invalid_target", err)
	}
}

func TestLoginRefusedDeniedAndUnknownRedirect(t *testing.T) {
	p := idptest.Start(t, options())
	cfg, _ := p.OAuth2Config("web", "openid")
	authURL := cfg.AuthCodeURL("s")
	if _, err := p.Browser().Login(ctx(t), authURL, "alice", "wrong"); !errors.Is(err, idptest.ErrLoginRefused) {
		t.Errorf("wrong password: %v", err)
	}
	if _, err := p.Browser().Login(ctx(t), authURL, "nobody", "x"); !errors.Is(err, idptest.ErrLoginRefused) {
		t.Errorf("unknown user: %v", err)
	}
	r, err := p.Browser().Deny(ctx(t), authURL)
	var ae *idptest.AuthorizationError
	if !errors.As(err, &ae) || ae.Code != "access_denied" || r.State != "s" {
		t.Errorf("deny: %+v %v", r, err)
	}
	cfg.RedirectURL = "http://127.0.0.1:7778/other"
	if _, err := p.Login(ctx(t), cfg.AuthCodeURL("s"), "alice"); err == nil || !strings.Contains(err.Error(), "redirect_uri") {
		t.Errorf("unregistered redirect URI: %v", err)
	}
}

// RFC 7662: an opaque token is active until revoked (RFC 7009); the
// introspecting client must authenticate.
func TestOpaqueTokenIntrospection(t *testing.T) {
	p := idptest.Start(t, options())
	tok, err := p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: "web", Username: "alice", Scopes: []string{"openid", "email", "tools:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify(t, p, tok.AccessToken); err == nil {
		t.Fatal("an opaque token verified as a JWT")
	}
	introspect := func(user, pass string) (int, map[string]any) {
		return postForm(t, p.IntrospectionURL(), user, pass, url.Values{"token": {tok.AccessToken}})
	}
	status, out := introspect("gateway", "gateway-secret")
	if status != http.StatusOK || out["active"] != true || out["sub"] != "user-alice" || out["client_id"] != "web" ||
		out["scope"] != "openid email tools:read" || out["email"] != "alice@example.test" || out["iss"] != p.Issuer() ||
		fmt.Sprint(out["groups"]) != "[eng oncall]" || out["tenant"] != "acme" {
		t.Fatalf("introspection: %d %v", status, out)
	}
	if status, _ := introspect("gateway", "wrong"); status != http.StatusUnauthorized {
		t.Errorf("introspection with a wrong secret: %d", status)
	}
	if status, _ := postForm(t, p.RevocationURL(), "web", "web-secret", url.Values{"token": {tok.AccessToken}}); status != http.StatusOK {
		t.Fatalf("revoke: %d", status)
	}
	if _, out := introspect("gateway", "gateway-secret"); out["active"] != false {
		t.Errorf("a revoked token is %v", out)
	}
	// A JWT access token introspects too, with the aud of its resource.
	jwt, err := p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: "mcp-host", Username: "bob", Scopes: []string{"tools:read"}, Resources: []string{gatewayResource}})
	if err != nil {
		t.Fatal(err)
	}
	status, out = postForm(t, p.IntrospectionURL(), "gateway", "gateway-secret", url.Values{"token": {jwt.AccessToken}})
	if status != http.StatusOK || out["active"] != true || out["sub"] != "user-bob" || fmt.Sprint(out["aud"]) != "[http://127.0.0.1:9/mcp]" {
		t.Errorf("JWT introspection: %d %v", status, out)
	}
	if _, out := postForm(t, p.IntrospectionURL(), "gateway", "gateway-secret", url.Values{"token": {"not-a-token"}}); out["active"] != false {
		t.Errorf("garbage introspects as %v", out)
	}
}

// Key rotation: after RotateKey the old key is gone from the JWKS, so the
// old token no longer verifies and new tokens carry the new key ID; the
// provider signs with ES256 and EdDSA too.
func TestKeyRotation(t *testing.T) {
	p := idptest.Start(t, options())
	get := func() string {
		t.Helper()
		tok, err := p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: "mcp-host", Username: "alice", Scopes: []string{"tools:read"}})
		if err != nil {
			t.Fatal(err)
		}
		return tok.AccessToken
	}
	old := get()
	mustVerify(t, p, old)
	oldKID := p.KeyIDs()[0]
	for _, alg := range []string{idptest.ES256, idptest.EdDSA, idptest.RS256} {
		kid, err := p.RotateKey(alg)
		if err != nil {
			t.Fatal(err)
		}
		if ids := p.KeyIDs(); !slices.Equal(ids, []string{kid}) || kid == oldKID {
			t.Fatalf("after rotating to %s: keys %v", alg, ids)
		}
		if _, err := verify(t, p, old); err == nil || !strings.Contains(err.Error(), "no key") {
			t.Fatalf("a token of a rotated-out key: %v", err)
		}
		tok := get()
		jws, _ := jose.ParseSigned(tok, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)})
		if jws == nil || jws.Signatures[0].Header.KeyID != kid {
			t.Fatalf("%s token not signed with %s", alg, kid)
		}
		mustVerify(t, p, tok)
	}
	kid, err := p.AddSigningKey("")
	if err != nil {
		t.Fatal(err)
	}
	if ids := p.KeyIDs(); len(ids) != 2 || ids[0] != kid {
		t.Fatalf("AddSigningKey: keys %v", ids)
	}
}

// RFC 8693: the gateway exchanges a token addressed to it for one
// addressed to the upstream, for the same user.
func TestTokenExchange(t *testing.T) {
	p := idptest.Start(t, options())
	user, err := p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: "mcp-host", Username: "alice", Scopes: []string{"tools:read", "tools:write"}, Resources: []string{gatewayResource}})
	if err != nil {
		t.Fatal(err)
	}
	exchange := func(client, secret, subjectToken string, extra url.Values) (int, map[string]any) {
		f := url.Values{
			"grant_type":         {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"subject_token":      {subjectToken},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
		}
		for k, v := range extra {
			f[k] = v
		}
		return postForm(t, p.Endpoint().TokenURL, client, secret, f)
	}
	status, out := exchange("gateway", "gateway-secret", user.AccessToken, url.Values{"audience": {upstreamAud}, "scope": {"tools:read"}})
	if status != http.StatusOK || out["issued_token_type"] != "urn:ietf:params:oauth:token-type:access_token" {
		t.Fatalf("exchange: %d %v", status, out)
	}
	c := mustVerify(t, p, out["access_token"].(string))
	if !slices.Equal(audience(c), []string{upstreamAud}) || c["sub"] != "user-alice" || c["scope"] != "tools:read" || c["client_id"] != "gateway" {
		t.Errorf("exchanged token claims %v", c)
	}
	for name, tc := range map[string]struct {
		client, secret string
		extra          url.Values
		want           string
	}{
		"audience not allowed": {"gateway", "gateway-secret", url.Values{"audience": {"https://other.test"}}, "invalid_target"},
		"no audience":          {"gateway", "gateway-secret", nil, "invalid_target"},
		"wider scope":          {"gateway", "gateway-secret", url.Values{"audience": {upstreamAud}, "scope": {"admin"}}, "invalid_scope"},
		"client may not":       {"web", "web-secret", url.Values{"audience": {upstreamAud}}, "unauthorized_client"},
		"wrong secret":         {"gateway", "nope", url.Values{"audience": {upstreamAud}}, "invalid_client"},
	} {
		if status, out := exchange(tc.client, tc.secret, user.AccessToken, tc.extra); status == http.StatusOK || out["error"] != tc.want {
			t.Errorf("%s: %d %v, want %s", name, status, out, tc.want)
		}
	}
	// A token addressed to someone else than the gateway cannot be exchanged.
	other, err := p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: "mcp-host", Username: "alice", Scopes: []string{"tools:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if status, out := exchange("gateway", "gateway-secret", other.AccessToken, url.Values{"audience": {upstreamAud}}); status == http.StatusOK || out["error"] != "invalid_request" {
		t.Errorf("exchange of a token for another audience: %d %v", status, out)
	}
}

// Backdate issues tokens that are already expired, and a short TTL
// shortens exp; client_credentials gives a client its own token.
func TestExpiryAndClientCredentials(t *testing.T) {
	opts := options()
	opts.Clients = append(opts.Clients,
		idptest.Client{ID: "stale", Secret: "s", AccessTokenTTL: time.Minute, Backdate: time.Hour},
		idptest.Client{ID: "brief", Secret: "s", AccessTokenTTL: 30 * time.Second, Audience: []string{"https://api.test"}})
	p := idptest.Start(t, opts)
	for _, id := range []string{"stale", "brief"} {
		cfg, _ := p.OAuth2Config(id, "tools:read")
		cc := clientCredentials(cfg)
		tok, err := cc.Token(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		c, err := verify(t, p, tok.AccessToken)
		switch id {
		case "stale":
			if err == nil || err.Error() != "expired" || time.Until(tok.Expiry) < 30*time.Second {
				t.Errorf("backdated token: %v, expires_in %v", err, time.Until(tok.Expiry))
			}
		case "brief":
			if err != nil || lifetime(c) != 30*time.Second || c["sub"] != "brief" || !slices.Equal(audience(c), []string{"https://api.test"}) || c["scope"] != "tools:read" {
				t.Errorf("client credentials token: %v %v (lives %v)", err, c, lifetime(c))
			}
		}
	}
}

func clientCredentials(cfg *oauth2.Config) *clientcredentials.Config {
	return &clientcredentials.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: cfg.Endpoint.TokenURL, Scopes: cfg.Scopes}
}

// SetUser changes the claims of the tokens issued from then on.
func TestSetUserChangesClaims(t *testing.T) {
	p := idptest.Start(t, options())
	changed := alice
	changed.Groups = []string{"admins"}
	if err := p.SetUser(changed); err != nil {
		t.Fatal(err)
	}
	tok, err := p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: "mcp-host", Username: "alice", Scopes: []string{"tools:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if g := fmt.Sprint(mustVerify(t, p, tok.AccessToken)["groups"]); g != "[admins]" {
		t.Errorf("groups %s", g)
	}
}

func TestBadOptions(t *testing.T) {
	for name, o := range map[string]idptest.Options{
		"duplicate client":  {Clients: []idptest.Client{{ID: "a"}, {ID: "a"}}},
		"public exchanger":  {Clients: []idptest.Client{{ID: "a", ExchangeAudiences: []string{"x"}}}},
		"relative resource": {Clients: []idptest.Client{{ID: "a", Resources: []string{"/mcp"}}}},
		"bad alg":           {SigningAlg: "HS256"},
		"not loopback":      {Addr: "0.0.0.0:0"},
		"duplicate user":    {Users: []idptest.User{{Subject: "a"}, {Subject: "b", Username: "a"}}},
		"colon in subject":  {Users: []idptest.User{{Subject: "tenant:a"}}},
	} {
		if p, err := idptest.New(o); err == nil {
			p.Close()
			t.Errorf("%s: accepted", name)
		}
	}
}

// lifetime is a token's exp - iat: what the provider gave it, however long
// the test took to look.
func lifetime(c map[string]any) time.Duration {
	exp, _ := c["exp"].(float64)
	iat, _ := c["iat"].(float64)
	return time.Duration(exp-iat) * time.Second
}
