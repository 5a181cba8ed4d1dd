package serve

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// One test per call-time effect/* code (reference §c "Effect codes returned
// at call time"), each proving that nothing reached the upstream.

// effRefusal is what a refused call must show.
type effRefusal struct {
	code      string // error.code
	details   string // error.details, exact JSON
	operation string // error.operation
	report    string // _meta.effect / X-Anvil-Effect, exact
}

// checkRefusalMCP checks an isError tools/call result.
func checkRefusalMCP(t *testing.T, res effResult, want effRefusal) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a refusal, got %s", res.text())
	}
	var env struct {
		Error struct {
			Code      string          `json:"code"`
			Message   string          `json:"message"`
			Operation string          `json:"operation"`
			TraceID   string          `json:"trace_id"`
			Details   json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(res.text()), &env); err != nil {
		t.Fatalf("error text: %v: %s", err, res.text())
	}
	if env.Error.Code != want.code || string(env.Error.Details) != want.details || env.Error.Operation != want.operation {
		t.Errorf("refusal = %s\nwant code %s, details %s, operation %s", res.text(), want.code, want.details, want.operation)
	}
	if env.Error.Message == "" || !strings.HasPrefix(env.Error.TraceID, "trace_") {
		t.Errorf("refusal lacks a message or trace id: %s", res.text())
	}
	if res.effect() != want.report {
		t.Errorf("_meta.effect:\n got %s\nwant %s", res.effect(), want.report)
	}
}

// checkRefusalREST checks a /call answer.
func checkRefusalREST(t *testing.T, a effAnswer, status int, want effRefusal) {
	t.Helper()
	if a.status != status {
		t.Errorf("status %d, want %d: %s", a.status, status, a.body)
	}
	var env struct {
		Error struct {
			Code    string          `json:"code"`
			Details json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &env); err != nil {
		t.Fatalf("body: %v: %s", err, a.body)
	}
	if env.Error.Code != want.code || string(env.Error.Details) != want.details {
		t.Errorf("REST refusal = %s, want %s %s", a.body, want.code, want.details)
	}
	if a.effect() != want.report {
		t.Errorf("x-anvil-effect:\n got %s\nwant %s", a.effect(), want.report)
	}
}

// checkAuditCode checks the newest audit line's error code and decision.
func (e *effEnv) checkAuditCode(t *testing.T, code string) {
	t.Helper()
	raw, l := e.lastAudit()
	if l["error_code"] != code || l["decision"] != "allowed" || l["upstream_status"] != nil {
		t.Errorf("audit line: %s", raw)
	}
}

const effCommentArgs = `{"owner":"octo","repo":"hello","issue_number":2,"body":"Looks good."}`

func effArgs(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEffectsCodeInvalidMeta(t *testing.T) {
	e := newEffEnv(t, nil)
	s := e.mcp(e.turn(effWriteGrant))
	snap := e.snapshot()
	failed := `{"class":"reversible","operation":"github.comments.create","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":null}`
	cases := []struct {
		name  string
		meta  map[string]any
		field string
	}{
		{"stage string", map[string]any{"stage": "yes"}, "_meta.stage"},
		{"stage null", map[string]any{"stage": nil}, "_meta.stage"},
		{"stage number", map[string]any{"stage": 1}, "_meta.stage"},
		{"key number", map[string]any{"idempotency_key": 7}, "_meta.idempotency_key"},
		{"key empty", map[string]any{"idempotency_key": ""}, "_meta.idempotency_key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := s.call("github__github_create_comment", effArgs(t, effCommentArgs), c.meta)
			checkRefusalMCP(t, res, effRefusal{code: "validation_error", operation: "github.comments.create", report: failed,
				details: `{"code":"effect/invalid_meta","field":"` + c.field + `"}`})
			e.checkAuditCode(t, "validation_error")
		})
	}
	e.unchanged(snap, "a call with invalid _meta")
	if n := len(e.mock.State().Comments); n != 0 {
		t.Errorf("%d comments stored", n)
	}
}

func TestEffectsCodeIdempotencyKeyConflict(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)
	s := e.mcp(tok)
	snap := e.snapshot()
	args := effArgs(t, effCommentArgs)
	args["idempotency_key"] = "key-in-arguments"
	want := effRefusal{code: "validation_error", operation: "github.comments.create",
		details: `{"code":"effect/idempotency_key_conflict","field":"idempotency_key"}`,
		report:  `{"class":"reversible","operation":"github.comments.create","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":null}`}

	res := s.call("github__github_create_comment", args, map[string]any{"idempotency_key": effLedger})
	checkRefusalMCP(t, res, want)
	_, l := e.lastAudit()
	if l["ledger_id"] != effLedger || l["error_code"] != "validation_error" {
		t.Errorf("audit line: %v", l)
	}
	a := e.rest(tok, "github__github_create_comment", restBody(t, args, false), effLedger)
	checkRefusalREST(t, a, 400, want)
	e.unchanged(snap, "a conflicting key")
}

