package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Check names of the write turn (seed "Effects and undo" and the REST example).
const (
	chkWriteToken      = "write token is minted"
	chkWriteTools      = "write turn lists every tool"
	chkCommentEffect   = "comment create reports a reversible effect"
	chkCommentSeed     = "comment effect report matches the seed"
	chkCommentKey      = "upstream saw the comment's idempotency key"
	chkCommentRepeat   = "repeated key returns the same comment"
	chkInverse         = "inverse deletes the comment"
	chkInverseReport   = "inverse reports irreversible with no undo"
	chkMCPIssue        = "mcp issue create reports the compensation"
	chkMCPClose        = "mcp session closes with DELETE"
	chkRESTCompensate  = "compensation over rest closes the issue"
	chkMCPCompensate   = "compensation over mcp closes a second issue"
	chkStage           = "stage makes a draft release"
	chkStaged          = "stage reports promote and discard"
	chkPromote         = "promote publishes the release"
	chkReadReport      = "undeclared read reports exactly read"
	chkWriteAuditLines = "audit has one line per write-turn call"
	chkWriteAuditOrder = "write-turn audit lines keep the field order"
	chkAuditEffects    = "audit lines carry effect_class, ledger_id and staged_for"
	chkAuditStaged     = "staged call is audited as the draft"
)

// Ledger ids, as Branchyard's proxy would send them (follow-ups use
// <id>-undo; a promotion reuses the staged entry's id).
const (
	keyComment = "01JBRANCHYARDLEDGER00000001"
	keyIssue1  = "01JBRANCHYARDLEDGER00000002"
	keyIssue2  = "01JBRANCHYARDLEDGER00000003"
	keyRelease = "01JBRANCHYARDLEDGER00000004"
	releaseTag = "v1.0.0"
)

// Wire tool names on the gateway.
const (
	toolCreateComment = "github__github_create_comment"
	toolDeleteComment = "github__github_delete_comment"
	toolCreateIssue   = "github__github_create_issue"
	toolUpdateIssue   = "github__github_update_issue"
	toolGetIssue      = "github__github_get_issue"
	toolCreateRelease = "github__github_create_release"
	toolUpdateRelease = "github__github_update_release"
	toolDeleteRelease = "github__github_delete_release"
)

// allTools are the twelve operations served under the write grant.
var allTools = []string{
	"github__github_create_comment", "github__github_create_issue", "github__github_create_release",
	"github__github_delete_comment", "github__github_delete_release", "github__github_get_issue",
	"github__github_get_release", "github__github_list_comment", "github__github_list_issue",
	"github__github_list_pull", "github__github_update_issue", "github__github_update_release",
}

// writeTurnOps is the write turn's calls, in order, as the audit log names them.
var writeTurnOps = []string{
	"github.comments.create", "github.comments.create", "github.comments.delete",
	"github.issues.create", "github.issues.update",
	"github.issues.create", "github.issues.update",
	"github.releases.create", "github.releases.update",
	"github.issues.get",
}

