package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/anvil-dev/anvil/internal/idptest"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/fleet"
)

// TestScopesOfNewlyApprovedOperations drives the gateway against a real
// authorization server (zitadel's, internal/idptest): the login asks for
// the scopes of every approved operation; once an operation needing a scope
// the stored grant lacks is approved (a reload), its calls answer
// auth_required connector/reconnect_required naming the missing scope,
// before anything is sent upstream, and the startup report and /readyz say
// which connections lack what; connecting again asks for the whole union,
// and the call goes through.
func TestScopesOfNewlyApprovedOperations(t *testing.T) {
	const redirect = "http://127.0.0.1:1/connect/callback"
	p := idptest.Start(t, idptest.Options{
		Clients: []idptest.Client{{ID: "gateway", Secret: "gateway-secret", RedirectURIs: []string{redirect}}},
		Users:   []idptest.User{{Subject: "u-ada", Username: "ada"}},
	})
	var seen atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		seen.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":7,"body":"hi"}`))
			return
		}
		_, _ = w.Write([]byte(`[]`))
	}))
	defer up.Close()

	fleetWith := func(approveComments bool) *fleet.Fleet {
		return loadFixtureFleet(t, func(d *air.Document) {
			d.Service.Auth = air.Auth{Type: air.AuthOAuth2AuthorizationCode, Scheme: "gh", Scopes: []string{"offline_access"}}
			for i := range d.Operations {
				op := &d.Operations[i]
				op.Auth = nil
				switch op.ID {
				case "github.issues.list":
					op.Auth = &air.Auth{Type: air.AuthOAuth2AuthorizationCode, Scheme: "gh", Scopes: []string{"issues.read"}}
				case "github.comments.create":
					op.Auth = &air.Auth{Type: air.AuthOAuth2AuthorizationCode, Scheme: "gh", Scopes: []string{"issues.read", "comments.write"}}
					if !approveComments {
						op.State = air.StateReviewRequired
					}
				default:
					op.State = air.StateReviewRequired
				}
			}
		})
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "vault.key")
	writeVaultKey(t, keyFile, 0o600)
	env := map[string]string{
		"ANVIL_CONNECT_GITHUB_CLIENT_ID":              "gateway",
		"ANVIL_CONNECT_GITHUB_CLIENT_SECRET":          "gateway-secret",
		"ANVIL_CONNECT_GITHUB_AUTHORIZATION_ENDPOINT": p.Issuer() + "/authorize",
		"ANVIL_CONNECT_GITHUB_TOKEN_ENDPOINT":         p.Issuer() + "/oauth/token",
		"ANVIL_UPSTREAM_GITHUB_URL":                   up.URL,
		"ANVIL_STATE_FILE":                            filepath.Join(dir, "state.db"),
	}
	g, err := NewGateway(Config{AllowedHosts: "127.0.0.1", VaultKeyFile: keyFile, VaultDir: filepath.Join(dir, "vault"),
		PublicURL: "http://127.0.0.1:1/mcp", Getenv: func(k string) string { return env[k] }}, fleetWith(false), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h := g.Handler()
	do := func(method, path, body string) answer {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		h.ServeHTTP(rec, req)
		return answer{status: rec.Code, body: rec.Body.String()}
	}
	connect := func(wantScope string) {
		t.Helper()
		a := do("POST", "/connect/start", `{"connector":"github"}`)
		var start struct{ URL string }
		if err := json.Unmarshal([]byte(a.body), &start); err != nil || a.status != 200 {
			t.Fatalf("start: %d %s", a.status, a.body)
		}
		u, _ := url.Parse(start.URL)
		if got := u.Query().Get("scope"); got != wantScope {
			t.Errorf("the login asks for %q, want %q", got, wantScope)
		}
		r, err := p.Login(context.Background(), start.URL, "ada")
		if err != nil {
			t.Fatal(err)
		}
		if a := do("GET", "/connect/callback?"+url.Values{"state": {r.State}, "code": {r.Code}}.Encode(), ""); a.status != 200 {
			t.Fatalf("callback: %d %s", a.status, a.body)
		}
	}
	connect("offline_access issues.read")
	if a := do("POST", "/call/github__github_list_issue", `{"arguments":{"owner":"o","repo":"r"}}`); a.status != 200 || seen.Load() != 1 {
		t.Fatalf("list: %d %s", a.status, a.body)
	}
	if a := serveOnce(t, g, "/readyz"); !strings.Contains(a.body, `"scopes":["offline_access","issues.read"]}`) || strings.Contains(a.body, "reconnectRequired") {
		t.Errorf("readyz: %s", a.body)
	}

	// comments.create is approved: the grant lacks comments.write.
	if err := g.Reload(fleetWith(true)); err != nil {
		t.Fatal(err)
	}
	comment := `{"arguments":{"owner":"o","repo":"r","issue_number":1,"body":"hi"}}`
	a := do("POST", "/call/github__github_create_comment", comment)
	var refusal struct {
		Error struct {
			Code    string
			Message string
			Details struct {
				Code, Connector, Account string
				MissingScopes            []string `json:"missing_scopes"`
			}
		}
	}
	if err := json.Unmarshal([]byte(a.body), &refusal); err != nil || a.status != 401 || refusal.Error.Code != "auth_required" ||
		refusal.Error.Details.Code != "connector/reconnect_required" || refusal.Error.Details.Account != "default" ||
		strings.Join(refusal.Error.Details.MissingScopes, " ") != "comments.write" || !strings.Contains(refusal.Error.Message, "comments.write") {
		t.Fatalf("a call needing a scope the grant lacks: %d %s", a.status, a.body)
	}
	if seen.Load() != 1 {
		t.Errorf("the refused call reached the upstream")
	}
	// The read still works: its scope was granted.
	if a := do("POST", "/call/github__github_list_issue", `{"arguments":{"owner":"o","repo":"r"}}`); a.status != 200 {
		t.Errorf("list after the reload: %d %s", a.status, a.body)
	}
	if a := serveOnce(t, g, "/readyz"); a.status != 200 ||
		!strings.Contains(a.body, `"scopes":["offline_access","issues.read","comments.write"],"reconnectRequired":{"connections":1,"missingScopes":["comments.write"]}}`) {
		t.Errorf("readyz: %d %s", a.status, a.body)
	}
	report := strings.Join(g.StartupReport(), "\n")
	for _, want := range []string{
		"connector github: an OAuth login asks for scopes offline_access issues.read comments.write",
		"warning: connector github: 1 stored connection(s) (account default) lack the scope(s) comments.write that approved operations need: their calls answer auth_required connector/reconnect_required until the person runs anvil connect again (every person checked)",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("startup report lacks %q:\n%s", want, report)
		}
	}

	connect("offline_access issues.read comments.write")
	if a := do("POST", "/call/github__github_create_comment", comment); a.status != 200 || seen.Load() != 3 {
		t.Errorf("comment after connecting again: %d %s", a.status, a.body)
	}
	if a := serveOnce(t, g, "/readyz"); strings.Contains(a.body, "reconnectRequired") {
		t.Errorf("readyz after connecting again: %s", a.body)
	}
}