func TestEffectsCodeNoDraftForm(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)
	s := e.mcp(tok)
	snap := e.snapshot()
	args := map[string]any{"owner": "octo", "repo": "hello", "title": "x", "confirm": true}
	want := effRefusal{code: "unsupported_operation", operation: "github.issues.create",
		details: `{"code":"effect/no_draft_form"}`,
		report:  effBareReport("compensable", "github.issues.create")}

	// The issue has a compensation but no draft: staging it must not fall
	// through to the real call.
	res := s.call("github__github_create_issue", args, map[string]any{"stage": true, "idempotency_key": "ledger-nodraft"})
	checkRefusalMCP(t, res, want)
	e.checkAuditCode(t, "unsupported_operation")
	a := e.rest(tok, "github__github_create_issue", restBody(t, args, true), "ledger-nodraft")
	checkRefusalREST(t, a, 422, want)
	// A read has no draft form either.
	r := s.call("github__github_list_issue", map[string]any{"owner": "octo", "repo": "hello"}, map[string]any{"stage": true})
	checkRefusalMCP(t, r, effRefusal{code: "unsupported_operation", operation: "github.issues.list",
		details: `{"code":"effect/no_draft_form"}`, report: effBareReport("read", "github.issues.list")})
	e.unchanged(snap, "staging an operation without a draft form")
	if n := len(e.mock.State().Issues); n != 2 {
		t.Errorf("the mock holds %d issues, want the 2 seeded", n)
	}
}

func TestEffectsCodeDraftUnavailable(t *testing.T) {
	// issues.update drafts into comments.create, which this variant leaves
	// review_required (the compiler warns effect/operation_not_approved).
	e := newEffEnv(t, &effOptions{variant: "drafts"})
	if e.g.Fleet().Tool("github__github_create_comment") != nil {
		t.Fatal("the drafts variant serves comments.create")
	}
	tok := e.turn(effWriteGrant)
	s := e.mcp(tok)
	snap := e.snapshot()
	args := map[string]any{"owner": "octo", "repo": "hello", "issue_number": 2, "state": "closed", "confirm": true}
	want := effRefusal{code: "unsupported_operation", operation: "github.issues.update",
		details: `{"code":"effect/draft_unavailable"}`,
		report:  effBareReport("irreversible", "github.issues.update")}
	res := s.call("github__github_update_issue", args, map[string]any{"stage": true})
	checkRefusalMCP(t, res, want)
	if !strings.Contains(res.text(), "github.comments.create") {
		t.Errorf("the message does not name the draft operation: %s", res.text())
	}
	e.checkAuditCode(t, "unsupported_operation")
	checkRefusalREST(t, e.rest(tok, "github__github_update_issue", restBody(t, args, true), ""), 422, want)
	e.unchanged(snap, "staging into an unserved draft")
}

