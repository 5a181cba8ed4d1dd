package serve

import (
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/door/mcpdoor"
)

// TestMCPSessionsPerSubject is the regression test for issue 15, finding 5
// (MCP half): one subject holds at most mcpdoor.MaxSessionsPerSubject sessions, so
// others can still start theirs, and an initialize that fails holds no
// place (before the fix one token could open all mcpdoor.MaxSessions, and each
// failed initialize kept a session). Issue 27: at the per-subject cap the
// subject's least recently used session is ended (404 afterwards, the
// client's cue to initialize again), not the new one refused.
func TestMCPSessionsPerSubject(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true, mcp: mcpdoor.Options{MaxSessions: 5, MaxSessionsPerSubject: 2}})
	as := func(sub string) string {
		return f.turnWith(fxReadGrant, func(c map[string]any) { c["sub"] = sub })
	}
	ada, bob := as("local:ada"), as("local:bob")

	// Failed initializes (the SDK answers a JSON-RPC error) hold nothing.
	for i := 0; i < 6; i++ {
		a := f.do("POST", "/mcp", ada, "application/json", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`, mcpHeaders(ada, ""))
		if a.status != 200 || !strings.Contains(a.body, `"error"`) {
			t.Fatalf("failed initialize %d: %d %s", i, a.status, a.body)
		}
		if sid := a.header.Get("Mcp-Session-Id"); sid != "" {
			if b := f.do("POST", "/mcp", ada, "application/json", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, mcpHeaders(ada, sid)); b.status != 404 {
				t.Fatalf("the failed initialize's session %s works: %d %s", sid, b.status, b.body)
			}
		}
	}
	if n := f.g.mcp.SessionCount(); n != 0 {
		t.Fatalf("%d sessions after failed initializes", n)
	}

	// One subject: two sessions; a third ends the least recently used.
	s1, s2 := f.rawInitialize(ada), f.rawInitialize(ada)
	s1.toolNames() // s1 is now the more recently used
	s0 := f.rawInitialize(ada)
	if a, _ := s2.rpc("tools/list", map[string]any{}); a.status != 404 {
		t.Fatalf("ada's least recently used session after a third: %d %s", a.status, a.body)
	}
	if n := f.g.mcp.SessionCount(); n != 2 {
		t.Fatalf("%d sessions, want ada's 2", n)
	}
	s2 = s0
	// Others still get theirs, up to the global limit.
	b1 := f.rawInitialize(bob)
	c1 := f.rawInitialize(as("local:cy"))
	f.rawInitialize(as("local:dee"))
	if a := f.initialize(as("local:eve")); a.status != 503 {
		t.Fatalf("past the global limit: %d %s", a.status, a.body)
	}
	// Closing one of ada's sessions gives ada a place again.
	if d := s1.close(); d.status != 204 {
		t.Fatalf("DELETE: %d", d.status)
	}
	s3 := f.rawInitialize(ada)
	for i, s := range []*mcpSession{s2, s3, b1, c1} {
		if names := s.toolNames(); len(names) == 0 {
			t.Errorf("session %d lists no tools", i)
		}
	}
}
