package serve

import (
	"context"
	"encoding/json"
	"github.com/anvil-dev/anvil/runtime/audit"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The flows of the seed's "Effects and undo": a comment's inverse, an
// issue's compensation, a release staged and promoted, a repeated key.

// effSeedReport is the X-Anvil-Effect of the seed's REST example, byte for byte.
const effSeedReport = `{"class":"reversible","operation":"github.comments.create","idempotency_key":"01JBRANCHYARDLEDGER00000001","undo":{"kind":"inverse","operation":"github.comments.delete","tool":"github__github_delete_comment","arguments":{"owner":"octo","repo":"hello","comment_id":100}},"deadline_ms":null,"lookup":null}`

const effSeedBody = `{"arguments": {"owner": "octo", "repo": "hello", "issue_number": 2, "body": "Looks good."}}`

func TestEffectsCommentInverseREST(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)

	a := e.rest(tok, "github__github_create_comment", effSeedBody, effLedger)
	if a.status != 200 {
		t.Fatalf("create comment: %d %s", a.status, a.body)
	}
	if got := a.effect(); got != effSeedReport {
		t.Errorf("x-anvil-effect:\n got %s\nwant %s", got, effSeedReport)
	}
	if a.body != `{"id":100,"body":"Looks good."}` {
		t.Errorf("body = %s", a.body)
	}
	if cc := a.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("cache-control = %q", cc)
	}
	// The key reached the upstream through the operation's carrier.
	reqs := e.mock.Requests()
	if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != "/repos/octo/hello/issues/2/comments" || reqs[0].IdempotencyKey != effLedger || !reqs[0].Authorized {
		t.Fatalf("upstream saw %+v", reqs)
	}

	// A retry with the same key returns the first comment; one is stored.
	again := e.rest(tok, "github__github_create_comment", effSeedBody, effLedger)
	if again.status != 200 || again.body != a.body || again.effect() != effSeedReport {
		t.Errorf("retry: %d %s %s", again.status, again.body, again.effect())
	}
	if n := len(e.mock.State().Comments); n != 1 {
		t.Errorf("the mock stores %d comments after a retried key, want 1", n)
	}
	// The gateway's idempotency ledger answered the retry: nothing more
	// went upstream.
	if reqs := e.mock.Requests(); len(reqs) != 1 {
		t.Errorf("retry upstream: %+v", reqs)
	}

	// Calling the reported inverse (with confirm, which the delete needs)
	// deletes the comment; its own report is irreversible with no undo.
	rep := effParseReport(t, a.effect())
	if string(rep.Undo.Arguments) != `{"owner":"octo","repo":"hello","comment_id":100}` {
		t.Fatalf("undo arguments out of order: %s", rep.Undo.Arguments)
	}
	args := e.followArgs(rep.Undo)
	if args["confirm"] != true {
		t.Fatalf("the delete should need confirmation: %v", args)
	}
	d := e.rest(tok, rep.Undo.Tool, restBody(t, args, false), "")
	if d.status != 200 || d.body != "null" {
		t.Fatalf("undo: %d %s", d.status, d.body)
	}
	if want := effBareReport("irreversible", "github.comments.delete"); d.effect() != want {
		t.Errorf("undo report:\n got %s\nwant %s", d.effect(), want)
	}
	if n := len(e.mock.State().Comments); n != 0 {
		t.Errorf("the comment survived its inverse (%d stored)", n)
	}
	last := e.mock.Requests()[1]
	if last.Method != "DELETE" || last.Path != "/repos/octo/hello/issues/comments/100" {
		t.Errorf("undo upstream: %+v", last)
	}

	// Audit: every line carries effect_class, ledger_id and staged_for.
	raw, lines := e.audit()
	if len(lines) != 3 {
		t.Fatalf("audit has %d lines, want 3", len(lines))
	}
	wantTail := []string{
		`,"effect_class":"reversible","ledger_id":"01JBRANCHYARDLEDGER00000001","staged_for":null}`,
		`,"effect_class":"reversible","ledger_id":"01JBRANCHYARDLEDGER00000001","staged_for":null,"replay":true}`,
		`,"effect_class":"irreversible","ledger_id":null,"staged_for":null}`,
	}
	for i, w := range wantTail {
		if !strings.HasSuffix(string(audit.Record([]byte(raw[i]))), w) { // without the chain's seq and prev
			t.Errorf("audit line %d ends %q, want …%s", i, raw[i][max(0, len(raw[i])-100):], w)
		}
	}
	if lines[2]["operation"] != "github.comments.delete" || lines[2]["decision"] != "allowed" {
		t.Errorf("undo audit line: %s", raw[2])
	}
}

