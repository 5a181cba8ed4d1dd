package serve

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/internal/oauthtest"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// The OAuth tests drive the real gateway handler against an authorization
// mandatory S256 PKCE, refresh-token rotation, revocation by removing a
// refresh token) and an upstream that accepts only the tokens that server
// currently honours.

const (
	oClientID     = "anvil-gateway-client"
	oClientSecret = "gateway-client-secret-value"
	oSub          = "local:ada"
	oYardIssuer   = "branchyard:local:oauth-test"
)

// oauthAS is the loopback authorization server (internal/oauthtest).
type oauthAS = oauthtest.Server

func newOAuthAS(t *testing.T, redirectBase string) *oauthAS {
	t.Helper()
	return oauthtest.New(t, oauthtest.Client{ID: oClientID, Secret: oClientSecret, RedirectBase: redirectBase, User: "ada"})
}

// oauthUpstream accepts only access tokens the authorization server honours.
type oauthUpstream struct {
	URL  string
	mu   sync.Mutex
	seen []string // the bearer of every request
}

func newOAuthUpstream(t *testing.T, as *oauthAS) *oauthUpstream {
	t.Helper()
	u := &oauthUpstream{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		u.mu.Lock()
		u.seen = append(u.seen, tok)
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !as.Valid(tok) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"message":"bad token"}`)
			return
		}
		_, _ = io.WriteString(w, `[{"id":1,"title":"first"}]`)
	}))
	t.Cleanup(ts.Close)
	u.URL = ts.URL
	return u
}

func (u *oauthUpstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// oauthFixture is a gateway in branchyard mode serving one OAuth connector,
// "tracker", whose upstream and authorization server run on loopback.
type oauthFixture struct {
	g   *Gateway
	url string // the gateway's base URL
	as  *oauthAS
	up  *oauthUpstream
	clk *testClock
	env map[string]string
	gatewayFiles
}

// trackerDoc is the tracker bundle (fxTrackerDoc) authorized by OAuth at
// the authorization server asURL.
func trackerDoc(upstreamURL, asURL string) *air.Document {
	return trackerDocWith(upstreamURL, air.Auth{Type: air.AuthOAuth2AuthorizationCode, Scheme: "oauth",
		Scopes:   []string{"tickets:read", "tickets:write"},
		Provider: &air.Provider{AuthorizationEndpoint: asURL + "/authorize", TokenEndpoint: asURL + "/token"}})
}

func newOAuthFixture(t *testing.T, edit func(env map[string]string, cfg *Config)) *oauthFixture {
	t.Helper()
	if edit == nil {
		return newOAuthFixtureWith(t, nil)
	}
	return newOAuthFixtureWith(t, func(_ *oauthFixture, env map[string]string, cfg *Config) { edit(env, cfg) })
}

// newOAuthFixtureWith is newOAuthFixture with an edit that sees the
// fixture's authorization server and upstream.
func newOAuthFixtureWith(t *testing.T, edit func(f *oauthFixture, env map[string]string, cfg *Config)) *oauthFixture {
	t.Helper()
	ln, port, base := listenLoopback(t)
	f := &oauthFixture{url: base, clk: &testClock{t: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)}}
	f.as = newOAuthAS(t, base)
	f.up = newOAuthUpstream(t, f.as)

	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	writeAIR(t, filepath.Join(ws, "tracker"), trackerDoc(f.up.URL, f.as.URL))
	f.gatewayFiles = newGatewayFiles(t, dir, "k1")
	f.env = map[string]string{
		"ANVIL_CONNECT_TRACKER_CLIENT_ID":     oClientID,
		"ANVIL_CONNECT_TRACKER_CLIENT_SECRET": oClientSecret,
	}
	cfg := f.branchyardConfig(port, oYardIssuer, base+"/mcp")
	if edit != nil {
		edit(f, f.env, &cfg)
	}
	env := f.env
	cfg.Getenv = func(k string) string { return env[k] }
	g, err := NewFromDir(cfg, ws, &GatewayOptions{Connect: connect.Options{Now: f.clk.Now}})
	if err != nil {
		t.Fatal(err)
	}
	f.g = g
	serveOn(t, ln, g.Handler())
	return f
}

func (f *oauthFixture) token(t *testing.T, connect bool) string {
	t.Helper()
	grants := []any{map[string]any{"connector": "tracker", "operations": []string{"*"}, "mode": "read"}}
	return authtest.Mint(f.key, yardClaims(oYardIssuer, f.url+"/mcp", oSub, randHex(8), grants, connect, 300))
}

func (f *oauthFixture) do(t *testing.T, method, path, bearer, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// start posts /connect/start and returns the authorization URL.
func (f *oauthFixture) start(t *testing.T) (string, map[string]any) {
	t.Helper()
	resp, body := f.do(t, "POST", "/connect/start", f.token(t, true), `{"connector":"tracker"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("/connect/start = %d %s", resp.StatusCode, body)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	return m["url"].(string), m
}

// authorize follows the authorization URL as a browser and returns the
// redirect back to the gateway.
func (f *oauthFixture) authorize(t *testing.T, authURL string) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorization endpoint answered %d", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// callback calls the gateway's callback URL as the browser would.
func (f *oauthFixture) callback(t *testing.T, location string) (*http.Response, string) {
	t.Helper()
	if !strings.HasPrefix(location, f.url+"/connect/callback?") {
		t.Fatalf("the authorization server redirected elsewhere: %s", location)
	}
	return f.do(t, "GET", strings.TrimPrefix(location, f.url), "", "")
}

func (f *oauthFixture) connect(t *testing.T) {
	t.Helper()
	u, _ := f.start(t)
	resp, body := f.callback(t, f.authorize(t, u))
	if resp.StatusCode != 200 || body != "Connected tracker (account default). You can close this window.\n" {
		t.Fatalf("callback = %d %q", resp.StatusCode, body)
	}
}

// call runs the tool over REST with a turn token.
func (f *oauthFixture) call(t *testing.T) (int, map[string]any) {
	t.Helper()
	resp, body := f.do(t, "POST", "/call/tracker__tracker_list_tickets", f.token(t, false), `{"arguments":{}}`)
	var m map[string]any
	_ = json.Unmarshal([]byte(body), &m)
	if m == nil {
		var list []any
		if json.Unmarshal([]byte(body), &list) == nil {
			m = map[string]any{"data": list}
		}
	}
	return resp.StatusCode, m
}

func (f *oauthFixture) stored(t *testing.T) (*vault.Connection, error) {
	t.Helper()
	return f.g.vault.Get(oSub, "tracker", "default")
}

func detailsCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	c, _ := d["code"].(string)
	return c
}

