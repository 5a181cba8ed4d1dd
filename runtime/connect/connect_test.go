package connect_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// redirectURI is the gateway's callback in these tests; the browser never
// reaches it here, the test reads the authorization server's Location.
const (
	redirectBase = "http://127.0.0.1:1"
	redirectURI  = redirectBase + "/connect/callback"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newVault(t *testing.T) *vault.Store {
	t.Helper()
	key := make([]byte, vault.KeySize)
	_, _ = rand.Read(key)
	st, err := vault.Open(t.TempDir(), key)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func configFor(a *authServer) connect.Config {
	return connect.Config{
		ClientID:              testClientID,
		ClientSecret:          testClientSecret,
		AuthorizationEndpoint: a.URL + "/authorize",
		TokenEndpoint:         a.URL + "/token",
		Issuer:                a.Issuer(),
		Scopes:                []string{"issues:read", "issues:write"},
	}
}

func startReq(cfg connect.Config) connect.StartRequest {
	return connect.StartRequest{Sub: "local:ada", Connector: "tracker", Account: "default", Config: cfg, RedirectURI: redirectURI}
}

// wantCode checks err is the coded error, with a message free of links and
// of every secret given.
func wantCode(t *testing.T, err error, sentinel error, status int, secrets ...string) *connect.Error {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error = %v, want %v", err, sentinel)
	}
	e := connect.AsError(err)
	if e.Code != sentinel.Error() || e.Status != status {
		t.Fatalf("code/status = %s/%d, want %s/%d", e.Code, e.Status, sentinel, status)
	}
	checkClean(t, e.Error(), secrets...)
	return e
}

func checkClean(t *testing.T, msg string, secrets ...string) {
	t.Helper()
	if strings.Contains(msg, "http") || strings.Contains(msg, "://") {
		t.Errorf("message carries a link: %q", msg)
	}
	for _, s := range append(secrets, testClientSecret) {
		if s != "" && strings.Contains(msg, s) {
			t.Errorf("message carries a secret")
		}
	}
}

func noRecord(t *testing.T, v *vault.Store) {
	t.Helper()
	if _, err := v.Get("local:ada", "tracker", "default"); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("vault has a record (err %v), want none", err)
	}
}

// connectOnce runs a whole flow through the authorization server.
func connectOnce(t *testing.T, svc *connect.Service, a *authServer, cfg connect.Config) *vault.Connection {
	t.Helper()
	st, err := svc.Start(startReq(cfg))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	loc := a.Authorize(t, st.URL)
	conn, err := svc.Callback(context.Background(), loc.Query())
	if err != nil {
		t.Fatalf("Callback: %v", err)
	}
	return conn
}

