package serve_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
	"github.com/anvil-dev/anvil/gen/github-mini/workspace"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/serve"
)

// The differential test drives one request script through the generic
// fleet gateway (AIR loaded at run time from testdata/workspace) and the
// generated github-mini gateway (gen/github-mini: in process through its
// registration table, and as the built binary), each with its own mock
// upstream, vault and audit log, and requires the same answers byte for
// byte: statuses, bodies, effect reports and headers, audit lines (minus
// time, latency and trace ids), and what reached the upstream.

const (
	dfIssuer   = "branchyard:local:differential"
	dfSub      = "local:ada"
	dfUpstream = "e2e-upstream-pat"
)

// door is one gateway under test.
type door struct {
	name      string
	base      string // http://127.0.0.1:<port>
	aud       string
	mock      *mockupstream.Server
	auditFile string
	tokens    map[string]string
	client    *http.Client
	sessions  map[string]string
}

// dfEnv is the gateway environment of a door (ANVIL_* variables).
func dfEnv(dir, jwks, aud, mockURL string) map[string]string {
	return map[string]string{
		"ANVIL_INBOUND_AUTH_MODE":   "branchyard",
		"ANVIL_INBOUND_ISSUER":      dfIssuer,
		"ANVIL_INBOUND_AUDIENCE":    aud,
		"ANVIL_INBOUND_JWKS_URI":    "file://" + jwks,
		"ANVIL_VAULT_KEY_FILE":      filepath.Join(dir, "vault.key"),
		"ANVIL_VAULT_DIR":           filepath.Join(dir, "vault"),
		"ANVIL_AUDIT_FILE":          filepath.Join(dir, "audit.jsonl"),
		"ANVIL_ALLOWED_HOSTS":       "127.0.0.1",
		"ANVIL_UPSTREAM_GITHUB_URL": mockURL,
		"ANVIL_TOOLS_PAGE_SIZE":     "5",
	}
}

func dfVaultKey(t testing.TB, path string) {
	t.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	if err := os.WriteFile(path, []byte(hex.EncodeToString(k)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// newDoorFiles prepares a door's mock, directory and environment; port 0
// picks a free port.
func newDoorFiles(t testing.TB, name, jwks string, port int) (*door, map[string]string, net.Listener) {
	t.Helper()
	mock, err := mockupstream.Start(mockupstream.Options{Token: dfUpstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	dir := t.TempDir()
	dfVaultKey(t, filepath.Join(dir, "vault.key"))
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	d := &door{name: name, base: base, aud: base + "/mcp", mock: mock, auditFile: filepath.Join(dir, "audit.jsonl"),
		client: &http.Client{Timeout: 30 * time.Second}, sessions: map[string]string{}}
	t.Cleanup(d.client.CloseIdleConnections)
	return d, dfEnv(dir, jwks, d.aud, mock.URL), ln
}

// startInProcess serves a door in this process: the generic gateway over
// testdata/workspace, or the generated one through its table.
func startInProcess(t testing.TB, name, jwks string, compiled bool) *door {
	t.Helper()
	d, env, ln := newDoorFiles(t, name, jwks, 0)
	cfg, err := serve.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Host = "127.0.0.1"
	cfg.Port = ln.Addr().(*net.TCPAddr).Port
	var g *serve.Gateway
	if compiled {
		g, err = serve.NewGenerated(cfg, workspace.Workspace(), nil)
	} else {
		g, err = serve.NewFromDir(cfg, "testdata/workspace", nil)
	}
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("%s: Serve did not return", name)
		}
	})
	return d
}

// buildGenerated builds gen/github-mini into dir.
func buildGenerated(t testing.TB, dir string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "github-mini")
	cmd := exec.Command("go", "build", "-o", bin, "./gen/github-mini")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./gen/github-mini: %v\n%s", err, out)
	}
	return bin
}

// startBinary runs the built gateway as a process with the fleet gateway's
// command line and environment.
func startBinary(t testing.TB, bin, jwks string) *door {
	t.Helper()
	d, env, ln := newDoorFiles(t, "binary", jwks, 0)
	startProcess(t, d, bin, env, ln)
	return d
}

