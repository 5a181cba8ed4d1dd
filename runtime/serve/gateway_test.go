package serve

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/buildinfo"
	"github.com/anvil-dev/anvil/runtime/door/connectdoor"
	"github.com/anvil-dev/anvil/runtime/door/restdoor"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// startupConfig is a complete branchyard configuration for dir's workspace
// (github only) without starting anything.
func startupConfig(t *testing.T) (Config, string) {
	t.Helper()
	dir := t.TempDir()
	f := &fleetFixture{dir: dir, ws: filepath.Join(dir, "workspace"), aud: "http://127.0.0.1:8931/mcp",
		gatewayFiles: gatewayFiles{jwks: filepath.Join(dir, "jwks.json"), vaultDir: filepath.Join(dir, "vault"), keyFile: filepath.Join(dir, "vault.key")}}
	copyFixture(t, f.ws, "github", "http://127.0.0.1:1")
	writeVaultKey(t, f.keyFile, 0o600)
	if err := os.WriteFile(f.jwks, []byte(`{"keys":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return f.config(8931), dir
}

func TestStartupRefusals(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, cfg *Config, dir string)
		want []string
		is   error
	}{
		{"vault key missing", func(t *testing.T, cfg *Config, _ string) { cfg.VaultKeyFile = "" },
			[]string{"ANVIL_VAULT_KEY_FILE"}, nil},
		{"vault key file absent", func(t *testing.T, cfg *Config, dir string) { cfg.VaultKeyFile = filepath.Join(dir, "nope.key") },
			[]string{"ANVIL_VAULT_KEY_FILE", "cannot be opened"}, vault.ErrKey},
		{"group-readable key file", func(t *testing.T, cfg *Config, _ string) {
			if err := os.Chmod(cfg.VaultKeyFile, 0o640); err != nil {
				t.Fatal(err)
			}
		}, []string{"ANVIL_VAULT_KEY_FILE", "group or others", "0640"}, vault.ErrKey},
		{"key file of the wrong size", func(t *testing.T, cfg *Config, _ string) {
			if err := os.WriteFile(cfg.VaultKeyFile, []byte("abcdef"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"ANVIL_VAULT_KEY_FILE", "32-byte key"}, vault.ErrKey},
		{"no bundles", func(t *testing.T, cfg *Config, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "workspace", "github")); err != nil {
				t.Fatal(err)
			}
		}, []string{"no bundles found"}, fleet.ErrNoBundles},
		{"connector id collision", func(t *testing.T, cfg *Config, dir string) {
			copyFixture(t, filepath.Join(filepath.Join(dir, "workspace"), "team"), "git hub", "http://127.0.0.1:1")
			copyFixture(t, filepath.Join(filepath.Join(dir, "workspace"), "team"), "git-hub", "http://127.0.0.1:1")
			copyFixture(t, filepath.Join(dir, "workspace"), "team_git_hub", "http://127.0.0.1:1")
		}, []string{"tool-name collision", "team_git_hub"}, nil},
		{"tool-name collision across bundles", func(t *testing.T, cfg *Config, dir string) {
			a := fxTrackerDoc("http://127.0.0.1:1")
			a.Operations[0].MCP.ToolName = "b__c"
			writeAIR(t, filepath.Join(filepath.Join(dir, "workspace"), "a"), a)
			b := fxTrackerDoc("http://127.0.0.1:1")
			b.Operations[0].MCP.ToolName = "c"
			writeAIR(t, filepath.Join(filepath.Join(dir, "workspace"), "a__b"), b)
		}, []string{"tool-name collision", "a__b__c"}, nil},
		{"non-loopback bind with auth none", func(t *testing.T, cfg *Config, _ string) {
			cfg.Auth = auth.Config{Mode: auth.ModeNone}
			cfg.Host = "0.0.0.0"
		}, []string{"0.0.0.0", "inbound auth mode none"}, nil},
		{"http JWKS", func(t *testing.T, cfg *Config, _ string) { cfg.Auth.JWKSURI = "http://127.0.0.1/jwks.json" },
			nil, auth.ErrConfig},
		{"non-loopback http audience", func(t *testing.T, cfg *Config, _ string) { cfg.Auth.Audience = "http://gateway.example/mcp" },
			nil, auth.ErrConfig},
		{"no issuer", func(t *testing.T, cfg *Config, _ string) { cfg.Auth.Issuer = "" }, nil, auth.ErrConfig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, dir := startupConfig(t)
			c.edit(t, &cfg, dir)
			g, err := NewFromDir(cfg, filepath.Join(dir, "workspace"), nil)
			if err == nil {
				t.Fatalf("New started a gateway (%d tools)", len(g.Fleet().Tools))
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q does not wrap %v", err, c.is)
			}
			if _, statErr := os.Stat(cfg.VaultDir); statErr == nil && c.name != "no bundles" {
				// Refusing to start never creates the vault.
				if entries, _ := os.ReadDir(cfg.VaultDir); len(entries) != 0 {
					t.Errorf("the vault was written")
				}
			}
		})
	}
	t.Run("loopback bind with auth none starts", func(t *testing.T) {
		cfg, dir := startupConfig(t)
		cfg.Auth = auth.Config{Mode: auth.ModeNone}
		cfg.VaultKeyFile = ""
		for _, h := range []string{"127.0.0.1", "localhost", "::1"} {
			cfg.Host = h
			if _, err := NewFromDir(cfg, filepath.Join(dir, "workspace"), nil); err != nil {
				t.Errorf("host %s: %v", h, err)
			}
		}
	})
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"ANVIL_INBOUND_AUTH_MODE":   "branchyard",
		"ANVIL_INBOUND_ISSUER":      fxIssuer,
		"ANVIL_INBOUND_AUDIENCE":    "http://127.0.0.1:8931/mcp",
		"ANVIL_INBOUND_JWKS_URI":    "file:///tmp/jwks.json",
		"ANVIL_VAULT_KEY_FILE":      "/tmp/vault.key",
		"ANVIL_VAULT_DIR":           "/tmp/vault",
		"ANVIL_AUDIT_FILE":          "/tmp/audit.jsonl",
		"ANVIL_ALLOWED_HOSTS":       "127.0.0.1",
		"ANVIL_UPSTREAM_TIMEOUT_MS": "2500",
	}
	cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.Mode != "branchyard" || cfg.Auth.Issuer != fxIssuer || cfg.VaultKeyFile != "/tmp/vault.key" ||
		cfg.VaultDir != "/tmp/vault" || cfg.AuditFile != "/tmp/audit.jsonl" || cfg.AllowedHosts != "127.0.0.1" ||
		cfg.UpstreamTimeout != 2500*time.Millisecond || cfg.Auth.Leeway != auth.DefaultLeeway {
		t.Errorf("config: %+v", cfg)
	}
	for _, bad := range []map[string]string{
		{"ANVIL_INBOUND_AUTH_MODE": "branchyard"},
		{"ANVIL_INBOUND_AUTH_MODE": "oidc"},
		{"ANVIL_UPSTREAM_TIMEOUT_MS": "soon"},
		{"ANVIL_UPSTREAM_TIMEOUT_MS": "-5"},
	} {
		if _, err := ConfigFromEnv(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

func TestHealthReadyAndRoutes(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{tracker: true, noConnect: true})
	if a := f.do("GET", "/healthz", "", "", "", nil); a.status != 200 || a.body != `{"status":"ok","fleet":true,"bundles":2}` {
		t.Errorf("healthz: %d %s", a.status, a.body)
	}
	// Without a token, branchyard mode's public port answers the status
	// only; with one (any purpose), the details.
	if a := f.do("GET", "/readyz", "", "", "", nil); a.status != 200 || a.body != `{"ready":true}` {
		t.Errorf("readyz without a token: %d %s", a.status, a.body)
	}
	if a := f.do("GET", "/readyz", "not-a-token", "", "", nil); a.status != 200 || a.body != `{"ready":true}` {
		t.Errorf("readyz with a bad token: %d %s", a.status, a.body)
	}
	a := f.do("GET", "/readyz", f.turn(fxReadGrant), "", "", nil)
	mod, rev := buildinfo.Version()
	cs := f.g.Fleet().Connectors
	if cs[0].BundleHash == "" || cs[1].BundleHash == "" {
		t.Fatal("the fixture's bundles have no bundleHash")
	}
	want := `{"ready":true,"bundles":[{"id":"github","serviceId":"github","toolCount":12,"bundleHash":"` + cs[0].BundleHash + `","ready":true},` +
		`{"id":"tracker","serviceId":"tracker","toolCount":1,"bundleHash":"` + cs[1].BundleHash + `","ready":true}],` +
		`"vault":"open","store":"ok","jwks":"ok","reload":"ok","build":{"module":"` + mod + `","revision":"` + rev + `"}}`
	if a.status != 200 || a.body != want {
		t.Errorf("readyz: %d %s", a.status, a.body)
	}
	a = f.do("GET", "/.well-known/oauth-protected-resource", "", "", "", nil)
	if a.status != 200 || a.body != `{"resource":"`+f.aud+`","authorization_servers":["`+fxIssuer+`"]}` {
		t.Errorf("resource metadata: %d %s", a.status, a.body)
	}
	for _, p := range []string{"/", "/nope", "/mcp/extra", "/call", "/connect", "/healthz/x", "/.well-known/jwks.json", "/mcp/../healthz", "//mcp"} {
		for _, m := range []string{"GET", "POST"} {
			a := f.do(m, p, "", "", "", nil)
			if a.status != 404 || a.body != `{"error":{"code":"not_found","message":"No such route."}}` {
				t.Errorf("%s %s: %d %s", m, p, a.status, a.body)
			}
		}
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func TestToolListsFollowTheGrant(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{tracker: true, noConnect: true})
	reads := []string{"github__github_get_issue", "github__github_get_release", "github__github_list_comment",
		"github__github_list_issue", "github__github_list_pull"}
	cases := []struct {
		name   string
		grants []any
		want   []string
	}{
		{"read grant lists reads only", fxReadGrant, reads},
		{"glob names one operation", []any{map[string]any{"connector": "github", "operations": []any{"issues.list"}, "mode": "read"}},
			[]string{"github__github_list_issue"}},
		{"write grant without confirm hides the gated mutations", []any{
			map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write"},
			map[string]any{"connector": "tracker", "operations": []any{"tickets.list"}, "mode": "read"},
		}, append(append([]string{}, reads...), "github__github_create_comment", "tracker__tracker_list_tickets")},
		{"write grant with confirm lists everything", []any{
			map[string]any{"connector": "github", "operations": []any{"github.*"}, "mode": "write", "confirm": "allow"},
		}, []string{"github__github_create_comment", "github__github_create_issue", "github__github_create_release",
			"github__github_delete_comment", "github__github_delete_release", "github__github_get_issue", "github__github_get_release",
			"github__github_list_comment", "github__github_list_issue", "github__github_list_pull", "github__github_update_issue",
			"github__github_update_release"}},
		{"empty grant lists nothing", []any{}, nil},
		{"a grant for an unserved connector lists nothing", []any{map[string]any{"connector": "jira", "operations": []any{"*"}, "mode": "write"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok := f.turn(c.grants)
			s := f.rawInitialize(tok)
			defer s.close()
			got := s.toolNames()
			if !reflect.DeepEqual(sortedCopy(got), sortedCopy(c.want)) {
				t.Errorf("raw tools/list\n got %v\nwant %v", got, c.want)
			}
			// The official SDK client sees the same list.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cs, err := f.sdkSession(ctx, tok)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			lr, err := cs.ListTools(ctx, &mcp.ListToolsParams{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range lr.Tools {
				names = append(names, tl.Name)
			}
			if !reflect.DeepEqual(sortedCopy(names), sortedCopy(c.want)) {
				t.Errorf("SDK tools/list\n got %v\nwant %v", names, c.want)
			}
		})
	}
}

func TestToolListEntry(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true})
	s := f.rawInitialize(f.turn(fxWriteGrant))
	_, msg := s.rpc("tools/list", map[string]any{})
	tools := msg["result"].(map[string]any)["tools"].([]any)
	byName := map[string]map[string]any{}
	for _, tl := range tools {
		m := tl.(map[string]any)
		byName[m["name"].(string)] = m
	}
	cc := byName["github__github_create_comment"]
	if cc == nil {
		t.Fatal("create_comment not listed")
	}
	meta := cc["_meta"].(map[string]any)
	for k, want := range map[string]any{"anvil/effect": "mutation", "anvil/operation_id": "github.comments.create",
		"anvil/fleet_bundle_id": "github", "anvil/fleet_tool_name": "github_create_comment", "anvil/effect_class": "reversible"} {
		if meta[k] != want {
			t.Errorf("_meta[%s] = %v, want %v", k, meta[k], want)
		}
	}
	contract, _ := meta["anvil/effect_contract"].(map[string]any)
	if contract["class"] != "reversible" || contract["inverse"] == nil {
		t.Errorf("effect contract: %v", contract)
	}
	ann := cc["annotations"].(map[string]any)
	if ann["readOnlyHint"] == true || ann["idempotentHint"] != true || ann["openWorldHint"] != false {
		t.Errorf("annotations: %v", ann)
	}
	li := byName["github__github_list_issue"]
	lm := li["_meta"].(map[string]any)
	if _, ok := lm["anvil/effect_class"]; ok {
		t.Errorf("an undeclared read publishes an effect class: %v", lm)
	}
	if li["annotations"].(map[string]any)["readOnlyHint"] != true {
		t.Errorf("list annotations: %v", li["annotations"])
	}
	schema := li["inputSchema"].(map[string]any)
	if schema["type"] != "object" {
		t.Errorf("input schema: %v", schema)
	}
}

func TestRefusalsNeverReachTheUpstream(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{tracker: true})
	args := map[string]any{"owner": "octo", "repo": "hello", "title": "x", "confirm": true}
	type want struct {
		code, sub, decision string
		rule                string // JSON of details.rule
	}
	cases := []struct {
		name   string
		grants []any
		tool   string
		want   want
	}{
		{"read grant calling a mutation", fxReadGrant, "github__github_create_issue",
			want{"policy_denied", "policy/grant_denied", "denied", `{"index":0,"connector":"github","operations":["*"],"mode":"read"}`}},
		{"ungranted connector", fxReadGrant, "tracker__tracker_list_tickets",
			want{"policy_denied", "policy/grant_denied", "denied", `null`}},
		{"no glob names the operation", []any{map[string]any{"connector": "github", "operations": []any{"pulls.*"}, "mode": "write"}},
			"github__github_create_issue", want{"policy_denied", "policy/grant_denied", "denied", `null`}},
		{"second entry stops a mutation", []any{
			map[string]any{"connector": "tracker", "operations": []any{"*"}, "mode": "write"},
			map[string]any{"connector": "github", "operations": []any{"issues.*"}, "mode": "read", "account": "work"},
		}, "github__github_create_issue",
			want{"policy_denied", "policy/grant_denied", "denied", `{"index":1,"connector":"github","operations":["issues.*"],"mode":"read","account":"work"}`}},
		{"write grant without confirm", []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write"}},
			"github__github_create_issue", want{"confirmation_required", "policy/grant_confirmation_required", "confirmation_required",
				`{"index":0,"connector":"github","operations":["*"],"mode":"write"}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := f.upstreamCount()
			_, linesBefore := f.auditLines()
			tok := f.turn(c.grants)
			s := f.rawInitialize(tok)
			res := s.callTool(c.tool, args, nil)
			e := toolError(t, res)
			s.close()
			text := res["content"].([]any)[0].(map[string]any)["text"].(string)
			if !strings.Contains(text, `"rule":`+c.want.rule+`}`) {
				t.Errorf("details.rule: want %s last in details, got %s", c.want.rule, text)
			}
			d, _ := e["details"].(map[string]any)
			if e["code"] != c.want.code || d["code"] != c.want.sub || d["connector"] != strings.Split(c.tool, "__")[0] || d["principalId"] != fxSub {
				t.Errorf("refusal: %v", e)
			}
			if e["retryable"] != false || e["safe_to_retry"] != false {
				t.Errorf("a grant refusal is not retryable: %v", e)
			}
			// REST answers the same refusal with its status.
			ra := f.call(tok, c.tool, string(mustJSON(map[string]any{"arguments": args})), nil)
			wantStatus := 403
			if c.want.code == "confirmation_required" {
				wantStatus = 428
			}
			if ra.status != wantStatus || ra.errCode() != c.want.code {
				t.Errorf("REST: %d %s", ra.status, ra.body)
			}
			if n := f.upstreamCount(); n != before {
				t.Errorf("the upstream saw %d requests", n-before)
			}
			raw, lines := f.auditLines()
			if len(lines) != len(linesBefore)+2 {
				t.Fatalf("want two new audit lines, got %d", len(lines)-len(linesBefore))
			}
			for _, l := range lines[len(linesBefore):] {
				if l["decision"] != c.want.decision || l["error_code"] != c.want.code || l["rule"] != c.want.sub || l["upstream_status"] != nil {
					t.Errorf("audit line: %v", l)
				}
			}
			last := raw[len(raw)-1]
			if c.want.rule == "null" && !strings.Contains(last, `"account":null,"operation"`) {
				t.Errorf("no deciding entry: account must be null: %s", last)
			}
			if c.want.rule != "null" && !strings.Contains(last, `"grant":`+c.want.rule) {
				t.Errorf("audit grant: %s", last)
			}
		})
	}
}