// TestDevelopmentVaultKey: in auth mode none a gateway without
// ANVIL_VAULT_KEY_FILE makes a development key (0600) beside its vault
// directory, says so, and reuses it on the next start; Branchyard mode
// still refuses to start without a key.
func TestDevelopmentVaultKey(t *testing.T) {
	home := t.TempDir()
	cfg := Config{}
	if err := cfg.UseDevVaultKey(home); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(home, ".anvil", "gateway", "vault.key")
	fi, err := os.Stat(want)
	if err != nil || cfg.VaultKeyFile != want || !cfg.DevVaultKey || !cfg.DevVaultKeyCreated || fi.Mode().Perm() != 0o600 ||
		cfg.VaultDir != filepath.Join(home, ".anvil", "gateway", "vault") {
		t.Fatalf("config %+v, key %v %v", cfg, fi, err)
	}
	g, err := NewGateway(cfg, loadFixtureFleet(t, func(*air.Document) {}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if r := strings.Join(g.StartupReport(), "\n"); !strings.Contains(r, "vault: development key "+want+" (created now, mode 0600; auth mode none only: set ANVIL_VAULT_KEY_FILE to use a key of your own), records in ") {
		t.Errorf("report:\n%s", r)
	}
	key, _ := os.ReadFile(want)
	again := Config{}
	if err := again.UseDevVaultKey(home); err != nil || again.DevVaultKeyCreated || again.VaultKeyFile != want {
		t.Errorf("second start: %+v %v", again, err)
	}
	if key2, _ := os.ReadFile(want); string(key2) != string(key) {
		t.Error("the development key was replaced")
	}
	// A key file of one's own, or Branchyard mode, is left alone.
	own := Config{VaultKeyFile: "/own.key"}
	by := Config{}
	by.Auth.Mode = "branchyard"
	if err := own.UseDevVaultKey(home); err != nil || own.DevVaultKey || own.VaultKeyFile != "/own.key" {
		t.Errorf("own key: %+v %v", own, err)
	}
	if err := by.UseDevVaultKey(home); err != nil || by.VaultKeyFile != "" || by.Check() == nil {
		t.Errorf("branchyard: %+v %v", by, err)
	}
	// A development key others may read is refused, not used.
	if err := os.Chmod(want, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (&Config{}).UseDevVaultKey(home); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a readable key: %v", err)
	}
}