func TestOAuthGatewayRoundTrip(t *testing.T) {
	f := newOAuthFixture(t, nil)

	// Start: the JSON shape and the authorization URL.
	resp, body := f.do(t, "POST", "/connect/start", f.token(t, true), `{"connector":"tracker"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("start = %d %s", resp.StatusCode, body)
	}
	wantPrefix := `{"kind":"oauth","connector":"tracker","url":"`
	if !strings.HasPrefix(body, wantPrefix) || !strings.HasSuffix(body, `","expires_at":"2025-03-04T05:16:07.000Z"}`) {
		t.Fatalf("start body = %s", body)
	}
	var started map[string]string
	_ = json.Unmarshal([]byte(body), &started)
	au, _ := url.Parse(started["url"])
	q := au.Query()
	if au.Scheme+"://"+au.Host+au.Path != f.as.URL+"/authorize" || q.Get("response_type") != "code" ||
		q.Get("client_id") != oClientID || q.Get("redirect_uri") != f.url+"/connect/callback" ||
		q.Get("scope") != "tickets:read tickets:write" || q.Get("code_challenge_method") != "S256" ||
		len(q.Get("state")) != 43 || len(q.Get("code_challenge")) != 43 {
		t.Fatalf("authorization URL query = %v", q)
	}
	if strings.Contains(body, oClientSecret) {
		t.Fatal("the start answer carries the client secret")
	}

	// No call works before the connection.
	if status, m := f.call(t); status != 401 || detailsCode(m) != "connector/not_connected" {
		t.Fatalf("before connecting: %d %v", status, m)
	}

	// The browser goes to the authorization server and comes back.
	loc := f.authorize(t, started["url"])
	resp, body = f.callback(t, loc)
	if resp.StatusCode != 200 || body != "Connected tracker (account default). You can close this window.\n" {
		t.Fatalf("callback = %d %q", resp.StatusCode, body)
	}
	for k, want := range map[string]string{"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("callback %s = %q, want %q", k, got, want)
		}
	}
	form, _ := f.as.LastTokenForm()
	if form.Get("code") == "" || len(form.Get("code_verifier")) != 43 || form.Get("redirect_uri") != f.url+"/connect/callback" {
		t.Errorf("token form lacks code, code_verifier or redirect_uri (has %d fields)", len(form))
	}
	conn, err := f.stored(t)
	if err != nil || conn.Kind != "oauth" || conn.Status != "active" || conn.AccessToken == "" || conn.RefreshToken == "" ||
		conn.ExpiresAt == nil || *conn.ExpiresAt != f.clk.Now().Add(time.Hour).UnixMilli() {
		t.Fatalf("stored connection %v, %v", conn, err)
	}

	// A replayed callback is refused and changes nothing.
	resp, body = f.callback(t, loc)
	if resp.StatusCode != 400 || !strings.HasPrefix(body, "Not connected: ") {
		t.Fatalf("replayed callback = %d %q", resp.StatusCode, body)
	}

	// Calls carry the access token.
	if status, m := f.call(t); status != 200 {
		t.Fatalf("call = %d %v", status, m)
	}
	seen := f.up.requests()
	if len(seen) != 1 || seen[0] != conn.AccessToken {
		t.Fatalf("upstream saw %d requests, bearer is the stored token: %t", len(seen), len(seen) > 0 && seen[0] == conn.AccessToken)
	}

	// Near expiry, the next call refreshes and uses the new token.
	f.clk.Advance(time.Hour - 30*time.Second)
	if status, m := f.call(t); status != 200 {
		t.Fatalf("call after expiry = %d %v", status, m)
	}
	refreshed, _ := f.stored(t)
	seen = f.up.requests()
	if f.as.Refreshes.Load() != 1 || refreshed.AccessToken == conn.AccessToken || seen[len(seen)-1] != refreshed.AccessToken {
		t.Fatalf("refresh: %d refreshes, new token used %t", f.as.Refreshes.Load(), seen[len(seen)-1] == refreshed.AccessToken)
	}

	// Revocation: the provider refuses the refresh token.
	f.as.Revoke(t, refreshed.RefreshToken)
	f.clk.Advance(time.Hour)
	before := len(f.up.requests())
	status, m := f.call(t)
	if status != 401 || m["error"].(map[string]any)["code"] != "auth_required" || detailsCode(m) != "connector/needs_reconnect" {
		t.Fatalf("after revocation: %d %v", status, m)
	}
	raw, _ := json.Marshal(m)
	if strings.Contains(string(raw), "http") || strings.Contains(string(raw), "connect/start") {
		t.Errorf("the refusal carries a link: %s", raw)
	}
	if len(f.up.requests()) != before {
		t.Error("the upstream was called without a usable token")
	}
	marked, _ := f.stored(t)
	if marked.Status != "needs_reconnect" {
		t.Fatalf("vault status = %s", marked.Status)
	}
	resp, body = f.do(t, "GET", "/connect/status", f.token(t, true), "")
	if resp.StatusCode != 200 || !strings.Contains(body, `"status":"needs_reconnect"`) ||
		strings.Contains(body, marked.AccessToken) || strings.Contains(body, marked.RefreshToken) {
		t.Fatalf("status = %d %s", resp.StatusCode, body)
	}

	// Reconnect: a new flow, and calls work again.
	f.connect(t)
	again, _ := f.stored(t)
	if again.Status != "active" || again.AccessToken == marked.AccessToken {
		t.Fatalf("after reconnect: %v", again)
	}
	if status, m := f.call(t); status != 200 {
		t.Fatalf("call after reconnect = %d %v", status, m)
	}
	if seen = f.up.requests(); seen[len(seen)-1] != again.AccessToken {
		t.Fatal("the call after reconnecting did not use the new token")
	}
}

func TestOAuthGatewayCallbackRefusals(t *testing.T) {
	type tc struct {
		name   string
		edit   func(env map[string]string, cfg *Config)
		run    func(t *testing.T, f *oauthFixture) string // returns the callback path+query
		status int
		msg    string // a piece of the plain-text message
	}
	cases := []tc{
		{name: "unknown state", run: func(t *testing.T, f *oauthFixture) string {
			return "/connect/callback?state=nope&code=abc"
		}, status: 400, msg: "unknown, already used or expired"},
		{name: "expired state", run: func(t *testing.T, f *oauthFixture) string {
			u, _ := f.start(t)
			loc := f.authorize(t, u)
			f.clk.Advance(10*time.Minute + time.Second)
			return strings.TrimPrefix(loc, f.url)
		}, status: 400, msg: "unknown, already used or expired"},
		{name: "wrong iss", edit: func(env map[string]string, cfg *Config) {
			env["ANVIL_CONNECT_TRACKER_ISSUER"] = "https://idp.tracker.example"
		}, run: func(t *testing.T, f *oauthFixture) string {
			u, _ := f.start(t)
			f.as.SetIssuer("https://mix-up.example")
			return strings.TrimPrefix(f.authorize(t, u), f.url)
		}, status: 400, msg: "unexpected authorization server"},
		{name: "denied", run: func(t *testing.T, f *oauthFixture) string {
			u, _ := f.start(t)
			f.as.Deny.Store(true)
			return strings.TrimPrefix(f.authorize(t, u), f.url)
		}, status: 400, msg: "denied (access_denied)"},
		{name: "missing code", run: func(t *testing.T, f *oauthFixture) string {
			u, _ := f.start(t)
			loc, _ := url.Parse(f.authorize(t, u))
			q := loc.Query()
			q.Del("code")
			return "/connect/callback?" + q.Encode()
		}, status: 400, msg: "no code"},
		{name: "unreachable token endpoint", edit: func(env map[string]string, cfg *Config) {
			ln, _ := net.Listen("tcp", "127.0.0.1:0")
			env["ANVIL_CONNECT_TRACKER_TOKEN_ENDPOINT"] = "http://" + ln.Addr().String() + "/token"
			ln.Close()
		}, run: func(t *testing.T, f *oauthFixture) string {
			u, _ := f.start(t)
			return strings.TrimPrefix(f.authorize(t, u), f.url)
		}, status: 502, msg: "could not be reached"},
	}
	var targetHits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		targetHits.Add(1)
		_, _ = io.WriteString(w, `{"access_token":"stolen","token_type":"Bearer"}`)
	}))
	defer target.Close()
	redir := httptest.NewServer(http.RedirectHandler(target.URL+"/token", http.StatusTemporaryRedirect))
	defer redir.Close()
	cases = append(cases, tc{name: "redirecting token endpoint", edit: func(env map[string]string, cfg *Config) {
		env["ANVIL_CONNECT_TRACKER_TOKEN_ENDPOINT"] = redir.URL + "/token"
	}, run: func(t *testing.T, f *oauthFixture) string {
		u, _ := f.start(t)
		return strings.TrimPrefix(f.authorize(t, u), f.url)
	}, status: 502, msg: "did not issue a token"})

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newOAuthFixture(t, c.edit)
			path := c.run(t, f)
			resp, body := f.do(t, "GET", path, "", "")
			if resp.StatusCode != c.status || !strings.HasPrefix(body, "Not connected: ") || !strings.Contains(body, c.msg) {
				t.Fatalf("callback = %d %q, want %d containing %q", resp.StatusCode, body, c.status, c.msg)
			}
			if resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || resp.Header.Get("Cache-Control") != "no-store" ||
				resp.Header.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("headers %v", resp.Header)
			}
			if strings.Contains(body, "http") || strings.Contains(body, oClientSecret) {
				t.Errorf("message carries a link or a secret: %q", body)
			}
			if _, err := f.stored(t); !errors.Is(err, vault.ErrNotFound) {
				t.Errorf("vault: %v, want nothing stored", err)
			}
			if c.status == 400 && f.as.Exchanges.Load() != 0 {
				t.Error("a refused callback reached the token endpoint")
			}
		})
	}
	if targetHits.Load() != 0 {
		t.Fatalf("the redirect target saw %d requests", targetHits.Load())
	}
}

