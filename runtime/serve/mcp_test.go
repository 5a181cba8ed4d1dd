package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/door/mcpdoor"
)

func rpcErrorBody(code int, msg string) string {
	return rpcErrorBodyID(code, msg, "null")
}

// rpcErrorBodyID is the gateway's own JSON-RPC error, echoing the request's id.
func rpcErrorBodyID(code int, msg, id string) string {
	return `{"jsonrpc":"2.0","error":{"code":` + itoa(code) + `,"message":` + string(mustJSON(msg)) + `},"id":` + id + `}`
}

const sessionNotFound = "Session not found; send initialize to start a new one."

func TestMCPLimits(t *testing.T) {
	var skew atomic.Int64 // the sessions' clock runs this far ahead
	f := newFleetFixture(t, &fleetOptions{noConnect: true, mcp: mcpdoor.Options{
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }}})
	tok := f.turn(fxReadGrant)
	h := mcpHeaders(tok, "")
	listBody := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`

	cases := []struct {
		name, method, ctype, body string
		session                   string
		status                    int
		want                      string // exact body, or a -code prefix check when it starts with "-"
	}{
		{"wrong content type", "POST", "text/plain", initializeBody, "", 415, rpcErrorBody(-32600, "Content-Type must be application/json.")},
		{"no content type", "POST", "", initializeBody, "", 415, rpcErrorBody(-32600, "Content-Type must be application/json.")},
		{"malformed JSON", "POST", "application/json", `{"jsonrpc":`, "", 400, "-32600"},
		{"empty body", "POST", "application/json", ``, "", 400, "-32600"},
		{"a JSON string", "POST", "application/json", `"initialize"`, "", 400, "-32600"},
		{"an empty batch", "POST", "application/json", `[]`, "", 400, "-32600"},
		{"body over 1 MiB", "POST", "application/json", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("x", mcpdoor.MaxMCPBody) + `"}}`, "", 413, "-32600"},
		{"no session", "POST", "application/json", listBody, "", 400, rpcErrorBodyID(-32000, "No valid session; send initialize first.", "2")},
		{"unknown session", "POST", "application/json", listBody, "5a0c5a53-5b2c-4b8e-9a57-8f1f2e4ad1b0", 404, rpcErrorBodyID(-32001, sessionNotFound, "2")},
		{"GET without a session", "GET", "", ``, "", 400, rpcErrorBody(-32000, "No valid session; send initialize first.")},
		{"DELETE without a session", "DELETE", "", ``, "", 400, rpcErrorBody(-32000, "No valid session; send initialize first.")},
		{"PUT", "PUT", "application/json", `{}`, "", 405, "-32000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hh := h.Clone()
			if c.session != "" {
				hh = mcpHeaders(tok, c.session)
			}
			a := f.do(c.method, "/mcp", tok, c.ctype, c.body, hh)
			if a.status != c.status {
				t.Fatalf("status %d, want %d: %s", a.status, c.status, a.body)
			}
			if strings.HasPrefix(c.want, "-") {
				if !strings.HasPrefix(a.body, `{"jsonrpc":"2.0","error":{"code":`+c.want+`,"message":"`) || !strings.HasSuffix(a.body, `"},"id":null}`) {
					t.Errorf("body %s", a.body)
				}
			} else if a.body != c.want {
				t.Errorf("body\n got %s\nwant %s", a.body, c.want)
			}
			if ct := a.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
		})
	}

	t.Run("a body of exactly 1 MiB is read", func(t *testing.T) {
		body := initializeBody + strings.Repeat(" ", mcpdoor.MaxMCPBody-len(initializeBody))
		a := f.do("POST", "/mcp", tok, "application/json", body, h)
		if a.status != 200 {
			t.Fatalf("1 MiB initialize: %d %s", a.status, a.body)
		}
		f.do("DELETE", "/mcp", tok, "", "", mcpHeaders(tok, a.header.Get("Mcp-Session-Id")))
	})

	t.Run("sessions: ids, DELETE, the limit of 100 and idle expiry", func(t *testing.T) {
		uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
		var sessions []*mcpSession
		for i := 0; i < mcpdoor.MaxSessions; i++ {
			// As many subjects as it takes: one holds at most mcpdoor.MaxSessionsPerSubject.
			s := f.rawInitialize(f.turnWith(fxReadGrant, func(c map[string]any) { c["sub"] = fmt.Sprintf("local:p%d", i/mcpdoor.MaxSessionsPerSubject) }))
			if !uuid.MatchString(s.id) {
				t.Fatalf("session id %q is not a random UUID", s.id)
			}
			sessions = append(sessions, s)
		}
		a := f.initialize(tok)
		if a.status != 503 || a.body != rpcErrorBodyID(-32000, "Too many MCP sessions; try again later.", "1") || a.header.Get("Retry-After") == "" {
			t.Fatalf("session %d: %d %s (Retry-After %q)", mcpdoor.MaxSessions+1, a.status, a.body, a.header.Get("Retry-After"))
		}
		// DELETE frees a place; the deleted session is gone.
		if d := sessions[0].close(); d.status != 204 {
			t.Fatalf("DELETE: %d %s", d.status, d.body)
		}
		a, _ = sessions[0].rpc("tools/list", map[string]any{})
		if a.status != 404 || !strings.Contains(a.body, sessionNotFound) {
			t.Errorf("a deleted session: %d %s", a.status, a.body)
		}
		sessions[0] = f.rawInitialize(tok)
		if a := f.initialize(tok); a.status != 503 {
			t.Fatalf("full again: %d", a.status)
		}
		// Idle sessions expire after mcpdoor.SessionIdleTime.
		skew.Store(int64(mcpdoor.SessionIdleTime + time.Minute))
		defer skew.Store(0)
		s := f.rawInitialize(tok)
		a, _ = sessions[1].rpc("tools/list", map[string]any{})
		if a.status != 404 {
			t.Errorf("an expired session: %d %s", a.status, a.body)
		}
		if names := s.toolNames(); len(names) != 5 {
			t.Errorf("the new session lists %v", names)
		}
		s.close()
	})
}

