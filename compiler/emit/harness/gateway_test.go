package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/anvil-dev/anvil/compiler/emit"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/air"
)

// toolCall is one tools/call the test gateway served.
type toolCall struct {
	Name   string
	Args   map[string]any
	Bearer string
}

// httpHit is one HTTP request the test gateway received.
type httpHit struct {
	Method     string
	RPC        string // JSON-RPC method of a POST
	Bearer     string
	Session    string
	Protocol   string
	UserAgent  string
	Accept     string
	ClientName string // clientInfo.name of an initialize
}

// testGateway is a real MCP server (the official Go SDK) standing in for the
// Anvil gateway: one tool per served operation, named <connector>__<tool>.
type testGateway struct {
	URL string

	mu    sync.Mutex
	calls []toolCall
	hits  []httpHit
	// reply, when set, answers a call instead of the defaults.
	reply func(name string, args map[string]any) *mcp.CallToolResult
}

func (g *testGateway) Calls() []toolCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]toolCall(nil), g.calls...)
}

func (g *testGateway) Hits() []httpHit {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]httpHit(nil), g.hits...)
}

func textResult(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	if m, ok := v.(map[string]any); ok {
		r.StructuredContent = m
	} else {
		r.StructuredContent = map[string]any{"result": v}
	}
	return r
}

func errorResult(code, message string, details map[string]any) *mcp.CallToolResult {
	env := map[string]any{"error": map[string]any{
		"code": code, "message": message, "retryable": false, "safe_to_retry": false,
		"operation": "github.issues.create", "trace_id": "trace_test_1", "details": details,
	}}
	b, _ := json.Marshal(env)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}},
		Meta: mcp.Meta{"effect": map[string]any{"class": "compensable", "operation": "github.issues.create",
			"idempotency_key": nil, "undo": nil, "deadline_ms": nil, "lookup": nil}}}
}

var mockIssues = []any{
	map[string]any{"number": 2, "title": "Second issue", "state": "open", "body": "Still open."},
	map[string]any{"number": 1, "title": "First issue", "state": "closed", "body": "Done."},
}

var mockPulls = []any{map[string]any{"number": 3, "title": "Fix the first issue", "state": "merged"}}

// defaultReply answers like the gateway would for github-mini.
func defaultReply(name string, args map[string]any) *mcp.CallToolResult {
	if args[air.DryRunKey] == true {
		plan := map[string]any{"operation": strings.TrimPrefix(name, "github__"), "method": "GET", "would_send": true}
		b, _ := json.Marshal(map[string]any{air.DryRunKey: plan})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}},
			StructuredContent: map[string]any{air.DryRunKey: plan}}
	}
	if i := strings.Index(name, "__"); i >= 0 {
		name = "github" + name[i:]
	}
	switch name {
	case "github__github_list_issue":
		r := textResult(mockIssues)
		r.Meta = mcp.Meta{"effect": map[string]any{"class": "read", "operation": "github.issues.list",
			"idempotency_key": nil, "undo": nil, "deadline_ms": nil, "lookup": nil}}
		return r
	case "github__github_list_pull":
		return textResult(mockPulls)
	case "github__github_create_comment":
		r := textResult(map[string]any{"id": 100, "body": args["body"]})
		r.Meta = mcp.Meta{"effect": map[string]any{"class": "reversible", "operation": "github.comments.create",
			"idempotency_key": args["idempotency_key"],
			"undo": map[string]any{"kind": "inverse", "operation": "github.comments.delete",
				"tool": "github__github_delete_comment", "arguments": map[string]any{"owner": args["owner"], "repo": args["repo"], "comment_id": 100}},
			"deadline_ms": nil, "lookup": nil}}
		return r
	case "github__github_create_issue":
		return errorResult("policy_denied", "The grant does not allow github.issues.create.",
			map[string]any{"code": "policy/grant_denied", "connector": "github", "rule": map[string]any{"index": 0, "connector": "github", "mode": "read"}})
	case "github__github_get_issue":
		return errorResult("not_found", "No such issue.", map[string]any{"code": "upstream/not_found"})
	}
	return textResult(map[string]any{"ok": true})
}