func TestEffectsCommentInverseMCP(t *testing.T) {
	e := newEffEnv(t, nil)
	s := e.mcp(e.turn(effWriteGrant))

	args := map[string]any{"owner": "octo", "repo": "hello", "issue_number": 2, "body": "Looks good."}
	res := s.call("github__github_create_comment", args, map[string]any{"idempotency_key": effLedger})
	if res.IsError {
		t.Fatalf("create comment: %s", res.text())
	}
	// _meta.effect holds the same bytes the REST header does.
	if res.effect() != effSeedReport {
		t.Errorf("_meta.effect:\n got %s\nwant %s", res.effect(), effSeedReport)
	}
	if res.text() != `{"id":100,"body":"Looks good."}` {
		t.Errorf("content = %s", res.text())
	}
	if reqs := e.mock.Requests(); len(reqs) != 1 || reqs[0].IdempotencyKey != effLedger {
		t.Fatalf("upstream: %+v", reqs)
	}
	// The repeated key returns the first comment; one comment is stored.
	again := s.call("github__github_create_comment", args, map[string]any{"idempotency_key": effLedger})
	if again.IsError || again.text() != res.text() || again.effect() != effSeedReport {
		t.Errorf("retry: %s %s", again.text(), again.effect())
	}
	if n := len(e.mock.State().Comments); n != 1 {
		t.Errorf("%d comments stored after a repeated key, want 1", n)
	}

	rep := effParseReport(t, res.effect())
	del := s.call(rep.Undo.Tool, e.followArgs(rep.Undo), nil)
	if del.IsError {
		t.Fatalf("undo: %s", del.text())
	}
	if want := effBareReport("irreversible", "github.comments.delete"); del.effect() != want {
		t.Errorf("undo report:\n got %s\nwant %s", del.effect(), want)
	}
	if n := len(e.mock.State().Comments); n != 0 {
		t.Errorf("%d comments left after the inverse", n)
	}
}

func TestEffectsIssueCompensation(t *testing.T) {
	e := newEffEnv(t, nil)
	s := e.mcp(e.turn(effWriteGrant))

	res := s.call("github__github_create_issue", map[string]any{"owner": "octo", "repo": "hello", "title": "x", "confirm": true}, nil)
	if res.IsError {
		t.Fatalf("create issue: %s", res.text())
	}
	want := `{"class":"compensable","operation":"github.issues.create","idempotency_key":null,"undo":{"kind":"compensate","operation":"github.issues.update","tool":"github__github_update_issue","arguments":{"owner":"octo","repo":"hello","issue_number":3,"state":"closed"}},"deadline_ms":null,"lookup":null}`
	if res.effect() != want {
		t.Errorf("_meta.effect:\n got %s\nwant %s", res.effect(), want)
	}
	rep := effParseReport(t, res.effect())
	upd := s.call(rep.Undo.Tool, e.followArgs(rep.Undo), nil)
	if upd.IsError {
		t.Fatalf("compensation: %s", upd.text())
	}
	if w := effBareReport("irreversible", "github.issues.update"); upd.effect() != w {
		t.Errorf("compensation report:\n got %s\nwant %s", upd.effect(), w)
	}
	st := e.mock.State()
	var state string
	for _, is := range st.Issues {
		if is.Number == 3 {
			state = is.State
		}
	}
	if state != "closed" {
		t.Errorf("issue 3 is %q after its compensation, want closed", state)
	}
	// The compensation went upstream as PATCH with state closed.
	var patch *effSeen
	for _, r := range e.upstream() {
		if r.Method == "PATCH" {
			r := r
			patch = &r
		}
	}
	if patch == nil || patch.Path != "/repos/octo/hello/issues/3" || !strings.Contains(string(patch.Body), `"state":"closed"`) {
		t.Errorf("compensation upstream: %+v", patch)
	}
}

