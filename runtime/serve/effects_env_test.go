package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
)

// The effect tests run github-mini through a live gateway: the real handler
// on a loopback listener in branchyard mode (file JWKS, vault, audit log),
// the Go mock upstream behind a recorder that also keeps request bodies, and
// the person's key connected through POST /connect/api-key with a connect
// token. Calls go over raw JSON-RPC on /mcp, the official MCP Go SDK client,
// and POST /call/<tool>.

const (
	effIssuer = "branchyard:local:effects-test"
	effSub    = "local:e2e-person"
	effPAT    = "e2e-upstream-pat"
	// effLedger is the ledger id of the seed's REST example.
	effLedger = "01JBRANCHYARDLEDGER00000001"
)

var (
	effWriteGrant = []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write", "confirm": "allow"}}
	effReadGrant  = []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read"}}
)

// effSeen is one request as it reached the upstream.
type effSeen struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// effEnv is a running gateway serving one github bundle, with its upstream.
type effEnv struct {
	t    *testing.T
	mock *mockupstream.Handler
	up   *httptest.Server
	g    *Gateway
	base string // http://127.0.0.1:<port>
	aud  string // base + "/mcp"
	gatewayFiles
	client *http.Client
	jti    atomic.Int64

	mu   sync.Mutex
	seen []effSeen
}

// effOptions adjust an environment.
type effOptions struct {
	// variant is a directory under testdata/effects; "" serves the base bundle.
	variant string
	// edit changes the AIR document before it is served.
	edit func(doc *air.Document)
	// apiKey is the key connected for the person; "" connects the mock's
	// token, "-" connects nothing.
	apiKey string
}

// newEffEnv starts the upstream and the gateway.
func newEffEnv(t *testing.T, o *effOptions) *effEnv {
	t.Helper()
	if o == nil {
		o = &effOptions{}
	}
	e := &effEnv{t: t, mock: mockupstream.NewHandler(mockupstream.Options{Token: effPAT})}
	e.up = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.seen = append(e.seen, effSeen{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body})
		e.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		e.mock.ServeHTTP(w, r)
	}))
	t.Cleanup(e.up.Close)

	dir := t.TempDir()
	src := effBaseBundle
	if o.variant != "" {
		src = filepath.Join(effDir, o.variant)
	}
	doc, err := air.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	doc.Service.Servers = []air.Server{{URL: e.up.URL}}
	if o.edit != nil {
		o.edit(doc)
	}
	ws := filepath.Join(dir, "workspace")
	writeAIR(t, filepath.Join(ws, "github"), doc)

	e.gatewayFiles = newGatewayFiles(t, dir, "yard-effects")
	ln, port, base := listenLoopback(t)
	e.base = base
	e.aud = e.base + "/mcp"
	g, err := NewFromDir(e.branchyardConfig(port, effIssuer, e.aud), ws, nil)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	e.g = g
	serveOn(t, ln, g.Handler())
	e.client = &http.Client{Timeout: 30 * time.Second}
	t.Cleanup(e.client.CloseIdleConnections)

	switch o.apiKey {
	case "-":
	case "":
		e.connect(effPAT)
	default:
		e.connect(o.apiKey)
	}
	return e
}

// turn mints a turn token for grants.
func (e *effEnv) turn(grants []any) string {
	return authtest.Mint(e.key, yardClaims(effIssuer, e.aud, effSub, fmt.Sprintf("effects-%d", e.jti.Add(1)), grants, false, 600))
}

// connect stores apiKey as the person's github connection.
func (e *effEnv) connect(apiKey string) {
	e.t.Helper()
	tok := authtest.Mint(e.key, yardClaims(effIssuer, e.aud, effSub, fmt.Sprintf("effects-connect-%d", e.jti.Add(1)), nil, true, 300))
	body, _ := json.Marshal(map[string]any{"connector": "github", "api_key": apiKey})
	a := e.do("POST", "/connect/api-key", tok, string(body), nil)
	if a.status != 200 {
		e.t.Fatalf("/connect/api-key: %d %s", a.status, a.body)
	}
}

// effAnswer is one HTTP answer from the gateway.
type effAnswer struct {
	status int
	header http.Header
	body   string
}

// effect is the X-Anvil-Effect header.
func (a effAnswer) effect() string { return a.header.Get("X-Anvil-Effect") }