func TestNotConnected(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true})
	grants := []any{
		map[string]any{"connector": "github", "operations": []any{"issues.list"}, "mode": "read"},
		map[string]any{"connector": "github", "operations": []any{"pulls.list"}, "mode": "read", "account": "work"},
	}
	tok := f.turn(grants)
	s := f.rawInitialize(tok)
	defer s.close()
	for _, c := range []struct{ tool, account string }{{"github__github_list_issue", "default"}, {"github__github_list_pull", "work"}} {
		res := s.callTool(c.tool, map[string]any{"owner": "octo", "repo": "hello"}, nil)
		e := toolError(t, res)
		d, _ := e["details"].(map[string]any)
		if e["code"] != "auth_required" || d["code"] != "connector/not_connected" || d["connector"] != "github" || d["account"] != c.account {
			t.Errorf("%s: %v", c.tool, e)
		}
		msg, _ := e["message"].(string)
		if !strings.Contains(msg, "github") || !strings.Contains(msg, c.account) {
			t.Errorf("message must name the connector and account: %q", msg)
		}
		all := string(mustJSON(res))
		for _, bad := range []string{"http://", "https://", "connect/start"} {
			if strings.Contains(all, bad) {
				t.Errorf("the refusal carries %q: %s", bad, all)
			}
		}
	}
	if n := f.upstreamCount(); n != 0 {
		t.Errorf("upstream saw %d requests", n)
	}
	_, lines := f.auditLines()
	if len(lines) != 2 {
		t.Fatalf("want 2 audit lines, got %d", len(lines))
	}
	for i, l := range lines {
		if l["decision"] != "allowed" || l["error_code"] != "auth_required" || l["upstream_status"] != nil || l["rule"] != nil {
			t.Errorf("line %d: %v", i, l)
		}
	}
	if lines[1]["account"] != "work" {
		t.Errorf("the allowing entry's account: %v", lines[1]["account"])
	}
}