// effStagedReport is the report of staging release v1.0.0 (draft id 500).
const effStagedReport = `{"class":"irreversible","operation":"github.releases.create","idempotency_key":null,"undo":null,"deadline_ms":null,` +
	`"lookup":{"operation":"github.tags.get","tool":"github__github_get_release","arguments":{"owner":"octo","repo":"hello","tag":"v1.0.0"},"by":"id"},` +
	`"staged":{"draft_operation":"github.releases.create","handle":500,` +
	`"promote":{"operation":"github.releases.update","tool":"github__github_update_release","arguments":{"owner":"octo","repo":"hello","release_id":500,"draft":false}},` +
	`"discard":{"operation":"github.releases.delete","tool":"github__github_delete_release","arguments":{"owner":"octo","repo":"hello","release_id":500}}}}`

const effPromoteReport = `{"class":"irreversible","operation":"github.releases.update","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":null}`

// checkDraftUpstream checks the staged call sent a draft create upstream.
func (e *effEnv) checkDraftUpstream(t *testing.T) {
	t.Helper()
	seen := e.upstream()
	if len(seen) != 1 || seen[0].Method != "POST" || seen[0].Path != "/repos/octo/hello/releases" {
		t.Fatalf("staging sent %+v", seen)
	}
	var body map[string]any
	if err := json.Unmarshal(seen[0].Body, &body); err != nil {
		t.Fatalf("draft body %q: %v", seen[0].Body, err)
	}
	if body["draft"] != true || body["tag_name"] != "v1.0.0" || body["name"] != "One" {
		t.Errorf("the draft's upstream body is %s, want tag_name, name and draft: true", seen[0].Body)
	}
	if rels := e.mock.State().Releases; len(rels) != 1 || !rels[0].Draft || rels[0].ID != 500 {
		t.Errorf("the mock holds %+v, want one draft release 500", rels)
	}
}

// checkPromoted checks release 500 is published and audited.
func (e *effEnv) checkPromoted(t *testing.T, key string) {
	t.Helper()
	if rels := e.mock.State().Releases; len(rels) != 1 || rels[0].Draft {
		t.Errorf("after the promotion the mock holds %+v, want release 500 with draft false", rels)
	}
	seen := e.upstream()
	last := seen[len(seen)-1]
	if last.Method != "PATCH" || last.Path != "/repos/octo/hello/releases/500" || !strings.Contains(string(last.Body), `"draft":false`) {
		t.Errorf("promotion upstream: %s %s %s", last.Method, last.Path, last.Body)
	}
	raw, lines := e.audit()
	if len(lines) != 2 {
		t.Fatalf("audit has %d lines, want 2", len(lines))
	}
	// The staged line names the draft's operation and the staged one.
	if lines[0]["operation"] != "github.releases.create" || lines[0]["staged_for"] != "github.releases.create" ||
		lines[0]["ledger_id"] != key || lines[0]["effect_class"] != "irreversible" {
		t.Errorf("staged audit line: %s", raw[0])
	}
	if lines[1]["operation"] != "github.releases.update" || lines[1]["staged_for"] != nil || lines[1]["ledger_id"] != key {
		t.Errorf("promotion audit line: %s", raw[1])
	}
}