// syncWriter is a writer (a gateway's stderr) the test reads while the
// gateway writes it.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// dfTokens mints the script's tokens for a door's audience. Every claim
// but aud is the same for every door.
func dfTokens(key, other authtest.Key, aud string, now int64) map[string]string {
	grant := func(connector string, ops []any, mode string, confirm bool) map[string]any {
		g := map[string]any{"connector": connector, "operations": ops, "mode": mode}
		if confirm {
			g["confirm"] = "allow"
		}
		return g
	}
	all := []any{"*"}
	turn := func(jti, sub, turn string, grants []any, edit func(map[string]any)) map[string]any {
		c := map[string]any{"iss": dfIssuer, "aud": aud, "sub": sub, "iat": now, "exp": now + 900,
			"jti": jti, "by_tenant": "e2e", "by_branch": "main", "by_turn": turn, "by_grants": grants}
		if edit != nil {
			edit(c)
		}
		return c
	}
	out := map[string]string{
		"read":      authtest.Mint(key, turn("t-read", dfSub, "1", []any{grant("github", all, "read", false)}, nil)),
		"read2":     authtest.Mint(key, turn("t-read2", dfSub, "2", []any{grant("github", all, "read", false)}, nil)),
		"write":     authtest.Mint(key, turn("t-write", dfSub, "3", []any{grant("github", all, "write", true)}, nil)),
		"noconfirm": authtest.Mint(key, turn("t-noconfirm", dfSub, "4", []any{grant("github", all, "write", false)}, nil)),
		"narrow":    authtest.Mint(key, turn("t-narrow", dfSub, "5", []any{grant("github", []any{"issues.*", "github.comments.list"}, "read", false)}, nil)),
		"tracker":   authtest.Mint(key, turn("t-tracker", dfSub, "6", []any{grant("tracker", all, "read", false)}, nil)),
		"stranger":  authtest.Mint(key, turn("t-stranger", "local:nobody", "7", []any{grant("github", all, "write", true)}, nil)),
		"work":      authtest.Mint(key, turn("t-work", dfSub, "8", []any{map[string]any{"connector": "github", "operations": all, "mode": "read", "account": "work"}}, nil)),
		"expired": authtest.Mint(key, turn("t-expired", dfSub, "9", []any{grant("github", all, "read", false)}, func(c map[string]any) {
			c["iat"], c["exp"] = now-7200, now-3600
		})),
		"foreign": authtest.Mint(other, turn("t-foreign", dfSub, "10", []any{grant("github", all, "read", false)}, nil)),
		"connect": authtest.Mint(key, map[string]any{"iss": dfIssuer, "aud": aud, "sub": dfSub, "iat": now, "exp": now + 300,
			"jti": "c-1", "by_tenant": "e2e", "by_branch": "", "by_turn": "", "by_grants": []any{}, "by_purpose": "connect"}),
	}
	return out
}

// step is one request of the script.
type step struct {
	name    string
	method  string // default POST
	path    string
	token   string // a token name, "" for none, or "raw:<Authorization value>"
	ctype   string // default application/json; "-" for none
	body    string
	headers [][2]string
	// session names the MCP session to send (mcp-session-id), or, with
	// newSession, the name to record the answer's session id under.
	session    string
	newSession bool
}

func call(name, tool, token, body string, headers ...[2]string) step {
	return step{name: name, path: "/call/" + tool, token: token, body: body, headers: headers}
}

func rpc(name, session, token, method string, id int, params string) step {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	if id == 0 {
		body = fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params)
	}
	return step{name: name, path: "/mcp", token: token, body: body, session: session}
}

func initialize(name, session, token string) step {
	s := rpc(name, "", token, "initialize", 1, `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"differential","version":"1"}}`)
	s.session, s.newSession = session, true
	return s
}

func toolCall(name, session, token string, id int, tool, args, meta string) step {
	params := fmt.Sprintf(`{"name":%q,"arguments":%s`, tool, args)
	if meta != "" {
		params += `,"_meta":` + meta
	}
	return rpc(name, session, token, "tools/call", id, params+"}")
}

const (
	tList      = "github__github_list_issue"
	tGet       = "github__github_get_issue"
	tCreate    = "github__github_create_issue"
	tUpdate    = "github__github_update_issue"
	tComments  = "github__github_list_comment"
	tComment   = "github__github_create_comment"
	tUncomment = "github__github_delete_comment"
	tRelease   = "github__github_create_release"
	tRelUpdate = "github__github_update_release"
	tRelDelete = "github__github_delete_release"
	tTag       = "github__github_get_release"
	tPulls     = "github__github_list_pull"
)

