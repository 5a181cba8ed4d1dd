package serve

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/auth"
)

// TestAuthModeNoneRefusesForeignHostAndOrigin is the regression test for
// issue 15, finding 3 (DNS rebinding): without inbound auth every route
// refuses a Host that is not a loopback name or address, and an Origin
// whose host is not one, before reading anything; before the fix only /mcp
// did (through the SDK), so a rebound page replaced the stored credential
// through /connect/api-key and called tools through /call.
func TestAuthModeNoneRefusesForeignHostAndOrigin(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true, edit: func(cfg *Config) { cfg.Auth = auth.Config{Mode: auth.ModeNone} }})
	f.connectKey("github", "", fxUpstream)
	vaultBefore := f.vaultSnapshot()
	upstreamBefore := f.upstreamCount()
	port := f.base[strings.LastIndexByte(f.base, ':'):]
	routes := []struct{ method, path, contentType, body string }{
		{"POST", "/mcp", "application/json", initializeBody},
		{"GET", "/mcp", "", ""},
		{"POST", "/call/github__github_list_issue", "application/json", `{"arguments":{"owner":"octo","repo":"hello"}}`},
		{"POST", "/connect/start", "application/json", `{"connector":"github"}`},
		{"POST", "/connect/api-key", "application/json", `{"connector":"github","api_key":"attacker-key"}`},
		{"GET", "/connect/status", "", ""},
		{"GET", "/connect/callback?state=x&code=y", "", ""},
		{"GET", "/healthz", "", ""},
		{"GET", "/readyz", "", ""},
		{"GET", "/.well-known/oauth-protected-resource", "", ""},
		{"GET", "/nowhere", "", ""},
	}
	send := func(method, path, contentType, body, host, origin string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, f.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	refused := []struct{ host, origin, code string }{
		{"attacker.example" + port, "", "host_not_allowed"},
		{"attacker.example", "", "host_not_allowed"},
		{"127.0.0.1.attacker.example" + port, "", "host_not_allowed"},
		{"localhost.attacker.example" + port, "", "host_not_allowed"},
		{"10.0.0.1" + port, "", "host_not_allowed"},
		{"127.0.0.1" + port, "http://attacker.example" + port, "origin_not_allowed"},
		{"127.0.0.1" + port, "null", "origin_not_allowed"},
		{"localhost" + port, "https://127.0.0.1.attacker.example", "origin_not_allowed"},
	}
	for _, r := range routes {
		for _, c := range refused {
			status, body := send(r.method, r.path, r.contentType, r.body, c.host, c.origin)
			if status != 403 || !strings.Contains(body, `"code":"`+c.code+`"`) {
				t.Errorf("%s %s Host %q Origin %q: %d %s", r.method, r.path, c.host, c.origin, status, body)
			}
		}
	}
	if got := f.vaultSnapshot(); len(got) != len(vaultBefore) {
		t.Errorf("vault changed: %v", got)
	} else {
		for k, v := range vaultBefore {
			if got[k] != v {
				t.Errorf("vault record %s changed", k)
			}
		}
	}
	if n := f.upstreamCount(); n != upstreamBefore {
		t.Errorf("%d refused calls reached the upstream", n-upstreamBefore)
	}
	// Loopback names and addresses, with or without a port, and loopback
	// origins get through.
	for _, c := range []struct{ host, origin string }{
		{"127.0.0.1" + port, ""}, {"localhost" + port, ""}, {"LOCALHOST" + port, ""}, {"[::1]" + port, ""},
		{"127.0.0.1", ""}, {"127.0.0.1" + port, "http://localhost:5173"}, {"localhost" + port, "http://127.0.0.1" + port},
	} {
		if status, body := send("GET", "/healthz", "", "", c.host, c.origin); status != 200 {
			t.Errorf("Host %q Origin %q: %d %s", c.host, c.origin, status, body)
		}
		if status, body := send("POST", "/call/github__github_list_issue", "application/json", `{"arguments":{"owner":"octo","repo":"hello"}}`, c.host, c.origin); status != 200 {
			t.Errorf("/call Host %q Origin %q: %d %s", c.host, c.origin, status, body)
		}
	}
}

// TestBranchyardModeKeepsForeignHosts: with inbound auth the token is the
// guard, so a gateway behind a proxy under its public name still answers.
func TestBranchyardModeKeepsForeignHosts(t *testing.T) {
	f := newFleetFixture(t, nil)
	a := f.doHost("POST", "/call/github__github_list_issue", f.turn(fxReadGrant), "application/json",
		`{"arguments":{"owner":"octo","repo":"hello"}}`, http.Header{"Host": {"gateway.example"}})
	if a.status != 200 {
		t.Errorf("%d %s", a.status, a.body)
	}
}
