package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// pyDriver runs one scenario against the packaged Python SDK and prints a
// JSON object. "spy:<scenario>" first replaces os.environ with a mapping that
// records every key read and whether it was iterated.
const pyDriver = `
import collections.abc
import json
import os
import sys

steps = json.loads(sys.argv[1])
spy = None
if len(sys.argv) > 2 and sys.argv[2] == "spy":
    class Spy(collections.abc.MutableMapping):
        def __init__(self, data):
            self._data = dict(data)
            self.seen = []
            self.iterated = False
        def __getitem__(self, key):
            self.seen.append(key)
            return self._data[key]
        def __contains__(self, key):
            self.seen.append(key)
            return key in self._data
        def get(self, key, default=None):
            self.seen.append(key)
            return self._data.get(key, default)
        def __iter__(self):
            self.iterated = True
            return iter(self._data)
        def __len__(self):
            return len(self._data)
        def __setitem__(self, key, value):
            self._data[key] = value
        def __delitem__(self, key):
            del self._data[key]
        def copy(self):
            self.iterated = True
            return dict(self._data)
    spy = Spy(os.environ)
    os.environ = spy

from anvil_github import GithubClient, AnvilError


def err(e):
    return {
        "code": e.code,
        "message": e.message,
        "operation": e.operation,
        "trace_id": e.trace_id,
        "retryable": e.retryable,
        "safe_to_retry": e.safe_to_retry,
        "required_arguments": e.required_arguments,
        "details": e.details,
        "upstream": e.upstream,
    }


def step(spec):
    scenario = spec["scenario"]
    for key in spec.get("unset", []):
        os.environ.pop(key, None)
    for key, value in spec.get("set", {}).items():
        os.environ[key] = value
    out = {}
    try:
        c = GithubClient(gateway_url=spec.get("url"), token_file=spec.get("token_file"))
        out["transport"] = type(c._gateway).__name__
        out["connector"] = c._gateway.connector if c._gateway is not None else None
        if scenario == "list":
            out["result"] = c.list_issue(owner="octo", repo="hello")
            out["effect"] = c.last_effect
        elif scenario == "token_swap":
            out["first"] = c.list_pull(owner="octo", repo="hello")
            with open(spec["swap"], "w") as handle:
                handle.write("  tok-2\n")
            out["second"] = c.list_pull(owner="octo", repo="hello")
        elif scenario == "confirm_gate":
            c.create_issue(owner="octo", repo="hello", title="x")
        elif scenario == "dry_run":
            out["result"] = c.create_issue(owner="octo", repo="hello", title="x", confirm=True, dry_run=True)
            out["effect"] = c.last_effect
        elif scenario == "refused":
            c.create_issue(owner="octo", repo="hello", title="x", confirm=True)
        elif scenario == "comment":
            out["result"] = c.create_comment(owner="octo", repo="hello", issue_number=2, body="Looks good.")
            out["effect"] = c.last_effect
        elif scenario == "undo":
            c.create_comment(owner="octo", repo="hello", issue_number=2, body="Oops.")
            undo = c.last_effect["undo"]
            out["result"] = c.call(undo["tool"], undo["arguments"], confirm=True)
        elif scenario == "comment_key":
            out["result"] = c.create_comment(
                owner="octo", repo="hello", issue_number=2, body="Looks good.", idempotency_key="ledger-1"
            )
        elif scenario == "call_by_id":
            out["result"] = c.call("github.pulls.list", {"owner": "octo", "repo": "hello"})
        else:
            raise SystemExit("unknown scenario " + scenario)
    except AnvilError as e:
        out["error"] = err(e)
    return out


results = [step(spec) for spec in steps]
if spy is not None:
    results.append({"env_keys": sorted(set(spy.seen)), "env_iterated": spy.iterated})
print(json.dumps(results))
`

type pyEnv struct {
	dir       string
	tokenFile string
	driver    string
	python    string
}

func newPyEnv(t *testing.T) *pyEnv {
	t.Helper()
	e := &pyEnv{dir: t.TempDir(), python: tool(t, "python3")}
	e.tokenFile = filepath.Join(e.dir, "turn.token")
	writeFile(t, e.tokenFile, "tok-1\n")
	e.driver = filepath.Join(e.dir, "driver.py")
	writeFile(t, e.driver, pyDriver)
	return e
}

