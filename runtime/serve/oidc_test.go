package serve

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/anvil-dev/anvil/internal/idptest"
	anvilauth "github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	oidcid "github.com/anvil-dev/anvil/runtime/identity/oidc"
)

// The OIDC tests run the gateway in auth mode oidc against a real OpenID
// provider (internal/idptest: zitadel's implementation, started by the
// test) and the MCP Go SDK's own OAuth client, over the committed
// github-mini bundle and its mock upstream.

const (
	oidcHostRedirect = "http://127.0.0.1:7777/callback"
	oidcUpstreamAud  = "https://api.github.example"
)

// oidcPolicy is the policy of the OIDC tests: engineers read with
// tools:read, write issues with tools:write, and may connect accounts.
const oidcPolicy = `version: 1
resource:
  scopes_supported: ["tools:read", "tools:write"]
  default_scopes: ["tools:read"]
issuers:
  - issuer: %q
rules:
  - name: engineers-read
    match: {groups: [eng], scopes: ["tools:read"]}
    grants: [{connector: github, operations: ["*"], mode: read}]
  - name: engineers-write
    match: {groups: [eng], scopes: ["tools:write"]}
    grants: [{connector: github, operations: ["issues.*"], mode: write, confirm: allow}]
  - name: engineers-connect
    match: {groups: [eng]}
    connect: true
%s`

// oidcFixture is a gateway in oidc mode, its provider and its files.
type oidcFixture struct {
	*fleetFixture
	idp    *idptest.Provider
	policy string
	logins atomic.Int64
}

