package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/fleet"
)

func TestReadyzNotReadyWithoutJWKS(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true})
	if a := f.do("GET", "/readyz", f.turn(fxReadGrant), "", "", nil); a.status != 200 || !strings.Contains(a.body, `"jwks":"ok"`) {
		t.Fatalf("readyz: %d %s", a.status, a.body)
	}
	if err := os.Remove(f.jwks); err != nil {
		t.Fatal(err)
	}
	// No token can be checked now: the port answers the status only, and
	// the details (the metrics listener's handler) say why.
	if a := f.do("GET", "/readyz", "", "", "", nil); a.status != 503 || a.body != `{"ready":false}` {
		t.Errorf("readyz without the JWKS file: %d %s", a.status, a.body)
	}
	rec := httptest.NewRecorder()
	f.g.ReadyDetails().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 503 || !strings.HasPrefix(rec.Body.String(), `{"ready":false,`) || !strings.Contains(rec.Body.String(), `"jwks":"unreadable"`) {
		t.Errorf("readyz details without the JWKS file: %d %s", rec.Code, rec.Body.String())
	}
	if a := f.do("GET", "/healthz", "", "", "", nil); a.status != 200 {
		t.Errorf("healthz without the JWKS file: %d %s", a.status, a.body)
	}
}

// loadFixtureFleet builds the fleet of testdata/workspace after edit has
// changed its AIR.
func loadFixtureFleet(t *testing.T, edit func(*air.Document)) *fleet.Fleet {
	return loadFleet(t, "testdata/workspace", edit)
}

