package connect_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// countingTransport counts requests and fails them all.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("no network in this test")
}

// closedURL is the base URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// recorder is a hand-written token endpoint answering a fixed status and
// body, recording each request's form and Authorization header.
type recorder struct {
	URL  string
	hits atomic.Int64
	mu   sync.Mutex
	form []url.Values
	auth []string
}

func newCounter(t *testing.T, status int, body string) *recorder {
	t.Helper()
	r := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		_ = req.ParseForm()
		r.mu.Lock()
		r.form = append(r.form, req.PostForm)
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func newRedirector(t *testing.T, to string) *recorder {
	t.Helper()
	r := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		http.Redirect(w, req, to, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *recorder) last() (url.Values, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.form[len(r.form)-1], r.auth[len(r.auth)-1]
}

// exchangeWith runs a flow whose authorization response is made up (the
// stub has no authorization endpoint) against the token endpoint tokenURL.
func exchangeWith(t *testing.T, svc *connect.Service, cfg connect.Config) (*vault.Connection, error) {
	t.Helper()
	st, err := svc.Start(connect.StartRequest{Sub: "local:ada", Connector: "tracker", Account: "default", Config: cfg, RedirectURI: redirectURI})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(st.URL)
	return svc.Callback(context.Background(), url.Values{"state": {u.Query().Get("state")}, "code": {"the-code"}})
}

func TestClientAuthentication(t *testing.T) {
	const id, secret = "client:id/1", "p@ss word+&"
	cases := []struct {
		name       string
		secret     string
		clientAuth air.ClientAuthMethod
		basic      bool
		formSecret bool
	}{
		{"secret, no preference: basic", secret, "", true, false},
		{"secret, client_secret_basic", secret, connect.ClientSecretBasic, true, false},
		{"secret, client_secret_post", secret, connect.ClientSecretPost, false, true},
		{"no secret: client_id in the body", "", "", false, false},
		{"no secret, client_secret_basic asked: client_id in the body", "", connect.ClientSecretBasic, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tokenEP := newCounter(t, 200, `{"access_token":"at-1","token_type":"Bearer","refresh_token":"rt-1","expires_in":120,"scope":"a b"}`)
			svc := connect.New(newVault(t), nil)
			cfg := connect.Config{ClientID: id, ClientSecret: tc.secret, ClientAuth: tc.clientAuth,
				AuthorizationEndpoint: "https://auth.example/authorize", TokenEndpoint: tokenEP.URL + "/token"}
			conn, err := exchangeWith(t, svc, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if conn.AccessToken != "at-1" || conn.RefreshToken != "rt-1" || conn.Scope != "a b" {
				t.Errorf("connection %v scope %q", conn, conn.Scope)
			}
			form, authz := tokenEP.last()
			if tc.basic {
				raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(authz, "Basic "))
				want := url.QueryEscape(id) + ":" + url.QueryEscape(secret)
				if string(raw) != want || form.Has("client_id") || form.Has("client_secret") {
					t.Errorf("basic: header matches %t, client_id in form %t", string(raw) == want, form.Has("client_id"))
				}
				return
			}
			if authz != "" || form.Get("client_id") != id {
				t.Errorf("body auth: Authorization set %t, client_id %q", authz != "", form.Get("client_id"))
			}
			if form.Has("client_secret") != tc.formSecret || (tc.formSecret && form.Get("client_secret") != secret) {
				t.Errorf("client_secret in body = %t, want %t", form.Has("client_secret"), tc.formSecret)
			}
		})
	}
}

func TestExchangeFailures(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
	}{
		{"error answer", 400, `{"error":"invalid_grant","error_description":"see https://docs.example/x"}`},
		{"server error", 500, `oops`},
		{"no access token", 200, `{"token_type":"Bearer"}`},
		{"error in a 200", 200, `{"error":"invalid_request"}`},
		{"not json", 200, `<html>`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tokenEP := newCounter(t, tc.status, tc.body)
			v := newVault(t)
			svc := connect.New(v, nil)
			cfg := connect.Config{ClientID: "id", AuthorizationEndpoint: "https://auth.example/a", TokenEndpoint: tokenEP.URL + "/token"}
			_, err := exchangeWith(t, svc, cfg)
			wantCode(t, err, connect.ErrTokenExchangeFailed, http.StatusBadGateway, "the-code")
			noRecord(t, v)
		})
	}
}

