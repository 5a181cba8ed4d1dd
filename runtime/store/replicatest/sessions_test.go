package replicatest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func mcpHeaders(session string) http.Header {
	h := http.Header{}
	h.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		h.Set("Mcp-Session-Id", session)
		h.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return h
}

// rpcResult reads the JSON-RPC answer of a JSON (or one-event SSE) body.
func rpcResult(t *testing.T, a answer) map[string]any {
	t.Helper()
	body := a.body
	if i := strings.Index(body, "data: "); i >= 0 {
		body = strings.TrimSpace(body[i+len("data: "):])
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not a JSON-RPC answer: %d %q", a.status, a.body)
	}
	return m
}

func sessionSuite(t *testing.T, n int, dsn string) {
	t.Run("an MCP session opened on one replica serves calls on every replica, bound to its token", func(t *testing.T) {
		c := newCluster(t, n, dsn)
		c.connectKey(upstream)
		tok := c.turn()
		init := c.do(c.base, "POST", "/mcp", tok,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"replica-test","version":"1"}}}`,
			mcpHeaders(""))
		sid := init.header.Get("Mcp-Session-Id")
		if init.status != 200 || sid == "" {
			t.Fatalf("initialize: %d %s", init.status, init.body)
		}
		// Every request goes to the next replica.
		for i := 0; i < 2*n; i++ {
			a := c.do(c.base, "POST", "/mcp", tok, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, mcpHeaders(sid))
			if a.status != 200 {
				t.Fatalf("tools/list hop %d: %d %s", i, a.status, a.body)
			}
			res, _ := rpcResult(t, a)["result"].(map[string]any)
			if tools, _ := res["tools"].([]any); len(tools) == 0 {
				t.Fatalf("tools/list hop %d: %s", i, a.body)
			}
			a = c.do(c.base, "POST", "/mcp", tok,
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"github__github_list_issue","arguments":{"owner":"octo","repo":"hello"}}}`, mcpHeaders(sid))
			if a.status != 200 {
				t.Fatalf("tools/call hop %d: %d %s", i, a.status, a.body)
			}
			if res, _ := rpcResult(t, a)["result"].(map[string]any); res == nil || res["isError"] == true {
				t.Fatalf("tools/call hop %d: %s", i, a.body)
			}
		}
		// Another token (another fingerprint) cannot use it on any replica.
		other := c.turn()
		for i := 0; i < n; i++ {
			a := c.do(c.base, "POST", "/mcp", other, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}`, mcpHeaders(sid))
			if a.status != http.StatusForbidden {
				t.Errorf("another token's request: %d %s", a.status, a.body)
			}
		}
		// DELETE on one replica ends it on the others.
		if a := c.do(c.base, "DELETE", "/mcp", tok, "", mcpHeaders(sid)); a.status/100 != 2 {
			t.Fatalf("DELETE: %d %s", a.status, a.body)
		}
		refused := 0
		for i := 0; i < n; i++ {
			if a := c.do(c.base, "POST", "/mcp", tok, `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}`, mcpHeaders(sid)); a.status >= 400 {
				refused++
			}
		}
		if refused < n-1 || (n == 1 && refused != 1) {
			t.Errorf("after DELETE %d of %d replicas still accepted the session", n-refused, n)
		}
	})
}