func TestConnectAPIKeyThenUpstreamSeesTheStoredBearer(t *testing.T) {
	// Environment values a careless gateway might read instead of the vault.
	t.Setenv("ANVIL_DEFAULT_GITHUB_TOKEN", "env-token-never-used")
	t.Setenv("GITHUB_TOKEN", "env-token-never-used")
	t.Setenv("ANVIL_DEFAULT_TOKEN", "env-token-never-used")
	f := newFleetFixture(t, &fleetOptions{noConnect: true, edit: func(cfg *Config) { cfg.Getenv = os.Getenv }})
	if len(f.vaultSnapshot()) != 0 {
		t.Fatal("vault not empty at start")
	}
	ct := f.connectToken()
	a := f.do("POST", "/connect/start", ct, "application/json", `{"connector":"github"}`, nil)
	if a.status != 200 || a.body != `{"kind":"static","connector":"github","submit":"/connect/api-key"}` {
		t.Fatalf("/connect/start: %d %s", a.status, a.body)
	}
	a = f.do("POST", "/connect/api-key", ct, "application/json", `{"connector":"github","api_key":"`+fxUpstream+`"}`, nil)
	if a.status != 200 || a.body != `{"connected":true,"connector":"github","account":"default"}` {
		t.Fatalf("/connect/api-key: %d %s", a.status, a.body)
	}
	a = f.do("POST", "/connect/api-key", ct, "application/json", `{"connector":"github","account":"work","api_key":"pat-work-value"}`, nil)
	if a.status != 200 || a.body != `{"connected":true,"connector":"github","account":"work"}` {
		t.Fatalf("/connect/api-key work: %d %s", a.status, a.body)
	}
	snap := f.vaultSnapshot()
	if len(snap) != 2 {
		t.Fatalf("want 2 vault records, got %d", len(snap))
	}
	for name, content := range snap {
		if strings.Contains(content, fxUpstream) || strings.Contains(content, "pat-work-value") {
			t.Errorf("vault record %s holds the secret in clear", name)
		}
		if name != vault.FileName(fxSub, "github", "default") && name != vault.FileName(fxSub, "github", "work") {
			t.Errorf("unexpected vault file %s", name)
		}
	}

	s := f.rawInitialize(f.turn(fxReadGrant))
	defer s.close()
	res := s.callTool("github__github_list_issue", map[string]any{"owner": "octo", "repo": "hello"}, nil)
	if res["isError"] == true {
		t.Fatalf("call failed: %v", res)
	}
	reqs := f.mock.Requests()
	if len(reqs) != 1 || !reqs[0].Authorized {
		t.Fatalf("the upstream did not see the stored bearer: %+v", reqs)
	}

	// The work account's key goes upstream for a grant that picks it, and
	// the mock (which accepts only the default key) refuses it.
	s2 := f.rawInitialize(f.turn([]any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read", "account": "work"}}))
	defer s2.close()
	e := toolError(t, s2.callTool("github__github_list_issue", map[string]any{"owner": "octo", "repo": "hello"}, nil))
	if e["code"] != "auth_required" && e["code"] != "permission_denied" {
		t.Errorf("work account call: %v", e)
	}
	reqs = f.mock.Requests()
	if len(reqs) != 2 || reqs[1].Authorized {
		t.Errorf("the work account's key must go upstream (and be refused by the mock): %+v", reqs)
	}
	if strings.Contains(string(mustJSON(e)), "pat-work-value") {
		t.Errorf("the refusal leaks the secret: %v", e)
	}

	// /connect/status lists both connections without secrets.
	a = f.do("GET", "/connect/status", ct, "", "", nil)
	if a.status != 200 || strings.Contains(a.body, fxUpstream) || strings.Contains(a.body, "pat-work-value") || strings.Contains(a.body, "secret") {
		t.Fatalf("/connect/status: %d %s", a.status, a.body)
	}
	if keys := strings.Join(jsonKeys(t, a.body), ","); keys != "sub,connections" {
		t.Errorf("status keys %s", keys)
	}
	st := a.json(t)
	conns, _ := st["connections"].([]any)
	if st["sub"] != fxSub || len(conns) != 2 {
		t.Fatalf("status: %s", a.body)
	}
	for _, c := range conns {
		m := c.(map[string]any)
		if m["connector"] != "github" || m["kind"] != "static" || m["status"] != "active" || m["updatedAt"] == nil {
			t.Errorf("connection %v", m)
		}
		for k := range m {
			switch k {
			case "connector", "account", "kind", "status", "updatedAt", "expiresAt", "scope":
			default:
				t.Errorf("connection carries %q", k)
			}
		}
	}
	if out := f.logs.String(); strings.Contains(out, fxUpstream) || strings.Contains(out, "pat-work-value") {
		t.Errorf("the logs carry a secret: %s", out)
	}
}

func TestConnectRouteRefusals(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{tracker: true})
	ct := f.connectToken()
	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/connect/start", `{"connector":"nope"}`, 404, "unknown_connector"},
		{"POST", "/connect/start", `{}`, 400, "invalid_request"},
		{"POST", "/connect/start", `[1]`, 400, "invalid_request"},
		{"POST", "/connect/start", `not json`, 400, "invalid_request"},
		{"POST", "/connect/start", `{"connector":"github","account":"bad account"}`, 400, "invalid_request"},
		{"POST", "/connect/start", `{"connector":"github"}` + strings.Repeat(" ", restdoor.MaxBody), 400, "invalid_request"},
		{"POST", "/connect/api-key", `{"connector":"github","api_key":""}`, 400, "invalid_secret"},
		{"POST", "/connect/api-key", `{"connector":"github","api_key":"a\r\nb"}`, 400, "invalid_secret"},
		{"POST", "/connect/api-key", `{"connector":"github","api_key":"` + strings.Repeat("k", connectdoor.MaxSecret+1) + `"}`, 400, "invalid_secret"},
		{"POST", "/connect/api-key", `{"connector":"nope","api_key":"x"}`, 404, "unknown_connector"},
		{"GET", "/connect/start", ``, 404, "not_found"},
		{"POST", "/connect/status", ``, 404, "not_found"},
		{"POST", "/connect/other", `{}`, 404, "not_found"},
	}
	before := f.vaultSnapshot()
	for _, c := range cases {
		a := f.do(c.method, c.path, ct, "application/json", c.body, nil)
		if a.status != c.status || a.errCode() != c.code {
			t.Errorf("%s %s %.40q: %d %s, want %d %s", c.method, c.path, c.body, a.status, a.body, c.status, c.code)
		}
	}
	if a := f.do("POST", "/connect/start", ct, "application/json", `{"connector":"github"}`, nil); a.status != 200 {
		t.Errorf("start: %d %s", a.status, a.body)
	}
	if !reflect.DeepEqual(before, f.vaultSnapshot()) {
		t.Error("a refused connect request changed the vault")
	}
}

