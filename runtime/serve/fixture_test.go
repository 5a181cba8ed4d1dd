package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/door/mcpdoor"
)

// The gateway tests serve the committed github-mini bundle
// (testdata/workspace/github, written by cmd/anvil's TestGatewayFixture)
// pointed at the Go mock upstream, on a real loopback listener through
// Gateway.Serve, in branchyard mode with a file JWKS, a vault and an audit
// log in t.TempDir().

const (
	fxIssuer    = "branchyard:local:gateway-test"
	fxSub       = "local:ada"
	fxUpstream  = "e2e-upstream-pat" // the mock's only accepted bearer
	fxFixtureWS = "testdata/workspace"
)

// fxReadGrant and fxWriteGrant are the by_grants of the usual turn tokens.
var (
	fxReadGrant  = []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read"}}
	fxWriteGrant = []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write", "confirm": "allow"}}
)

// fleetFixture is a running gateway with its mock upstream, keys and files.
type fleetFixture struct {
	t    testing.TB
	dir  string
	ws   string
	g    *Gateway
	base string // http://127.0.0.1:<port>
	aud  string // base + "/mcp"
	gatewayFiles
	mock   *mockupstream.Server
	logs   *syncBuffer
	client *http.Client
	jti    atomic.Int64
	// stop cancels Serve and waits for it (once).
	stop     func()
	stopOnce sync.Once
}

// fleetOptions adjust a fixture before the gateway starts.
type fleetOptions struct {
	// tracker adds a second bundle, "tracker" (tracker.tickets.list, read).
	tracker bool
	// noConnect leaves the person unconnected; by default the fixture
	// stores the mock's token through /connect/api-key.
	noConnect bool
	// edit changes the configuration before New.
	edit func(cfg *Config)
	// observe is the gateway's metrics and tracing (off by default).
	observe Observe
	// mcp tunes the MCP door (session limits and clock, the auto surface's
	// threshold).
	mcp mcpdoor.Options
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{} }

func (s *syncBuffer) logf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(&s.buf, format+"\n", args...)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// copyFixture copies testdata/workspace/github into ws/<name> with its
// server URL set to serverURL.
func copyFixture(t testing.TB, ws, name, serverURL string) {
	t.Helper()
	doc, err := air.Load(filepath.Join(fxFixtureWS, "github"))
	if err != nil {
		t.Fatal(err)
	}
	doc.Service.Servers = []air.Server{{URL: serverURL}}
	writeAIR(t, filepath.Join(ws, name), doc)
}

// writeAIR writes doc's bundle files into dir.
func writeAIR(t testing.TB, dir string, doc *air.Document) {
	t.Helper()
	if err := air.WriteBundle(dir, doc); err != nil {
		t.Fatal(err)
	}
}

// fxTrackerDoc is a one-operation read-only bundle, service "tracker",
// authenticated with a bearer like github.
func fxTrackerDoc(serverURL string) *air.Document {
	return trackerDocWith(serverURL, air.Auth{Type: "bearer", Scheme: "bearerAuth", Carrier: &air.Carrier{In: "header", Name: "Authorization", Scheme: "Bearer"}})
}