func (r *runner) writeTurn() {
	r.step(chkWriteToken, []string{chkGateway}, func(ctx context.Context) (err error) {
		r.writeToken, err = r.mint(ctx, r.paths.writeToken, "--branch", "main", "--turn", "2", "--grants", writeGrant)
		return err
	})
	r.step(chkWriteTools, []string{chkWriteToken}, r.listWriteTools)

	calls := []string{chkWriteToken, chkConnect}
	var inverseAnswer *httpAnswer
	r.step(chkCommentEffect, calls, r.createComment)
	r.step(chkCommentSeed, []string{chkCommentEffect}, func(context.Context) error {
		want := fmt.Sprintf(`{"class":"reversible","operation":"github.comments.create","idempotency_key":%q,`+
			`"undo":{"kind":"inverse","operation":"github.comments.delete","tool":%q,`+
			`"arguments":{"owner":"octo","repo":"hello","comment_id":%d}},"deadline_ms":null,"lookup":null}`,
			keyComment, toolDeleteComment, r.comment.id)
		if r.comment.rawHead != want {
			return fmt.Errorf("x-anvil-effect is %s, want %s", r.comment.rawHead, want)
		}
		return nil
	})
	r.step(chkCommentKey, []string{chkCommentEffect}, func(ctx context.Context) error {
		reqs, err := r.mockRequests(ctx)
		if err != nil {
			return err
		}
		for _, q := range reqs {
			if q.Method == http.MethodPost && q.Path == "/repos/octo/hello/issues/2/comments" && q.IdempotencyKey == keyComment {
				return nil
			}
		}
		return fmt.Errorf("no POST /repos/octo/hello/issues/2/comments with Idempotency-Key %s reached the mock", keyComment)
	})
	r.step(chkCommentRepeat, []string{chkCommentEffect}, r.repeatComment)
	r.step(chkInverse, []string{chkCommentEffect}, func(ctx context.Context) error {
		ans, err := r.callInverse(ctx)
		inverseAnswer = ans
		return err
	})
	r.step(chkInverseReport, []string{chkInverse}, func(context.Context) error {
		e, err := parseEffect([]byte(inverseAnswer.header.Get("X-Anvil-Effect")))
		if err != nil {
			return err
		}
		if e.Class != "irreversible" || e.Undo != nil || e.Operation != "github.comments.delete" {
			return fmt.Errorf("the inverse's report is %s, want class irreversible, operation github.comments.delete and undo null", inverseAnswer.header.Get("X-Anvil-Effect"))
		}
		return nil
	})

	r.mcpClose = errors.New("the session was not opened")
	r.step(chkMCPIssue, calls, r.mcpCreateIssue)
	r.step(chkMCPClose, calls, func(context.Context) error { return r.mcpClose })
	r.step(chkRESTCompensate, []string{chkMCPIssue}, r.restCompensate)
	r.step(chkMCPCompensate, calls, r.mcpCompensate)

	var stageBody map[string]any
	var stageEffect *effectReport
	r.step(chkStage, calls, func(ctx context.Context) (err error) {
		stageBody, stageEffect, err = r.stageRelease(ctx)
		return err
	})
	r.step(chkStaged, []string{chkStage}, func(context.Context) error {
		return r.checkStaged(stageBody, stageEffect)
	})
	r.step(chkPromote, []string{chkStaged}, r.promote)
	r.step(chkReadReport, calls, r.undeclaredRead)

	var lines []auditLine
	r.step(chkWriteAuditLines, []string{chkReadAuditLines, chkWriteToken}, func(ctx context.Context) error {
		all, err := r.waitAudit(ctx, r.auditCount+len(writeTurnOps))
		if len(all) > r.auditCount {
			lines = all[r.auditCount:]
		}
		r.auditCount = len(all)
		if err != nil {
			return err
		}
		if err := sameOperations(lines, writeTurnOps); err != nil {
			return err
		}
		for i, l := range lines {
			if l.str("decision") != "allowed" || l.str("by_turn") != "2" {
				return fmt.Errorf("line %d (%s) has decision %v and by_turn %v, want allowed and 2", i+1, l.str("operation"), l.Fields["decision"], l.Fields["by_turn"])
			}
		}
		return nil
	})
	r.step(chkWriteAuditOrder, []string{chkWriteAuditLines}, func(context.Context) error { return fieldOrder(lines) })
	r.step(chkAuditEffects, []string{chkWriteAuditLines}, func(context.Context) error { return checkAuditEffects(r.readAudit, lines) })
	r.step(chkAuditStaged, []string{chkWriteAuditLines}, func(context.Context) error { return checkAuditStaged(lines) })
}