// dfScript is the request script: every tool, refusals of every kind,
// effects, staging, idempotency conflicts, bad bodies and token failures,
// over REST and MCP.
func dfScript() []step {
	idem := func(k string) [2]string { return [2]string{"Idempotency-Key", k} }
	return []step{
		{name: "healthz", method: "GET", path: "/healthz", ctype: "-"},
		{name: "readyz", method: "GET", path: "/readyz", ctype: "-"},
		{name: "resource metadata", method: "GET", path: "/.well-known/oauth-protected-resource", ctype: "-"},
		{name: "unknown route", method: "GET", path: "/nope", ctype: "-"},
		{name: "connect with a turn token", path: "/connect/api-key", token: "read", body: `{"connector":"github","api_key":"x"}`},
		{name: "connect", path: "/connect/api-key", token: "connect", body: `{"connector":"github","api_key":"` + dfUpstream + `"}`},
		{name: "connect work account", path: "/connect/api-key", token: "connect", body: `{"connector":"github","account":"work","api_key":"wrong-pat"}`},
		{name: "connect status", method: "GET", path: "/connect/status", token: "connect", ctype: "-"},
		{name: "connect start static", path: "/connect/start", token: "connect", body: `{"connector":"github"}`},
		{name: "connect unknown connector", path: "/connect/start", token: "connect", body: `{"connector":"jira"}`},

		call("list issues", tList, "read", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("list open issues", tList, "read", `{"arguments":{"owner":"octo","repo":"hello","state":"open"}}`),
		call("list issues, bad enum", tList, "read", `{"arguments":{"owner":"octo","repo":"hello","state":"merged"}}`),
		call("list issues, null state", tList, "read", `{"arguments":{"owner":"octo","repo":"hello","state":null}}`),
		call("get issue", tGet, "read", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2}}`),
		call("get issue 1.0", tGet, "read", `{"arguments":{"owner":"octo","repo":"hello","issue_number":1.0}}`),
		call("get issue 1e2 (upstream 404)", tGet, "read", `{"arguments":{"owner":"octo","repo":"hello","issue_number":1e2}}`),
		call("get issue 1.5", tGet, "read", `{"arguments":{"owner":"octo","repo":"hello","issue_number":1.5}}`),
		call("get issue 1e400", tGet, "read", `{"arguments":{"owner":"octo","repo":"hello","issue_number":1e400}}`),
		call("get issue 2^63", tGet, "read", `{"arguments":{"owner":"octo","repo":"hello","issue_number":9223372036854775808}}`),
		call("get issue, number as string", tGet, "read", `{"arguments":{"owner":"octo","repo":"hello","issue_number":"2"}}`),
		call("get issue, escaped owner", tGet, "read", `{"arguments":{"owner":"oc\u0074o/x y","repo":"h\u00e9llo","issue_number":2}}`),
		call("get issue, duplicate key", tGet, "read", `{"arguments":{"owner":"x","owner":"octo","repo":"hello","issue_number":2}}`),
		call("get issue, empty owner", tGet, "read", `{"arguments":{"owner":"","repo":"hello","issue_number":2}}`),
		call("get issue, dot owner", tGet, "read", `{"arguments":{"owner":"..","repo":"hello","issue_number":2}}`),
		call("get issue, trailing data", tGet, "read", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2} }`),
		call("list comments", tComments, "read", `{"arguments":{"owner":"octo","repo":"hello","issue_number":1}}`),
		call("list pulls", tPulls, "read", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("tag not found", tTag, "read", `{"arguments":{"owner":"octo","repo":"hello","tag":"v0"}}`),
		call("owner is a number", tList, "read", `{"arguments":{"owner":1,"repo":"hello"}}`),
		call("unknown argument", tList, "read", `{"arguments":{"owner":"octo","repo":"hello","page":2}}`),
		call("empty body", tList, "read", ``),
		call("arguments not an object", tList, "read", `{"arguments":[1]}`),
		call("body not an object", tList, "read", `[1]`),
		call("stage not a boolean", tList, "read", `{"arguments":{},"stage":"yes"}`),
		call("two idempotency keys", tList, "read", `{"arguments":{}}`, idem("a"), idem("b")),
		call("unknown tool", "github__nope", "read", `{"arguments":{}}`),
		call("unknown tool without its prefix", "github_list_issue", "read", `{"arguments":{}}`),
		call("unknown tool, suggestions within the grant", "github_create_issu", "narrow", `{"arguments":{}}`),
		call("unknown top-level key", tList, "read", `{"arguments":{"owner":"octo","repo":"hello"},"state":"open"}`),
		{name: "GET /tools (read)", method: "GET", path: "/tools", token: "read", ctype: "-"},
		{name: "GET /tools (narrow)", method: "GET", path: "/tools", token: "narrow", ctype: "-"},
		{name: "GET /tools?search", method: "GET", path: "/tools?search=comment+on+an+issue&limit=3", token: "write", ctype: "-"},
		{name: "GET /tools?search, limit 99", method: "GET", path: "/tools?search=issue&limit=99", token: "write", ctype: "-"},
		{name: "GET /tools?bogus", method: "GET", path: "/tools?bogus=1", token: "read", ctype: "-"},
		{name: "GET /tools, no token", method: "GET", path: "/tools", ctype: "-"},
		call("bad tool name", "github%2Fnope", "read", `{"arguments":{}}`),
		{name: "call with GET", method: "GET", path: "/call/" + tList, token: "read", ctype: "-"},
		{name: "call as text/plain", path: "/call/" + tList, token: "read", ctype: "text/plain", body: `{}`},
		call("no token", tList, "", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("garbage token", tList, "raw:Bearer not.a.token", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("expired token", tList, "expired", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("foreign key", tList, "foreign", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("connect token on /call", tList, "connect", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("read grant creates an issue", tCreate, "read", `{"arguments":{"owner":"octo","repo":"hello","title":"x","confirm":true}}`),
		call("read grant deletes a release", tRelDelete, "read", `{"arguments":{"owner":"octo","repo":"hello","release_id":5,"confirm":true}}`),
		call("ungranted connector", tList, "tracker", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("narrow grant lists pulls", tPulls, "narrow", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("narrow grant lists issues", tList, "narrow", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("grant without confirm allow", tCreate, "noconfirm", `{"arguments":{"owner":"octo","repo":"hello","title":"x","confirm":true}}`),
		call("no connection", tList, "stranger", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("wrong key in the work account", tList, "work", `{"arguments":{"owner":"octo","repo":"hello"}}`),
		call("create issue without confirm", tCreate, "write", `{"arguments":{"owner":"octo","repo":"hello","title":"x"}}`),
		call("create issue, confirm false", tCreate, "write", `{"arguments":{"owner":"octo","repo":"hello","title":"x","confirm":false}}`),
		call("create issue, dry run", tCreate, "write", `{"arguments":{"owner":"octo","repo":"hello","title":"Bug","body":"<b>&</b>","confirm":true,"anvil_dry_run":true}}`),
		call("create issue", tCreate, "write", `{"arguments":{"owner":"octo","repo":"hello","title":"Bug: \"quotes\"\n","body":"øcto <b>","confirm":true}}`),
		call("compensate the issue", tUpdate, "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":3,"state":"closed","confirm":true}}`),
		call("update issue, bad state", tUpdate, "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":3,"state":"merged","confirm":true}}`),
		call("create comment", tComment, "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"Looks good."}}`, idem("01JLEDGER0001")),
		call("create comment again (same key)", tComment, "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"Looks good."}}`, idem("01JLEDGER0001")),
		call("create comment, key in arguments", tComment, "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"Hi","idempotency_key":"sdk-key-1"}}`),
		call("create comment, conflicting keys", tComment, "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"Hi","idempotency_key":"sdk-key-2"}}`, idem("01JLEDGER0002")),
		call("create comment, no key", tComment, "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":1,"body":"tab\there"}}`),
		call("delete comment without confirm", tUncomment, "write", `{"arguments":{"owner":"octo","repo":"hello","comment_id":100}}`),
		call("undo the comment", tUncomment, "write", `{"arguments":{"owner":"octo","repo":"hello","comment_id":100,"confirm":true}}`),
		call("undo it again (404)", tUncomment, "write", `{"arguments":{"owner":"octo","repo":"hello","comment_id":100,"confirm":true}}`),
		call("stage a comment (no draft form)", tComment, "write", `{"arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"x"},"stage":true}`),
		call("stage a release", tRelease, "write", `{"arguments":{"owner":"octo","repo":"hello","tag_name":"v1.0","name":"One","confirm":true},"stage":true}`, idem("01JLEDGER0003")),
		call("stage a release, dry run", tRelease, "write", `{"arguments":{"owner":"octo","repo":"hello","tag_name":"v1.1","confirm":true,"anvil_dry_run":true},"stage":true}`),
		call("stage a release, invalid", tRelease, "write", `{"arguments":{"owner":"octo","repo":"hello","tag_name":7,"confirm":true},"stage":true}`),
		call("stage a release without confirm", tRelease, "write", `{"arguments":{"owner":"octo","repo":"hello","tag_name":"v2"},"stage":true}`),
		call("stage a release, read grant", tRelease, "read", `{"arguments":{"owner":"octo","repo":"hello","tag_name":"v2","confirm":true},"stage":true}`),
		call("promote the release", tRelUpdate, "write", `{"arguments":{"owner":"octo","repo":"hello","release_id":500,"draft":false,"confirm":true}}`),
		call("look the release up", tTag, "write", `{"arguments":{"owner":"octo","repo":"hello","tag":"v1.0"}}`),
		call("create a release (irreversible)", tRelease, "write", `{"arguments":{"owner":"octo","repo":"hello","tag_name":"v3","body":"Notes","confirm":true}}`),
		call("create a release, failing upstream", tRelease, "write", `{"arguments":{"owner":"octo","repo":"hello","tag_name":"","confirm":true}}`),
		call("discard a release", tRelDelete, "write", `{"arguments":{"owner":"octo","repo":"hello","release_id":501,"confirm":true}}`),

		initialize("initialize", "s1", "read"),
		rpc("initialized", "s1", "read", "notifications/initialized", 0, `{}`),
		rpc("tools/list (read)", "s1", "read", "tools/list", 2, `{}`),
		toolCall("mcp list issues", "s1", "read", 3, tList, `{"owner":"octo","repo":"hello"}`, ""),
		toolCall("mcp get issue", "s1", "read", 4, tGet, `{"owner":"octo","repo":"hello","issue_number":1}`, ""),
		toolCall("mcp invalid arguments", "s1", "read", 5, tGet, `{"owner":"octo"}`, ""),
		toolCall("mcp refused create", "s1", "read", 6, tCreate, `{"owner":"octo","repo":"hello","title":"x","confirm":true}`, ""),
		toolCall("mcp unknown tool", "s1", "read", 7, "github__nope", `{}`, ""),
		rpc("session of another token", "s1", "read2", "tools/list", 8, `{}`),
		rpc("tools/list page after a cursor", "s1", "read", "tools/list", 20, `{"cursor":"YW52aWwtdG9vbHMtdjE6Z2l0aHViX19naXRodWJfbGlzdF9pc3N1ZQ"}`),
		rpc("tools/list bad cursor", "s1", "read", "tools/list", 21, `{"cursor":"nope"}`),
		toolCall("anvil_search", "s1", "read", 22, "anvil_search", `{"query":"list the issues of a repo","limit":3}`, ""),
		toolCall("anvil_search, unknown key", "s1", "read", 23, "anvil_search", `{"query":"x","max":3}`, ""),
		toolCall("anvil_describe", "s1", "read", 24, "anvil_describe", `{"names":["`+tGet+`"]}`, ""),
		toolCall("anvil_describe, hidden tool", "s1", "read", 25, "anvil_describe", `{"names":["`+tCreate+`"]}`, ""),
		toolCall("anvil_call list issues", "s1", "read", 26, "anvil_call", `{"name":"`+tList+`","arguments":{"owner":"octo","repo":"hello"}}`, ""),
		toolCall("anvil_call invalid arguments", "s1", "read", 27, "anvil_call", `{"name":"`+tGet+`","arguments":{"owner":"octo"}}`, ""),
		toolCall("anvil_call refused create", "s1", "read", 28, "anvil_call", `{"name":"`+tCreate+`","arguments":{"owner":"octo","repo":"hello","title":"x","confirm":true}}`, ""),
		toolCall("anvil_call unknown tool", "s1", "read", 29, "anvil_call", `{"name":"github__nope","arguments":{}}`, ""),
		toolCall("anvil_call tool without its prefix", "s1", "read", 30, "anvil_call", `{"name":"github_get_issue","arguments":{}}`, ""),
		{name: "mcp without a session", path: "/mcp", token: "read", body: `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}`},
		{name: "mcp connect token", path: "/mcp", token: "connect", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`},
		initialize("initialize (write)", "s2", "write"),
		rpc("initialized (write)", "s2", "write", "notifications/initialized", 0, `{}`),
		rpc("tools/list (write)", "s2", "write", "tools/list", 2, `{}`),
		toolCall("mcp comment with _meta key", "s2", "write", 3, tComment, `{"owner":"octo","repo":"hello","issue_number":2,"body":"via mcp"}`, `{"idempotency_key":"01JLEDGER0004"}`),
		toolCall("mcp stage a release", "s2", "write", 4, tRelease, `{"owner":"octo","repo":"hello","tag_name":"v4","confirm":true}`, `{"stage":true,"idempotency_key":"01JLEDGER0005"}`),
		toolCall("mcp stage not a boolean", "s2", "write", 5, tRelease, `{"owner":"octo","repo":"hello","tag_name":"v4","confirm":true}`, `{"stage":"yes"}`),
		toolCall("mcp key conflict", "s2", "write", 6, tComment, `{"owner":"octo","repo":"hello","issue_number":2,"body":"x","idempotency_key":"other"}`, `{"idempotency_key":"01JLEDGER0006"}`),
		toolCall("mcp create issue", "s2", "write", 7, tCreate, `{"owner":"octo","repo":"hello","title":"From MCP","confirm":true}`, ""),
		toolCall("mcp delete release (204)", "s2", "write", 8, tRelDelete, `{"owner":"octo","repo":"hello","release_id":502,"confirm":true}`, ""),
		toolCall("mcp dry run", "s2", "write", 9, tPulls, `{"owner":"octo","repo":"hello","anvil_dry_run":true}`, ""),
		toolCall("anvil_call comment with _meta key", "s2", "write", 10, "anvil_call", `{"name":"`+tComment+`","arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"via anvil_call"}}`, `{"idempotency_key":"01JLEDGER0007"}`),
		{name: "delete session", method: "DELETE", path: "/mcp", token: "write", session: "s2", ctype: "-"},
	}
}

var (
	reTrace   = regexp.MustCompile(`trace_[0-9a-f]{32}`)
	reSession = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	reAudit   = regexp.MustCompile(`"time":"[^"]*"|"latency_ms":[0-9]+|"trace_id":"[^"]*"|"prev":"[^"]*"`) // prev: the chain's link to a line that holds times too
	reISOTime = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z`)
)

// normalize blanks what legitimately differs between doors: trace and
// session ids, times of stored connections, the door's own and its mock's
// URLs.
func (d *door) normalize(s string) string {
	s = strings.ReplaceAll(s, d.mock.URL, "http://MOCK")
	s = strings.ReplaceAll(s, d.base, "http://GATEWAY")
	s = reTrace.ReplaceAllString(s, "trace_X")
	s = reISOTime.ReplaceAllString(s, "TIME")
	return reSession.ReplaceAllString(s, "SESSION")
}

// run plays the script and returns one transcript entry per step.
func (d *door) run(t testing.TB, script []step) []string {
	t.Helper()
	var out []string
	for _, s := range script {
		method := s.method
		if method == "" {
			method = "POST"
		}
		var body io.Reader
		if s.body != "" || method == "POST" {
			body = strings.NewReader(s.body)
		}
		req, err := http.NewRequest(method, d.base+s.path, body)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasPrefix(s.token, "raw:"):
			req.Header.Set("Authorization", strings.TrimPrefix(s.token, "raw:"))
		case s.token != "":
			req.Header.Set("Authorization", "Bearer "+d.tokens[s.token])
		}
		switch s.ctype {
		case "":
			req.Header.Set("Content-Type", "application/json")
		case "-":
		default:
			req.Header.Set("Content-Type", s.ctype)
		}
		if s.path == "/mcp" {
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			if !s.newSession && s.session != "" {
				req.Header.Set("Mcp-Session-Id", d.sessions[s.session])
			}
		}
		for _, h := range s.headers {
			req.Header.Add(h[0], h[1])
		}
		resp, err := d.client.Do(req)
		if err != nil {
			t.Fatalf("%s: %s: %v", d.name, s.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if s.newSession {
			d.sessions[s.session] = resp.Header.Get("Mcp-Session-Id")
		}
		var hs []string
		for _, h := range []string{"Content-Type", "Cache-Control", "X-Anvil-Effect", "Www-Authenticate", "Allow", "Mcp-Session-Id"} {
			if v := resp.Header.Values(h); len(v) > 0 {
				hs = append(hs, h+": "+strings.Join(v, " | "))
			}
		}
		out = append(out, d.normalize(fmt.Sprintf("## %s\n%d\n%s\n%s", s.name, resp.StatusCode, strings.Join(hs, "\n"), b)))
	}
	return out
}

// audit returns the door's audit lines without time, latency and trace id.
func (d *door) audit(t testing.TB) []string {
	b, err := os.ReadFile(d.auditFile)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		out = append(out, reAudit.ReplaceAllString(l, `"-"`))
	}
	return out
}

// upstream is what reached the door's mock, and the mock's final state.
func (d *door) upstream(t testing.TB) string {
	b, err := json.MarshalIndent(map[string]any{"requests": d.mock.Requests(), "state": d.mock.State()}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// compareDoors requires every transcript, audit log and upstream record of
// got to equal want's.
func compareDoors(t *testing.T, want, got *door, wantT, gotT []string) {
	t.Helper()
	if len(wantT) != len(gotT) {
		t.Fatalf("%s ran %d steps, %s %d", want.name, len(wantT), got.name, len(gotT))
	}
	bad := 0
	for i := range wantT {
		if wantT[i] != gotT[i] {
			bad++
			if bad <= 8 {
				t.Errorf("step %d differs between %s and %s (-%s +%s):\n%s", i, want.name, got.name, want.name, got.name, cmp.Diff(wantT[i], gotT[i]))
			}
		}
	}
	if diff := cmp.Diff(want.audit(t), got.audit(t)); diff != "" {
		t.Errorf("audit lines differ (-%s +%s):\n%s", want.name, got.name, diff)
	}
	if diff := cmp.Diff(want.upstream(t), got.upstream(t)); diff != "" {
		t.Errorf("upstream requests or state differ (-%s +%s):\n%s", want.name, got.name, diff)
	}
}

func TestDifferentialCompiledGateway(t *testing.T) {
	dir := t.TempDir()
	key, other := authtest.NewKey("df-key-1"), authtest.NewKey("df-key-1")
	jwks := filepath.Join(dir, "jwks.json")
	if err := authtest.WriteJWKS(jwks, key); err != nil {
		t.Fatal(err)
	}
	script := dfScript()
	if n := len(script); n < 40 {
		t.Fatalf("the script has %d requests; the issue asks for at least 40", n)
	}
	now := time.Now().Unix()
	play := func(d *door) []string {
		d.tokens = dfTokens(key, other, d.aud, now)
		return d.run(t, script)
	}

	generic := startInProcess(t, "generic", jwks, false)
	compiled := startInProcess(t, "compiled", jwks, true)
	gt, ct := play(generic), play(compiled)
	if p := os.Getenv("ANVIL_DIFF_DUMP"); p != "" {
		_ = os.WriteFile(p, []byte(strings.Join(gt, "\n\n")+"\n\n"+strings.Join(generic.audit(t), "\n")+"\n"+generic.upstream(t)), 0o644)
	}
	compareDoors(t, generic, compiled, gt, ct)
	if t.Failed() {
		return
	}
	// The script must reach the upstream and exercise every answer kind.
	all := strings.Join(gt, "\n")
	for _, want := range []string{"\n200\n", "\n400\n", "\n401\n", "\n403\n", "\n404\n", "\n405\n", "\n415\n", "\n422\n", "\n428\n",
		`"staged":{`, `"undo":{"kind":"inverse"`, `"undo":{"kind":"compensate"`, `"lookup":{`, "effect/idempotency_key_conflict",
		"effect/no_draft_form", "policy/grant_denied", "policy/grant_confirmation_required",
		"connector/not_connected", "anvil_dry_run", "-32602", "turn_token_required", "connect_token_required"} {
		if !strings.Contains(all, want) {
			t.Errorf("no step of the script produced %q", want)
		}
	}

	if testing.Short() {
		t.Skip("short: not building the generated binary")
	}
	bin := buildGenerated(t, t.TempDir())
	binary := startBinary(t, bin, jwks)
	compareDoors(t, generic, binary, gt, play(binary))
}