func TestOAuthGatewayCallbackMethod(t *testing.T) {
	f := newOAuthFixture(t, nil)
	resp, body := f.do(t, "POST", "/connect/callback?state=x&code=y", "", "")
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET" || !strings.HasPrefix(body, "Not connected: ") {
		t.Fatalf("POST callback = %d %q", resp.StatusCode, body)
	}
}

func TestOAuthGatewayStartNotConfigured(t *testing.T) {
	cases := []struct {
		name string
		edit func(env map[string]string, cfg *Config)
	}{
		{"no client id", func(env map[string]string, cfg *Config) { delete(env, "ANVIL_CONNECT_TRACKER_CLIENT_ID") }},
		{"http authorization endpoint", func(env map[string]string, cfg *Config) {
			env["ANVIL_CONNECT_TRACKER_AUTHORIZATION_ENDPOINT"] = "http://auth.tracker.example/authorize"
		}},
		{"http token endpoint", func(env map[string]string, cfg *Config) {
			env["ANVIL_CONNECT_TRACKER_TOKEN_ENDPOINT"] = "http://auth.tracker.example/token"
		}},
		{"http to localhost", func(env map[string]string, cfg *Config) {
			env["ANVIL_CONNECT_TRACKER_TOKEN_ENDPOINT"] = "http://localhost:1/token"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newOAuthFixture(t, c.edit)
			resp, body := f.do(t, "POST", "/connect/start", f.token(t, true), `{"connector":"tracker"}`)
			var m map[string]map[string]string
			_ = json.Unmarshal([]byte(body), &m)
			if resp.StatusCode != 503 || m["error"]["code"] != "connector_not_configured" {
				t.Fatalf("start = %d %s", resp.StatusCode, body)
			}
			if strings.Contains(body, "http") || strings.Contains(body, oClientSecret) {
				t.Errorf("message carries a link or secret: %s", body)
			}
			if f.g.oauth.Pending() != 0 || f.as.Exchanges.Load()+f.as.Refreshes.Load() != 0 {
				t.Error("a refused start left a flow or sent a request")
			}
		})
	}
}

