package serve

import (
	"bufio"
	"encoding/base64"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/door/mcpdoor"
	"github.com/anvil-dev/anvil/runtime/door/restdoor"
)

// TestBadInputIsRefused sends requests that must all be refused with their
// documented status and code, and checks that none of them reached the
// upstream, wrote to the vault or (being refused before any call) wrote an
// audit line.
func TestBadInputIsRefused(t *testing.T) {
	f := newFleetFixture(t, nil)
	vaultBefore := f.vaultSnapshot()
	upBefore := f.upstreamCount()
	rawBefore, _ := f.auditLines()

	read := f.turn(fxReadGrant)
	write := f.turn(fxWriteGrant)
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	claims := string(mustJSON(f.claims(fxReadGrant)))
	signed := func(header string) string { return authtest.SignRaw(f.key, []byte(header), []byte(claims)) }
	withGrants := func(g any) string { return f.turnWith(nil, func(c map[string]any) { c["by_grants"] = g }) }
	withClaim := func(k string, v any) string { return f.turnWith(fxReadGrant, func(c map[string]any) { c[k] = v }) }
	parts := strings.Split(read, ".")
	// flip changes a character in the middle of s (the last character of a
	// 64-byte signature also carries padding bits a lenient decoder ignores).
	flip := func(s string) string {
		i := len(s) / 2
		repl := byte('A')
		if s[i] == 'A' {
			repl = 'B'
		}
		return s[:i] + string(repl) + s[i+1:]
	}
	tampered := f.turnWith(fxReadGrant, func(c map[string]any) { c["sub"] = "local:mallory" })
	tparts := strings.Split(tampered, ".")
	entry := map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read"}
	many := make([]any, 65)
	for i := range many {
		many[i] = entry
	}

	listCall := `{"arguments":{"owner":"octo","repo":"hello"}}`
	type req struct {
		name          string
		method, path  string
		authorization string // the whole header; "" sends none
		ctype, body   string
		header        http.Header
		status        int
		code          string // error.code, or the JSON-RPC code for /mcp bodies
	}
	bearer := func(tok string) string { return "Bearer " + tok }
	mcpInit := func(name, authz string, status int, code string) req {
		return req{name, "POST", "/mcp", authz, "application/json", initializeBody, mcpHeaders("", ""), status, code}
	}
	callList := func(name, authz string, status int, code string) req {
		return req{name, "POST", "/call/github__github_list_issue", authz, "application/json", listCall, nil, status, code}
	}
	cases := []req{
		// Malformed and forged tokens (on both tool routes).
		mcpInit("no Authorization", "", 401, "invalid_request"),
		mcpInit("Basic scheme", "Basic dXNlcjpwYXNz", 401, "invalid_request"),
		mcpInit("Bearer without a token", "Bearer ", 401, "invalid_request"),
		mcpInit("two parts", bearer(parts[0]+"."+parts[1]), 401, "invalid_token"),
		mcpInit("four parts", bearer(read+".x"), 401, "invalid_token"),
		mcpInit("characters outside base64url", bearer("!!!."+parts[1]+"."+parts[2]), 401, "invalid_token"),
		mcpInit("padding", bearer(parts[0]+"=."+parts[1]+"."+parts[2]), 401, "invalid_token"),
		callList("header not JSON", bearer(b64("hello")+"."+parts[1]+"."+parts[2]), 401, "invalid_token"),
		callList("header a JSON list", bearer(signed(`[1]`)), 401, "invalid_token"),
		callList("payload not an object", bearer(authtest.SignRaw(f.key, []byte(`{"alg":"EdDSA","kid":"`+f.key.Kid+`"}`), []byte(`[1]`))), 401, "invalid_token"),
		callList("alg none", bearer(b64(`{"alg":"none","kid":"`+f.key.Kid+`"}`)+"."+b64(claims)+"."), 401, "invalid_token"),
		callList("alg HS256", bearer(signed(`{"alg":"HS256","typ":"JWT","kid":"`+f.key.Kid+`"}`)), 401, "invalid_token"),
		callList("alg ES256", bearer(signed(`{"alg":"ES256","typ":"JWT","kid":"`+f.key.Kid+`"}`)), 401, "invalid_token"),
		callList("forged signature", bearer(parts[0]+"."+parts[1]+"."+flip(parts[2])), 401, "invalid_token"),
		callList("empty signature", bearer(parts[0]+"."+parts[1]+"."), 401, "invalid_token"),
		callList("payload swapped under a valid signature", bearer(parts[0]+"."+tparts[1]+"."+parts[2]), 401, "invalid_token"),
		callList("another key with the same kid", bearer(authtest.Mint(authtest.NewKey(f.key.Kid), f.claims(fxReadGrant))), 401, "invalid_token"),
		callList("unknown kid", bearer(authtest.Mint(authtest.NewKey("by-unknown00001"), f.claims(fxReadGrant))), 401, "invalid_token"),
		callList("token over 64 KiB", bearer(parts[0]+"."+strings.Repeat("A", 64<<10)+"."+parts[2]), 401, "invalid_token"),
		callList("exp a string", bearer(withClaim("exp", "tomorrow")), 401, "invalid_token"),
		callList("aud a number", bearer(withClaim("aud", 7)), 401, "invalid_token"),
		callList("sub an object", bearer(withClaim("sub", map[string]any{"id": 1})), 401, "invalid_token"),
		callList("jti over 256 characters", bearer(withClaim("jti", strings.Repeat("j", 257))), 401, "invalid_token"),
		// Bad grants in tokens.
		callList("grant mode admin", bearer(withGrants([]any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "admin"}})), 401, "invalid_token"),
		callList("grant connector with a space", bearer(withGrants([]any{map[string]any{"connector": "git hub", "operations": []any{"*"}, "mode": "read"}})), 401, "invalid_token"),
		callList("grant with no operations", bearer(withGrants([]any{map[string]any{"connector": "github", "operations": []any{}, "mode": "read"}})), 401, "invalid_token"),
		callList("grant confirm deny", bearer(withGrants([]any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write", "confirm": "deny"}})), 401, "invalid_token"),
		callList("grant account with a slash", bearer(withGrants([]any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read", "account": "a/b"}})), 401, "invalid_token"),
		callList("65 grant entries", bearer(withGrants(many)), 401, "invalid_token"),
		callList("grant entry a string", bearer(withGrants([]any{"github:*"})), 401, "invalid_token"),
		callList("by_grants an object", bearer(withGrants(entry)), 401, "invalid_token"),
		// REST bodies, types and names.
		{"REST body over 64 KiB", "POST", "/call/github__github_list_issue", bearer(read), "application/json", `{"arguments":{"x":"` + strings.Repeat("x", restdoor.MaxBody) + `"}}`, nil, 400, "validation_error"},
		{"REST body not JSON", "POST", "/call/github__github_list_issue", bearer(read), "application/json", `owner=octo`, nil, 400, "validation_error"},
		{"REST body null arguments list", "POST", "/call/github__github_list_issue", bearer(read), "application/json", `{"arguments":[]}`, nil, 400, "validation_error"},
		{"REST body truncated", "POST", "/call/github__github_list_issue", bearer(read), "application/json", `{"arguments":{"owner":"o"`, nil, 400, "validation_error"},
		{"REST form content type", "POST", "/call/github__github_list_issue", bearer(read), "application/x-www-form-urlencoded", listCall, nil, 415, "unsupported_media_type"},
		{"REST no content type", "POST", "/call/github__github_list_issue", bearer(read), "", listCall, nil, 415, "unsupported_media_type"},
		{"REST unknown tool", "POST", "/call/github__github_drop_repo", bearer(read), "application/json", listCall, nil, 404, "not_found"},
		{"REST tool with a path", "POST", "/call/github__github_list_issue/extra", bearer(read), "application/json", listCall, nil, 404, "not_found"},
		{"REST encoded slash in the tool", "POST", "/call/..%2Fhealthz", bearer(read), "application/json", listCall, nil, 404, "not_found"},
		{"REST two Idempotency-Key headers", "POST", "/call/github__github_create_comment", bearer(write), "application/json", listCall,
			http.Header{"Idempotency-Key": {"k1", "k2"}}, 400, "validation_error"},
		{"REST PUT", "PUT", "/call/github__github_list_issue", bearer(read), "application/json", listCall, nil, 405, "method_not_allowed"},
		// MCP transport.
		{"MCP body over 1 MiB", "POST", "/mcp", bearer(read), "application/json", `{"x":"` + strings.Repeat("x", mcpdoor.MaxMCPBody) + `"}`, mcpHeaders("", ""), 413, "-32600"},
		{"MCP text/plain", "POST", "/mcp", bearer(read), "text/plain", initializeBody, mcpHeaders("", ""), 415, "-32600"},
		{"MCP not JSON", "POST", "/mcp", bearer(read), "application/json", `<xml/>`, mcpHeaders("", ""), 400, "-32600"},
		{"MCP batch without a session", "POST", "/mcp", bearer(read), "application/json",
			`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"github__github_list_issue","arguments":{"owner":"o","repo":"r"}}}]`, mcpHeaders("", ""), 400, "-32000"},
		{"MCP tools/call without a session", "POST", "/mcp", bearer(read), "application/json",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"github__github_list_issue","arguments":{"owner":"o","repo":"r"}}}`, mcpHeaders("", ""), 400, "-32000"},
		{"MCP forged session id", "POST", "/mcp", bearer(read), "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			mcpHeaders("", strings.Repeat("f", 4096)), 404, "-32001"},
		{"MCP connect token", "POST", "/mcp", bearer(f.connectToken()), "application/json", initializeBody, mcpHeaders("", ""), 403, "turn_token_required"},
		// Connect routes.
		{"connect with a turn token", "POST", "/connect/api-key", bearer(write), "application/json", `{"connector":"github","api_key":"evil"}`, nil, 403, "connect_token_required"},
		{"connect key with a line break", "POST", "/connect/api-key", bearer(f.connectToken()), "application/json", `{"connector":"github","api_key":"evil\nX-Injected: 1"}`, nil, 400, "invalid_secret"},
		{"connect body over 64 KiB", "POST", "/connect/api-key", bearer(f.connectToken()), "application/json", `{"connector":"github","api_key":"` + strings.Repeat("k", restdoor.MaxBody) + `"}`, nil, 400, "invalid_request"},
		{"connect body a list", "POST", "/connect/api-key", bearer(f.connectToken()), "application/json", `[{"connector":"github","api_key":"evil"}]`, nil, 400, "invalid_request"},
		{"connect unknown route", "POST", "/connect/delete", bearer(f.connectToken()), "application/json", `{}`, nil, 404, "not_found"},
		{"connect without a token", "GET", "/connect/status", "", "", "", nil, 401, "invalid_request"},
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.header.Clone()
			if h == nil {
				h = http.Header{}
			}
			if c.authorization != "" {
				h.Set("Authorization", c.authorization)
			}
			a := f.do(c.method, c.path, "", c.ctype, c.body, h)
			if a.status != c.status {
				t.Fatalf("status %d, want %d: %.300s", a.status, c.status, a.body)
			}
			if strings.HasPrefix(c.code, "-") {
				if !strings.HasPrefix(a.body, `{"jsonrpc":"2.0","error":{"code":`+c.code+`,`) {
					t.Errorf("body %.300s, want JSON-RPC code %s", a.body, c.code)
				}
			} else if got := a.errCode(); got != c.code {
				t.Errorf("code %q, want %q: %.300s", got, c.code, a.body)
			}
			if c.status == 401 && !strings.HasPrefix(a.header.Get("WWW-Authenticate"), `Bearer realm="mcp", error="`+c.code+`"`) {
				t.Errorf("WWW-Authenticate %q", a.header.Get("WWW-Authenticate"))
			}
			if strings.Contains(a.body, fxUpstream) {
				t.Error("the answer carries the stored secret")
			}
		})
	}

	t.Run("raw HTTP", func(t *testing.T) {
		// Requests Go's client refuses to send: written on the socket.
		host := strings.TrimPrefix(f.base, "http://")
		long := strings.Repeat("h", 2<<20)
		raws := []struct {
			name, request string
			status        int
		}{
			{"CR in Idempotency-Key", "POST /call/github__github_create_comment HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + write +
				"\r\nContent-Type: application/json\r\nIdempotency-Key: k\rX-Injected: 1\r\nContent-Length: 2\r\n\r\n{}", 400},
			{"NUL in Authorization", "POST /call/github__github_list_issue HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + read[:10] + "\x00" +
				"\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", 400},
			{"a 2 MiB header", "POST /call/github__github_list_issue HTTP/1.1\r\nHost: " + host + "\r\nX-Huge: " + long +
				"\r\nAuthorization: Bearer " + read + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", 431},
			{"space in the header name", "POST /call/github__github_list_issue HTTP/1.1\r\nHost: " + host + "\r\nIdempotency Key: k" +
				"\r\nAuthorization: Bearer " + read + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", 400},
		}
		for _, r := range raws {
			conn, err := net.DialTimeout("tcp", host, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			go func(req string) { _, _ = conn.Write([]byte(req)) }(r.request)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Errorf("%s: %v", r.name, err)
				conn.Close()
				continue
			}
			resp.Body.Close()
			conn.Close()
			if resp.StatusCode != r.status {
				t.Errorf("%s: status %d, want %d", r.name, resp.StatusCode, r.status)
			}
		}
	})

	t.Run("line breaks in an idempotency key sent by a granted call", func(t *testing.T) {
		s := f.rawInitialize(write)
		defer s.close()
		for _, c := range []struct {
			args map[string]any
			meta map[string]any
		}{
			{map[string]any{"owner": "o", "repo": "r", "issue_number": 2, "body": "x"}, map[string]any{"idempotency_key": "k\r\nX-Injected: 1"}},
			{map[string]any{"owner": "o", "repo": "r", "issue_number": 2, "body": "x", "idempotency_key": "k\nX-Injected: 1"}, nil},
			{map[string]any{"owner": "o", "repo": "r", "issue_number": 2, "body": "x"}, map[string]any{"idempotency_key": "k\x00"}},
			{map[string]any{"owner": "o", "repo": "r", "issue_number": 2, "body": "x"}, map[string]any{"idempotency_key": ""}},
			{map[string]any{"owner": "o", "repo": "r", "issue_number": 2, "body": "x"}, map[string]any{"stage": "yes"}},
		} {
			e := toolError(t, s.callTool("github__github_create_comment", c.args, c.meta))
			if e["code"] != "validation_error" {
				t.Errorf("%v %v: %v", c.args, c.meta, e)
			}
		}
	})

	if n := f.upstreamCount(); n != upBefore {
		t.Errorf("bad input reached the upstream %d times: %+v", n-upBefore, f.mock.Requests())
	}
	if !reflect.DeepEqual(vaultBefore, f.vaultSnapshot()) {
		t.Error("bad input changed the vault")
	}
	raw, _ := f.auditLines()
	for _, l := range raw[len(rawBefore):] {
		// Only the granted calls with a bad key are calls; nothing else is audited.
		if !strings.Contains(l, `"operation":"github.comments.create"`) || !strings.Contains(l, `"error_code":"validation_error"`) {
			t.Errorf("unexpected audit line: %s", l)
		}
	}
}