// listWriteTools lists the write turn's tools over MCP and keeps their
// schemas (a follow-up sets the confirm a schema requires).
func (r *runner) listWriteTools(ctx context.Context) error {
	m := newMCP(r.http, r.audience(), r.writeToken)
	defer func() { _ = m.close(ctx) }()
	if err := m.open(ctx); err != nil {
		return err
	}
	tools, err := m.listTools(ctx)
	if err != nil {
		return err
	}
	r.tools = map[string]toolInfo{}
	var names []string
	for _, t := range tools {
		r.tools[t.Name] = t
		names = append(names, t.Name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != strings.Join(allTools, ",") {
		return fmt.Errorf("tools/list shows %s, want %s", strings.Join(names, ", "), strings.Join(allTools, ", "))
	}
	return nil
}

// followArgs returns a follow-up's arguments plus the confirm its tool's
// schema requires.
func (r *runner) followArgs(f *followUp) (map[string]any, error) {
	args, err := f.args()
	if err != nil {
		return nil, err
	}
	if t, ok := r.tools[f.Tool]; ok {
		for _, name := range confirmArgs(t.InputSchema) {
			if _, set := args[name]; !set {
				args[name] = true
			}
		}
	}
	return args, nil
}

// rest sends a REST call with the write token and wants 200 and a JSON body.
func (r *runner) rest(ctx context.Context, c restCall) (*httpAnswer, any, error) {
	ans, err := callREST(ctx, r.http, r.base(), r.writeToken, c)
	if err != nil {
		return nil, nil, err
	}
	if ans.status != http.StatusOK {
		return ans, nil, fmt.Errorf("POST /call/%s answered %d %s", c.tool, ans.status, brief(ans.body))
	}
	var body any
	if err := decodeJSON(ans.body, &body); err != nil {
		return ans, nil, fmt.Errorf("POST /call/%s answered a body that is not JSON: %s", c.tool, brief(ans.body))
	}
	return ans, body, nil
}

func (r *runner) createComment(ctx context.Context) error {
	ans, body, err := r.rest(ctx, restCall{
		tool: toolCreateComment,
		args: map[string]any{"owner": "octo", "repo": "hello", "issue_number": 2, "body": "Looks good."},
		key:  keyComment,
	})
	if err != nil {
		return err
	}
	obj, _ := body.(map[string]any)
	id, ok := intField(obj, "id")
	if !ok || obj["body"] != "Looks good." {
		return fmt.Errorf("the answer is %s, want the new comment", brief(ans.body))
	}
	raw := ans.header.Get("X-Anvil-Effect")
	e, err := parseEffect([]byte(raw))
	if err != nil {
		return fmt.Errorf("x-anvil-effect: %v", err)
	}
	r.comment = commentState{id: id, effect: e, rawHead: raw}
	switch {
	case e.Class != "reversible" || e.Operation != "github.comments.create":
		return fmt.Errorf("the report says class %q operation %q, want reversible github.comments.create", e.Class, e.Operation)
	case e.IdempotencyKey == nil || *e.IdempotencyKey != keyComment:
		return fmt.Errorf("the report's idempotency_key is %v, want the ledger id %s", strOrNull(e.IdempotencyKey), keyComment)
	case e.Undo == nil || e.Undo.Kind != "inverse" || e.Undo.Tool != toolDeleteComment || e.Undo.Operation != "github.comments.delete":
		return fmt.Errorf("the report's undo is not the inverse %s: %s", toolDeleteComment, raw)
	}
	keys, err := objectKeys(e.Undo.Arguments)
	if err != nil || strings.Join(keys, ",") != "owner,repo,comment_id" {
		return fmt.Errorf("the inverse's arguments are %s, want owner, repo, comment_id in that order", e.Undo.Arguments)
	}
	return nil
}

func (r *runner) repeatComment(ctx context.Context) error {
	ans, body, err := r.rest(ctx, restCall{
		tool: toolCreateComment,
		args: map[string]any{"owner": "octo", "repo": "hello", "issue_number": 2, "body": "Looks good."},
		key:  keyComment,
	})
	if err != nil {
		return err
	}
	obj, _ := body.(map[string]any)
	if id, ok := intField(obj, "id"); !ok || id != r.comment.id {
		return fmt.Errorf("the repeat answered %s, want comment %d again", brief(ans.body), r.comment.id)
	}
	n, err := r.commentCount(ctx, 2)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("the mock holds %d comments on issue 2, want 1", n)
	}
	// The gateway's idempotency ledger answers the repeat: the upstream
	// saw the write once.
	reqs, err := r.mockRequests(ctx)
	if err != nil {
		return err
	}
	posts := 0
	for _, q := range reqs {
		if q.Method == http.MethodPost && q.Path == "/repos/octo/hello/issues/2/comments" && q.IdempotencyKey == keyComment {
			posts++
		}
	}
	if posts != 1 {
		return fmt.Errorf("%d POSTs with Idempotency-Key %s reached the mock, want 1 (the repeat is the ledger's replay)", posts, keyComment)
	}
	return nil
}

// callInverse calls the comment's reported inverse over REST.
func (r *runner) callInverse(ctx context.Context) (*httpAnswer, error) {
	args, err := r.followArgs(r.comment.effect.Undo)
	if err != nil {
		return nil, err
	}
	ans, _, err := r.rest(ctx, restCall{tool: r.comment.effect.Undo.Tool, args: args, key: keyComment + "-undo"})
	if err != nil {
		return ans, err
	}
	n, err := r.commentCount(ctx, 2)
	if err != nil {
		return ans, err
	}
	if n != 0 {
		return ans, fmt.Errorf("the mock still holds %d comment(s) on issue 2", n)
	}
	return ans, nil
}

// commentCount reads how many comments the mock holds on an issue.
func (r *runner) commentCount(ctx context.Context, issue int64) (int, error) {
	ids, err := r.commentIDs(ctx, issue)
	return len(ids), err
}

// commentIDs reads the ids of the comments the mock holds on an issue.
func (r *runner) commentIDs(ctx context.Context, issue int64) ([]int64, error) {
	var comments []map[string]any
	status, err := r.mockGet(ctx, fmt.Sprintf("/repos/octo/hello/issues/%d/comments", issue), &comments)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("the mock answered %d for issue %d's comments", status, issue)
	}
	var ids []int64
	for _, c := range comments {
		if id, ok := intField(c, "id"); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// issueState reads an issue's state from the mock.
func (r *runner) issueState(ctx context.Context, n int64) (string, error) {
	var issue map[string]any
	status, err := r.mockGet(ctx, fmt.Sprintf("/repos/octo/hello/issues/%d", n), &issue)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("the mock answered %d for issue %d", status, n)
	}
	s, _ := issue["state"].(string)
	return s, nil
}

// mcpIssue creates an issue over MCP in session m and checks that the
// report's undo is the compensation closing it.
func (r *runner) mcpIssue(ctx context.Context, m *mcpClient, title, key string) (int64, *followUp, error) {
	tr, err := m.callTool(ctx, toolCreateIssue, map[string]any{"owner": "octo", "repo": "hello", "title": title, "confirm": true}, key)
	if err != nil {
		return 0, nil, err
	}
	if tr.IsError {
		return 0, nil, fmt.Errorf("tools/call %s failed: %s", toolCreateIssue, brief([]byte(tr.text())))
	}
	data, _ := toolData(tr).(map[string]any)
	number, ok := intField(data, "number")
	if !ok {
		return 0, nil, fmt.Errorf("tools/call %s answered %s, want the new issue", toolCreateIssue, brief([]byte(tr.text())))
	}
	e, err := parseEffect(tr.Meta.Effect)
	if err != nil {
		return number, nil, fmt.Errorf("_meta.effect: %v", err)
	}
	var undoRaw struct {
		Undo json.RawMessage `json:"undo"`
	}
	_ = json.Unmarshal(tr.Meta.Effect, &undoRaw)
	want := fmt.Sprintf(`{"kind":"compensate","operation":"github.issues.update","tool":%q,"arguments":{"owner":"octo","repo":"hello","issue_number":%d,"state":"closed"}}`, toolUpdateIssue, number)
	switch {
	case e.Class != "compensable" || e.Operation != "github.issues.create":
		return number, nil, fmt.Errorf("_meta.effect says class %q operation %q, want compensable github.issues.create", e.Class, e.Operation)
	case e.IdempotencyKey != nil:
		return number, nil, fmt.Errorf("_meta.effect.idempotency_key is %q, want null (issues.create has no key carrier)", *e.IdempotencyKey)
	case compactJSON(undoRaw.Undo) != want:
		return number, nil, fmt.Errorf("_meta.effect.undo is %s, want %s", compactJSON(undoRaw.Undo), want)
	}
	return number, e.Undo, nil
}

func (r *runner) mcpCreateIssue(ctx context.Context) error {
	m := newMCP(r.http, r.audience(), r.writeToken)
	r.mcpClose = errors.New("the session did not open")
	if err := m.open(ctx); err != nil {
		_ = m.close(ctx)
		return err
	}
	number, undo, err := r.mcpIssue(ctx, m, "Filed over MCP", keyIssue1)
	r.issueUndo = undo
	r.mcpClose = m.close(ctx)
	if err != nil {
		return err
	}
	if number != 3 {
		return fmt.Errorf("the new issue is #%d, want #3 (the mock's next number)", number)
	}
	return nil
}

func (r *runner) restCompensate(ctx context.Context) error {
	args, err := r.followArgs(r.issueUndo)
	if err != nil {
		return err
	}
	if _, _, err := r.rest(ctx, restCall{tool: r.issueUndo.Tool, args: args, key: keyIssue1 + "-undo"}); err != nil {
		return err
	}
	n, _ := intArg(args, "issue_number")
	state, err := r.issueState(ctx, n)
	if err != nil {
		return err
	}
	if state != "closed" {
		return fmt.Errorf("issue #%d is %q after the compensation, want closed", n, state)
	}
	return nil
}

func (r *runner) mcpCompensate(ctx context.Context) error {
	m := newMCP(r.http, r.audience(), r.writeToken)
	defer func() { _ = m.close(ctx) }()
	if err := m.open(ctx); err != nil {
		return err
	}
	number, undo, err := r.mcpIssue(ctx, m, "Filed over MCP, then compensated", keyIssue2)
	if err != nil {
		return err
	}
	if state, err := r.issueState(ctx, number); err != nil || state != "open" {
		return fmt.Errorf("issue #%d is %q before the compensation (%v), want open", number, state, err)
	}
	args, err := r.followArgs(undo)
	if err != nil {
		return err
	}
	tr, err := m.callTool(ctx, undo.Tool, args, keyIssue2+"-undo")
	if err != nil {
		return err
	}
	if tr.IsError {
		return fmt.Errorf("tools/call %s failed: %s", undo.Tool, brief([]byte(tr.text())))
	}
	state, err := r.issueState(ctx, number)
	if err != nil {
		return err
	}
	if state != "closed" {
		return fmt.Errorf("issue #%d is %q after the compensation over MCP, want closed", number, state)
	}
	return nil
}

// stageRelease stages createRelease over REST.
func (r *runner) stageRelease(ctx context.Context) (map[string]any, *effectReport, error) {
	ans, body, err := r.rest(ctx, restCall{
		tool:  toolCreateRelease,
		args:  map[string]any{"owner": "octo", "repo": "hello", "tag_name": releaseTag, "name": "One", "confirm": true},
		stage: true,
		key:   keyRelease,
	})
	if err != nil {
		return nil, nil, err
	}
	obj, _ := body.(map[string]any)
	if obj["draft"] != true || obj["tag_name"] != releaseTag {
		return obj, nil, fmt.Errorf("the staged call answered %s, want a draft release %s", brief(ans.body), releaseTag)
	}
	release, err := r.release(ctx)
	if err != nil {
		return obj, nil, err
	}
	if release["draft"] != true {
		return obj, nil, fmt.Errorf("the mock's release is %v, want a draft", release)
	}
	e, err := parseEffect([]byte(ans.header.Get("X-Anvil-Effect")))
	return obj, e, err
}

// release reads the release tagged releaseTag from the mock.
func (r *runner) release(ctx context.Context) (map[string]any, error) {
	var rel map[string]any
	status, err := r.mockGet(ctx, "/repos/octo/hello/releases/tags/"+releaseTag, &rel)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("the mock has no release %s (HTTP %d)", releaseTag, status)
	}
	return rel, nil
}