// startGateway serves doc's operations for connector. jsonResponse selects
// application/json answers; otherwise the SDK answers with text/event-stream.
func startGateway(t *testing.T, doc *air.Document, connector string, jsonResponse bool) *testGateway {
	t.Helper()
	g := &testGateway{}
	server := mcp.NewServer(&mcp.Implementation{Name: "anvil-test-gateway", Version: "1"}, nil)
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if !air.IsServed(op) {
			continue
		}
		schema, err := json.Marshal(op.Input.Schema)
		if err != nil {
			t.Fatal(err)
		}
		name := connector + "__" + op.MCP.ToolName
		server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(schema)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args := map[string]any{}
				if len(req.Params.Arguments) > 0 {
					if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
						return nil, err
					}
				}
				bearer := ""
				if req.Extra != nil && req.Extra.Header != nil {
					bearer = req.Extra.Header.Get("Authorization")
				}
				g.mu.Lock()
				g.calls = append(g.calls, toolCall{Name: req.Params.Name, Args: args, Bearer: bearer})
				reply := g.reply
				g.mu.Unlock()
				if reply != nil {
					if r := reply(req.Params.Name, args); r != nil {
						return r, nil
					}
				}
				return defaultReply(req.Params.Name, args), nil
			})
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := httpHit{Method: r.Method, Bearer: r.Header.Get("Authorization"), Session: r.Header.Get("Mcp-Session-Id"),
			Protocol: r.Header.Get("Mcp-Protocol-Version"), UserAgent: r.Header.Get("User-Agent"), Accept: r.Header.Get("Accept")}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					ClientInfo struct {
						Name string `json:"name"`
					} `json:"clientInfo"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &msg)
			h.RPC = msg.Method
			h.ClientName = msg.Params.ClientInfo.Name
		}
		g.mu.Lock()
		g.hits = append(g.hits, h)
		g.mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	g.URL = ts.URL + "/mcp"
	return g
}

// pkgDir renders github-mini once per test binary and writes it to a temp dir.
var (
	pkgOnce sync.Once
	pkgPath string
	pkgErr  error
)

func packageDir(t *testing.T) string {
	t.Helper()
	doc := githubMini(t)
	pkgOnce.Do(func() {
		tree, err := Render(emit.Connector{ID: "github", Doc: doc, BundleHash: testBundleHash})
		if err != nil {
			pkgErr = err
			return
		}
		dir, err := os.MkdirTemp("", "anvil-harness-test-")
		if err != nil {
			pkgErr = err
			return
		}
		pkgPath = filepath.Join(dir, "github")
		pkgErr = tree.WriteTo(pkgPath)
	})
	if pkgErr != nil {
		t.Fatalf("package: %v", pkgErr)
	}
	return pkgPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pkgPath != "" {
		os.RemoveAll(filepath.Dir(pkgPath))
	}
	os.Exit(code)
}

// tool finds a required program or fails the test.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is required for the harness tests and was not found on PATH", name)
	}
	return p
}

// tscPath is tools/ts's pinned TypeScript compiler; the test fails when it is missing.
func tscPath(t *testing.T) string {
	t.Helper()
	p := filepath.Join(repoRoot(), "tools", "ts", "node_modules", ".bin", "tsc")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("tsc not found at tools/ts/node_modules/.bin/tsc: run `npm ci --prefix tools/ts` first")
	}
	return p
}

func typeRoots() string {
	return filepath.Join(repoRoot(), "tools", "ts", "node_modules", "@types")
}

type runResult struct {
	Stdout, Stderr string
	Code           int
}

// run runs a program with exactly env (nothing inherited) and a deadline.
func run(t *testing.T, env []string, stdin string, name string, args ...string) runResult {
	t.Helper()
	return runFor(t, 60*time.Second, env, stdin, name, args...)
}

// runFor is run with a deadline of its own (a build).
func runFor(t *testing.T, limit time.Duration, env []string, stdin string, name string, args ...string) runResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", name, err)
		}
		code = ee.ExitCode()
	}
	return runResult{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(s)), &v); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, s)
	}
	return v
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func freePortURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/mcp"
}

func sortedCopy(l []string) []string {
	out := append([]string(nil), l...)
	sort.Strings(out)
	return out
}