func TestTurnTokensRefusedOnConnectRoutes(t *testing.T) {
	f := newFleetFixture(t, nil)
	before := f.vaultSnapshot()
	if len(before) != 1 {
		t.Fatalf("want the fixture's one connection, got %d", len(before))
	}
	for name, grants := range map[string][]any{"read": fxReadGrant, "write": fxWriteGrant, "empty": {}} {
		tok := f.turn(grants)
		for _, r := range []struct{ method, path, body string }{
			{"POST", "/connect/api-key", `{"connector":"github","api_key":"attacker-key"}`},
			{"POST", "/connect/start", `{"connector":"github"}`},
			{"GET", "/connect/status", ``},
		} {
			a := f.do(r.method, r.path, tok, "application/json", r.body, nil)
			if a.status != 403 || a.errCode() != "connect_token_required" {
				t.Errorf("%s grant, %s %s: %d %s", name, r.method, r.path, a.status, a.body)
			}
		}
	}
	if !reflect.DeepEqual(before, f.vaultSnapshot()) {
		t.Error("the stored credential changed")
	}
	// The stored key still works.
	s := f.rawInitialize(f.turn(fxReadGrant))
	defer s.close()
	if res := s.callTool("github__github_list_issue", map[string]any{"owner": "o", "repo": "r"}, nil); res["isError"] == true {
		t.Errorf("call after refused overwrite: %v", res)
	}
}

