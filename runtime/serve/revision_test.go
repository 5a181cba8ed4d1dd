package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Issue 27: /mcp serves MCP 2026-07-28 (no session; version and client
// capabilities in each request's _meta) beside 2025-11-25's sessions.

// rev2026 sends one 2026-07-28 request the way a client of that revision
// does: the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers and the
// _meta triple, no session id.
func (f *fleetFixture) rev2026(bearer string, id int, method string, params map[string]any, caps map[string]any) (answer, map[string]any) {
	f.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if caps == nil {
		caps = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "rev-test", "version": "1"},
	}
	h := http.Header{}
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Mcp-Protocol-Version", "2026-07-28")
	h.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		h.Set("Mcp-Name", name)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	a := f.do("POST", "/mcp", bearer, "application/json", string(b), h)
	var msg map[string]any
	_ = json.Unmarshal([]byte(a.body), &msg)
	return a, msg
}

func resultOf(t *testing.T, a answer, msg map[string]any) map[string]any {
	t.Helper()
	r, ok := msg["result"].(map[string]any)
	if a.status != 200 || !ok {
		t.Fatalf("no result: %d %s", a.status, a.body)
	}
	return r
}

func TestRevision20260728(t *testing.T) {
	f := newFleetFixture(t, nil)
	tok := f.turn(fxReadGrant)

	a, msg := f.rev2026(tok, 1, "server/discover", nil, nil)
	d := resultOf(t, a, msg)
	if sid := a.header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("discover opened session %q", sid)
	}
	if vs, _ := json.Marshal(d["supportedVersions"]); string(vs) != `["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]` {
		t.Errorf("supportedVersions %s", vs)
	}
	if caps, _ := json.Marshal(d["capabilities"]); strings.Contains(string(caps), "resources") || strings.Contains(string(caps), "prompts") || !strings.Contains(string(caps), `"tools":{"listChanged":true}`) {
		t.Errorf("capabilities %s", caps)
	}
	if d["resultType"] != "complete" {
		t.Errorf("discover resultType %v", d["resultType"])
	}

	a, msg = f.rev2026(tok, 2, "tools/list", nil, nil)
	l := resultOf(t, a, msg)
	if l["cacheScope"] != "private" || l["resultType"] != "complete" {
		t.Errorf("tools/list cacheScope %v resultType %v", l["cacheScope"], l["resultType"])
	}
	if tools, _ := l["tools"].([]any); len(tools) != 5 {
		t.Errorf("tools/list under a read grant: %d tools", len(tools))
	}

	a, msg = f.rev2026(tok, 3, "tools/call", map[string]any{"name": "github__github_list_issue", "arguments": map[string]any{"owner": "octo", "repo": "hello"}}, nil)
	c := resultOf(t, a, msg)
	if c["resultType"] != "complete" || c["isError"] == true || c["structuredContent"] == nil {
		t.Errorf("tools/call: %s", a.body)
	}
	// The same call on a 2025-11-25 session answers the same content.
	s := f.rawInitialize(tok)
	old := s.callTool("github__github_list_issue", map[string]any{"owner": "octo", "repo": "hello"}, nil)
	ob, _ := json.Marshal(old["content"])
	nb, _ := json.Marshal(c["content"])
	if string(ob) != string(nb) {
		t.Errorf("content differs between revisions:\n%s\n%s", ob, nb)
	}
	s.close()

	// A version the gateway does not speak: UnsupportedProtocolVersion
	// naming the versions it does.
	h := http.Header{}
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Mcp-Protocol-Version", "2099-01-01")
	h.Set("Mcp-Method", "tools/list")
	a = f.do("POST", "/mcp", tok, "application/json", `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}}}`, h)
	if !strings.Contains(a.body, `"id":9`) || !strings.Contains(a.body, "2026-07-28") || !strings.Contains(a.body, `"error"`) {
		t.Errorf("unsupported version: %d %s", a.status, a.body)
	}

	// Capabilities the gateway does not declare are not answered, on
	// either revision.
	a, msg = f.rev2026(tok, 4, "resources/list", nil, nil)
	if msg["error"] == nil {
		t.Errorf("2026-07-28 resources/list answered: %s", a.body)
	}
	s = f.rawInitialize(tok)
	for _, m := range []string{"resources/list", "prompts/list", "resources/templates/list"} {
		if _, r := s.rpc(m, map[string]any{}); r == nil || r["error"] == nil {
			t.Errorf("2025-11-25 %s answered: %v", m, r)
		}
	}
	s.close()
}