// TestMCPAnswersAreCompleteJSON: every POST answer is one JSON document that
// ends with the response (never an SSE stream left open), so a proxy that
// reads the whole answer finishes at once.
func TestMCPAnswersAreCompleteJSON(t *testing.T) {
	f := newFleetFixture(t, nil)
	s := f.rawInitialize(f.turn(fxReadGrant))
	defer s.close()
	for _, m := range []struct {
		method string
		params any
	}{
		{"tools/list", map[string]any{}},
		{"tools/call", map[string]any{"name": "github__github_list_issue", "arguments": map[string]any{"owner": "o", "repo": "r"}}},
		{"ping", map[string]any{}},
	} {
		a, msg := s.rpc(m.method, m.params)
		if a.status != 200 || msg == nil {
			t.Fatalf("%s: %d %s", m.method, a.status, a.body)
		}
		if ct := a.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: content type %q", m.method, ct)
		}
		if te := a.header.Get("Transfer-Encoding"); strings.Contains(te, "event") {
			t.Errorf("%s: transfer encoding %q", m.method, te)
		}
		var v any
		if dec := json.NewDecoder(strings.NewReader(a.body)); dec.Decode(&v) != nil || dec.More() {
			t.Errorf("%s: the answer is not exactly one JSON document: %q", m.method, a.body)
		}
	}
}