// storeConn puts an OAuth connection expiring at exp.
func storeConn(t *testing.T, v *vault.Store, exp time.Time, refresh string) *vault.Connection {
	t.Helper()
	ms := exp.UnixMilli()
	c := &vault.Connection{Sub: "local:ada", Connector: "tracker", Account: "default", Kind: vault.KindOAuth,
		Status: vault.StatusActive, AccessToken: "old-access", RefreshToken: refresh, ExpiresAt: &ms, Scope: "s1"}
	if err := v.Put(c); err != nil {
		t.Fatal(err)
	}
	got, err := v.Get("local:ada", "tracker", "default")
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestRefreshKeepsRefreshTokenAndScope(t *testing.T) {
	clk := newClock()
	tokenEP := newCounter(t, 200, `{"access_token":"new-access","token_type":"Bearer","expires_in":600}`)
	v := newVault(t)
	svc := connect.New(v, &connect.Options{Now: clk.Now})
	cfg := connect.Config{ClientID: "id", ClientSecret: "sec", AuthorizationEndpoint: "https://auth.example/a", TokenEndpoint: tokenEP.URL + "/token"}
	conn := storeConn(t, v, clk.Now().Add(59*time.Second), "keep-me")
	tok, err := svc.AccessToken(context.Background(), cfg, conn)
	if err != nil || tok != "new-access" {
		t.Fatalf("AccessToken = %q, %v", tok, err)
	}
	form, authz := tokenEP.last()
	if form.Get("grant_type") != "refresh_token" || form.Get("refresh_token") != "keep-me" || !strings.HasPrefix(authz, "Basic ") {
		t.Errorf("refresh form has %v", keys(form))
	}
	got, _ := v.Get("local:ada", "tracker", "default")
	if got.RefreshToken != "keep-me" || got.Scope != "s1" || *got.ExpiresAt != clk.Now().Add(600*time.Second).UnixMilli() {
		t.Errorf("after refresh: %v scope %q", got, got.Scope)
	}
	// 61 s before expiry: no refresh.
	clk.Advance(600*time.Second - 61*time.Second)
	if tok, err := svc.AccessToken(context.Background(), cfg, got); err != nil || tok != "new-access" || tokenEP.hits.Load() != 1 {
		t.Errorf("early refresh: %q %v hits %d", tok, err, tokenEP.hits.Load())
	}
}

func TestRefreshFailures(t *testing.T) {
	cases := []struct {
		name     string
		endpoint func(t *testing.T) (string, func(t *testing.T))
		sentinel error
		status   string // the vault status afterwards
	}{
		{"invalid_grant", func(t *testing.T) (string, func(t *testing.T)) {
			ep := newCounter(t, 400, `{"error":"invalid_grant"}`)
			return ep.URL + "/token", nil
		}, connect.ErrNeedsReconnect, vault.StatusNeedsReconnect},
		{"server error", func(t *testing.T) (string, func(t *testing.T)) {
			ep := newCounter(t, 503, `{"error":"temporarily_unavailable"}`)
			return ep.URL + "/token", nil
		}, connect.ErrRefreshFailed, vault.StatusActive},
		{"other error code", func(t *testing.T) (string, func(t *testing.T)) {
			ep := newCounter(t, 401, `{"error":"invalid_client"}`)
			return ep.URL + "/token", nil
		}, connect.ErrRefreshFailed, vault.StatusActive},
		{"unreachable", func(t *testing.T) (string, func(t *testing.T)) {
			return closedURL(t) + "/token", nil
		}, connect.ErrRefreshFailed, vault.StatusActive},
		{"redirect", func(t *testing.T) (string, func(t *testing.T)) {
			target := newCounter(t, 200, `{"access_token":"x","token_type":"Bearer"}`)
			redir := newRedirector(t, target.URL+"/token")
			return redir.URL + "/token", func(t *testing.T) {
				if target.hits.Load() != 0 {
					t.Error("the redirect target was contacted")
				}
			}
		}, connect.ErrRefreshFailed, vault.StatusActive},
		{"http token endpoint", func(t *testing.T) (string, func(t *testing.T)) {
			return "http://auth.example/token", nil
		}, connect.ErrRefreshFailed, vault.StatusActive},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			tr := &countingTransport{}
			base := http.DefaultTransport
			if tc.name == "http token endpoint" {
				base = tr
			}
			v := newVault(t)
			svc := connect.New(v, &connect.Options{Now: clk.Now, HTTPClient: &http.Client{Transport: base}})
			ep, check := tc.endpoint(t)
			cfg := connect.Config{ClientID: "id", AuthorizationEndpoint: "https://auth.example/a", TokenEndpoint: ep}
			conn := storeConn(t, v, clk.Now().Add(-time.Second), "the-refresh-token")
			_, err := svc.AccessToken(context.Background(), cfg, conn)
			wantCode(t, err, tc.sentinel, http.StatusUnauthorized, "the-refresh-token", "old-access")
			got, _ := v.Get("local:ada", "tracker", "default")
			if got.Status != tc.status || got.AccessToken != "old-access" || got.RefreshToken != "the-refresh-token" {
				t.Errorf("stored after failure: %v", got)
			}
			if check != nil {
				check(t)
			}
			if tr.n.Load() != 0 {
				t.Error("a request was sent to a non-HTTPS token endpoint")
			}
		})
	}
}