// trackerDocWith is the tracker bundle (tracker.tickets.list) at serverURL
// with its auth.
func trackerDocWith(serverURL string, a air.Auth) *air.Document {
	schema := &air.Schema{}
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"anvil_dry_run":{"type":"boolean"}},"additionalProperties":false}`), schema)
	return &air.Document{
		Schema:       air.SchemaVersion,
		AnvilVersion: air.AnvilVersion,
		Service: air.Service{
			ID: "tracker", Version: "1.0.0", DisplayName: "Tracker",
			Source:  air.Source{Kind: "openapi-3.1"},
			Auth:    a,
			Servers: []air.Server{{URL: serverURL}},
		},
		Operations: []air.Operation{{
			ID: "tracker.tickets.list", CanonicalName: "list_tickets", DisplayName: "List tickets",
			Tags:        []string{},
			SourceRef:   air.SourceRef{Kind: "openapi", Path: "/tickets", Method: "GET", OperationID: "listTickets"},
			Effect:      air.Effect{Kind: air.KindRead, Action: "list", Risk: "low", Reversible: true},
			Input:       air.Input{Params: []air.Param{}, Schema: schema, Safety: air.Safety{DryRun: air.DryRunKey}},
			Output:      air.Output{Status: 200, ContentType: "application/json"},
			Errors:      []air.ErrorCase{},
			Idempotency: air.Idempotency{Mode: air.IdemNatural, Mechanism: "none", KeyDerivation: "none"},
			Retries:     air.Retries{Mode: "safe", RetryOn: []string{}},
			CLI:         air.CLI{Command: "tracker tickets list", Aliases: []string{}},
			MCP:         air.MCP{ToolName: "tracker_list_tickets"},
			Skill:       air.Skill{IntentExamples: []string{}},
			State:       air.StateApproved,
			ReviewNotes: []string{},
		}},
		Capabilities: []air.Capability{},
		Workflows:    []air.Workflow{},
		Schemas:      map[string]*air.Schema{},
		Diagnostics:  []air.Diagnostic{},
	}
}

// writeVaultKey writes a fresh 64-hex-character key file with mode.
func writeVaultKey(t testing.TB, path string, mode os.FileMode) {
	t.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	if err := os.WriteFile(path, []byte(hex.EncodeToString(k)), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// gatewayFiles are what a branchyard gateway in the tests reads: the JWKS
// of the key that signs its tokens, a vault key file, the vault directory
// and the audit log. Every in-package gateway fixture starts from them.
type gatewayFiles struct {
	key       authtest.Key
	jwks      string
	keyFile   string
	vaultDir  string
	auditFile string
}

// newGatewayFiles writes the JWKS of a new signing key kid and a fresh
// vault key into dir.
func newGatewayFiles(t testing.TB, dir, kid string) gatewayFiles {
	t.Helper()
	g := gatewayFiles{key: authtest.NewKey(kid), jwks: filepath.Join(dir, "jwks.json"), keyFile: filepath.Join(dir, "vault.key"),
		vaultDir: filepath.Join(dir, "vault"), auditFile: filepath.Join(dir, "audit.jsonl")}
	if err := authtest.WriteJWKS(g.jwks, g.key); err != nil {
		t.Fatal(err)
	}
	writeVaultKey(t, g.keyFile, 0o600)
	return g
}

// branchyardConfig is a complete branchyard configuration for the files on
// 127.0.0.1:port, trusting tokens of issuer for aud, with no environment.
func (g gatewayFiles) branchyardConfig(port int, issuer, aud string) Config {
	return Config{
		Host: "127.0.0.1", Port: port,
		Auth: auth.Config{Mode: auth.ModeBranchyard, Issuer: issuer, Audience: aud,
			JWKSURI: "file://" + g.jwks, Leeway: auth.DefaultLeeway},
		VaultKeyFile: g.keyFile, VaultDir: g.vaultDir, AuditFile: g.auditFile, AllowedHosts: "127.0.0.1",
		Getenv: func(string) string { return "" },
	}
}

// listenLoopback listens on a free loopback port; base is its http URL.
func listenLoopback(t testing.TB) (ln net.Listener, port int, base string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln, ln.Addr().(*net.TCPAddr).Port, "http://" + ln.Addr().String()
}

// serveOn serves h on ln until the test ends.
func serveOn(t testing.TB, ln net.Listener, h http.Handler) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
}

// yardClaims are a Branchyard token's claims: a turn token for grants, or
// with connect a connect token (no branch, turn or grants), valid from now
// for ttl seconds.
func yardClaims(iss, aud, sub, jti string, grants []any, connect bool, ttl int64) map[string]any {
	now := time.Now().Unix()
	c := map[string]any{"iss": iss, "aud": aud, "sub": sub, "iat": now, "exp": now + ttl, "jti": jti, "by_tenant": "e2e"}
	if connect {
		c["by_branch"], c["by_turn"], c["by_grants"], c["by_purpose"] = "", "", []any{}, "connect"
	} else {
		c["by_branch"], c["by_turn"], c["by_grants"] = "main", "1", grants
	}
	return c
}

// config is the fixture's branchyard configuration on port.
func (f *fleetFixture) config(port int) Config {
	return f.branchyardConfig(port, fxIssuer, f.aud)
}

// newFleetFixture starts a mock upstream and a gateway serving github (and
// tracker) in branchyard mode, and connects the person unless told not to.
func newFleetFixture(t testing.TB, o *fleetOptions) *fleetFixture {
	t.Helper()
	if o == nil {
		o = &fleetOptions{}
	}
	mock, err := mockupstream.Start(mockupstream.Options{Token: fxUpstream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	dir := t.TempDir()
	f := &fleetFixture{t: t, dir: dir, ws: filepath.Join(dir, "workspace"), mock: mock,
		gatewayFiles: newGatewayFiles(t, dir, "by-testkey0001"), logs: newSyncBuffer()}
	copyFixture(t, f.ws, "github", mock.URL)
	if o.tracker {
		writeAIR(t, filepath.Join(f.ws, "tracker"), fxTrackerDoc(mock.URL))
	}

	ln, port, base := listenLoopback(t)
	f.base = base
	f.aud = f.base + "/mcp"
	cfg := f.config(port)
	if o.edit != nil {
		o.edit(&cfg)
	}
	g, err := NewFromDir(cfg, f.ws, &GatewayOptions{Logf: f.logs.logf, Observe: o.observe, MCP: o.mcp})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	f.g = g
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx, ln) }()
	f.stop = func() {
		f.stopOnce.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(30 * time.Second): // a hang guard: Serve closes what is left after shutdownGrace
				t.Error("Serve hung: it did not return within 30 s of cancel")
			}
		})
	}
	t.Cleanup(func() { f.stop() })
	f.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(f.client.CloseIdleConnections)
	if !o.noConnect {
		f.connectKey("github", "", fxUpstream)
	}
	return f
}

// claims returns a turn token's claims for grants.
func (f *fleetFixture) claims(grants []any) map[string]any {
	return yardClaims(fxIssuer, f.aud, fxSub, fmt.Sprintf("jti-%d-%s", f.jti.Add(1), randHex(8)), grants, false, 600)
}

// turn mints a turn token for grants.
func (f *fleetFixture) turn(grants []any) string { return authtest.Mint(f.key, f.claims(grants)) }

// turnWith mints a turn token for grants with claims changed by edit.
func (f *fleetFixture) turnWith(grants []any, edit func(map[string]any)) string {
	c := f.claims(grants)
	edit(c)
	return authtest.Mint(f.key, c)
}

// connectToken mints the person's connect token.
func (f *fleetFixture) connectToken() string {
	return authtest.Mint(f.key, yardClaims(fxIssuer, f.aud, fxSub, "connect-"+randHex(8), nil, true, 300))
}

// connectKey stores a key connection for the fixture's person.
func (f *fleetFixture) connectKey(connector, account, key string) {
	f.t.Helper()
	body := map[string]any{"connector": connector, "api_key": key}
	if account != "" {
		body["account"] = account
	}
	b, _ := json.Marshal(body)
	resp := f.do("POST", "/connect/api-key", f.connectToken(), "application/json", string(b), nil)
	if resp.status != 200 {
		f.t.Fatalf("/connect/api-key: %d %s", resp.status, resp.body)
	}
}

// answer is a read HTTP response.
type answer struct {
	status int
	header http.Header
	body   string
}

// json decodes the body (numbers as json.Number).
func (a answer) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(a.body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("body is not a JSON object (%d): %q", a.status, a.body)
	}
	return m
}

// errCode returns error.code of an envelope body, or "".
func (a answer) errCode() string {
	var m struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(a.body), &m)
	return m.Error.Code
}

// do sends one request to the gateway.
func (f *fleetFixture) do(method, path, bearer, contentType, body string, header http.Header) answer {
	f.t.Helper()
	req, err := http.NewRequest(method, f.base+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// doHost is do with the Host header taken from header["Host"], if any.
func (f *fleetFixture) doHost(method, path, bearer, contentType, body string, header http.Header) answer {
	f.t.Helper()
	host := header.Get("Host")
	if host == "" {
		return f.do(method, path, bearer, contentType, body, header)
	}
	header = header.Clone()
	header.Del("Host")
	req, err := http.NewRequest(method, f.base+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Host = host
	req.Header = header
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", contentType)
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// call posts /call/<tool> with a JSON body.
func (f *fleetFixture) call(bearer, tool, body string, header http.Header) answer {
	f.t.Helper()
	return f.do("POST", "/call/"+tool, bearer, "application/json", body, header)
}

// mcpSession is a raw JSON-RPC session on /mcp.
type mcpSession struct {
	f      *fleetFixture
	bearer string
	id     string
	next   int
}

// mcpHeaders are the headers the harness SDKs send.
func mcpHeaders(bearer, session string) http.Header {
	h := http.Header{}
	h.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		h.Set("Mcp-Session-Id", session)
		h.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return h
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gateway-test","version":"1"}}}`

