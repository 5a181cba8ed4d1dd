package serve

import (
	"encoding/json"
	"github.com/anvil-dev/anvil/runtime/audit"
	"net/http"
	"testing"
)

// The REST route's effect cases (reference §h "REST route").

// A non-ASCII argument still gives a printable-ASCII X-Anvil-Effect whose
// values decode back, and the decoded inverse works.
func TestEffectsRESTNonASCIIHeader(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)
	args := map[string]any{"owner": "øcto", "repo": "hé😀", "issue_number": 2, "body": "Grüße"}
	a := e.rest(tok, "github__github_create_comment", restBody(t, args, false), "ledger-ascii")
	if a.status != 200 {
		t.Fatalf("create comment: %d %s", a.status, a.body)
	}
	h := a.effect()
	for i := 0; i < len(h); i++ {
		if h[i] < 0x20 || h[i] > 0x7e {
			t.Fatalf("x-anvil-effect has byte %#x at %d: %q", h[i], i, h)
		}
	}
	want := `{"class":"reversible","operation":"github.comments.create","idempotency_key":"ledger-ascii","undo":{"kind":"inverse","operation":"github.comments.delete","tool":"github__github_delete_comment","arguments":{"owner":"\u00f8cto","repo":"h\u00e9\ud83d\ude00","comment_id":100}},"deadline_ms":null,"lookup":null}`
	if h != want {
		t.Errorf("x-anvil-effect:\n got %s\nwant %s", h, want)
	}
	rep := effParseReport(t, h)
	undo := e.followArgs(rep.Undo)
	if undo["owner"] != "øcto" || undo["repo"] != "hé😀" {
		t.Errorf("decoded undo arguments: %v", undo)
	}
	d := e.rest(tok, rep.Undo.Tool, restBody(t, undo, false), "")
	if d.status != 200 || len(e.mock.State().Comments) != 0 {
		t.Errorf("undo: %d %s (%d comments left)", d.status, d.body, len(e.mock.State().Comments))
	}
}

// The REST body's stage must be a boolean, and at most one Idempotency-Key
// may be sent; neither refusal reaches the upstream.
func TestEffectsRESTBadEffectInput(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)
	snap := e.snapshot()
	a := e.rest(tok, "github__github_create_comment", `{"arguments":`+effCommentArgs+`,"stage":"yes"}`, "")
	if a.status != 400 || effErrBody(t, a)["code"] != "validation_error" {
		t.Errorf(`stage "yes": %d %s`, a.status, a.body)
	}
	h := http.Header{}
	h.Add("Idempotency-Key", "one")
	h.Add("Idempotency-Key", "two")
	b := e.do("POST", "/call/github__github_create_comment", tok, `{"arguments":`+effCommentArgs+`}`, h)
	if b.status != 400 || effErrBody(t, b)["code"] != "validation_error" {
		t.Errorf("two Idempotency-Key headers: %d %s", b.status, b.body)
	}
	e.unchanged(snap, "a bad REST effect input")
}

// A staged call's own arguments meet its tool's schema like any call's:
// an unknown or mistyped argument is a validation error, not silently
// dropped or blamed on the draft.
func TestEffectsStagedArgumentsValidated(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)
	snap := e.snapshot()
	for _, args := range []map[string]any{
		{"owner": "octo", "repo": "hello", "tag_name": "v1.0.0", "confirm": true, "bogus": 1},
		{"owner": 1, "repo": "hello", "tag_name": "v1.0.0", "confirm": true},
	} {
		a := e.rest(tok, "github__github_create_release", restBody(t, args, true), "")
		if env := effErrBody(t, a); a.status != 400 || env["code"] != "validation_error" || env["details"] != nil {
			t.Errorf("REST staged %v: %d %s", args, a.status, a.body)
		}
		r := e.mcp(tok).rpc("tools/call", map[string]any{"name": "github__github_create_release", "arguments": args, "_meta": map[string]any{"stage": true}})
		if r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("MCP staged %v: %s %+v", args, r.Result, r.Error)
		}
	}
	e.unchanged(snap, "a staged call with bad arguments")
	if rels := e.mock.State().Releases; len(rels) != 0 {
		t.Errorf("releases created: %+v", rels)
	}
	_, lines := e.audit()
	for _, l := range lines {
		if l["error_code"] != "validation_error" || l["staged_for"] != nil {
			t.Errorf("audit line %v", l)
		}
	}
}

// Audit lines carry effect_class, ledger_id and staged_for, in that order
// at the end of the line: null for a normal call, the staged operation's id
// for a staged one.
func TestEffectsRESTAuditFields(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)
	if a := e.rest(tok, "github__github_list_pull", `{"arguments":{"owner":"octo","repo":"hello"}}`, ""); a.status != 200 {
		t.Fatalf("list pulls: %d %s", a.status, a.body)
	}
	rel := map[string]any{"owner": "octo", "repo": "hello", "tag_name": "v3", "confirm": true}
	if a := e.rest(tok, "github__github_create_release", restBody(t, rel, true), "ledger-audit"); a.status != 200 {
		t.Fatalf("stage: %d %s", a.status, a.body)
	}
	raw, _ := e.audit()
	if len(raw) != 2 {
		t.Fatalf("%d audit lines, want 2", len(raw))
	}
	tails := []string{
		`","effect_class":"read","ledger_id":null,"staged_for":null}`,
		`","effect_class":"irreversible","ledger_id":"ledger-audit","staged_for":"github.releases.create"}`,
	}
	for i, w := range tails {
		line := string(audit.Record([]byte(raw[i]))) // without the chain's seq and prev
		if len(line) < len(w) || line[len(line)-len(w):] != w {
			t.Errorf("audit line %d: %s\nwant it to end …%s", i, line, w)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if len(m) != 20 {
			t.Errorf("audit line %d has %d keys, want 20", i, len(m))
		}
	}
}