// TestMCPOfficialSDKClient drives the gateway with the official Go SDK.
func TestMCPOfficialSDKClient(t *testing.T) {
	f := newFleetFixture(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := f.sdkSession(ctx, f.turn(fxWriteGrant))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v == "" {
		t.Error("no protocol version negotiated")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_create_comment",
		Arguments: map[string]any{"owner": "octo", "repo": "hello", "issue_number": 2, "body": "via the SDK"},
		Meta:      mcp.Meta{"idempotency_key": "01JSDKLEDGER0000000000001"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("create: %v", res.Content)
	}
	rep, _ := res.Meta["effect"].(map[string]any)
	undo, _ := rep["undo"].(map[string]any)
	if rep["class"] != "reversible" || rep["idempotency_key"] != "01JSDKLEDGER0000000000001" || undo["tool"] != "github__github_delete_comment" {
		t.Errorf("_meta.effect: %v", res.Meta)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	if sc["body"] != "via the SDK" {
		t.Errorf("structuredContent: %v", res.StructuredContent)
	}
	if reqs := f.mock.Requests(); len(reqs) != 1 || reqs[0].IdempotencyKey != "01JSDKLEDGER0000000000001" {
		t.Errorf("upstream: %+v", reqs)
	}

	// A read answered as a list is wrapped in {result: …}.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_list_pull", Arguments: map[string]any{"owner": "o", "repo": "r"}})
	if err != nil || res.IsError {
		t.Fatalf("list pulls: %v %v", err, res)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["result"] == nil {
		t.Errorf("structuredContent: %v", res.StructuredContent)
	}

	// An argument-schema failure is JSON-RPC -32602.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_list_pull", Arguments: map[string]any{"owner": 1, "repo": "r"}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(string(je.Data), `"code":"validation_error"`) {
		t.Errorf("schema failure: %v", err)
	}

	// An unknown tool is a JSON-RPC error too, and never audited.
	_, before := f.auditLines()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__nope", Arguments: map[string]any{}}); err == nil {
		t.Error("unknown tool: no error")
	}
	// A name without its connector prefix is answered with the tool meant.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "github_list_issue", Arguments: map[string]any{}})
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, "Did you mean github__github_list_issue") {
		t.Errorf("unknown tool without its prefix: %v", err)
	}
	if _, after := f.auditLines(); len(after) != len(before) {
		t.Error("an unknown tool was audited")
	}

	// An upstream failure is a tool error with the envelope and a report.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_delete_comment",
		Arguments: map[string]any{"owner": "o", "repo": "r", "comment_id": 4242, "confirm": true}})
	if err != nil || !res.IsError {
		t.Fatalf("delete a missing comment: %v %v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var env struct {
		Error struct {
			Code     string `json:"code"`
			Upstream struct {
				Status int `json:"status"`
			} `json:"upstream"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(text), &env) != nil || env.Error.Code != "not_found" || env.Error.Upstream.Status != 404 {
		t.Errorf("failure text %s", text)
	}
	if rep, _ := res.Meta["effect"].(map[string]any); rep["class"] != "irreversible" || rep["undo"] != nil {
		t.Errorf("failure report %v", res.Meta)
	}
	_, lines := f.auditLines()
	if l := lines[len(lines)-1]; l["decision"] != "allowed" || l["error_code"] != "not_found" || l["upstream_status"] != json.Number("404") {
		t.Errorf("failed call audit line: %v", l)
	}
}

// TestMCPStandaloneStreamDoesNotBlockShutdown: a client holding the GET
// event stream open does not keep Serve from returning promptly: Serve ends
// the stream itself, so its shutdown never reaches the grace after which it
// cuts the connections still open (and says so in the log), and the client
// sees its stream end cleanly rather than cut.
func TestMCPStandaloneStreamDoesNotBlockShutdown(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true})
	tok := f.turn(fxReadGrant)
	s := f.rawInitialize(tok)
	req, err := http.NewRequest("GET", f.base+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = mcpHeaders(tok, s.id)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := f.client.Do(req) // returns once the stream's headers arrive: the stream is open
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET /mcp: %d %v", resp.StatusCode, resp.Header)
	}
	f.stop()
	if logs := f.logs.String(); strings.Contains(logs, "anvil: shutdown: connections still open") {
		t.Errorf("the open event stream held shutdown up until its grace:\n%s", logs)
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Errorf("the event stream was cut rather than ended: %v", err)
	}
}