func TestRoundTripRefreshRevokeReconnect(t *testing.T) {
	ctx := context.Background()
	a := newAuthServer(t, redirectBase, true)
	clk := newClock()
	v := newVault(t)
	svc := connect.New(v, &connect.Options{Now: clk.Now})
	cfg := configFor(a)

	st, err := svc.Start(startReq(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if want := clk.Now().Add(10 * time.Minute); !st.ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt = %v, want %v", st.ExpiresAt, want)
	}
	au, _ := url.Parse(st.URL)
	q := au.Query()
	for k, want := range map[string]string{
		"response_type": "code", "client_id": testClientID, "redirect_uri": redirectURI,
		"scope": "issues:read issues:write", "code_challenge_method": "S256",
	} {
		if q.Get(k) != want {
			t.Errorf("authorization URL %s = %q, want %q", k, q.Get(k), want)
		}
	}
	if len(q.Get("state")) != 43 || len(q.Get("code_challenge")) != 43 {
		t.Errorf("state %q / code_challenge %q: want 43 base64url characters (32 bytes)", q.Get("state"), q.Get("code_challenge"))
	}
	if q.Has("client_secret") || strings.Contains(st.URL, testClientSecret) {
		t.Error("the authorization URL carries the client secret")
	}

	loc := a.Authorize(t, st.URL)
	if loc.Path != "/connect/callback" || loc.Query().Get("state") != q.Get("state") || loc.Query().Get("iss") != a.Issuer() {
		t.Fatalf("redirect back to %s with parameters %v", loc.Path, keys(loc.Query()))
	}
	conn, err := svc.Callback(ctx, loc.Query())
	if err != nil {
		t.Fatalf("Callback: %v", err)
	}
	form, authz := a.LastTokenForm()
	if form.Get("grant_type") != "authorization_code" || form.Get("code") == "" || form.Get("redirect_uri") != redirectURI || len(form.Get("code_verifier")) != 43 {
		t.Errorf("token form has %v", keys(form))
	}
	if form.Has("client_secret") || !strings.HasPrefix(authz, "Basic ") {
		t.Errorf("want client_secret_basic, got form %v and Authorization set %t", keys(form), authz != "")
	}

	got, err := v.Get("local:ada", "tracker", "default")
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != vault.KindOAuth || got.Status != vault.StatusActive || got.AccessToken != conn.AccessToken ||
		got.RefreshToken == "" || got.Scope != "issues:read issues:write" {
		t.Fatalf("stored %v (scope %q)", got, got.Scope)
	}
	if got.ExpiresAt == nil || *got.ExpiresAt != clk.Now().Add(time.Hour).UnixMilli() {
		t.Fatalf("expiresAt = %v, want now+1h", got.ExpiresAt)
	}
	if !a.Valid(got.AccessToken) {
		t.Fatal("the authorization server does not honour the stored access token")
	}

	// A fresh token is used as it is.
	tok, err := svc.AccessToken(ctx, cfg, got)
	if err != nil || tok != got.AccessToken || a.Refreshes.Load() != 0 {
		t.Fatalf("AccessToken = %v, %v (refreshes %d)", tok == got.AccessToken, err, a.Refreshes.Load())
	}

	// Within 60 s of expiry: one refresh, new tokens stored.
	clk.Advance(time.Hour - 30*time.Second)
	tok, err = svc.AccessToken(ctx, cfg, got)
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if tok == got.AccessToken || a.Refreshes.Load() != 1 || !a.Valid(tok) || a.Valid(got.AccessToken) {
		t.Fatalf("refresh: new=%t refreshes=%d newValid=%t oldValid=%t", tok != got.AccessToken, a.Refreshes.Load(), a.Valid(tok), a.Valid(got.AccessToken))
	}
	form, _ = a.LastTokenForm()
	if form.Get("grant_type") != "refresh_token" || form.Get("refresh_token") != got.RefreshToken {
		t.Error("the refresh form does not carry grant_type=refresh_token and the stored refresh token")
	}
	after, _ := v.Get("local:ada", "tracker", "default")
	if after.AccessToken != tok || after.RefreshToken == got.RefreshToken || after.RefreshToken == "" ||
		*after.ExpiresAt != clk.Now().Add(time.Hour).UnixMilli() || after.Status != vault.StatusActive {
		t.Fatalf("after refresh stored %v", after)
	}

	// Revocation: the provider refuses the refresh token.
	a.Revoke(t, after.RefreshToken)
	clk.Advance(time.Hour)
	_, err = svc.AccessToken(ctx, cfg, after)
	wantCode(t, err, connect.ErrNeedsReconnect, http.StatusUnauthorized, after.RefreshToken, after.AccessToken)
	marked, _ := v.Get("local:ada", "tracker", "default")
	if marked.Status != vault.StatusNeedsReconnect {
		t.Fatalf("status = %s, want needs_reconnect", marked.Status)
	}
	n := a.Refreshes.Load()
	_, err = svc.AccessToken(ctx, cfg, marked)
	wantCode(t, err, connect.ErrNeedsReconnect, http.StatusUnauthorized)
	if a.Refreshes.Load() != n {
		t.Error("a connection marked needs_reconnect was refreshed again")
	}

	// Reconnect: a new flow makes calls work again.
	conn = connectOnce(t, svc, a, cfg)
	re, _ := v.Get("local:ada", "tracker", "default")
	if re.Status != vault.StatusActive || re.AccessToken != conn.AccessToken || re.CreatedAt != got.CreatedAt {
		t.Fatalf("after reconnect stored %v", re)
	}
	tok, err = svc.AccessToken(ctx, cfg, re)
	if err != nil || !a.Valid(tok) {
		t.Fatalf("after reconnect: %v", err)
	}
}

func TestSingleFlightRefresh(t *testing.T) {
	ctx := context.Background()
	a := newAuthServer(t, redirectBase, false)
	clk := newClock()
	v := newVault(t)
	svc := connect.New(v, &connect.Options{Now: clk.Now})
	cfg := configFor(a)
	conn := connectOnce(t, svc, a, cfg)
	clk.Advance(time.Hour - 10*time.Second)

	const n = 50
	toks := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := *conn // each call holds the record it read before the refresh
			<-start
			toks[i], errs[i] = svc.AccessToken(ctx, cfg, &c)
		}()
	}
	close(start)
	wg.Wait()
	if got := a.Refreshes.Load(); got != 1 {
		t.Fatalf("token endpoint saw %d refreshes, want exactly 1", got)
	}
	for i := range n {
		if errs[i] != nil || toks[i] != toks[0] {
			t.Fatalf("call %d: err %v, same token %t", i, errs[i], toks[i] == toks[0])
		}
	}
	if toks[0] == conn.AccessToken || !a.Valid(toks[0]) {
		t.Fatal("the calls did not get the refreshed token")
	}
}