func (r *runner) checkStaged(body map[string]any, e *effectReport) error {
	if e == nil {
		return errors.New("the staged call carried no x-anvil-effect header")
	}
	id, _ := intField(body, "id")
	if e.Staged == nil {
		return errors.New("the report has no staged member")
	}
	s := e.Staged
	wantPromote := fmt.Sprintf(`{"operation":"github.releases.update","tool":%q,"arguments":{"owner":"octo","repo":"hello","release_id":%d,"draft":false}}`, toolUpdateRelease, id)
	wantDiscard := fmt.Sprintf(`{"operation":"github.releases.delete","tool":%q,"arguments":{"owner":"octo","repo":"hello","release_id":%d}}`, toolDeleteRelease, id)
	switch {
	case s.DraftOperation != "github.releases.create":
		return fmt.Errorf("staged.draft_operation is %q, want github.releases.create", s.DraftOperation)
	case compactJSON(s.Handle) != fmt.Sprint(id):
		return fmt.Errorf("staged.handle is %s, want the draft's id %d", s.Handle, id)
	case s.Promote == nil || followJSON(s.Promote) != wantPromote:
		return fmt.Errorf("staged.promote is %s, want %s", followJSON(s.Promote), wantPromote)
	case s.Discard == nil || followJSON(s.Discard) != wantDiscard:
		return fmt.Errorf("staged.discard is %s, want %s", followJSON(s.Discard), wantDiscard)
	case e.Undo != nil:
		return errors.New("a staged call's report has an undo; want null")
	}
	r.stagedRel = s
	return nil
}