func (e *effEnv) do(method, path, bearer, body string, header http.Header) effAnswer {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return effAnswer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// rest posts /call/<tool> with body, sending key as Idempotency-Key when set.
func (e *effEnv) rest(bearer, tool, body, key string) effAnswer {
	e.t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("Idempotency-Key", key)
	}
	return e.do("POST", "/call/"+tool, bearer, body, h)
}

// upstream returns the requests that reached the upstream, with bodies.
func (e *effEnv) upstream() []effSeen {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]effSeen(nil), e.seen...)
}

// effUpstreamSnapshot records what the upstream has seen so far, to prove
// a refused call added nothing.
type effUpstreamSnapshot struct {
	log  []mockupstream.Request
	seen int
}

func (e *effEnv) snapshot() effUpstreamSnapshot {
	return effUpstreamSnapshot{log: e.mock.Requests(), seen: len(e.upstream())}
}

// unchanged fails the test when the upstream saw anything since s.
func (e *effEnv) unchanged(s effUpstreamSnapshot, what string) {
	e.t.Helper()
	if now := e.mock.Requests(); len(now) != len(s.log) {
		e.t.Errorf("%s reached the upstream: the mock logged %v after %v", what, now[len(s.log):], s.log)
	}
	if n := len(e.upstream()); n != s.seen {
		e.t.Errorf("%s reached the upstream: %d new request(s)", what, n-s.seen)
	}
}

// audit reads the audit log: raw lines and decoded objects.
func (e *effEnv) audit() ([]string, []map[string]any) {
	e.t.Helper()
	b, err := os.ReadFile(e.auditFile)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	var raw []string
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := effDecode([]byte(line), &m); err != nil {
			e.t.Fatalf("audit line is not JSON: %q", line)
		}
		raw = append(raw, line)
		objs = append(objs, m)
	}
	return raw, objs
}

// lastAudit is the newest audit line.
func (e *effEnv) lastAudit() (string, map[string]any) {
	e.t.Helper()
	raw, objs := e.audit()
	if len(objs) == 0 {
		e.t.Fatal("the audit log is empty")
	}
	return raw[len(raw)-1], objs[len(objs)-1]
}

// effDecode decodes JSON keeping numbers as json.Number.
func effDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// effSession is a raw JSON-RPC MCP session.
type effSession struct {
	e      *effEnv
	bearer string
	id     string
	next   int
}

// mcp starts a raw MCP session for bearer.
func (e *effEnv) mcp(bearer string) *effSession {
	e.t.Helper()
	a := e.do("POST", "/mcp", bearer, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"effects-test","version":"1"}}}`, mcpHeaders("", ""))
	if a.status != 200 {
		e.t.Fatalf("initialize: %d %s", a.status, a.body)
	}
	s := &effSession{e: e, bearer: bearer, id: a.header.Get("Mcp-Session-Id"), next: 1}
	if s.id == "" {
		e.t.Fatal("initialize answered no Mcp-Session-Id")
	}
	if n := e.do("POST", "/mcp", bearer, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, mcpHeaders("", s.id)); n.status != 202 {
		e.t.Fatalf("notifications/initialized: %d %s", n.status, n.body)
	}
	e.t.Cleanup(func() { e.do("DELETE", "/mcp", bearer, "", mcpHeaders("", s.id)) })
	return s
}

// effRPC is one JSON-RPC answer, its result kept raw.
type effRPC struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpc sends one request and returns the answer with the given id.
func (s *effSession) rpc(method string, params any) effRPC {
	s.e.t.Helper()
	s.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.next, "method": method, "params": params})
	a := s.e.do("POST", "/mcp", s.bearer, string(b), mcpHeaders("", s.id))
	if a.status != 200 {
		s.e.t.Fatalf("%s: HTTP %d %s", method, a.status, a.body)
	}
	body := a.body
	if strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		var data []string
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "data:") {
				data = append(data, strings.TrimSpace(strings.TrimPrefix(line, "data:")))
			}
		}
		body = strings.Join(data, "\n")
	}
	var r effRPC
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		s.e.t.Fatalf("%s: the answer is not JSON-RPC: %q", method, a.body)
	}
	return r
}

// effResult is a tools/call result with its _meta.effect kept as the bytes
// the gateway wrote.
type effResult struct {
	Meta    map[string]json.RawMessage `json:"_meta"`
	IsError bool                       `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