func TestEffectsReleaseStagePromoteMCP(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)
	s := e.mcp(tok)
	const key = "01JBRANCHYARDLEDGER00000002"

	args := map[string]any{"owner": "octo", "repo": "hello", "tag_name": "v1.0.0", "name": "One", "confirm": true}
	res := s.call("github__github_create_release", args, map[string]any{"stage": true, "idempotency_key": key})
	if res.IsError {
		t.Fatalf("stage: %s", res.text())
	}
	if res.effect() != effStagedReport {
		t.Errorf("_meta.effect:\n got %s\nwant %s", res.effect(), effStagedReport)
	}
	// The answer is the draft.
	var data map[string]any
	if err := json.Unmarshal(res.StructuredContent, &data); err != nil || data["draft"] != true || data["id"] != float64(500) {
		t.Errorf("structuredContent = %s", res.StructuredContent)
	}
	e.checkDraftUpstream(t)

	// Promote with the official SDK client, carrying the staged entry's key.
	rep := effParseReport(t, res.effect())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs := e.sdk(ctx, tok)
	pr, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: rep.Staged.Promote.Tool, Arguments: e.followArgs(rep.Staged.Promote),
		Meta: mcp.Meta{"idempotency_key": key}})
	if err != nil {
		t.Fatalf("promote: %v", err)
	}
	if pr.IsError {
		t.Fatalf("promote failed: %v", pr.Content)
	}
	// The SDK decodes _meta into a map, so the key order is checked over
	// raw JSON-RPC elsewhere; here the values must match.
	b, _ := json.Marshal(pr.Meta["effect"])
	var got, want any
	_ = json.Unmarshal(b, &got)
	_ = json.Unmarshal([]byte(effPromoteReport), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("promotion report:\n got %s\nwant %s", b, effPromoteReport)
	}
	e.checkPromoted(t, key)
}

func TestEffectsReleaseStagePromoteREST(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)
	const key = "01JBRANCHYARDLEDGER00000003"

	args := map[string]any{"owner": "octo", "repo": "hello", "tag_name": "v1.0.0", "name": "One", "confirm": true}
	a := e.rest(tok, "github__github_create_release", restBody(t, args, true), key)
	if a.status != 200 {
		t.Fatalf("stage: %d %s", a.status, a.body)
	}
	if a.effect() != effStagedReport {
		t.Errorf("x-anvil-effect:\n got %s\nwant %s", a.effect(), effStagedReport)
	}
	if a.body != `{"id":500,"tag_name":"v1.0.0","name":"One","body":null,"draft":true}` {
		t.Errorf("body = %s", a.body)
	}
	e.checkDraftUpstream(t)

	rep := effParseReport(t, a.effect())
	p := e.rest(tok, rep.Staged.Promote.Tool, restBody(t, e.followArgs(rep.Staged.Promote), false), key)
	if p.status != 200 {
		t.Fatalf("promote: %d %s", p.status, p.body)
	}
	if p.effect() != effPromoteReport {
		t.Errorf("promotion report:\n got %s\nwant %s", p.effect(), effPromoteReport)
	}
	e.checkPromoted(t, key)
}

// The reported discard drops the draft.
func TestEffectsReleaseStageDiscard(t *testing.T) {
	e := newEffEnv(t, nil)
	tok := e.turn(effWriteGrant)
	args := map[string]any{"owner": "octo", "repo": "hello", "tag_name": "v1.0.0", "name": "One", "confirm": true}
	a := e.rest(tok, "github__github_create_release", restBody(t, args, true), "ledger-discard")
	if a.status != 200 {
		t.Fatalf("stage: %d %s", a.status, a.body)
	}
	rep := effParseReport(t, a.effect())
	d := e.rest(tok, rep.Staged.Discard.Tool, restBody(t, e.followArgs(rep.Staged.Discard), false), "ledger-discard-discard")
	if d.status != 200 || d.body != "null" {
		t.Fatalf("discard: %d %s", d.status, d.body)
	}
	if w := effBareReport("irreversible", "github.releases.delete"); d.effect() != w {
		t.Errorf("discard report:\n got %s\nwant %s", d.effect(), w)
	}
	if rels := e.mock.State().Releases; len(rels) != 0 {
		t.Errorf("the draft survived its discard: %+v", rels)
	}
}