// newOIDCFixture starts a provider and a gateway whose policy is
// oidcPolicy plus extra; getenv adds variables.
func newOIDCFixture(t *testing.T, extra string, getenv map[string]string) *oidcFixture {
	t.Helper()
	p := idptest.Start(t, idptest.Options{
		Scopes: []string{"tools:read", "tools:write"},
		Users: []idptest.User{
			{Subject: "user-ada", Username: "ada", Groups: []string{"eng"}, Claims: map[string]any{"tenant": "acme"}},
			{Subject: "user-bob", Username: "bob", Groups: []string{"eng"}},
			// Claims that would widen a grant if anything but the policy
			// decided it: Branchyard's by_grants, and a "*" group.
			{Subject: "user-eve", Username: "eve", Groups: []string{"*", "admins"},
				Claims: map[string]any{"by_grants": []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write", "confirm": "allow"}}}},
		},
	})
	policyFile := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policyFile, []byte(fmt.Sprintf(oidcPolicy, p.Issuer(), extra)), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &oidcFixture{idp: p, policy: policyFile}
	f.fleetFixture = newFleetFixture(t, &fleetOptions{noConnect: true, edit: func(cfg *Config) {
		cfg.Auth = anvilauth.Config{Mode: anvilauth.ModeOIDC, Audience: cfg.Auth.Audience, PolicyFile: policyFile, Leeway: anvilauth.DefaultLeeway}
		cfg.Getenv = func(k string) string { return getenv[k] }
	}})
	for _, c := range []idptest.Client{
		// An MCP host: public, PKCE, a loopback redirect, may ask for the
		// gateway (and another MCP server) as its resource.
		{ID: "mcp-host", RedirectURIs: []string{oidcHostRedirect}, Resources: []string{f.aud, "https://other.example/mcp"}},
		// A client whose tokens are already expired.
		{ID: "stale-host", RedirectURIs: []string{oidcHostRedirect}, Resources: []string{f.aud}, Backdate: time.Hour},
		// The gateway: exchanges tokens addressed to it for the upstream.
		{ID: "gateway", Secret: "gateway-secret", Audience: []string{f.aud}, ExchangeAudiences: []string{oidcUpstreamAud}},
	} {
		if err := p.AddClient(c); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// token logs user in through client with the gateway as resource.
func (f *oidcFixture) token(t *testing.T, client, user string, resources []string, scopes ...string) string {
	t.Helper()
	if resources == nil {
		resources = []string{f.aud}
	}
	tok, err := f.idp.AuthCode(ctxT(t), idptest.AuthCodeRequest{ClientID: client, Username: user, Scopes: scopes, Resources: resources})
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

func ctxT(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// mcpHost is the MCP Go SDK's client with its OAuth handler, as an MCP
// host runs it: a pre-registered public client (zitadel has no dynamic
// registration), the provider's login page played by its programmatic
// browser as the person user.
func (f *oidcFixture) mcpHost(t *testing.T, user string) (*mcp.ClientSession, *auth.AuthorizationCodeHandler) {
	t.Helper()
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: "mcp-host"},
		RedirectURL:         oidcHostRedirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			f.logins.Add(1)
			r, err := f.idp.Login(ctx, args.URL, user)
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: r.Code, State: r.State}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "oidc-test-host", Version: "1"}, nil)
	cs, err := client.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: f.aud, OAuthHandler: h, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, h
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestOIDCMCPHostStepUp: an MCP host (the Go SDK's OAuth client) finds the
// provider from the gateway's 401, logs in with code + PKCE for the
// gateway's default scope, lists what its grant shows and calls a read;
// a write its token's scope does not grant is answered 403
// insufficient_scope, the host logs in again for tools:write and the retry
// succeeds on the same session. The audit lines carry the issuer and
// subject.
func TestOIDCMCPHostStepUp(t *testing.T) {
	f := newOIDCFixture(t, "", nil)
	ada := f.token(t, "mcp-host", "ada", nil, "tools:read")
	f.connectWith(t, ada)

	cs, _ := f.mcpHost(t, "ada")
	if n := f.logins.Load(); n != 1 {
		t.Fatalf("%d logins to connect, want 1", n)
	}
	tools, err := cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "github__github_list_issue") || slices.Contains(names, "github__github_create_issue") {
		t.Fatalf("a tools:read token lists %v", names)
	}
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "github__github_list_issue", Arguments: map[string]any{"owner": "octo", "repo": "hello"}})
	if err != nil || res.IsError {
		t.Fatalf("read: %v %+v", err, res)
	}
	before := f.upstreamCount()
	res, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "github__github_create_issue",
		Arguments: map[string]any{"owner": "octo", "repo": "hello", "title": "Stepped up", "confirm": true}})
	if err != nil || res.IsError {
		t.Fatalf("write after step-up: %v %+v", err, res)
	}
	if n := f.logins.Load(); n != 2 {
		t.Errorf("%d logins, want 2 (the first, and the step-up)", n)
	}
	if f.upstreamCount() != before+1 || f.mock.Requests()[before].Method != "POST" {
		t.Errorf("upstream saw %v", f.mock.Requests()[before:])
	}
	if !strings.Contains(resultText(res), "Stepped up") {
		t.Errorf("result %s", resultText(res))
	}
	// The stepped-up token is a write caller now: the listing grew.
	tools, err = cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "github__github_create_issue" }) {
		t.Error("the stepped-up caller does not list create_issue")
	}
	_, lines := f.auditLines()
	if len(lines) != 2 {
		t.Fatalf("%d audit lines, want 2", len(lines))
	}
	for _, l := range lines {
		if l["iss"] != f.idp.Issuer() || l["sub"] != "user-ada" || l["by_tenant"] != "acme" || l["decision"] != "allowed" {
			t.Errorf("audit line %v", l)
		}
	}
}

// connectWith stores the mock's token as the person's github connection,
// through the connect route, with the person's own access token.
func (f *oidcFixture) connectWith(t *testing.T, bearer string) {
	t.Helper()
	a := f.do("POST", "/connect/api-key", bearer, "application/json", `{"connector":"github","api_key":"`+fxUpstream+`"}`, nil)
	if a.status != 200 {
		t.Fatalf("/connect/api-key: %d %s", a.status, a.body)
	}
}

// TestOIDCStepUpOverREST: the REST route answers the same challenge, and a
// refusal no scope lifts stays policy_denied.
func TestOIDCStepUpOverREST(t *testing.T) {
	f := newOIDCFixture(t, "", nil)
	ada := f.token(t, "mcp-host", "ada", nil, "tools:read")
	f.connectWith(t, ada)
	a := f.call(ada, "github__github_create_issue", `{"arguments":{"owner":"octo","repo":"hello","title":"x","confirm":true}}`, nil)
	want := `Bearer realm="mcp", error="insufficient_scope", error_description="This call needs the scope tools:write; sign in again granting it.", scope="tools:write", resource_metadata="` + f.base + `/.well-known/oauth-protected-resource/mcp"`
	if a.status != 403 || a.errCode() != "insufficient_scope" || a.header.Get("WWW-Authenticate") != want {
		t.Errorf("%d %s %q", a.status, a.body, a.header.Get("WWW-Authenticate"))
	}
	// releases.create is in no rule's grant: no scope would allow it.
	a = f.call(ada, "github__github_create_release", `{"arguments":{"owner":"octo","repo":"hello","tag_name":"v1","confirm":true}}`, nil)
	if a.status != 403 || a.errCode() != "policy_denied" || a.header.Get("WWW-Authenticate") != "" {
		t.Errorf("%d %s %q", a.status, a.body, a.header.Get("WWW-Authenticate"))
	}
	if f.upstreamCount() != 0 {
		t.Errorf("refused calls reached the upstream: %v", f.mock.Requests())
	}
}