// effect is the raw _meta.effect, or "" when there is none.
func (r effResult) effect() string { return string(r.Meta["effect"]) }

// text is the first text content.
func (r effResult) text() string {
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// envelope decodes the error envelope of an isError result.
func (r effResult) envelope(t *testing.T) map[string]any {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want an error result, got %s", r.text())
	}
	var env struct {
		Error map[string]any `json:"error"`
	}
	if err := effDecode([]byte(r.text()), &env); err != nil || env.Error == nil {
		t.Fatalf("error text is not an envelope: %q", r.text())
	}
	return env.Error
}

// call runs tools/call with arguments and _meta (nil: none).
func (s *effSession) call(name string, args any, meta map[string]any) effResult {
	s.e.t.Helper()
	params := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	r := s.rpc("tools/call", params)
	if r.Error != nil {
		s.e.t.Fatalf("tools/call %s: JSON-RPC error %d %s", name, r.Error.Code, r.Error.Message)
	}
	var res effResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		s.e.t.Fatalf("tools/call %s: %v in %s", name, err, r.Result)
	}
	return res
}

// sdk connects the official MCP Go SDK client with bearer.
func (e *effEnv) sdk(ctx context.Context, bearer string) *mcp.ClientSession {
	e.t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "effects-test-sdk", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             e.aud,
		HTTPClient:           &http.Client{Transport: &bearerTransport{token: bearer, base: http.DefaultTransport}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
	if err != nil {
		e.t.Fatalf("SDK connect: %v", err)
	}
	e.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// effFollowUp is a follow-up object of a report, its arguments kept raw so
// their order can be checked.
type effFollowUp struct {
	Kind      string          `json:"kind"`
	Operation string          `json:"operation"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	By        string          `json:"by"`
}

// effReport is a decoded effect report.
type effReport struct {
	Class           string       `json:"class"`
	Operation       string       `json:"operation"`
	IdempotencyKey  *string      `json:"idempotency_key"`
	Undo            *effFollowUp `json:"undo"`
	DeadlineMs      *int64       `json:"deadline_ms"`
	Lookup          *effFollowUp `json:"lookup"`
	Compensate      *effFollowUp `json:"compensate"`
	UndoUnavailable string       `json:"undo_unavailable"`
	Staged          *struct {
		DraftOperation string          `json:"draft_operation"`
		Handle         json.RawMessage `json:"handle"`
		Promote        *effFollowUp    `json:"promote"`
		Discard        *effFollowUp    `json:"discard"`
		Unavailable    string          `json:"unavailable"`
	} `json:"staged"`
}

func effParseReport(t *testing.T, s string) effReport {
	t.Helper()
	var r effReport
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("effect report %q: %v", s, err)
	}
	return r
}

// followArgs returns a follow-up's arguments plus confirm: true when its
// tool needs confirmation, as Branchyard sends them.
func (e *effEnv) followArgs(f *effFollowUp) map[string]any {
	e.t.Helper()
	var args map[string]any
	if err := effDecode(f.Arguments, &args); err != nil {
		e.t.Fatalf("follow-up arguments %s: %v", f.Arguments, err)
	}
	tool := e.g.Fleet().Tool(f.Tool)
	if tool == nil {
		e.t.Fatalf("follow-up tool %s is not served", f.Tool)
	}
	if ck := tool.Op.Input.Safety.ConfirmKey; tool.Op.Confirmation.Required && ck != "" {
		args[ck] = true
	}
	return args
}

// restBody is a /call body for args.
func restBody(t *testing.T, args map[string]any, stage bool) string {
	t.Helper()
	m := map[string]any{"arguments": args}
	if stage {
		m["stage"] = true
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// effDetails returns an envelope's details object.
func effDetails(env map[string]any) map[string]any {
	d, _ := env["details"].(map[string]any)
	return d
}

// effErrBody decodes a REST error body's envelope.
func effErrBody(t *testing.T, a effAnswer) map[string]any {
	t.Helper()
	var m struct {
		Error map[string]any `json:"error"`
	}
	if err := effDecode([]byte(a.body), &m); err != nil || m.Error == nil {
		t.Fatalf("body is not an error envelope (%d): %q", a.status, a.body)
	}
	return m.Error
}

// effReadReport is the exact report of an undeclared read or an
// undeclared mutation without lookup.
func effBareReport(class, op string) string {
	return `{"class":"` + class + `","operation":"` + op + `","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":null}`
}
