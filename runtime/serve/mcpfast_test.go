package serve

import (
	"net/http"
	"regexp"
	"testing"
)

// TestMCPFastPathMatchesSDK sends the same tools/call requests through the
// official SDK's server and through the gateway's fast path and wants the
// same status, headers and bytes (trace ids aside).
func TestMCPFastPathMatchesSDK(t *testing.T) {
	f := newFleetFixture(t, nil)
	write := f.turn([]any{
		map[string]any{"connector": "github", "operations": []any{"comments.*", "issues.list", "issues.get", "pulls.list", "releases.*", "tags.get"}, "mode": "write"},
	})
	s := f.rawInitialize(write)
	defer s.close()
	trace := regexp.MustCompile(`trace_[0-9a-f]{32}`)
	cases := []struct{ name, body string }{
		{"list, integer id", `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"github__github_list_issue","arguments":{"owner":"octo","repo":"hello"}}}`},
		{"string id with HTML characters", `{"jsonrpc":"2.0","id":"a<b>&\u00e9","method":"tools/call","params":{"name":"github__github_list_pull","arguments":{"owner":"o","repo":"r"}}}`},
		{"negative id, key order of params", `{"params":{"arguments":{"owner":"octo","repo":"hello","issue_number":1},"name":"github__github_get_issue"},"method":"tools/call","id":-3,"jsonrpc":"2.0"}`},
		{"object answer", `{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"github__github_get_issue","arguments":{"owner":"octo","repo":"hello","issue_number":2}}}`},
		{"upstream 404", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"github__github_get_issue","arguments":{"owner":"octo","repo":"hello","issue_number":77}}}`},
		{"schema failure", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"github__github_list_issue","arguments":{"owner":1}}}`},
		{"grant refusal", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"github__github_create_issue","arguments":{"owner":"o","repo":"r","title":"<t>","confirm":true}}}`},
		{"gated without confirm", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"github__github_delete_comment","arguments":{"owner":"o","repo":"r","comment_id":1,"confirm":true}}}`},
		{"dry run", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"github__github_create_comment","arguments":{"owner":"o","repo":"r","issue_number":2,"body":"a & b","anvil_dry_run":true}}}`},
		{"write with a key (replayed)", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"github__github_create_comment","arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"<ok> & \u2028 ✓"},"_meta":{"idempotency_key":"01JFASTPATH0000000000001","other":[1,{"x":null}]}}}`},
		{"stage", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"github__github_create_release","arguments":{"owner":"octo","repo":"hello","tag_name":"v9","confirm":true},"_meta":{"stage":true,"idempotency_key":"01JFASTSTAGE"}}}`},
		{"bad _meta", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"github__github_list_issue","arguments":{"owner":"o","repo":"r"},"_meta":{"idempotency_key":7}}}`},
		{"null arguments", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"github__github_list_issue","arguments":null}}`},
		{"no arguments", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"github__github_list_issue"}}`},
		{"big integer id", `{"jsonrpc":"2.0","id":123456789012345,"method":"tools/call","params":{"name":"github__github_list_pull","arguments":{"owner":"o","repo":"r"}}}`},
	}
	send := func(body string) answer {
		return f.do("POST", "/mcp", write, "application/json", body, mcpHeaders(write, s.id))
	}
	// Warm the idempotent create so both paths see the replay.
	f.g.mcp.SetFastPath(false)
	send(cases[9].body)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.g.mcp.SetFastPath(false)
			before := f.g.mcp.FastCalls()
			sdk := send(c.body)
			f.g.mcp.SetFastPath(true)
			fast := send(c.body)
			if n := f.g.mcp.FastCalls() - before; n != 1 {
				t.Errorf("the fast path answered %d of the two requests, want 1", n)
			}
			if sdk.status != fast.status {
				t.Fatalf("status: SDK %d, fast %d (%s | %s)", sdk.status, fast.status, sdk.body, fast.body)
			}
			for _, h := range []string{"Content-Type", "Cache-Control", "Mcp-Session-Id", "Content-Encoding"} {
				if sdk.header.Get(h) != fast.header.Get(h) {
					t.Errorf("%s: SDK %q, fast %q", h, sdk.header.Get(h), fast.header.Get(h))
				}
			}
			a, b := trace.ReplaceAllString(sdk.body, "trace_X"), trace.ReplaceAllString(fast.body, "trace_X")
			if c.name == "stage" {
				// The second staging creates a second draft (another id).
				a = regexp.MustCompile(`50[0-9]`).ReplaceAllString(a, "50N")
				b = regexp.MustCompile(`50[0-9]`).ReplaceAllString(b, "50N")
			}
			if a != b {
				t.Errorf("bodies differ\n SDK %s\nfast %s", a, b)
			}
		})
	}
	f.g.mcp.SetFastPath(true)

	// Requests the fast path leaves to the SDK still work through it.
	before := f.g.mcp.FastCalls()
	defer func() {
		if n := f.g.mcp.FastCalls() - before; n != 0 {
			t.Errorf("the fast path answered %d requests it should leave to the SDK", n)
		}
	}()
	for _, c := range []struct {
		body   string
		header http.Header
		status int
	}{
		{`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"github__nope","arguments":{}}}`, nil, 200},
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"github__github_list_pull","arguments":{"owner":"o","repo":"r"}}}`, nil, 200},
		{`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"github__github_list_pull","arguments":{"owner":"o","repo":"r"}}}`, http.Header{"Accept": {"application/json"}}, 400},
		{`{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"github__github_list_pull","arguments":{"owner":"o","repo":"r"}}}`, http.Header{"Mcp-Protocol-Version": {"1999-01-01"}}, 400},
		{`{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"github__github_list_pull","arguments":[1]}}`, nil, 200},
		{`{"jsonrpc":"2.0","id":24,"method":"tools/list","params":{}}`, nil, 200},
		{`{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"github__github_list_pull","arguments":{"owner":"o","repo":"r"}}}`,
			http.Header{"Host": {"evil.example"}}, 403},
	} {
		h := mcpHeaders(write, s.id)
		for k, v := range c.header {
			h[k] = v
		}
		a := f.doHost("POST", "/mcp", write, "application/json", c.body, h)
		if a.status != c.status {
			t.Errorf("%s: %d %s", c.body, a.status, a.body)
		}
	}
}

// TestMCPFastPathMatchesSDK2026 is TestMCPFastPathMatchesSDK for 2026-07-28
// requests (no session; the version, Mcp-Method and Mcp-Name headers and the
// _meta triple): the SDK's stateless answer and the fast path's are the same
// status, headers and bytes.
func TestMCPFastPathMatchesSDK2026(t *testing.T) {
	f := newFleetFixture(t, nil)
	write := f.turn([]any{
		map[string]any{"connector": "github", "operations": []any{"comments.*", "issues.list", "issues.get", "pulls.list", "releases.*", "tags.get"}, "mode": "write"},
	})
	trace := regexp.MustCompile(`trace_[0-9a-f]{32}`)
	triple := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}`
	cases := []struct{ name, tool, body string }{
		{"list, integer id", "github__github_list_issue", `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"github__github_list_issue","arguments":{"owner":"octo","repo":"hello"},"_meta":{` + triple + `}}}`},
		{"string id with HTML characters", "github__github_list_pull", `{"jsonrpc":"2.0","id":"a<b>&\u00e9","method":"tools/call","params":{"name":"github__github_list_pull","arguments":{"owner":"o","repo":"r"},"_meta":{` + triple + `}}}`},
		{"object answer", "github__github_get_issue", `{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"_meta":{` + triple + `},"name":"github__github_get_issue","arguments":{"owner":"octo","repo":"hello","issue_number":2}}}`},
		{"upstream 404", "github__github_get_issue", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"github__github_get_issue","arguments":{"owner":"octo","repo":"hello","issue_number":77},"_meta":{` + triple + `}}}`},
		{"schema failure", "github__github_list_issue", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"github__github_list_issue","arguments":{"owner":1},"_meta":{` + triple + `}}}`},
		{"grant refusal", "github__github_create_issue", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"github__github_create_issue","arguments":{"owner":"o","repo":"r","title":"<t>","confirm":true},"_meta":{` + triple + `}}}`},
		{"gated without confirm", "github__github_delete_comment", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"github__github_delete_comment","arguments":{"owner":"o","repo":"r","comment_id":1},"_meta":{` + triple + `}}}`},
		{"dry run", "github__github_create_comment", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"github__github_create_comment","arguments":{"owner":"o","repo":"r","issue_number":2,"body":"a & b","anvil_dry_run":true},"_meta":{` + triple + `}}}`},
		{"write with a key (replayed)", "github__github_create_comment", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"github__github_create_comment","arguments":{"owner":"octo","repo":"hello","issue_number":2,"body":"<ok> & \u2028 ✓"},"_meta":{"idempotency_key":"01JFAST2026000000000001",` + triple + `}}}`},
		{"no arguments, no client info", "github__github_list_issue", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"github__github_list_issue","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`},
	}
	send := func(tool, body string) answer {
		h := http.Header{}
		h.Set("Accept", "application/json, text/event-stream")
		h.Set("Mcp-Protocol-Version", "2026-07-28")
		h.Set("Mcp-Method", "tools/call")
		h.Set("Mcp-Name", tool)
		return f.do("POST", "/mcp", write, "application/json", body, h)
	}
	f.g.mcp.SetFastPath(false)
	send(cases[8].tool, cases[8].body) // warm the keyed write: both paths see the replay
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.g.mcp.SetFastPath(false)
			before := f.g.mcp.FastCalls()
			sdk := send(c.tool, c.body)
			f.g.mcp.SetFastPath(true)
			fast := send(c.tool, c.body)
			if n := f.g.mcp.FastCalls() - before; n != 1 {
				t.Errorf("the fast path answered %d of the two requests, want 1", n)
			}
			if sdk.status != fast.status {
				t.Fatalf("status: SDK %d, fast %d (%s | %s)", sdk.status, fast.status, sdk.body, fast.body)
			}
			for _, h := range []string{"Content-Type", "Cache-Control", "Mcp-Session-Id", "Content-Encoding"} {
				if sdk.header.Get(h) != fast.header.Get(h) {
					t.Errorf("%s: SDK %q, fast %q", h, sdk.header.Get(h), fast.header.Get(h))
				}
			}
			if a, b := trace.ReplaceAllString(sdk.body, "trace_X"), trace.ReplaceAllString(fast.body, "trace_X"); a != b {
				t.Errorf("bodies differ\n SDK %s\nfast %s", a, b)
			}
		})
	}
	f.g.mcp.SetFastPath(true)
	// What the fast path leaves to the SDK: a mismatched Mcp-Name, a
	// missing capabilities object, a client that can be asked calling a
	// tool that needs confirmation, another protocol version's key.
	before := f.g.mcp.FastCalls()
	for _, c := range []struct{ tool, body string }{
		{"github__github_list_pull", cases[0].body},
		{"github__github_list_issue", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"github__github_list_issue","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{"github__github_delete_comment", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"github__github_delete_comment","arguments":{"owner":"o","repo":"r","comment_id":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`},
		{"github__github_list_issue", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"github__github_list_issue","_meta":{"io.modelcontextprotocol/logLevel":"debug",` + triple + `}}}`},
	} {
		if a := send(c.tool, c.body); a.status == 0 {
			t.Errorf("no answer")
		}
	}
	if n := f.g.mcp.FastCalls() - before; n != 0 {
		t.Errorf("the fast path answered %d requests it should leave to the SDK", n)
	}
}
