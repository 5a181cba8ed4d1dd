package connect_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/connect"
)

// TestDeclaredEndpointsPassTheEgressPolicy is the regression test for issue
// 15, finding 4: a declared authorization or token endpoint on a host the
// egress policy refuses is egress_denied at Start, at the callback and at a
// refresh, and nothing is POSTed (no code, verifier, refresh token or client
// secret leaves); an endpoint the operator set (ANVIL_CONNECT_<C>_*) is not
// checked. Before the fix the Service had no egress policy at all.
func TestDeclaredEndpointsPassTheEgressPolicy(t *testing.T) {
	tokenEP := newCounter(t, 200, `{"access_token":"a","token_type":"Bearer","refresh_token":"r","expires_in":600}`)
	var open atomic.Bool
	allow := func(host string) bool { return host == "auth.example" || open.Load() }
	declared := &air.Auth{Type: air.AuthOAuth2AuthorizationCode,
		Provider: &air.Provider{AuthorizationEndpoint: "https://auth.example/authorize", TokenEndpoint: tokenEP.URL + "/token"}}
	env := map[string]string{"ANVIL_CONNECT_TRACKER_CLIENT_ID": "id", "ANVIL_CONNECT_TRACKER_CLIENT_SECRET": "the-client-secret"}
	getenv := func(k string) string { return env[k] }
	cfg := connect.ConfigFor("tracker", declared, getenv)
	v := newVault(t)
	svc := connect.New(v, &connect.Options{AllowHost: allow})

	// Start: refused, no flow.
	_, err := svc.Start(connect.StartRequest{Sub: "local:ada", Connector: "tracker", Account: "default", Config: cfg, RedirectURI: redirectURI})
	e := wantCode(t, err, connect.ErrEgressDenied, http.StatusForbidden, "the-client-secret")
	if e.Host != "127.0.0.1" || strings.Contains(e.Message, "http") || svc.Pending() != 0 {
		t.Fatalf("start: %+v, %d pending", e, svc.Pending())
	}

	// Callback: a flow started while the policy allowed the host is refused
	// when it no longer does, before the code is exchanged.
	open.Store(true)
	st, err := svc.Start(connect.StartRequest{Sub: "local:ada", Connector: "tracker", Account: "default", Config: cfg, RedirectURI: redirectURI})
	if err != nil {
		t.Fatal(err)
	}
	open.Store(false)
	u, _ := url.Parse(st.URL)
	_, err = svc.Callback(context.Background(), url.Values{"state": {u.Query().Get("state")}, "code": {"the-code"}})
	wantCode(t, err, connect.ErrEgressDenied, http.StatusForbidden, "the-code", "the-client-secret")
	noRecord(t, v)
	if n := tokenEP.hits.Load(); n != 0 {
		t.Fatalf("the token endpoint got %d requests", n)
	}

	// Refresh: refused before the refresh token is sent; the record stays.
	conn := storeConn(t, v, newClock().Now(), "the-refresh-token")
	_, err = svc.AccessToken(context.Background(), cfg, conn)
	wantCode(t, err, connect.ErrEgressDenied, http.StatusForbidden, "the-refresh-token", "the-client-secret")
	if n := tokenEP.hits.Load(); n != 0 {
		t.Fatalf("the token endpoint got %d requests", n)
	}
	if got, err := v.Get("local:ada", "tracker", "default"); err != nil || got.Status != "active" || got.RefreshToken != "the-refresh-token" {
		t.Fatalf("record after a refused refresh: %v %v", got, err)
	}

	// The operator's own token endpoint is trusted as set.
	env["ANVIL_CONNECT_TRACKER_TOKEN_ENDPOINT"] = tokenEP.URL + "/token"
	cfg = connect.ConfigFor("tracker", declared, getenv)
	if !cfg.TokenFromOperator || cfg.AuthorizationFromOperator {
		t.Fatalf("ConfigFor: %v %v", cfg.TokenFromOperator, cfg.AuthorizationFromOperator)
	}
	if tok, err := svc.AccessToken(context.Background(), cfg, conn); err != nil || tok != "a" || tokenEP.hits.Load() != 1 {
		t.Fatalf("refresh through the operator's endpoint: %q %v", tok, err)
	}
}