func TestCallbackRefusals(t *testing.T) {
	ctx := context.Background()
	type env struct {
		a   *authServer
		clk *clock
		v   *vault.Store
		svc *connect.Service
		cfg connect.Config
	}
	setup := func(t *testing.T, issuer bool) *env {
		e := &env{a: newAuthServer(t, redirectBase, issuer), clk: newClock(), v: newVault(t)}
		e.svc = connect.New(e.v, &connect.Options{Now: e.clk.Now})
		e.cfg = configFor(e.a)
		return e
	}
	cases := []struct {
		name     string
		issuer   bool
		run      func(t *testing.T, e *env) (url.Values, error)
		sentinel error
		status   int
	}{
		{name: "replayed state", run: func(t *testing.T, e *env) (url.Values, error) {
			st, _ := e.svc.Start(startReq(e.cfg))
			q := e.a.Authorize(t, st.URL).Query()
			if _, err := e.svc.Callback(ctx, q); err != nil {
				t.Fatal(err)
			}
			if err := e.v.Delete("local:ada", "tracker", "default"); err != nil {
				t.Fatal(err)
			}
			return q, nil
		}, sentinel: connect.ErrInvalidState, status: 400},
		{name: "expired state", run: func(t *testing.T, e *env) (url.Values, error) {
			st, _ := e.svc.Start(startReq(e.cfg))
			q := e.a.Authorize(t, st.URL).Query()
			e.clk.Advance(10*time.Minute + time.Second)
			return q, nil
		}, sentinel: connect.ErrInvalidState, status: 400},
		{name: "unknown state", run: func(t *testing.T, e *env) (url.Values, error) {
			return url.Values{"state": {"bm90LWEtc3RhdGU"}, "code": {"code-for-nobody"}}, nil
		}, sentinel: connect.ErrInvalidState, status: 400},
		{name: "wrong iss", issuer: true, run: func(t *testing.T, e *env) (url.Values, error) {
			st, _ := e.svc.Start(startReq(e.cfg))
			e.a.SetIssuer("https://mix-up.example")
			return e.a.Authorize(t, st.URL).Query(), nil
		}, sentinel: connect.ErrIssuerMismatch, status: 400},
		{name: "missing iss with an issuer configured", issuer: true, run: func(t *testing.T, e *env) (url.Values, error) {
			st, _ := e.svc.Start(startReq(e.cfg))
			e.a.SetIssuer("")
			return e.a.Authorize(t, st.URL).Query(), nil
		}, sentinel: connect.ErrIssuerMismatch, status: 400},
		{name: "iss of another origin without an issuer", run: func(t *testing.T, e *env) (url.Values, error) {
			st, _ := e.svc.Start(startReq(e.cfg))
			e.a.SetIssuer("http://127.0.0.1:9")
			return e.a.Authorize(t, st.URL).Query(), nil
		}, sentinel: connect.ErrIssuerMismatch, status: 400},
		{name: "denied", run: func(t *testing.T, e *env) (url.Values, error) {
			st, _ := e.svc.Start(startReq(e.cfg))
			e.a.Deny.Store(true)
			q := e.a.Authorize(t, st.URL).Query()
			if q.Get("error") != "access_denied" {
				t.Fatalf("authorization server answered error=%q", q.Get("error"))
			}
			return q, nil
		}, sentinel: connect.ErrAuthorizationDenied, status: 400},
		{name: "missing code", run: func(t *testing.T, e *env) (url.Values, error) {
			st, _ := e.svc.Start(startReq(e.cfg))
			q := e.a.Authorize(t, st.URL).Query()
			q.Del("code")
			return q, nil
		}, sentinel: connect.ErrMissingCode, status: 400},
		{name: "code refused", run: func(t *testing.T, e *env) (url.Values, error) {
			st, _ := e.svc.Start(startReq(e.cfg))
			q := e.a.Authorize(t, st.URL).Query()
			q.Set("code", "forged-code")
			return q, nil
		}, sentinel: connect.ErrTokenExchangeFailed, status: 502},
		{name: "unreachable token endpoint", run: func(t *testing.T, e *env) (url.Values, error) {
			e.cfg.TokenEndpoint = closedURL(t) + "/token"
			st, _ := e.svc.Start(startReq(e.cfg))
			return e.a.Authorize(t, st.URL).Query(), nil
		}, sentinel: connect.ErrTokenEndpointUnreachable, status: 502},
		{name: "redirecting token endpoint", run: func(t *testing.T, e *env) (url.Values, error) {
			target := newCounter(t, http.StatusOK, `{"access_token":"stolen","token_type":"Bearer"}`)
			redir := newRedirector(t, target.URL+"/token")
			e.cfg.TokenEndpoint = redir.URL + "/token"
			st, _ := e.svc.Start(startReq(e.cfg))
			q := e.a.Authorize(t, st.URL).Query()
			t.Cleanup(func() {
				if target.hits.Load() != 0 || redir.hits.Load() != 1 {
					t.Errorf("redirect target saw %d requests, redirector %d", target.hits.Load(), redir.hits.Load())
				}
			})
			return q, nil
		}, sentinel: connect.ErrTokenExchangeFailed, status: 502},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, tc.issuer)
			q, _ := tc.run(t, e)
			exchanges := e.a.Exchanges.Load()
			_, err := e.svc.Callback(ctx, q)
			wantCode(t, err, tc.sentinel, tc.status, q.Get("code"))
			noRecord(t, e.v)
			if tc.status == 400 && e.a.Exchanges.Load() != exchanges {
				t.Error("a refused callback reached the token endpoint")
			}
			if e.svc.Pending() != 0 {
				t.Errorf("%d flows still pending: the state was not consumed", e.svc.Pending())
			}
		})
	}
}