// env is the harness environment Branchyard sets, plus a wrong upstream token.
func (e *pyEnv) env(pkg, gatewayURL string, extra ...string) []string {
	out := []string{
		"PYTHONPATH=" + filepath.Join(pkg, "python"),
		"PYTHONDONTWRITEBYTECODE=1",
		"GITHUB_TOKEN=wrong-upstream-token",
		"ANVIL_DEFAULT_TOKEN=wrong-upstream-token",
		"ANVIL_GATEWAY_TOKEN_FILE=" + e.tokenFile,
	}
	if gatewayURL != "" {
		out = append(out, "ANVIL_GATEWAY_URL="+gatewayURL)
	}
	return append(out, extra...)
}

// step is one scenario for the driver; URL and TokenFile override the environment.
type step struct {
	Scenario  string            `json:"scenario"`
	URL       string            `json:"url,omitempty"`
	TokenFile string            `json:"token_file,omitempty"`
	Unset     []string          `json:"unset,omitempty"`
	Swap      string            `json:"swap,omitempty"`
	Set       map[string]string `json:"set,omitempty"`
}

// runSteps runs scenarios in one Python process and returns one result each.
func (e *pyEnv) runSteps(t *testing.T, env []string, steps []step, extra ...string) []map[string]any {
	t.Helper()
	r := run(t, env, "", e.python, append([]string{e.driver, jsonOf(steps)}, extra...)...)
	if r.Code != 0 {
		t.Fatalf("python exited %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	var out []map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.Stdout)), &out); err != nil {
		t.Fatalf("driver output: %v\n%s", err, r.Stdout)
	}
	return out
}

func (e *pyEnv) run(t *testing.T, env []string, scenario string) map[string]any {
	t.Helper()
	return e.runSteps(t, env, []step{{Scenario: scenario}})[0]
}

func errOf(t *testing.T, out map[string]any) map[string]any {
	t.Helper()
	e, ok := out["error"].(map[string]any)
	if !ok {
		t.Fatalf("expected an AnvilError, got %s", jsonOf(out))
	}
	return e
}

// wantSession checks the protocol of one SDK call: initialize,
// notifications/initialized and tools/call in one session, then DELETE.
func wantSession(t *testing.T, hits []httpHit, bearer, userAgent string) {
	t.Helper()
	if len(hits) != 4 {
		t.Fatalf("want 4 HTTP requests, got %d: %+v", len(hits), hits)
	}
	want := []string{"POST initialize", "POST notifications/initialized", "POST tools/call", "DELETE "}
	for i, h := range hits {
		if got := h.Method + " " + h.RPC; got != want[i] {
			t.Errorf("request %d = %q, want %q", i, got, want[i])
		}
		if h.Bearer != "Bearer "+bearer {
			t.Errorf("request %d bearer = %q", i, h.Bearer)
		}
		if h.UserAgent != userAgent {
			t.Errorf("request %d User-Agent = %q, want %q", i, h.UserAgent, userAgent)
		}
	}
	if hits[0].Accept != "application/json, text/event-stream" {
		t.Errorf("Accept = %q", hits[0].Accept)
	}
	if hits[0].ClientName != userAgent {
		t.Errorf("clientInfo.name = %q, want %q", hits[0].ClientName, userAgent)
	}
	if hits[0].Session != "" {
		t.Errorf("initialize carried a session id")
	}
	for _, h := range hits[1:] {
		if h.Session == "" || h.Session != hits[1].Session {
			t.Errorf("%s %s: session %q, want the initialize answer's", h.Method, h.RPC, h.Session)
		}
		if h.Protocol != "2025-06-18" {
			t.Errorf("%s %s: Mcp-Protocol-Version %q", h.Method, h.RPC, h.Protocol)
		}
	}
}

func TestPythonListsIssuesJSONAndSSE(t *testing.T) {
	t.Parallel()
	pkg := packageDir(t)
	e := newPyEnv(t)
	doc := githubMini(t)
	gJSON := startGateway(t, doc, "github", true)
	gSSE := startGateway(t, doc, "github", false)
	res := e.runSteps(t, e.env(pkg, gJSON.URL), []step{{Scenario: "list"}, {Scenario: "list", URL: gSSE.URL}})
	for i, g := range []*testGateway{gJSON, gSSE} {
		out := res[i]
		if out["transport"] != "GatewayTransport" || out["connector"] != "github" {
			t.Errorf("%d: transport %v connector %v", i, out["transport"], out["connector"])
		}
		if jsonOf(out["result"]) != jsonOf(mockIssues) {
			t.Errorf("%d: result = %s", i, jsonOf(out))
		}
		effect, _ := out["effect"].(map[string]any)
		if effect["class"] != "read" || effect["operation"] != "github.issues.list" {
			t.Errorf("%d: last_effect = %s", i, jsonOf(out["effect"]))
		}
		calls := g.Calls()
		if len(calls) != 1 || calls[0].Name != "github__github_list_issue" ||
			jsonOf(calls[0].Args) != `{"owner":"octo","repo":"hello"}` || calls[0].Bearer != "Bearer tok-1" {
			t.Errorf("%d: calls = %+v", i, calls)
		}
		wantSession(t, g.Hits(), "tok-1", "anvil-sdk (python)")
	}
}

func TestPythonTokenFileReadOnEveryCall(t *testing.T) {
	t.Parallel()
	pkg := packageDir(t)
	e := newPyEnv(t)
	g := startGateway(t, githubMini(t), "github", false)
	out := e.runSteps(t, e.env(pkg, g.URL), []step{{Scenario: "token_swap", Swap: e.tokenFile}})[0]
	if _, ok := out["error"]; ok {
		t.Fatalf("error: %s", jsonOf(out))
	}
	calls := g.Calls()
	if len(calls) != 2 || calls[0].Bearer != "Bearer tok-1" || calls[1].Bearer != "Bearer tok-2" {
		t.Fatalf("bearers = %+v", calls)
	}
	if jsonOf(out["second"]) != jsonOf(mockPulls) {
		t.Errorf("second = %s", jsonOf(out["second"]))
	}
}

func TestPythonReadsOnlyGatewayVariables(t *testing.T) {
	t.Parallel()
	pkg := packageDir(t)
	e := newPyEnv(t)
	g := startGateway(t, githubMini(t), "github", true)
	res := e.runSteps(t, e.env(pkg, g.URL), []step{{Scenario: "list"}}, "spy")
	if _, ok := res[0]["error"]; ok {
		t.Fatalf("error: %s", jsonOf(res[0]))
	}
	spy := res[1]
	if spy["env_iterated"] != false {
		t.Errorf("the SDK iterated os.environ (it would read every value, GITHUB_TOKEN included)")
	}
	proxies := map[string]bool{"https_proxy": true, "HTTPS_PROXY": true, "http_proxy": true, "HTTP_PROXY": true,
		"all_proxy": true, "ALL_PROXY": true, "no_proxy": true, "NO_PROXY": true}
	var gateway []string
	for _, k := range spy["env_keys"].([]any) {
		key := k.(string)
		switch {
		case strings.HasPrefix(key, "ANVIL_GATEWAY_"):
			gateway = append(gateway, key)
		case proxies[key]:
		default:
			t.Errorf("the SDK read %s; only ANVIL_GATEWAY_* (and proxy variables) may be read", key)
		}
	}
	if !reflect.DeepEqual(sortedCopy(gateway), []string{"ANVIL_GATEWAY_CONNECTOR", "ANVIL_GATEWAY_TOKEN_FILE", "ANVIL_GATEWAY_URL"}) {
		t.Errorf("gateway variables read = %v", gateway)
	}
	if c := g.Calls(); len(c) != 1 || c[0].Bearer != "Bearer tok-1" {
		t.Errorf("calls = %+v", c)
	}
}

// TestPythonLocalRefusalsSendNothing: the confirmation gate, a missing,
// unreadable or empty token, no token file for a gateway that is not on a
// loopback address, and a missing gateway URL all fail before any request.
func TestPythonLocalRefusalsSendNothing(t *testing.T) {
	t.Parallel()
	pkg := packageDir(t)
	e := newPyEnv(t)
	g := startGateway(t, githubMini(t), "github", true)
	empty := filepath.Join(e.dir, "empty.token")
	writeFile(t, empty, " \n")
	res := e.runSteps(t, e.env(pkg, g.URL), []step{
		{Scenario: "confirm_gate"},
		{Scenario: "list", TokenFile: filepath.Join(e.dir, "nope")},
		{Scenario: "list", TokenFile: empty},
		{Scenario: "list", TokenFile: e.dir},
		{Scenario: "list", Unset: []string{"ANVIL_GATEWAY_TOKEN_FILE"}, URL: "http://gateway.invalid/mcp"},
		{Scenario: "list", Unset: []string{"ANVIL_GATEWAY_URL"}},
	})
	er := errOf(t, res[0])
	if er["code"] != "confirmation_required" || jsonOf(er["required_arguments"]) != `["confirm"]` ||
		er["operation"] != "github.issues.create" {
		t.Errorf("confirmation gate: %s", jsonOf(er))
	}
	for i, name := range []string{"missing file", "empty file", "directory", "unset"} {
		if er := errOf(t, res[i+1]); er["code"] != "auth_required" {
			t.Errorf("%s: %s", name, jsonOf(er))
		}
	}
	last := res[5]
	if last["transport"] != "NoneType" {
		t.Errorf("without ANVIL_GATEWAY_URL transport = %v", last["transport"])
	}
	if er := errOf(t, last); er["code"] != "validation_error" || !strings.HasPrefix(er["message"].(string), "ANVIL_GATEWAY_URL is not set") {
		t.Errorf("no URL: %s", jsonOf(er))
	}
	if h := g.Hits(); len(h) != 0 {
		t.Errorf("the gateway saw %d request(s)", len(h))
	}
}

// TestPythonWrites: dry run, a refusal envelope, and idempotency keys.
func TestPythonWrites(t *testing.T) {
	t.Parallel()
	pkg := packageDir(t)
	e := newPyEnv(t)
	g := startGateway(t, githubMini(t), "github", false)
	res := e.runSteps(t, e.env(pkg, g.URL), []step{
		{Scenario: "dry_run"}, {Scenario: "refused"}, {Scenario: "comment"}, {Scenario: "comment_key"}, {Scenario: "undo"},
	})
	calls := g.Calls()
	if len(calls) != 6 {
		t.Fatalf("calls = %+v", calls)
	}

	// Dry run: anvil_dry_run is sent and the plan comes back.
	if jsonOf(res[0]["result"]) != `{"method":"GET","operation":"github_create_issue","would_send":true}` || res[0]["effect"] != nil {
		t.Errorf("dry run: %s", jsonOf(res[0]))
	}
	if jsonOf(calls[0].Args) != `{"anvil_dry_run":true,"confirm":true,"owner":"octo","repo":"hello","title":"x"}` {
		t.Errorf("dry run args = %s", jsonOf(calls[0].Args))
	}

	// A refusal keeps code, message, details and trace_id.
	er := errOf(t, res[1])
	details, _ := er["details"].(map[string]any)
	if er["code"] != "policy_denied" || er["trace_id"] != "trace_test_1" || details["code"] != "policy/grant_denied" ||
		jsonOf(details["rule"]) != `{"connector":"github","index":0,"mode":"read"}` ||
		er["message"] != "The grant does not allow github.issues.create." || er["retryable"] != false {
		t.Errorf("refusal: %s", jsonOf(er))
	}
	if jsonOf(calls[1].Args) != `{"confirm":true,"owner":"octo","repo":"hello","title":"x"}` {
		t.Errorf("refused args = %s", jsonOf(calls[1].Args))
	}

	// key_supported without a key: the SDK derives one.
	derived := "anvil-" + derivedCommentKey()
	if calls[2].Args["idempotency_key"] != derived {
		t.Errorf("want derived key %s, args = %s", derived, jsonOf(calls[2].Args))
	}
	effect, _ := res[2]["effect"].(map[string]any)
	undo, _ := effect["undo"].(map[string]any)
	if undo["tool"] != "github__github_delete_comment" || effect["idempotency_key"] != derived {
		t.Errorf("last_effect = %s", jsonOf(effect))
	}
	if calls[3].Args["idempotency_key"] != "ledger-1" {
		t.Errorf("explicit key: args = %s", jsonOf(calls[3].Args))
	}

	// The undo an effect report names is called by the tool name it gives.
	if res[4]["error"] != nil || calls[5].Name != "github__github_delete_comment" ||
		jsonOf(calls[5].Args) != `{"comment_id":100,"confirm":true,"owner":"octo","repo":"hello"}` {
		t.Errorf("undo: %s, call %s %s", jsonOf(res[4]), calls[5].Name, jsonOf(calls[5].Args))
	}
}

func TestPythonCallByIDAndConnectorOverride(t *testing.T) {
	t.Parallel()
	pkg := packageDir(t)
	e := newPyEnv(t)
	g := startGateway(t, githubMini(t), "gh_work", true)
	out := e.runSteps(t, e.env(pkg, g.URL, "ANVIL_GATEWAY_CONNECTOR=gh_work"), []step{{Scenario: "call_by_id"}})[0]
	if out["connector"] != "gh_work" || jsonOf(out["result"]) != jsonOf(mockPulls) {
		t.Errorf("out = %s", jsonOf(out))
	}
	if c := g.Calls(); len(c) != 1 || c[0].Name != "gh_work__github_list_pull" {
		t.Errorf("calls = %+v", c)
	}
}

func TestPythonTransportFailures(t *testing.T) {
	t.Parallel()
	pkg := packageDir(t)
	e := newPyEnv(t)
	steps := []step{{Scenario: "list", URL: freePortURL(t)}}
	statuses := []int{401, 403, 502}
	for _, status := range statuses {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"code":"turn_token_required","message":"Use the turn's token."}}`))
		}))
		defer srv.Close()
		steps = append(steps, step{Scenario: "list", URL: srv.URL + "/mcp"})
	}
	rpc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`))
	}))
	defer rpc.Close()
	steps = append(steps, step{Scenario: "list", URL: rpc.URL + "/mcp"})
	res := e.runSteps(t, e.env(pkg, ""), steps)

	er := errOf(t, res[0])
	if er["code"] != "upstream_unavailable" || er["message"] != "The Anvil gateway could not be reached." || er["retryable"] != true {
		t.Errorf("unreachable: %s", jsonOf(er))
	}
	if strings.Contains(jsonOf(er), "127.0.0.1") {
		t.Errorf("the error names the gateway URL: %s", jsonOf(er))
	}
	for i, code := range []string{"auth_required", "permission_denied", "upstream_unavailable"} {
		er := errOf(t, res[i+1])
		details, _ := er["details"].(map[string]any)
		if er["code"] != code || details["http_status"] != float64(statuses[i]) || er["retryable"] != (statuses[i] >= 500) ||
			details["code"] != "turn_token_required" {
			t.Errorf("HTTP %d: %s", statuses[i], jsonOf(er))
		}
	}
	if er := errOf(t, res[4]); er["code"] != "unsupported_operation" || er["message"] != "Method not found" {
		t.Errorf("JSON-RPC error: %s", jsonOf(er))
	}
}