func TestConnectTokensRefusedOnToolRoutes(t *testing.T) {
	f := newFleetFixture(t, nil)
	now := time.Now().Unix()
	withGrant := f.turnWith(fxWriteGrant, func(c map[string]any) {
		c["by_purpose"] = "connect"
		c["exp"] = now + 300
	})
	for _, tok := range []string{f.connectToken(), withGrant} {
		a := f.initialize(tok)
		if a.status != 403 || a.errCode() != "turn_token_required" {
			t.Errorf("initialize: %d %s", a.status, a.body)
		}
		a = f.call(tok, "github__github_list_issue", `{"arguments":{"owner":"o","repo":"r"}}`, nil)
		if a.status != 403 || a.errCode() != "turn_token_required" {
			t.Errorf("/call: %d %s", a.status, a.body)
		}
	}
	if n := f.upstreamCount(); n != 0 {
		t.Errorf("upstream saw %d requests", n)
	}
	if raw, _ := f.auditLines(); len(raw) != 0 {
		t.Errorf("audit lines: %v", raw)
	}
}

func TestSessionBelongsToOneToken(t *testing.T) {
	f := newFleetFixture(t, nil)
	first := f.turn(fxReadGrant)
	second := f.turnWith(fxReadGrant, func(c map[string]any) { c["by_turn"] = "2" })
	s := f.rawInitialize(first)
	for _, m := range []struct{ method, body string }{
		{"POST", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}`},
		{"POST", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"github__github_list_issue","arguments":{"owner":"o","repo":"r"}}}`},
		{"DELETE", ``},
	} {
		a := f.do(m.method, "/mcp", second, "application/json", m.body, mcpHeaders(second, s.id))
		id := "null" // JSON-RPC errors echo the request's id
		if m.body != "" {
			id = strconv.Itoa(int(mustID(t, m.body)))
		}
		if a.status != 403 || a.body != `{"jsonrpc":"2.0","error":{"code":-32001,"message":"This MCP session belongs to a different authenticated caller."},"id":`+id+`}` {
			t.Errorf("%s with the second token: %d %s", m.method, a.status, a.body)
		}
	}
	if n := f.upstreamCount(); n != 0 {
		t.Errorf("upstream saw %d requests", n)
	}
	// The session still works for its own token.
	if names := s.toolNames(); len(names) != 5 {
		t.Errorf("owner's tools/list: %v", names)
	}
	if a := s.close(); a.status != 204 {
		t.Errorf("DELETE by the owner: %d %s", a.status, a.body)
	}
}