func TestIssuerSameOriginAccepted(t *testing.T) {
	a := newAuthServer(t, redirectBase, false)
	svc := connect.New(newVault(t), &connect.Options{})
	st, err := svc.Start(startReq(configFor(a)))
	if err != nil {
		t.Fatal(err)
	}
	a.SetIssuer(a.URL + "/tenant") // same origin as the authorization endpoint
	if _, err := svc.Callback(context.Background(), a.Authorize(t, st.URL).Query()); err != nil {
		t.Fatalf("same-origin iss refused: %v", err)
	}
}

func TestStartRefusesUnusableConfig(t *testing.T) {
	tr := &countingTransport{}
	svc := connect.New(newVault(t), &connect.Options{HTTPClient: &http.Client{Transport: tr}})
	good := connect.Config{ClientID: "id", AuthorizationEndpoint: "https://auth.example/authorize", TokenEndpoint: "https://auth.example/token"}
	cases := []struct {
		name string
		edit func(c *connect.Config)
		ok   bool
	}{
		{"https endpoints", func(c *connect.Config) {}, true},
		{"http to 127.0.0.1", func(c *connect.Config) {
			c.AuthorizationEndpoint, c.TokenEndpoint = "http://127.0.0.1:8080/a", "http://127.0.0.1:8080/t"
		}, true},
		{"client_secret_post", func(c *connect.Config) { c.ClientAuth = connect.ClientSecretPost }, true},
		{"no client id", func(c *connect.Config) { c.ClientID = "" }, false},
		{"no authorization endpoint", func(c *connect.Config) { c.AuthorizationEndpoint = "" }, false},
		{"no token endpoint", func(c *connect.Config) { c.TokenEndpoint = "" }, false},
		{"private_key_jwt", func(c *connect.Config) { c.ClientAuth = connect.PrivateKeyJWT }, false},
		{"http authorization endpoint", func(c *connect.Config) { c.AuthorizationEndpoint = "http://auth.example/authorize" }, false},
		{"http token endpoint", func(c *connect.Config) { c.TokenEndpoint = "http://auth.example/token" }, false},
		{"http to localhost", func(c *connect.Config) { c.TokenEndpoint = "http://localhost:8080/token" }, false},
		{"http to another loopback address", func(c *connect.Config) { c.TokenEndpoint = "http://127.0.0.2/token" }, false},
		{"relative endpoint", func(c *connect.Config) { c.TokenEndpoint = "/token" }, false},
		{"userinfo", func(c *connect.Config) { c.TokenEndpoint = "https://user:pw@auth.example/token" }, false},
		{"fragment", func(c *connect.Config) { c.AuthorizationEndpoint = "https://auth.example/authorize#x" }, false},
		{"other scheme", func(c *connect.Config) { c.TokenEndpoint = "ftp://auth.example/token" }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.edit(&cfg)
			before := svc.Pending()
			st, err := svc.Start(connect.StartRequest{Sub: "s", Connector: "c", Account: "default", Config: cfg, RedirectURI: redirectURI})
			if tc.ok {
				if err != nil || st.URL == "" {
					t.Fatalf("Start: %v", err)
				}
				return
			}
			wantCode(t, err, connect.ErrNotConfigured, http.StatusServiceUnavailable, "pw")
			if svc.Pending() != before {
				t.Error("a refused start left a pending flow")
			}
		})
	}
	if tr.n.Load() != 0 {
		t.Fatalf("Start sent %d requests", tr.n.Load())
	}
}

