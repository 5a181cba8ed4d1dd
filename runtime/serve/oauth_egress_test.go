package serve

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestOAuthEndpointsPassTheEgressAllowlist is the gateway's regression test
// for issue 15, finding 4: the OAuth endpoints a spec declares pass the
// upstream egress allowlist (ANVIL_ALLOWED_HOSTS) before anything is sent;
// endpoints the operator sets in ANVIL_CONNECT_<C>_* are trusted. Before the
// fix the code, the PKCE verifier, refresh tokens and the client secret went
// to a declared token endpoint on any host.
func TestOAuthEndpointsPassTheEgressAllowlist(t *testing.T) {
	// The spec's endpoints are on 127.0.0.1, outside the allowlist.
	outside := func(env map[string]string, cfg *Config) { cfg.AllowedHosts = "localhost" }
	f := newOAuthFixture(t, outside)
	resp, body := f.do(t, "POST", "/connect/start", f.token(t, true), `{"connector":"tracker"}`)
	var m map[string]map[string]string
	_ = json.Unmarshal([]byte(body), &m)
	if resp.StatusCode != 403 || m["error"]["code"] != "egress_denied" || !strings.Contains(body, "127.0.0.1") || strings.Contains(body, "http") {
		t.Fatalf("start = %d %s", resp.StatusCode, body)
	}
	if f.g.oauth.Pending() != 0 || f.as.Exchanges.Load()+f.as.Refreshes.Load() != 0 {
		t.Fatal("a refused start left a flow or sent a request")
	}

	// The operator names the same endpoints: trusted, the flow runs. The
	// upstream is reached as localhost, which the allowlist names.
	f = newOAuthFixtureWith(t, func(f *oauthFixture, env map[string]string, cfg *Config) {
		outside(env, cfg)
		env["ANVIL_CONNECT_TRACKER_AUTHORIZATION_ENDPOINT"] = f.as.URL + "/authorize"
		env["ANVIL_CONNECT_TRACKER_TOKEN_ENDPOINT"] = f.as.URL + "/token"
		env["ANVIL_UPSTREAM_TRACKER_URL"] = strings.Replace(f.up.URL, "127.0.0.1", "localhost", 1)
	})
	f.connect(t)
	if status, m := f.call(t); status != 200 {
		t.Fatalf("call = %d %v", status, m)
	}
	// Once the operator's token endpoint is gone, a refresh would go to the
	// declared one: refused as an upstream host outside the list is, before
	// the refresh token or the client secret is sent.
	delete(f.env, "ANVIL_CONNECT_TRACKER_TOKEN_ENDPOINT")
	f.clk.Advance(time.Hour)
	status, m2 := f.call(t)
	e, _ := m2["error"].(map[string]any)
	if status != 403 || e["code"] != "policy_denied" || detailsCode(m2) != "policy/egress_denied" {
		t.Fatalf("refresh through a declared endpoint outside the allowlist: %d %v", status, m2)
	}
	if n := f.as.Refreshes.Load(); n != 0 {
		t.Fatalf("the token endpoint saw %d refreshes", n)
	}
	if conn, err := f.stored(t); err != nil || conn.Status != "active" {
		t.Errorf("the connection was changed: %v %v", conn, err)
	}
}
