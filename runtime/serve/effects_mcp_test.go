package serve

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
)

// The cases of the reference's §h "MCP effects" that are not call-time
// refusals (those are in effects_codes_test.go).

func TestEffectsDeadlineMs(t *testing.T) {
	e := newEffEnv(t, &effOptions{variant: "deadline"})
	s := e.mcp(e.turn(effWriteGrant))
	const within = 86400000

	before := time.Now().UnixMilli()
	res := s.call("github__github_create_comment", map[string]any{"owner": "octo", "repo": "hello", "issue_number": 2, "body": "Soon gone."},
		map[string]any{"idempotency_key": "ledger-deadline"})
	after := time.Now().UnixMilli()
	if res.IsError {
		t.Fatalf("create comment: %s", res.text())
	}
	rep := effParseReport(t, res.effect())
	if rep.DeadlineMs == nil {
		t.Fatalf("deadline_ms is null in %s", res.effect())
	}
	if *rep.DeadlineMs < before+within || *rep.DeadlineMs > after+within {
		t.Errorf("deadline_ms = %d, want within [%d, %d] (call time + within_ms)", *rep.DeadlineMs, before+within, after+within)
	}
	if rep.Undo == nil || rep.Undo.Kind != "inverse" || rep.Undo.Tool != "github__github_delete_comment" {
		t.Errorf("undo = %+v", rep.Undo)
	}
	// The key order is unchanged by the deadline.
	if !strings.HasPrefix(res.effect(), `{"class":"reversible","operation":"github.comments.create","idempotency_key":"ledger-deadline","undo":{`) ||
		!strings.HasSuffix(res.effect(), `,"lookup":null}`) {
		t.Errorf("report = %s", res.effect())
	}
}

// An operation without an idempotency carrier sends no key upstream and
// reports idempotency_key null, but the audit line keeps the ledger id.
func TestEffectsNoCarrierKey(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)
	s := e.mcp(tok)

	res := s.call("github__github_create_issue", map[string]any{"owner": "octo", "repo": "hello", "title": "x", "confirm": true},
		map[string]any{"idempotency_key": "ledger-issue-1"})
	if res.IsError {
		t.Fatalf("create issue: %s", res.text())
	}
	rep := effParseReport(t, res.effect())
	if rep.IdempotencyKey != nil {
		t.Errorf("idempotency_key = %q, want null (createIssue has no carrier)", *rep.IdempotencyKey)
	}
	// Over REST the same: the header is the ledger id, nothing goes upstream.
	a := e.rest(tok, "github__github_create_issue", restBody(t, map[string]any{"owner": "octo", "repo": "hello", "title": "y", "confirm": true}, false), "ledger-issue-2")
	if a.status != 200 {
		t.Fatalf("REST create issue: %d %s", a.status, a.body)
	}
	if rep := effParseReport(t, a.effect()); rep.IdempotencyKey != nil {
		t.Errorf("REST idempotency_key = %q, want null", *rep.IdempotencyKey)
	}
	for _, r := range e.mock.Requests() {
		if r.IdempotencyKey != "" {
			t.Errorf("the upstream got Idempotency-Key %q on %s %s", r.IdempotencyKey, r.Method, r.Path)
		}
	}
	for _, r := range e.upstream() {
		if _, ok := r.Header["Idempotency-Key"]; ok {
			t.Errorf("the upstream got an Idempotency-Key header on %s %s", r.Method, r.Path)
		}
		if strings.Contains(string(r.Body), "ledger-issue") {
			t.Errorf("the ledger id leaked into the upstream body: %s", r.Body)
		}
	}
	raw, lines := e.audit()
	if len(lines) != 2 || lines[0]["ledger_id"] != "ledger-issue-1" || lines[1]["ledger_id"] != "ledger-issue-2" {
		t.Errorf("audit ledger ids: %v", raw)
	}
	for i, l := range lines {
		if l["effect_class"] != "compensable" || l["staged_for"] != nil {
			t.Errorf("audit line %d: %s", i, raw[i])
		}
	}
}