func TestStartWithoutScopesOrVault(t *testing.T) {
	cfg := connect.Config{ClientID: "id", AuthorizationEndpoint: "https://auth.example/authorize?tenant=t1", TokenEndpoint: "https://auth.example/token"}
	st, err := connect.New(newVault(t), nil).Start(connect.StartRequest{Sub: "s", Connector: "c", Account: "a", Config: cfg, RedirectURI: redirectURI})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(st.URL)
	if u.Query().Has("scope") || u.Query().Get("tenant") != "t1" {
		t.Errorf("authorization URL %s: want no scope and the endpoint's own query kept", st.URL)
	}
	_, err = connect.New(nil, nil).Start(connect.StartRequest{Sub: "s", Connector: "c", Account: "a", Config: cfg, RedirectURI: redirectURI})
	wantCode(t, err, connect.ErrVaultUnavailable, http.StatusServiceUnavailable)
}

func TestPendingLimit(t *testing.T) {
	clk := newClock()
	svc := connect.New(newVault(t), &connect.Options{Now: clk.Now})
	cfg := connect.Config{ClientID: "id", AuthorizationEndpoint: "https://auth.example/authorize", TokenEndpoint: "https://auth.example/token"}
	req := connect.StartRequest{Sub: "s", Connector: "c", Account: "a", Config: cfg, RedirectURI: redirectURI}
	states := map[string]bool{}
	for i := range connect.MaxPending {
		req.Sub = fmt.Sprintf("s%d", i/connect.MaxPendingPerSubject) // each person within their share
		st, err := svc.Start(req)
		if err != nil {
			t.Fatalf("flow %d: %v", i+1, err)
		}
		u, _ := url.Parse(st.URL)
		states[u.Query().Get("state")] = true
		clk.Advance(time.Millisecond)
	}
	if len(states) != connect.MaxPending || svc.Pending() != connect.MaxPending {
		t.Fatalf("%d distinct states, %d pending", len(states), svc.Pending())
	}
	req.Sub = "someone-new"
	_, err := svc.Start(req)
	wantCode(t, err, connect.ErrTooManyPending, http.StatusServiceUnavailable)

	// Once the oldest expire, room is made again.
	clk.Advance(connect.FlowTTL - time.Duration(connect.MaxPending/2)*time.Millisecond)
	if _, err := svc.Start(req); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if p := svc.Pending(); p < connect.MaxPending/2-1 || p > connect.MaxPending/2+2 {
		t.Fatalf("pending after making room = %d", p)
	}
}