// TestOIDCAttacksReachNothing: each forged, misdirected, expired or
// widened token is refused at the door, and the upstream sees nothing.
func TestOIDCAttacksReachNothing(t *testing.T) {
	f := newOIDCFixture(t, "", nil)
	ada := f.token(t, "mcp-host", "ada", nil, "tools:read", "tools:write")
	f.connectWith(t, ada)

	// The provider's RSA key, as the JWKS publishes it.
	var set jose.JSONWebKeySet
	resp, err := http.Get(f.idp.JWKSURL())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	der, err := x509.MarshalPKIXPublicKey(set.Keys[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(ada, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	_ = json.Unmarshal(payload, &claims)
	seg := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	hs256 := func() string {
		in := seg(map[string]any{"alg": "HS256", "kid": set.Keys[0].KeyID, "typ": "JWT"}) + "." + parts[1]
		mac := hmac.New(sha256.New, der)
		mac.Write([]byte(in))
		return in + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	}
	widened := map[string]any{}
	for k, v := range claims {
		widened[k] = v
	}
	widened["groups"] = []any{"eng", "admins"}
	widened["by_grants"] = []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write"}}

	foreign := idptest.Start(t, idptest.Options{Users: []idptest.User{{Subject: "user-ada", Username: "ada", Groups: []string{"eng"}}}})
	if err := foreign.AddClient(idptest.Client{ID: "mcp-host", RedirectURIs: []string{oidcHostRedirect}, Resources: []string{f.aud}}); err != nil {
		t.Fatal(err)
	}
	fromForeign, err := foreign.AuthCode(ctxT(t), idptest.AuthCodeRequest{ClientID: "mcp-host", Username: "ada", Scopes: []string{"tools:read"}, Resources: []string{f.aud}})
	if err != nil {
		t.Fatal(err)
	}
	byKey := authtest.NewKey("by-attack00001")
	branchyard := authtest.Mint(byKey, map[string]any{"iss": f.idp.Issuer(), "aud": f.aud, "sub": "user-ada", "exp": time.Now().Unix() + 300,
		"by_grants": []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write"}}})
	// Minted before the rotation below, so its key is gone by the time it
	// is presented.
	rotatedOut := f.token(t, "mcp-host", "ada", nil, "tools:read")

	if _, err := f.idp.RotateKey(""); err != nil {
		t.Fatal(err)
	}
	// The rotation is seen once the gateway fetches the keys again (an
	// unknown kid forces one fetch, at most once per refresh interval): a
	// token of the new key does that.
	time.Sleep(oidcid.DefaultRefreshInterval)
	if a := f.call(f.token(t, "mcp-host", "ada", nil, "tools:read"), "github__github_list_issue", `{"arguments":{"owner":"octo","repo":"hello"}}`, nil); a.status != 200 {
		t.Fatalf("a token of the new key: %d %s", a.status, a.body)
	}
	// A token of the current key, its payload widened after signing.
	fresh := strings.Split(f.token(t, "mcp-host", "ada", nil, "tools:read"), ".")
	cases := []struct{ name, token, want string }{
		{"wrong issuer", fromForeign.AccessToken, "issuer"},
		{"token for another resource", f.token(t, "mcp-host", "ada", []string{"https://other.example/mcp"}, "tools:read"), "audience"},
		{"alg none", seg(map[string]any{"alg": "none"}) + "." + parts[1] + ".", "algorithm"},
		{"HS256 keyed with the public key", hs256(), "algorithm"},
		{"expired", f.token(t, "stale-host", "ada", nil, "tools:read"), "expired"},
		{"widened claims, original signature", fresh[0] + "." + seg(widened) + "." + fresh[2], "signature"},
		{"a Branchyard (EdDSA) token", branchyard, "algorithm"},
		{"no token", "", "No bearer token"},
	}
	cases = append(cases, struct{ name, token, want string }{"rotated-out key", rotatedOut, "signature"})
	base := f.upstreamCount()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, route := range []struct{ path, body string }{
				{"/call/github__github_create_issue", `{"arguments":{"owner":"octo","repo":"hello","title":"pwned","confirm":true}}`},
				{"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`},
			} {
				h := http.Header{"Accept": {"application/json, text/event-stream"}}
				a := f.do("POST", route.path, c.token, "application/json", route.body, h)
				if a.status != 401 || !strings.Contains(a.body, c.want) ||
					!strings.Contains(a.header.Get("WWW-Authenticate"), `resource_metadata="`+f.base+`/.well-known/oauth-protected-resource/mcp"`) {
					t.Errorf("%s: %d %s %q", route.path, a.status, a.body, a.header.Get("WWW-Authenticate"))
				}
			}
		})
	}
	// Claims that would widen a grant, in a token the provider really
	// signed: eve's by_grants and "*" group give her nothing.
	eve := f.token(t, "mcp-host", "eve", nil, "tools:read", "tools:write")
	a := f.call(eve, "github__github_create_issue", `{"arguments":{"owner":"octo","repo":"hello","title":"pwned","confirm":true}}`, nil)
	if a.status != 403 || a.errCode() != "policy_denied" {
		t.Errorf("eve: %d %s", a.status, a.body)
	}
	a = f.do("GET", "/tools", eve, "", "", nil)
	if a.status != 200 || strings.Contains(a.body, "github__") {
		t.Errorf("eve's tools: %d %s", a.status, a.body)
	}
	if n := f.upstreamCount() - base; n != 0 {
		t.Errorf("%d requests reached the upstream: %v", n, f.mock.Requests()[base:])
	}
	if strings.Contains(f.logs.String(), ada) {
		t.Error("a token is in the gateway's log")
	}
}

// TestOIDCResourceMetadata: the metadata lists the policy's issuers and
// scopes at both well-known locations; omit_resource leaves resource out.
func TestOIDCResourceMetadata(t *testing.T) {
	f := newOIDCFixture(t, "", nil)
	want := `{"resource":"` + f.aud + `","authorization_servers":["` + f.idp.Issuer() + `"],"scopes_supported":["tools:read","tools:write"],"bearer_methods_supported":["header"]}`
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		if a := f.do("GET", path, "", "", "", nil); a.status != 200 || a.body != want {
			t.Errorf("%s: %d %s", path, a.status, a.body)
		}
	}
	// The port is public in oidc mode: without a token, /readyz tells the
	// status only; the details are the metrics listener's.
	if a := f.do("GET", "/readyz", "", "", "", nil); a.status != 200 || a.body != `{"ready":true}` {
		t.Errorf("readyz without a token: %d %s", a.status, a.body)
	}
	if code, body := readyDetails(f.g); code != 200 || !strings.Contains(body, `"jwks":"ok"`) {
		t.Errorf("readyz details %d %s", code, body)
	}
	report := strings.Join(f.g.StartupReport(), "\n")
	if !strings.Contains(report, "inbound auth: oidc (resource "+f.aud+", policy "+f.policy+": 1 issuer(s) "+f.idp.Issuer()+", 3 rule(s))") {
		t.Errorf("startup report:\n%s", report)
	}

	// A reloaded policy: the Entra quirk setting, a changed rule.
	doc := fmt.Sprintf(oidcPolicy, f.idp.Issuer(), "")
	doc = strings.Replace(doc, "resource:\n", "resource:\n  omit_resource: true\n", 1)
	if err := os.WriteFile(f.policy, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	f.g.ReloadPolicy(true, "test")
	if a := f.do("GET", "/.well-known/oauth-protected-resource", "", "", "", nil); strings.Contains(a.body, `"resource"`) {
		t.Errorf("omit_resource: %s", a.body)
	}
	// A broken policy keeps the one in force and says so.
	if err := os.WriteFile(f.policy, []byte("version: 1\nissuers: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.g.ReloadPolicy(true, "test")
	if !strings.Contains(f.logs.String(), "policy reload (test) failed, still using the policy loaded before:") ||
		!strings.Contains(f.logs.String(), f.policy+":2:10: policy/invalid_value: issuers must list at least one issuer") {
		t.Errorf("log:\n%s", f.logs.String())
	}
	if _, body := readyDetails(f.g); !strings.Contains(body, `"reload":"failed"`) {
		t.Errorf("readyz after a failed policy reload: %s", body)
	}
	ada := f.token(t, "mcp-host", "ada", nil, "tools:read")
	if a := f.do("GET", "/tools", ada, "", "", nil); a.status != 200 || !strings.Contains(a.body, "github__github_list_issue") {
		t.Errorf("the policy in force after a failed reload: %d %s", a.status, a.body)
	}
}

// TestOIDCTokenExchange: for a connector whose upstream trusts the same
// provider, each person's call carries a token the gateway exchanged for
// theirs (RFC 8693): addressed to the upstream, with the person's subject,
// exchanged once and reused until it expires, and never written to the
// log or the audit file. No connection is stored.
func TestOIDCTokenExchange(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][]string{} // sub → bearer tokens the upstream saw
	var f *oidcFixture
	keys := func() jose.JSONWebKeySet {
		var set jose.JSONWebKeySet
		resp, err := http.Get(f.idp.JWKSURL())
		if err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&set)
			resp.Body.Close()
		}
		return set
	}
	// The upstream: accepts only tokens of the provider addressed to it,
	// then serves as the mock does.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := anvilauth.BearerToken(r.Header.Get("Authorization"))
		jws, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.RS256})
		if err != nil {
			http.Error(w, "not a JWT", 401)
			return
		}
		set := keys()
		payload, err := jws.Verify(&set)
		var c struct {
			Sub string `json:"sub"`
			Aud any    `json:"aud"`
		}
		if err != nil || json.Unmarshal(payload, &c) != nil || fmt.Sprint(c.Aud) != "["+oidcUpstreamAud+"]" && c.Aud != oidcUpstreamAud {
			http.Error(w, "not for this upstream", 401)
			return
		}
		mu.Lock()
		seen[c.Sub] = append(seen[c.Sub], tok)
		mu.Unlock()
		target, _ := url.Parse(f.mock.URL)
		rp := httputil.NewSingleHostReverseProxy(target)
		r.Header.Set("Authorization", "Bearer "+fxUpstream)
		rp.ServeHTTP(w, r)
	}))
	defer up.Close()
	exchange := "upstreams:\n  github:\n    token_exchange: {client_id: gateway, client_secret_env: GATEWAY_SECRET, audience: " + oidcUpstreamAud + "}\n"
	f = newOIDCFixture(t, exchange, map[string]string{"GATEWAY_SECRET": "gateway-secret", "ANVIL_UPSTREAM_GITHUB_URL": up.URL})

	ada := f.token(t, "mcp-host", "ada", nil, "tools:read")
	bob := f.token(t, "mcp-host", "bob", nil, "tools:read")
	list := `{"arguments":{"owner":"octo","repo":"hello"}}`
	for _, tok := range []string{ada, ada, bob} {
		if a := f.call(tok, "github__github_list_issue", list, nil); a.status != 200 {
			t.Fatalf("call: %d %s", a.status, a.body)
		}
	}
	mu.Lock()
	if len(seen["user-ada"]) != 2 || seen["user-ada"][0] != seen["user-ada"][1] || seen["user-ada"][0] == ada ||
		len(seen["user-bob"]) != 1 || seen["user-bob"][0] == seen["user-ada"][0] {
		t.Errorf("the upstream saw %v", seen)
	}
	exchanged := seen["user-ada"][0]
	mu.Unlock()
	if len(f.vaultSnapshot()) != 0 {
		t.Error("a connection was stored")
	}
	raw, _ := f.auditLines()
	all := f.logs.String() + strings.Join(raw, "\n")
	for _, secret := range []string{ada, bob, exchanged, "gateway-secret"} {
		if strings.Contains(all, secret) {
			t.Errorf("a token or secret is in the log or the audit file")
		}
	}
	// A token the provider does not know cannot be exchanged: refused,
	// nothing sent.
	base := f.upstreamCount()
	eve := f.token(t, "mcp-host", "eve", nil, "tools:read")
	if a := f.call(eve, "github__github_list_issue", list, nil); a.status != 403 || a.errCode() != "policy_denied" {
		t.Errorf("eve: %d %s", a.status, a.body)
	}
	if f.upstreamCount() != base {
		t.Error("a refused call reached the upstream")
	}
}

// readyDetails is /readyz as the metrics listener answers it.
func readyDetails(g *Gateway) (int, string) {
	rec := httptest.NewRecorder()
	g.ReadyDetails().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	return rec.Code, rec.Body.String()
}