// An SDK sends its key as the tool's idempotency_key argument, not _meta:
// it goes upstream, is reported, and is the audit line's ledger id.
func TestEffectsArgumentKey(t *testing.T) {
	e := newEffEnv(t, nil)
	s := e.mcp(e.turn(effWriteGrant))
	res := s.call("github__github_create_comment",
		map[string]any{"owner": "octo", "repo": "hello", "issue_number": 2, "body": "From the SDK.", "idempotency_key": "anvil-sdk-key"}, nil)
	if res.IsError {
		t.Fatalf("create comment: %s", res.text())
	}
	rep := effParseReport(t, res.effect())
	if rep.IdempotencyKey == nil || *rep.IdempotencyKey != "anvil-sdk-key" {
		t.Errorf("idempotency_key = %v", rep.IdempotencyKey)
	}
	if reqs := e.mock.Requests(); len(reqs) != 1 || reqs[0].IdempotencyKey != "anvil-sdk-key" {
		t.Errorf("upstream: %+v", reqs)
	}
	if _, l := e.lastAudit(); l["ledger_id"] != "anvil-sdk-key" {
		t.Errorf("ledger_id = %v", l["ledger_id"])
	}
	// The same key in the arguments and in _meta is no conflict.
	same := s.call("github__github_create_comment",
		map[string]any{"owner": "octo", "repo": "hello", "issue_number": 2, "body": "From the SDK.", "idempotency_key": "anvil-sdk-key"},
		map[string]any{"idempotency_key": "anvil-sdk-key"})
	if same.IsError {
		t.Errorf("the same key twice: %s", same.text())
	}
	if n := len(e.mock.State().Comments); n != 1 {
		t.Errorf("%d comments stored, want 1", n)
	}
}

// An undeclared read reports exactly {class: read, …} with no extra keys,
// over MCP and REST, even when the caller sends a key.
func TestEffectsUndeclaredReadReport(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effReadGrant)
	s := e.mcp(tok)
	want := effBareReport("read", "github.issues.list")

	res := s.call("github__github_list_issue", map[string]any{"owner": "octo", "repo": "hello"}, nil)
	if res.IsError {
		t.Fatalf("list issues: %s", res.text())
	}
	if res.effect() != want {
		t.Errorf("_meta.effect:\n got %s\nwant %s", res.effect(), want)
	}
	keyed := s.call("github__github_list_issue", map[string]any{"owner": "octo", "repo": "hello"}, map[string]any{"idempotency_key": "ledger-read"})
	if keyed.effect() != want {
		t.Errorf("_meta.effect with a key:\n got %s\nwant %s", keyed.effect(), want)
	}
	a := e.rest(tok, "github__github_list_issue", `{"arguments":{"owner":"octo","repo":"hello"}}`, "")
	if a.status != 200 || a.effect() != want {
		t.Errorf("REST: %d x-anvil-effect %s", a.status, a.effect())
	}
	if g := e.rest(tok, "github__github_get_release", `{"arguments":{"owner":"octo","repo":"hello","tag":"none"}}`, ""); g.effect() != effBareReport("read", "github.tags.get") {
		t.Errorf("a failed read reports %s", g.effect())
	}
	_, lines := e.audit()
	for i, l := range lines {
		if l["effect_class"] != "read" {
			t.Errorf("audit line %d effect_class = %v", i, l["effect_class"])
		}
	}
	if lines[1]["ledger_id"] != "ledger-read" || lines[0]["ledger_id"] != nil {
		t.Errorf("ledger ids: %v, %v", lines[0]["ledger_id"], lines[1]["ledger_id"])
	}
}