// TestConfirmationAskedOn20260728 walks the asked confirmation of a
// 2026-07-28 client that declares elicitation: the question, then every
// way an answer is refused (nothing sent upstream), then the one that runs
// the call, once.
func TestConfirmationAskedOn20260728(t *testing.T) {
	f := newFleetFixture(t, nil)
	tok := f.turn(fxWriteGrant)
	const create = "github__github_create_issue"
	args := map[string]any{"owner": "octo", "repo": "hello", "title": "Asked"}
	elicit := map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	before := f.upstreamCount()

	// Without the capability: today's contract, with MCP's argument name.
	a, msg := f.rev2026(tok, 1, "tools/call", map[string]any{"name": create, "arguments": args}, nil)
	r := resultOf(t, a, msg)
	if r["isError"] != true || !strings.Contains(a.body, `\"required_flags\":[\"confirm\"]`) || !strings.Contains(a.body, "confirmation_required") {
		t.Fatalf("no capability: %s", a.body)
	}

	// With it: input_required, the question naming the tool, the exact
	// arguments, the effect class and the undo.
	ask := func(id int) (string, map[string]any) {
		a, msg := f.rev2026(tok, id, "tools/call", map[string]any{"name": create, "arguments": args}, elicit)
		r := resultOf(t, a, msg)
		if r["resultType"] != "input_required" || r["content"] != nil {
			t.Fatalf("question: %s", a.body)
		}
		state, _ := r["requestState"].(string)
		reqs, _ := r["inputRequests"].(map[string]any)
		q, _ := reqs["confirm"].(map[string]any)
		if state == "" || q == nil {
			t.Fatalf("question without state or input request: %s", a.body)
		}
		return state, q
	}
	state, q := ask(2)
	qb, _ := json.Marshal(q)
	for _, want := range []string{create, "github.issues.create", `\"title\":\"Asked\"`, "effect: compensable", "compensated by github__github_update_issue", "elicitation/create"} {
		if !strings.Contains(string(qb), want) {
			t.Errorf("the question lacks %q: %s", want, qb)
		}
	}

	reply := func(id int, state string, args map[string]any, action string) (answer, map[string]any) {
		resp := map[string]any{"action": action}
		if action == "accept" {
			resp["content"] = map[string]any{"confirm": true}
		}
		a, msg := f.rev2026(tok, id, "tools/call", map[string]any{"name": create, "arguments": args,
			"inputResponses": map[string]any{"confirm": resp}, "requestState": state}, elicit)
		return a, resultOf(t, a, msg)
	}
	refused := func(what, code string, a answer, r map[string]any) {
		t.Helper()
		if r["isError"] != true || !strings.Contains(a.body, code) || r["resultType"] != "complete" {
			t.Errorf("%s: want %s, got %s", what, code, a.body)
		}
	}
	changed := map[string]any{"owner": "octo", "repo": "hello", "title": "Something else"}
	a, r = reply(3, state, changed, "accept")
	refused("a changed argument", "confirmation/arguments_changed", a, r)
	a, r = reply(4, state, args, "decline")
	refused("a refusal", "confirmation/declined", a, r)
	forged := state[:len(state)-2] + "AA"
	if forged == state {
		forged = state[:len(state)-2] + "BB"
	}
	a, r = reply(5, forged, args, "accept")
	refused("a forged state", "confirmation/state_invalid", a, r)
	if n := f.upstreamCount(); n != before {
		t.Fatalf("%d requests reached the upstream before the person said yes", n-before)
	}

	a, r = reply(6, state, args, "accept")
	if r["isError"] == true || r["resultType"] != "complete" || r["structuredContent"] == nil {
		t.Fatalf("accepted: %s", a.body)
	}
	if n := f.upstreamCount(); n != before+1 {
		t.Fatalf("%d upstream requests after the yes, want 1", n-before)
	}
	a, r = reply(7, state, args, "accept")
	refused("a replayed state", "confirmation/state_replayed", a, r)
	if n := f.upstreamCount(); n != before+1 {
		t.Errorf("the replay reached the upstream")
	}

	// REST keeps today's contract.
	if a := f.call(tok, create, `{"arguments":{"owner":"octo","repo":"hello","title":"x"}}`, nil); a.status != 428 || a.errCode() != "confirmation_required" || !strings.Contains(a.body, `"--confirm"`) {
		t.Errorf("REST: %d %s", a.status, a.body)
	}
	// By default a caller's own confirm: true still suffices.
	own := map[string]any{"owner": "octo", "repo": "hello", "title": "Own", "confirm": true}
	a, msg = f.rev2026(tok, 8, "tools/call", map[string]any{"name": create, "arguments": own}, elicit)
	if r := resultOf(t, a, msg); r["resultType"] != "complete" || r["isError"] == true {
		t.Errorf("own confirm: %s", a.body)
	}
}

