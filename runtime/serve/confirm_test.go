package serve

import (
	"testing"
)

// TestMissingConfirmation is the gateway side of issue 15's "Missing
// confirmation" contract point (seed: REST 428 confirmation_required): a
// call of an operation that needs confirmation and lacks it (no confirm,
// confirm: false, confirm not a boolean, also when staged or a dry run) is
// refused with confirmation_required, REST 428 and an MCP tool error carrying
// the code, on both MCP paths, audited as confirmation_required, and sends
// nothing upstream. Before the fix the input schema's "confirm must be
// true" answered first: 400 validation_error and JSON-RPC -32602.
func TestMissingConfirmation(t *testing.T) {
	f := newFleetFixture(t, nil)
	tok := f.turn(fxWriteGrant)
	const create = "github__github_create_issue"
	const release = "github__github_create_release"
	before := f.upstreamCount()
	rest := []struct{ name, tool, body string }{
		{"absent", create, `{"arguments":{"owner":"octo","repo":"hello","title":"x"}}`},
		{"false", create, `{"arguments":{"owner":"octo","repo":"hello","title":"x","confirm":false}}`},
		{"not a boolean", create, `{"arguments":{"owner":"octo","repo":"hello","title":"x","confirm":"yes"}}`},
		{"dry run", create, `{"arguments":{"owner":"octo","repo":"hello","title":"x","anvil_dry_run":true}}`},
		{"staged", release, `{"arguments":{"owner":"octo","repo":"hello","tag_name":"v9"},"stage":true}`},
	}
	for _, c := range rest {
		a := f.call(tok, c.tool, c.body, nil)
		if a.status != 428 || a.errCode() != "confirmation_required" {
			t.Errorf("REST %s: %d %s", c.name, a.status, a.body)
		}
	}
	for _, slow := range []bool{false, true} {
		f.g.mcp.SetFastPath(!slow)
		s := f.rawInitialize(tok)
		for _, args := range []map[string]any{
			{"owner": "octo", "repo": "hello", "title": "x"},
			{"owner": "octo", "repo": "hello", "title": "x", "confirm": false},
		} {
			res := s.callTool(create, args, nil)
			if e := toolError(t, res); e["code"] != "confirmation_required" {
				t.Errorf("MCP (slow %v) %v: %v", slow, args, e)
			}
		}
		res := s.callTool(release, map[string]any{"owner": "octo", "repo": "hello", "tag_name": "v9"}, map[string]any{"stage": true})
		if e := toolError(t, res); e["code"] != "confirmation_required" {
			t.Errorf("MCP (slow %v) staged: %v", slow, e)
		}
		s.close()
	}
	f.g.mcp.SetFastPath(true)
	if n := f.upstreamCount(); n != before {
		t.Errorf("%d requests reached the upstream", n-before)
	}
	_, lines := f.auditLines()
	if len(lines) != len(rest)+6 {
		t.Fatalf("%d audit lines, want %d", len(lines), len(rest)+6)
	}
	for _, l := range lines {
		if l["decision"] != "confirmation_required" {
			t.Errorf("audit decision %v", l["decision"])
		}
	}
	// A schema problem other than confirm is still a validation error.
	if a := f.call(tok, create, `{"arguments":{"owner":"octo","repo":"hello","confirm":true}}`, nil); a.status != 400 || a.errCode() != "validation_error" {
		t.Errorf("missing title: %d %s", a.status, a.body)
	}
}