func TestOAuthGatewayPublicURLAndSweep(t *testing.T) {
	f := newOAuthFixture(t, func(env map[string]string, cfg *Config) { cfg.PublicURL = "https://gw.example:8443/some/path?x=1" })
	u, _ := f.start(t)
	au, _ := url.Parse(u)
	if got := au.Query().Get("redirect_uri"); got != "https://gw.example:8443/connect/callback" {
		t.Fatalf("redirect_uri = %q", got)
	}
	svc := f.g.oauth
	if svc.Pending() != 1 {
		t.Fatalf("pending = %d", svc.Pending())
	}
	f.clk.Advance(9 * time.Minute)
	f.g.oauth.Sweep()
	if svc.Pending() != 1 {
		t.Fatal("sweep dropped a live flow")
	}
	f.clk.Advance(time.Minute)
	f.g.oauth.Sweep()
	if svc.Pending() != 0 {
		t.Fatal("sweep kept an expired flow")
	}
}

func TestOAuthGatewayPendingLimit(t *testing.T) {
	f := newOAuthFixture(t, nil)
	tok := f.token(t, true)
	for i := range connect.MaxPendingPerSubject {
		resp, body := f.do(t, "POST", "/connect/start", tok, `{"connector":"tracker"}`)
		if resp.StatusCode != 200 {
			t.Fatalf("flow %d: %d %s", i+1, resp.StatusCode, body)
		}
	}
	resp, body := f.do(t, "POST", "/connect/start", tok, `{"connector":"tracker"}`)
	if resp.StatusCode != 429 || !strings.Contains(body, `"code":"too_many_pending"`) {
		t.Fatalf("one person's flow %d: %d %s", connect.MaxPendingPerSubject+1, resp.StatusCode, body)
	}
	// Another person still starts theirs.
	now := time.Now().Unix()
	other := authtest.Mint(f.key, map[string]any{"iss": oYardIssuer, "aud": f.url + "/mcp", "sub": "local:bob", "iat": now, "exp": now + 300,
		"jti": "other-person", "by_purpose": "connect", "by_grants": []any{}})
	if resp, body := f.do(t, "POST", "/connect/start", other, `{"connector":"tracker"}`); resp.StatusCode != 200 {
		t.Fatalf("another person: %d %s", resp.StatusCode, body)
	}
	f.clk.Advance(10 * time.Minute)
	if resp, body := f.do(t, "POST", "/connect/start", tok, `{"connector":"tracker"}`); resp.StatusCode != 200 {
		t.Fatalf("after expiry: %d %s", resp.StatusCode, body)
	}
}

func TestOAuthGatewaySingleFlightRefresh(t *testing.T) {
	f := newOAuthFixture(t, nil)
	f.connect(t)
	f.clk.Advance(time.Hour - 10*time.Second)
	const n = 50
	statuses := make([]int, n)
	var wg sync.WaitGroup
	tok := f.token(t, false)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", f.url+"/call/tracker__tracker_list_tickets", strings.NewReader(`{"arguments":{}}`))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	if got := f.as.Refreshes.Load(); got != 1 {
		t.Fatalf("token endpoint saw %d refreshes, want exactly 1", got)
	}
	for i, s := range statuses {
		if s != 200 {
			t.Fatalf("call %d answered %d", i, s)
		}
	}
	conn, _ := f.stored(t)
	reqs := f.up.requests()
	if len(reqs) != n {
		t.Fatalf("upstream saw %d requests, want %d", len(reqs), n)
	}
	for _, b := range reqs {
		if b != conn.AccessToken {
			t.Fatal("a call used a token other than the refreshed one")
		}
	}
}