func TestPythonHonoursHTTPProxy(t *testing.T) {
	t.Parallel()
	pkg := packageDir(t)
	e := newPyEnv(t)
	g := startGateway(t, githubMini(t), "github", true)
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.String())
		mu.Unlock()
		target, _ := url.Parse(r.URL.Scheme + "://" + r.URL.Host)
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	defer proxy.Close()
	res := e.runSteps(t, e.env(pkg, g.URL, "HTTP_PROXY="+proxy.URL), []step{
		{Scenario: "list"},
		{Scenario: "list", Set: map[string]string{"NO_PROXY": "localhost,127.0.0.1"}},
	})
	for i, out := range res {
		if _, ok := out["error"]; ok {
			t.Fatalf("%d: error: %s", i, jsonOf(out))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 4 || !strings.HasPrefix(seen[0], "POST "+g.URL) || !strings.HasPrefix(seen[3], "DELETE "+g.URL) {
		t.Errorf("the proxy saw %v; want the first call's 4 requests only (NO_PROXY exempts the second)", seen)
	}
	if len(g.Calls()) != 2 {
		t.Errorf("calls = %+v", g.Calls())
	}
}

// derivedCommentKey is the fingerprint both SDKs derive for the test comment
// (without the "anvil-" prefix).
func derivedCommentKey() string {
	canonical := `{"body":"Looks good.","issue_number":2,"owner":"octo","repo":"hello"}`
	sum := sha256.Sum256([]byte("github.comments.create\x00" + canonical))
	return hex.EncodeToString(sum[:])[:32]
}