func (r *runner) promote(ctx context.Context) error {
	args, err := r.followArgs(r.stagedRel.Promote)
	if err != nil {
		return err
	}
	if _, _, err := r.rest(ctx, restCall{tool: r.stagedRel.Promote.Tool, args: args, key: keyRelease}); err != nil {
		return err
	}
	rel, err := r.release(ctx)
	if err != nil {
		return err
	}
	if rel["draft"] != false {
		return fmt.Errorf("the release is %v after the promotion, want draft false", rel)
	}
	return nil
}

func (r *runner) undeclaredRead(ctx context.Context) error {
	ans, _, err := r.rest(ctx, restCall{tool: toolGetIssue, args: map[string]any{"owner": "octo", "repo": "hello", "issue_number": 2}})
	if err != nil {
		return err
	}
	const want = `{"class":"read","operation":"github.issues.get","idempotency_key":null,"undo":null,"deadline_ms":null,"lookup":null}`
	if got := ans.header.Get("X-Anvil-Effect"); got != want {
		return fmt.Errorf("x-anvil-effect is %q, want %s", got, want)
	}
	return nil
}

func checkAuditEffects(readLines, writeLines []auditLine) error {
	for i, l := range append(append([]auditLine{}, readLines...), writeLines...) {
		for _, k := range []string{"effect_class", "ledger_id", "staged_for"} {
			if _, ok := l.Fields[k]; !ok {
				return fmt.Errorf("line %d (%s) has no %s", i+1, l.str("operation"), k)
			}
		}
	}
	if len(writeLines) == 0 {
		return errors.New("no write-turn lines")
	}
	if err := expectFields(writeLines[0], map[string]any{
		"operation": "github.comments.create", "effect_class": "reversible", "ledger_id": keyComment, "staged_for": nil,
	}, []string{"operation", "effect_class", "ledger_id", "staged_for"}); err != nil {
		return fmt.Errorf("the comment's line: %v", err)
	}
	var creates []auditLine
	for _, l := range writeLines {
		if l.str("operation") == "github.comments.create" && l.str("ledger_id") == keyComment {
			creates = append(creates, l)
		}
	}
	if len(creates) != 2 || creates[0].Fields["replay"] != nil || creates[1].Fields["replay"] != true {
		return fmt.Errorf("want the comment's write and then its replay (\"replay\":true) under ledger id %s, got %d line(s)", keyComment, len(creates))
	}
	last := writeLines[len(writeLines)-1]
	if err := expectFields(last, map[string]any{
		"operation": "github.issues.get", "effect_class": "read", "ledger_id": nil, "staged_for": nil,
	}, []string{"operation", "effect_class", "ledger_id", "staged_for"}); err != nil {
		return fmt.Errorf("the read's line: %v", err)
	}
	return nil
}

