package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Refused and failed calls, and dry runs.

// A read grant cannot undo a write: the inverse is an ordinary call under
// the caller's grant, refused policy_denied before anything is sent.
func TestEffectsReadGrantCannotUndo(t *testing.T) {
	e := newEffEnv(t, nil)
	a := e.rest(e.turn(effWriteGrant), "github__github_create_comment", effSeedBody, effLedger)
	if a.status != 200 || a.effect() != effSeedReport {
		t.Fatalf("create comment: %d %s", a.status, a.effect())
	}
	rep := effParseReport(t, a.effect())
	read := e.turn(effReadGrant)
	snap := e.snapshot()
	denied := effBareReport("irreversible", "github.comments.delete")

	d := e.rest(read, rep.Undo.Tool, restBody(t, e.followArgs(rep.Undo), false), effLedger+"-undo")
	if d.status != 403 {
		t.Fatalf("undo with a read grant: %d %s", d.status, d.body)
	}
	env := effErrBody(t, d)
	if env["code"] != "policy_denied" || effDetails(env)["code"] != "policy/grant_denied" {
		t.Errorf("refusal: %s", d.body)
	}
	if d.effect() != denied {
		t.Errorf("x-anvil-effect on the refusal:\n got %s\nwant %s", d.effect(), denied)
	}

	s := e.mcp(read)
	res := s.call(rep.Undo.Tool, e.followArgs(rep.Undo), map[string]any{"idempotency_key": effLedger + "-undo"})
	if env := res.envelope(t); env["code"] != "policy_denied" || effDetails(env)["code"] != "policy/grant_denied" {
		t.Errorf("MCP refusal: %s", res.text())
	}
	if res.effect() != denied {
		t.Errorf("_meta.effect on the refusal:\n got %s\nwant %s", res.effect(), denied)
	}

	e.unchanged(snap, "an undo under a read grant")
	if n := len(e.mock.State().Comments); n != 1 {
		t.Errorf("%d comments stored, want the 1 created", n)
	}
	raw, lines := e.audit()
	for _, i := range []int{1, 2} {
		l := lines[i]
		if l["decision"] != "denied" || l["rule"] != "policy/grant_denied" || l["error_code"] != "policy_denied" ||
			l["effect_class"] != "irreversible" || l["ledger_id"] != effLedger+"-undo" || l["upstream_status"] != nil {
			t.Errorf("audit line %d: %s", i, raw[i])
		}
	}
}

// A failed call still reports its class, its key and its lookup, with undo
// null (and no staged object).
func TestEffectsFailedCallsReport(t *testing.T) {
	// The person connected a key the upstream refuses: calls are sent and fail.
	e := newEffEnv(t, &effOptions{apiKey: "revoked-pat"})
	tok := e.turn(effWriteGrant)
	s := e.mcp(tok)

	res := s.call("github__github_create_comment", effArgs(t, effCommentArgs), map[string]any{"idempotency_key": effLedger})
	if !res.IsError {
		t.Fatalf("want a failure, got %s", res.text())
	}
	want := `{"class":"reversible","operation":"github.comments.create","idempotency_key":"01JBRANCHYARDLEDGER00000001","undo":null,"deadline_ms":null,"lookup":null}`
	if res.effect() != want {
		t.Errorf("failed comment report:\n got %s\nwant %s", res.effect(), want)
	}
	if reqs := e.mock.Requests(); len(reqs) != 1 || reqs[0].IdempotencyKey != effLedger || reqs[0].Authorized {
		t.Errorf("upstream: %+v", reqs)
	}

	lookup := `"lookup":{"operation":"github.tags.get","tool":"github__github_get_release","arguments":{"owner":"octo","repo":"hello","tag":"v9"},"by":"id"}`
	failedRelease := `{"class":"irreversible","operation":"github.releases.create","idempotency_key":null,"undo":null,"deadline_ms":null,` + lookup + `}`
	rel := map[string]any{"owner": "octo", "repo": "hello", "tag_name": "v9", "confirm": true}
	if r := s.call("github__github_create_release", rel, nil); !r.IsError || r.effect() != failedRelease {
		t.Errorf("failed release report:\n got %s\nwant %s", r.effect(), failedRelease)
	}
	// A failed staged call reports the same: no staged object, no undo.
	if r := s.call("github__github_create_release", rel, map[string]any{"stage": true}); !r.IsError || r.effect() != failedRelease {
		t.Errorf("failed staged report:\n got %s\nwant %s", r.effect(), failedRelease)
	}
	// Over REST the header carries it.
	a := e.rest(tok, "github__github_create_release", restBody(t, rel, false), "")
	if a.status < 400 || a.effect() != failedRelease {
		t.Errorf("REST failure: %d %s", a.status, a.effect())
	}

	// A call refused by the grant reports the class and lookup too.
	r := e.mcp(e.turn(effReadGrant)).call("github__github_create_release", rel, nil)
	if env := r.envelope(t); env["code"] != "policy_denied" || r.effect() != failedRelease {
		t.Errorf("refused release: %s\nreport %s", r.text(), r.effect())
	}

	// Every failure is audited allowed (except the grant refusal) with its error.
	raw, lines := e.audit()
	if len(lines) != 5 {
		t.Fatalf("%d audit lines, want 5", len(lines))
	}
	if lines[2]["staged_for"] != "github.releases.create" || lines[2]["operation"] != "github.releases.create" {
		t.Errorf("staged failure audit: %s", raw[2])
	}
	if lines[4]["decision"] != "denied" {
		t.Errorf("refusal audit: %s", raw[4])
	}
}