// TestConfirmationAskPolicy: ANVIL_MCP_CONFIRM=ask asks a client that can
// be asked even when it passes confirm: true; one that cannot still
// confirms itself.
func TestConfirmationAskPolicy(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{edit: func(c *Config) { c.MCPConfirm = "ask" }})
	tok := f.turn(fxWriteGrant)
	own := map[string]any{"owner": "octo", "repo": "hello", "title": "Own", "confirm": true}
	elicit := map[string]any{"elicitation": map[string]any{}}
	a, msg := f.rev2026(tok, 1, "tools/call", map[string]any{"name": "github__github_create_issue", "arguments": own}, elicit)
	if r := resultOf(t, a, msg); r["resultType"] != "input_required" {
		t.Errorf("ask policy, own confirm: %s", a.body)
	}
	a, msg = f.rev2026(tok, 2, "tools/call", map[string]any{"name": "github__github_create_issue", "arguments": own}, nil)
	if r := resultOf(t, a, msg); r["resultType"] != "complete" || r["isError"] == true {
		t.Errorf("ask policy, a client that cannot be asked: %s", a.body)
	}
	if _, err := ConfigFromEnv(func(k string) string {
		if k == "ANVIL_MCP_CONFIRM" {
			return "sometimes"
		}
		return ""
	}); err == nil || !strings.Contains(err.Error(), "ANVIL_MCP_CONFIRM") {
		t.Errorf("a bad ANVIL_MCP_CONFIRM: %v", err)
	}
}

// TestStructuredOutputServed: tools/list carries each tool's AIR
// outputSchema on both revisions, and a call's structuredContent validates
// against it (docs/mcp.md#structured-output), on the fast path and the
// SDK's.
func TestStructuredOutputServed(t *testing.T) {
	f := newFleetFixture(t, nil)
	tok := f.turn(fxReadGrant)
	a, msg := f.rev2026(tok, 1, "tools/list", nil, nil)
	schemas := map[string]any{}
	for _, tl := range resultOf(t, a, msg)["tools"].([]any) {
		tm := tl.(map[string]any)
		if o, ok := tm["outputSchema"]; ok {
			schemas[tm["name"].(string)] = o
		}
	}
	s := f.rawInitialize(tok)
	defer s.close()
	_, old := s.rpc("tools/list", map[string]any{})
	n := 0
	for _, tl := range old["result"].(map[string]any)["tools"].([]any) {
		if _, ok := tl.(map[string]any)["outputSchema"]; ok {
			n++
		}
	}
	if len(schemas) == 0 || n != len(schemas) {
		t.Fatalf("outputSchemas: %d on 2026-07-28, %d on 2025-11-25", len(schemas), n)
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"github__github_list_issue", map[string]any{"owner": "octo", "repo": "hello"}},
		{"github__github_get_issue", map[string]any{"owner": "octo", "repo": "hello", "issue_number": 1}},
	}
	for _, c := range calls {
		schema, ok := schemas[c.tool]
		if !ok {
			t.Fatalf("%s has no outputSchema", c.tool)
		}
		b, _ := json.Marshal(schema)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		comp := jsonschema.NewCompiler()
		comp.DefaultDraft(jsonschema.Draft2020)
		if err := comp.AddResource("anvil:///out.json", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := comp.Compile("anvil:///out.json")
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		for _, slow := range []bool{false, true} {
			f.g.mcp.SetFastPath(!slow)
			res := s.callTool(c.tool, c.args, nil)
			sc, _ := json.Marshal(res["structuredContent"])
			v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(sc))
			if err := sch.Validate(v); err != nil || res["isError"] == true {
				t.Errorf("%s (slow %v): structuredContent %s does not validate: %v", c.tool, slow, sc, err)
			}
		}
	}
	f.g.mcp.SetFastPath(true)
}