func checkAuditStaged(lines []auditLine) error {
	var staged []auditLine
	for _, l := range lines {
		if l.Fields["staged_for"] != nil {
			staged = append(staged, l)
		}
	}
	if len(staged) != 1 {
		return fmt.Errorf("%d line(s) have staged_for set, want 1", len(staged))
	}
	return expectFields(staged[0], map[string]any{
		"operation": "github.releases.create", "staged_for": "github.releases.create", "ledger_id": keyRelease,
	}, []string{"operation", "staged_for", "ledger_id"})
}

// toolData decodes a tool result the way the SDKs do: the text as JSON,
// else structuredContent (its result member when that is the only key).
func toolData(tr *toolResult) any {
	var v any
	if t := tr.text(); t != "" && decodeJSON([]byte(t), &v) == nil {
		return v
	}
	var sc map[string]any
	if decodeJSON(tr.StructuredContent, &sc) == nil {
		if res, ok := sc["result"]; ok && len(sc) == 1 {
			return res
		}
		return sc
	}
	return tr.text()
}

// intField reads an integer member of a decoded object.
func intField(obj map[string]any, k string) (int64, bool) {
	switch n := obj[k].(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		return int64(n), n == float64(int64(n))
	}
	return 0, false
}

func intArg(args map[string]any, k string) (int64, bool) { return intField(args, k) }

// compactJSON re-encodes raw without insignificant space, keeping key order.
func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

// followJSON encodes a follow-up as {operation, tool, arguments}.
func followJSON(f *followUp) string {
	if f == nil {
		return "null"
	}
	return fmt.Sprintf(`{"operation":%q,"tool":%q,"arguments":%s}`, f.Operation, f.Tool, compactJSON(f.Arguments))
}

func strOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