// Without a connection nothing is sent, and the report still carries the
// class and lookup with undo null.
func TestEffectsNotConnectedReport(t *testing.T) {
	e := newEffEnv(t, &effOptions{apiKey: "-"})
	s := e.mcp(e.turn(effWriteGrant))
	res := s.call("github__github_create_release", map[string]any{"owner": "octo", "repo": "hello", "tag_name": "v9", "confirm": true}, nil)
	if env := res.envelope(t); env["code"] != "auth_required" || effDetails(env)["code"] != "connector/not_connected" {
		t.Fatalf("refusal: %s", res.text())
	}
	rep := effParseReport(t, res.effect())
	if rep.Class != "irreversible" || rep.Undo != nil || rep.Lookup == nil || rep.Lookup.Tool != "github__github_get_release" || rep.Staged != nil {
		t.Errorf("report: %s", res.effect())
	}
	if n := len(e.upstream()); n != 0 {
		t.Errorf("%d requests reached the upstream", n)
	}
}

// A dry run reports nothing and sends nothing, staged or not.
func TestEffectsDryRunReportsNothing(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)
	s := e.mcp(tok)
	snap := e.snapshot()

	args := effArgs(t, effCommentArgs)
	args["anvil_dry_run"] = true
	res := s.call("github__github_create_comment", args, map[string]any{"idempotency_key": effLedger})
	if res.IsError {
		t.Fatalf("dry run: %s", res.text())
	}
	if _, ok := res.Meta["effect"]; ok {
		t.Errorf("a dry run reported %s", res.effect())
	}
	var sc map[string]map[string]any
	if err := json.Unmarshal(res.StructuredContent, &sc); err != nil || sc["anvil_dry_run"] == nil {
		t.Fatalf("structuredContent = %s", res.StructuredContent)
	}
	plan := sc["anvil_dry_run"]
	if plan["method"] != "POST" || !strings.HasSuffix(plan["url"].(string), "/repos/octo/hello/issues/2/comments") {
		t.Errorf("plan = %v", plan)
	}

	a := e.rest(tok, "github__github_create_comment", restBody(t, args, false), effLedger)
	if a.status != 200 {
		t.Fatalf("REST dry run: %d %s", a.status, a.body)
	}
	if _, ok := a.header[http.CanonicalHeaderKey("X-Anvil-Effect")]; ok {
		t.Errorf("a REST dry run reported %s", a.effect())
	}

	// A staged dry run plans the draft and sends nothing.
	rel := map[string]any{"owner": "octo", "repo": "hello", "tag_name": "v1.0.0", "confirm": true, "anvil_dry_run": true}
	st := s.call("github__github_create_release", rel, map[string]any{"stage": true, "idempotency_key": "ledger-staged-dry"})
	if st.IsError {
		t.Fatalf("staged dry run: %s", st.text())
	}
	if _, ok := st.Meta["effect"]; ok {
		t.Errorf("a staged dry run reported %s", st.effect())
	}
	var stc struct {
		Plan struct {
			Operation string         `json:"operation"`
			Body      map[string]any `json:"body"`
		} `json:"anvil_dry_run"`
	}
	if err := json.Unmarshal(st.StructuredContent, &stc); err != nil || stc.Plan.Body["draft"] != true || stc.Plan.Operation != "github.releases.create" {
		t.Errorf("staged plan = %s", st.StructuredContent)
	}
	e.unchanged(snap, "a dry run")

	raw, lines := e.audit()
	if len(lines) != 3 {
		t.Fatalf("%d audit lines, want 3", len(lines))
	}
	for i, l := range lines {
		if l["dry_run"] != true || l["upstream_status"] != nil || l["error_code"] != nil {
			t.Errorf("audit line %d: %s", i, raw[i])
		}
	}
	if lines[0]["ledger_id"] != effLedger || lines[2]["staged_for"] != "github.releases.create" || lines[2]["ledger_id"] != "ledger-staged-dry" {
		t.Errorf("audit: %v", raw)
	}
}