// rawInitialize starts a raw session, failing the test unless it works.
func (f *fleetFixture) rawInitialize(bearer string) *mcpSession {
	f.t.Helper()
	a := f.do("POST", "/mcp", bearer, "application/json", initializeBody, mcpHeaders(bearer, ""))
	if a.status != 200 {
		f.t.Fatalf("initialize: %d %s", a.status, a.body)
	}
	sid := a.header.Get("Mcp-Session-Id")
	if sid == "" {
		f.t.Fatalf("initialize answered no Mcp-Session-Id")
	}
	s := &mcpSession{f: f, bearer: bearer, id: sid, next: 2}
	n := f.do("POST", "/mcp", bearer, "application/json", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, mcpHeaders(bearer, sid))
	if n.status != 202 {
		f.t.Fatalf("notifications/initialized: %d %s", n.status, n.body)
	}
	return s
}

// rpc sends one request and returns the JSON-RPC answer with the HTTP status.
func (s *mcpSession) rpc(method string, params any) (answer, map[string]any) {
	s.f.t.Helper()
	s.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.next, "method": method, "params": params})
	a := s.f.do("POST", "/mcp", s.bearer, "application/json", string(b), mcpHeaders(s.bearer, s.id))
	if a.status != 200 {
		return a, nil
	}
	return a, findRPCAnswer(s.f.t, a, s.next)
}