// TestPendingLimitPerSubject is the regression test for issue 15, finding 5
// (connect half): one person holds at most MaxPendingPerSubject pending
// flows (429 too_many_pending), others still start theirs, and a flow that
// completes or expires frees the person's place (before the fix one connect
// token could fill all MaxPending).
func TestPendingLimitPerSubject(t *testing.T) {
	clk := newClock()
	svc := connect.New(newVault(t), &connect.Options{Now: clk.Now})
	cfg := connect.Config{ClientID: "id", AuthorizationEndpoint: "https://auth.example/authorize", TokenEndpoint: "https://auth.example/token"}
	ada := connect.StartRequest{Sub: "local:ada", Connector: "c", Account: "a", Config: cfg, RedirectURI: redirectURI}
	var first string
	for i := range connect.MaxPendingPerSubject {
		st, err := svc.Start(ada)
		if err != nil {
			t.Fatalf("flow %d: %v", i+1, err)
		}
		if i == 0 {
			u, _ := url.Parse(st.URL)
			first = u.Query().Get("state")
		}
		clk.Advance(time.Second)
	}
	_, err := svc.Start(ada)
	wantCode(t, err, connect.ErrTooManyPending, http.StatusTooManyRequests)
	bob := ada
	bob.Sub = "local:bob"
	if _, err := svc.Start(bob); err != nil {
		t.Fatalf("another person: %v", err)
	}
	// A used state frees its place (the callback fails later: no code).
	_, _ = svc.Callback(context.Background(), url.Values{"state": {first}})
	if _, err := svc.Start(ada); err != nil {
		t.Fatalf("after a callback: %v", err)
	}
	_, err = svc.Start(ada)
	wantCode(t, err, connect.ErrTooManyPending, http.StatusTooManyRequests)
	// Expired flows free theirs.
	clk.Advance(connect.FlowTTL)
	if _, err := svc.Start(ada); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
}

func TestSweep(t *testing.T) {
	clk := newClock()
	svc := connect.New(newVault(t), &connect.Options{Now: clk.Now})
	cfg := connect.Config{ClientID: "id", AuthorizationEndpoint: "https://a.example/x", TokenEndpoint: "https://a.example/t"}
	req := connect.StartRequest{Sub: "s", Connector: "c", Account: "a", Config: cfg, RedirectURI: redirectURI}
	for range 3 {
		if _, err := svc.Start(req); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(5 * time.Minute)
	if _, err := svc.Start(req); err != nil {
		t.Fatal(err)
	}
	if n := svc.Sweep(); n != 0 {
		t.Fatalf("swept %d live flows", n)
	}
	clk.Advance(5 * time.Minute)
	if n := svc.Sweep(); n != 3 || svc.Pending() != 1 {
		t.Fatalf("swept %d, %d pending; want 3 swept, 1 pending", n, svc.Pending())
	}
}