// loadFleet builds the fleet of the workspace dir after edit has changed
// its AIR.
func loadFleet(t *testing.T, dir string, edit func(*air.Document)) *fleet.Fleet {
	t.Helper()
	bs, err := air.LoadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	var conns []*fleet.Connector
	for _, b := range bs {
		edit(b.Doc)
		conns = append(conns, &fleet.Connector{ID: b.ID, Dir: b.Dir, Doc: b.Doc, BundleHash: b.BundleHash})
	}
	fl, err := fleet.New(conns)
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

func TestReadyzNotReadyWithoutTools(t *testing.T) {
	fl := loadFixtureFleet(t, func(d *air.Document) {
		for i := range d.Operations {
			d.Operations[i].State = air.StateBlocked
		}
	})
	g, err := NewGateway(Config{}, fl, &GatewayOptions{Build: Build{Module: "v9.9.9", Revision: "abc"}})
	if err != nil {
		t.Fatal(err)
	}
	a := serveOnce(t, g, "/readyz")
	want := `{"ready":false,"bundles":[{"id":"github","serviceId":"github","toolCount":0,"bundleHash":"6ce179c3c1cfbf5e34b1ec7841594381936063b8c6b2a48e529313da168850c7","ready":true}],` +
		`"vault":"none","store":"none","jwks":"none","reload":"ok","build":{"module":"v9.9.9","revision":"abc"}}`
	if a.status != 503 || a.body != want {
		t.Errorf("readyz: %d %s\nwant %s", a.status, a.body, want)
	}
	g.SetReloadFailed(true)
	if a := serveOnce(t, g, "/readyz"); !strings.Contains(a.body, `"reload":"failed"`) {
		t.Errorf("readyz after a failed reload: %s", a.body)
	}
}

func TestStartupReport(t *testing.T) {
	fl := loadFixtureFleet(t, func(d *air.Document) {
		d.Service.Auth = air.Auth{Type: air.AuthOAuth2AuthorizationCode}
		for i := range d.Operations {
			d.Operations[i].Auth = nil
		}
	})
	g, err := NewGateway(Config{}, fl, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(g.StartupReport(), "\n")
	want := `inbound auth: none (loopback callers only, every tool unrestricted)
connector github: 12 tool(s), bundleHash 6ce179c3c1cfbf5e34b1ec7841594381936063b8c6b2a48e529313da168850c7
vault: no key file (ANVIL_VAULT_KEY_FILE unset): connections cannot be stored
egress allowlist: empty, every upstream host is blocked (set ANVIL_ALLOWED_HOSTS, or ANVIL_ENV=dev for development)
connector github: an OAuth login asks for no scopes
warning: no vault: calls to connectors that need a credential will answer auth_required
warning: upstream host api.github.example (connector github) is not in ANVIL_ALLOWED_HOSTS: its calls will be refused
warning: connector github uses OAuth but cannot connect: connector_not_configured: The connector is not configured for OAuth: it has no OAuth client id. (set ANVIL_CONNECT_GITHUB_CLIENT_ID, ANVIL_CONNECT_GITHUB_CLIENT_SECRET, …)`
	if got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}

	// Allowed hosts, dev mode, and a configured OAuth client: no warnings
	// about egress or OAuth.
	env := map[string]string{
		"ANVIL_CONNECT_GITHUB_CLIENT_ID":              "id",
		"ANVIL_CONNECT_GITHUB_AUTHORIZATION_ENDPOINT": "https://auth.example/authorize",
		"ANVIL_CONNECT_GITHUB_TOKEN_ENDPOINT":         "https://auth.example/token",
	}
	for _, c := range []struct{ hosts, env, line string }{
		{"github.example", "", "egress allowlist: github.example"},
		{"", "dev", "egress allowlist: empty, every upstream host allowed (ANVIL_ENV=dev)"},
	} {
		g, err := NewGateway(Config{AllowedHosts: c.hosts, Env: c.env, Getenv: func(k string) string { return env[k] }}, fl, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(g.StartupReport(), "\n")
		if !strings.Contains(got, "\n"+c.line+"\n") || strings.Contains(got, "ANVIL_ALLOWED_HOSTS:") || strings.Contains(got, "cannot connect") {
			t.Errorf("%+v: report:\n%s", c, got)
		}
	}
}

// serveOnce answers one GET from a loopback caller.
func serveOnce(t *testing.T, g *Gateway, path string) answer {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "http://127.0.0.1"+path, nil)
	g.Handler().ServeHTTP(rec, req)
	return answer{status: rec.Code, body: rec.Body.String()}
}

func TestMCPToolsListAfterReload(t *testing.T) {
	f := newFleetFixture(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The client caches tools/list for its ttlMs (2026-07-28) and drops
	// the cache when the reload is announced to it (subscriptions/listen).
	changed := make(chan struct{}, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test-sdk", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.aud, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &bearerTransport{token: f.turn(fxWriteGrant), base: f.client.Transport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := func() map[string]bool {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, tl := range res.Tools {
			out[tl.Name] = true
		}
		return out
	}
	const gone = "github__github_list_pull"
	before := names()
	if !before[gone] {
		t.Fatalf("tools/list before the reload: %v", before)
	}
	reloadWithout(t, f, "github.pulls.list")
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("the reload was not announced")
	}
	after := names()
	if after[gone] || len(after) != len(before)-1 {
		t.Errorf("tools/list after the reload: %d tools (%d before), %s listed: %v", len(after), len(before), gone, after[gone])
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gone, Arguments: map[string]any{"owner": "o", "repo": "r"}})
	if err == nil && !res.IsError {
		t.Errorf("a call to the tool the reload removed: %+v", res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_list_issue", Arguments: map[string]any{"owner": "o", "repo": "r"}})
	if err != nil || res.IsError {
		t.Errorf("a tool the reload kept: %v %+v", err, res)
	}
}

// TestMCPToolListChangedOnReload: a session with an event stream is told
// that the tool list changed.
func TestMCPToolListChangedOnReload(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true})
	changed := make(chan struct{}, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "reload-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	tr := &mcp.StreamableClientTransport{Endpoint: f.aud, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &bearerTransport{token: f.turn(fxReadGrant), base: http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the GET stream open
	reloadWithout(t, f, "github.pulls.list")
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed after the reload")
	}
}

// reloadWithout reloads the fixture's gateway with its workspace, the
// operation id blocked.
func reloadWithout(t *testing.T, f *fleetFixture, id string) {
	t.Helper()
	fl := loadFleet(t, f.ws, func(d *air.Document) {
		for i := range d.Operations {
			if d.Operations[i].ID == id {
				d.Operations[i].State = air.StateBlocked
			}
		}
	})
	if err := f.g.Reload(fl); err != nil {
		t.Fatal(err)
	}
}