// findRPCAnswer finds the JSON-RPC answer with id in a JSON or SSE body.
func findRPCAnswer(t testing.TB, a answer, id int) map[string]any {
	t.Helper()
	var bodies []string
	if strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(strings.NewReader(a.body))
		var data []string
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "data:") {
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			} else if line == "" && len(data) > 0 {
				bodies = append(bodies, strings.Join(data, "\n"))
				data = nil
			}
		}
		if len(data) > 0 {
			bodies = append(bodies, strings.Join(data, "\n"))
		}
	} else {
		bodies = []string{a.body}
	}
	for _, b := range bodies {
		dec := json.NewDecoder(strings.NewReader(b))
		dec.UseNumber()
		var m map[string]any
		if dec.Decode(&m) != nil {
			continue
		}
		if n, ok := m["id"].(json.Number); ok && n.String() == itoa(id) {
			return m
		}
	}
	t.Fatalf("no JSON-RPC answer with id %d in %q", id, a.body)
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }

// randHex returns n random bytes in hex.
func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// callTool runs tools/call and returns the result object.
func (s *mcpSession) callTool(name string, args map[string]any, meta map[string]any) map[string]any {
	s.f.t.Helper()
	params := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	a, msg := s.rpc("tools/call", params)
	if msg == nil {
		s.f.t.Fatalf("tools/call %s: HTTP %d %s", name, a.status, a.body)
	}
	res, ok := msg["result"].(map[string]any)
	if !ok {
		s.f.t.Fatalf("tools/call %s: no result: %v", name, msg)
	}
	return res
}

// toolNames lists tools/list's names.
func (s *mcpSession) toolNames() []string {
	s.f.t.Helper()
	_, msg := s.rpc("tools/list", map[string]any{})
	if msg == nil {
		s.f.t.Fatal("tools/list failed")
	}
	res, _ := msg["result"].(map[string]any)
	tools, _ := res["tools"].([]any)
	var names []string
	for _, t := range tools {
		m, _ := t.(map[string]any)
		n, _ := m["name"].(string)
		names = append(names, n)
	}
	return names
}

// close sends DELETE for the session.
func (s *mcpSession) close() answer {
	return s.f.do("DELETE", "/mcp", s.bearer, "", "", mcpHeaders(s.bearer, s.id))
}

// toolError parses the envelope of an isError result.
func toolError(t testing.TB, res map[string]any) map[string]any {
	t.Helper()
	if res["isError"] != true {
		t.Fatalf("want isError, got %v", res)
	}
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("error result without content: %v", res)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	var env struct {
		Error map[string]any `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil || env.Error == nil {
		t.Fatalf("error text is not an envelope: %q", text)
	}
	return env.Error
}

// bearerTransport adds Authorization: Bearer to every request.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// sdkSession connects the official MCP Go SDK client with bearer.
func (f *fleetFixture) sdkSession(ctx context.Context, bearer string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test-sdk", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint:             f.aud,
		HTTPClient:           &http.Client{Transport: &bearerTransport{token: bearer, base: f.client.Transport}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	return client.Connect(ctx, tr, nil)
}

// auditLines reads the audit log: raw lines and decoded objects.
func (f *fleetFixture) auditLines() ([]string, []map[string]any) {
	f.t.Helper()
	b, err := os.ReadFile(f.auditFile)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		f.t.Fatalf("audit log does not end in a newline")
	}
	var raw []string
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			f.t.Fatalf("audit line is not JSON: %q", line)
		}
		raw = append(raw, line)
		objs = append(objs, m)
	}
	return raw, objs
}

// vaultSnapshot lists the vault directory's files with their contents.
func (f *fleetFixture) vaultSnapshot() map[string]string {
	f.t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(f.vaultDir)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		f.t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(f.vaultDir, e.Name()))
		if err != nil {
			f.t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// upstreamCount is the number of requests the mock has served.
func (f *fleetFixture) upstreamCount() int { return len(f.mock.Requests()) }