func TestAccessTokenUnusableRecords(t *testing.T) {
	clk := newClock()
	v := newVault(t)
	tr := &countingTransport{}
	svc := connect.New(v, &connect.Options{Now: clk.Now, HTTPClient: &http.Client{Transport: tr}})
	cfg := connect.Config{ClientID: "id", AuthorizationEndpoint: "https://auth.example/a", TokenEndpoint: "https://auth.example/t"}
	ctx := context.Background()

	// No refresh token, still valid for 30 s: used as it is.
	conn := storeConn(t, v, clk.Now().Add(30*time.Second), "")
	if tok, err := svc.AccessToken(ctx, cfg, conn); err != nil || tok != "old-access" {
		t.Fatalf("short-lived token without refresh: %q %v", tok, err)
	}
	// Expired without a refresh token: reconnect.
	conn = storeConn(t, v, clk.Now().Add(-time.Second), "")
	_, err := svc.AccessToken(ctx, cfg, conn)
	wantCode(t, err, connect.ErrNeedsReconnect, http.StatusUnauthorized)
	// No expiry: never refreshed.
	conn.ExpiresAt = nil
	if tok, err := svc.AccessToken(ctx, cfg, conn); err != nil || tok != "old-access" {
		t.Fatalf("no expiry: %q %v", tok, err)
	}
	// A static or needs_reconnect record is not an OAuth token.
	_, err = svc.AccessToken(ctx, cfg, &vault.Connection{Kind: vault.KindStatic, Status: vault.StatusActive, Secret: "k"})
	wantCode(t, err, connect.ErrNeedsReconnect, http.StatusUnauthorized)
	_, err = svc.AccessToken(ctx, cfg, &vault.Connection{Kind: vault.KindOAuth, Status: vault.StatusNeedsReconnect})
	wantCode(t, err, connect.ErrNeedsReconnect, http.StatusUnauthorized)
	if tr.n.Load() != 0 {
		t.Fatal("a request was sent")
	}
}

func TestEnvPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"github":      "ANVIL_CONNECT_GITHUB_",
		"team_github": "ANVIL_CONNECT_TEAM_GITHUB_",
		"my-conn":     "ANVIL_CONNECT_MY_CONN_",
		"a--__b9":     "ANVIL_CONNECT_A_B9_",
		"Jira2":       "ANVIL_CONNECT_JIRA2_",
		"-x-":         "ANVIL_CONNECT__X__",
	} {
		if got := connect.EnvPrefix(in); got != want {
			t.Errorf("EnvPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigFor(t *testing.T) {
	declared := &air.Auth{Type: air.AuthOAuth2AuthorizationCode, Issuer: "https://idp.example", Scopes: []string{"read"},
		Provider: &air.Provider{AuthorizationEndpoint: "https://idp.example/authorize", TokenEndpoint: "https://idp.example/token", ClientAuth: connect.ClientSecretPost}}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }

	c := connect.ConfigFor("my-tracker", declared, getenv)
	if c.ClientID != "" || c.AuthorizationEndpoint != "https://idp.example/authorize" || c.TokenEndpoint != "https://idp.example/token" ||
		c.Issuer != "https://idp.example" || strings.Join(c.Scopes, " ") != "read" || c.ClientAuth != connect.ClientSecretPost {
		t.Fatalf("from AIR: %v", c)
	}
	if connect.AsError(c.Validate()).Code != "connector_not_configured" {
		t.Error("a config without a client id validates")
	}

	env["ANVIL_CONNECT_MY_TRACKER_CLIENT_ID"] = "cid"
	env["ANVIL_CONNECT_MY_TRACKER_CLIENT_SECRET"] = "csecret"
	env["ANVIL_CONNECT_MY_TRACKER_AUTHORIZATION_ENDPOINT"] = "https://other.example/auth"
	env["ANVIL_CONNECT_MY_TRACKER_TOKEN_ENDPOINT"] = "https://other.example/token"
	env["ANVIL_CONNECT_MY_TRACKER_ISSUER"] = "https://other.example"
	env["ANVIL_CONNECT_MY_TRACKER_SCOPES"] = "a, b  c,,d"
	c = connect.ConfigFor("my-tracker", declared, getenv)
	if c.ClientID != "cid" || c.ClientSecret != "csecret" || c.AuthorizationEndpoint != "https://other.example/auth" ||
		c.TokenEndpoint != "https://other.example/token" || c.Issuer != "https://other.example" ||
		strings.Join(c.Scopes, "|") != "a|b|c|d" || c.Validate() != nil {
		t.Fatalf("with overrides: %v", c)
	}
	if strings.Contains(c.String(), "csecret") || strings.Contains(c.GoString(), "csecret") {
		t.Error("Config's String shows the client secret")
	}
	if declared.Scopes[0] != "read" {
		t.Error("ConfigFor changed the AIR document")
	}
	c = connect.ConfigFor("x", nil, nil)
	if c.AuthorizationEndpoint != "" || c.Validate() == nil {
		t.Errorf("nil auth: %v", c)
	}
}

func TestCheckIssuer(t *testing.T) {
	cases := []struct {
		issuer, iss string
		present     bool
		ok          bool
	}{
		{"https://idp.example", "https://idp.example", true, true},
		{"https://idp.example", "https://idp.example/", true, false},
		{"https://idp.example", "", false, false},
		{"https://idp.example", "https://evil.example", true, false},
		{"", "", false, true},
		{"", "https://idp.example/tenant/x", true, true},
		{"", "https://IDP.example:443/", true, true},
		{"", "https://idp.example:8443", true, false},
		{"", "http://idp.example", true, false},
		{"", "https://evil.example", true, false},
		{"", "not a url", true, false},
		{"", "", true, false},
	}
	for _, tc := range cases {
		c := connect.Config{Issuer: tc.issuer, AuthorizationEndpoint: "https://idp.example/oauth/authorize"}
		err := c.CheckIssuer(tc.iss, tc.present)
		if (err == nil) != tc.ok {
			t.Errorf("issuer %q, iss %q (present %t): err %v, want ok=%t", tc.issuer, tc.iss, tc.present, err, tc.ok)
		}
		if err != nil && !errors.Is(err, connect.ErrIssuerMismatch) {
			t.Errorf("err %v is not ErrIssuerMismatch", err)
		}
	}
}

// keys lists a form's parameter names (never their values) for messages.
func keys(v url.Values) []string {
	out := make([]string, 0, len(v))
	for k := range v {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