// TestFleetIDs covers fleet.Load's folding of nested bundle paths.
func TestFleetIDs(t *testing.T) {
	ws := t.TempDir()
	copyFixture(t, filepath.Join(ws, "team"), "git hub", "http://127.0.0.1:1")
	writeAIR(t, filepath.Join(ws, "tracker"), fxTrackerDoc("http://127.0.0.1:1"))
	fl, err := fleet.Load(ws)
	if err != nil {
		t.Fatal(err)
	}
	if ids := strings.Join(fl.IDs(), ","); ids != "team_git_hub,tracker" {
		t.Errorf("ids %s", ids)
	}
	if fl.Tool("team_git_hub__github_list_issue") == nil || fl.Tool("tracker__tracker_list_tickets") == nil || fl.Tool("github__github_list_issue") != nil {
		t.Error("tool names are not prefixed with the folded connector id")
	}
	if name, ok := fl.Connector("team_git_hub").Tool("github.comments.delete"); !ok || name != "team_git_hub__github_delete_comment" {
		t.Errorf("Connector.Tool: %s %v", name, ok)
	}
	if len(fl.Tools) != 13 {
		t.Errorf("%d tools", len(fl.Tools))
	}
	_ = air.StateApproved
}

func TestEgressAllowlist(t *testing.T) {
	for _, c := range []struct {
		name, hosts, env string
		allowed          bool
	}{
		{"host not listed", "api.github.example", "", false},
		{"empty list in prod", "", "", false},
		{"empty list in dev", "", "dev", true},
		{"listed", "127.0.0.1", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFleetFixture(t, &fleetOptions{edit: func(cfg *Config) { cfg.AllowedHosts, cfg.Env = c.hosts, c.env }})
			a := f.call(f.turn(fxReadGrant), "github__github_list_issue", `{"arguments":{"owner":"octo","repo":"hello"}}`, nil)
			_, lines := f.auditLines()
			last := lines[len(lines)-1]
			if c.allowed {
				if a.status != 200 || f.upstreamCount() != 1 {
					t.Errorf("%d %s", a.status, a.body)
				}
				return
			}
			if a.status != 403 || a.errCode() != "policy_denied" || !strings.Contains(a.body, "Upstream host is not in the allowed hosts list") {
				t.Errorf("%d %s", a.status, a.body)
			}
			if f.upstreamCount() != 0 {
				t.Error("the upstream was reached")
			}
			if last["decision"] != "denied" || last["rule"] != nil || last["error_code"] != "policy_denied" || last["upstream_status"] != nil {
				t.Errorf("audit line %v", last)
			}
		})
	}
}

func TestAuditWriteFailureNeverFailsTheCall(t *testing.T) {
	f := newFleetFixture(t, nil)
	if err := os.Remove(f.auditFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(f.auditFile, 0o700); err != nil { // the path can no longer be appended to
		t.Fatal(err)
	}
	a := f.call(f.turn(fxReadGrant), "github__github_list_issue", `{"arguments":{"owner":"octo","repo":"hello"}}`, nil)
	if a.status != 200 {
		t.Fatalf("call: %d %s", a.status, a.body)
	}
	if logs := f.logs.String(); !strings.Contains(logs, "anvil: audit write failed") {
		t.Errorf("no stderr line for the failed audit write: %q", logs)
	}
}

// mustID reads a JSON-RPC request's numeric id.
func mustID(t *testing.T, body string) float64 {
	t.Helper()
	var m struct{ ID float64 }
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	return m.ID
}