// tools/list publishes anvil/effect_class and anvil/effect_contract only for
// the operations that declare a contract.
func TestEffectsToolsListContracts(t *testing.T) {
	e := newEffEnv(t, nil)
	s := e.mcp(e.turn(effWriteGrant))
	r := s.rpc("tools/list", map[string]any{})
	if r.Error != nil {
		t.Fatalf("tools/list: %v", r.Error)
	}
	var list struct {
		Tools []struct {
			Name string                     `json:"name"`
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.Result, &list); err != nil {
		t.Fatal(err)
	}
	contracts := map[string][2]string{
		"github__github_create_comment": {`"reversible"`,
			`{"class":"reversible","inverse":{"operation":"github.comments.delete","arguments":{"owner":"request.owner","repo":"request.repo","comment_id":"response.id"}}}`},
		"github__github_create_issue": {`"compensable"`,
			`{"class":"compensable","compensate":{"operation":"github.issues.update","arguments":{"owner":"request.owner","repo":"request.repo","issue_number":"response.number","state":{"const":"closed"}}}}`},
		"github__github_create_release": {`"irreversible"`,
			`{"class":"irreversible","lookup":{"operation":"github.tags.get","by":"id","arguments":{"owner":"request.owner","repo":"request.repo","tag":"request.tag_name"}},` +
				`"draft":{"operation":"github.releases.create","arguments":{"owner":"request.owner","repo":"request.repo","tag_name":"request.tag_name","name":"request.name?","body":"request.body?","draft":{"const":true}},` +
				`"handle":"response.id","promote":{"operation":"github.releases.update","arguments":{"owner":"request.owner","repo":"request.repo","release_id":"response.id","draft":{"const":false}}},` +
				`"discard":{"operation":"github.releases.delete","arguments":{"owner":"request.owner","repo":"request.repo","release_id":"response.id"}}}}`},
	}
	if len(list.Tools) != 12 {
		t.Errorf("a write grant with confirm lists %d tools, want 12", len(list.Tools))
	}
	for _, tool := range list.Tools {
		if _, ok := tool.Meta["anvil/operation_id"]; !ok {
			t.Errorf("%s has no anvil/operation_id", tool.Name)
		}
		want, declares := contracts[tool.Name]
		class, hasClass := tool.Meta["anvil/effect_class"]
		contract, hasContract := tool.Meta["anvil/effect_contract"]
		if !declares {
			if hasClass || hasContract {
				t.Errorf("%s declares no contract but lists anvil/effect_class %s, anvil/effect_contract %s", tool.Name, class, contract)
			}
			continue
		}
		if string(class) != want[0] {
			t.Errorf("%s anvil/effect_class = %s, want %s", tool.Name, class, want[0])
		}
		if string(contract) != want[1] {
			t.Errorf("%s anvil/effect_contract:\n got %s\nwant %s", tool.Name, contract, want[1])
		}
		delete(contracts, tool.Name)
	}
	for name := range contracts {
		t.Errorf("%s is not listed", name)
	}
}

// effCommentDraft gives comments.create a draft form (itself), so a staged
// call of an operation with an idempotency carrier can be tried. The
// compiled example has none, so the AIR is edited.
func effCommentDraft(doc *air.Document) {
	path := func(p string) air.ArgSource { return air.ArgSource{Path: p} }
	op := doc.Operation("github.comments.create")
	op.Effect.Draft = &air.Draft{
		Operation: "github.comments.create",
		Arguments: air.Mapping{{Name: "owner", ArgSource: path("request.owner")}, {Name: "repo", ArgSource: path("request.repo")},
			{Name: "issue_number", ArgSource: path("request.issue_number")}, {Name: "body", ArgSource: path("request.body")}},
		Handle: "response.id",
		Promote: air.Call{Operation: "github.comments.delete", Arguments: air.Mapping{{Name: "owner", ArgSource: path("request.owner")},
			{Name: "repo", ArgSource: path("request.repo")}, {Name: "comment_id", ArgSource: path("response.id")}}},
	}
}

// A staged call's key is checked against its own arguments, and the key
// (from _meta, or an SDK's argument) is applied to the draft.
func TestEffectsStagedCallKeys(t *testing.T) {
	e := newEffEnv(t, &effOptions{edit: effCommentDraft})
	s := e.mcp(e.turn(effWriteGrant))
	args := func(key string) map[string]any {
		m := map[string]any{"owner": "octo", "repo": "hello", "issue_number": 2, "body": "Draft."}
		if key != "" {
			m["idempotency_key"] = key
		}
		return m
	}

	snap := e.snapshot()
	res := s.call("github__github_create_comment", args("in-args"), map[string]any{"stage": true, "idempotency_key": "in-meta"})
	checkRefusalMCP(t, res, effRefusal{code: "validation_error", operation: "github.comments.create",
		details: `{"code":"effect/idempotency_key_conflict","field":"idempotency_key"}`,
		report:  effBareReport("reversible", "github.comments.create")})
	e.unchanged(snap, "a staged call with conflicting keys")

	for i, c := range []struct {
		args map[string]any
		meta map[string]any
		key  string
	}{
		{args(""), map[string]any{"stage": true, "idempotency_key": "in-meta"}, "in-meta"},
		{args("sdk-key"), map[string]any{"stage": true}, "sdk-key"},
	} {
		res := s.call("github__github_create_comment", c.args, c.meta)
		if res.IsError {
			t.Fatalf("staged call %d: %s", i, res.text())
		}
		rep := effParseReport(t, res.effect())
		if rep.IdempotencyKey == nil || *rep.IdempotencyKey != c.key || rep.Staged == nil || rep.Undo != nil {
			t.Errorf("staged report %d: %s", i, res.effect())
		}
		reqs := e.mock.Requests()
		if last := reqs[len(reqs)-1]; last.Method != "POST" || last.IdempotencyKey != c.key {
			t.Errorf("staged call %d upstream: %+v", i, last)
		}
		if _, l := e.lastAudit(); l["ledger_id"] != c.key || l["staged_for"] != "github.comments.create" {
			t.Errorf("staged call %d audit: %v", i, l)
		}
	}
}