var effReleaseLookup = `"lookup":{"operation":"github.tags.get","tool":"github__github_get_release","arguments":{"owner":"octo","repo":"hello","tag":"v2.0.0"},"by":"id"}`

func TestEffectsCodeDraftArgumentMissing(t *testing.T) {
	// The drafts variant maps the release draft's body from request.body
	// without "?".
	e := newEffEnv(t, &effOptions{variant: "drafts"})
	tok := e.turn(effWriteGrant)
	s := e.mcp(tok)
	snap := e.snapshot()
	args := map[string]any{"owner": "octo", "repo": "hello", "tag_name": "v2.0.0", "confirm": true}
	want := effRefusal{code: "validation_error", operation: "github.releases.create",
		details: `{"code":"effect/draft_argument_missing","argument":"body"}`,
		report:  `{"class":"irreversible","operation":"github.releases.create","idempotency_key":null,"undo":null,"deadline_ms":null,` + effReleaseLookup + `}`}
	res := s.call("github__github_create_release", args, map[string]any{"stage": true})
	checkRefusalMCP(t, res, want)
	e.checkAuditCode(t, "validation_error")
	checkRefusalREST(t, e.rest(tok, "github__github_create_release", restBody(t, args, true), ""), 400, want)
	e.unchanged(snap, "a draft with a missing mapped value")

	// With the body the same staged call goes through as a draft.
	args["body"] = "Notes."
	ok := s.call("github__github_create_release", args, map[string]any{"stage": true})
	if ok.IsError {
		t.Fatalf("staging with a body: %s", ok.text())
	}
	if seen := e.upstream(); len(seen) != 1 || !strings.Contains(string(seen[0].Body), `"draft":true`) || !strings.Contains(string(seen[0].Body), `"body":"Notes."`) {
		t.Errorf("upstream: %+v", seen)
	}
}

func TestEffectsCodeDraftInputInvalid(t *testing.T) {
	// The compiler refuses a draft literal of the wrong type
	// (TestEffectsFixturesCompiled checks effect/mapping_type_mismatch), so
	// only a hand-written or stale bundle carries one: the AIR is edited
	// after compiling, and the gateway must still refuse at call time.
	e := newEffEnv(t, &effOptions{edit: func(doc *air.Document) {
		op := doc.Operation("github.releases.create")
		for i, a := range op.Effect.Draft.Arguments {
			if a.Name == "draft" {
				op.Effect.Draft.Arguments[i].ArgSource = air.ArgSource{Const: json.RawMessage(`"yes"`)}
			}
		}
	}})
	tok := e.turn(effWriteGrant)
	s := e.mcp(tok)
	snap := e.snapshot()
	args := map[string]any{"owner": "octo", "repo": "hello", "tag_name": "v2.0.0", "confirm": true}
	want := effRefusal{code: "validation_error", operation: "github.releases.create",
		details: `{"code":"effect/draft_input_invalid"}`,
		report:  `{"class":"irreversible","operation":"github.releases.create","idempotency_key":null,"undo":null,"deadline_ms":null,` + effReleaseLookup + `}`}
	res := s.call("github__github_create_release", args, map[string]any{"stage": true, "idempotency_key": "ledger-invalid"})
	checkRefusalMCP(t, res, want)
	if !strings.Contains(res.text(), "draft") {
		t.Errorf("the message does not say what failed: %s", res.text())
	}
	e.checkAuditCode(t, "validation_error")
	checkRefusalREST(t, e.rest(tok, "github__github_create_release", restBody(t, args, true), ""), 400, want)
	e.unchanged(snap, "a draft input that fails the draft's schema")
	// The unstaged call is untouched by the broken draft.
	if a := e.rest(tok, "github__github_create_release", restBody(t, args, false), ""); a.status != 200 {
		t.Errorf("the plain call: %d %s", a.status, a.body)
	}
}
