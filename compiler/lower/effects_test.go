package lower

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

// lowerMiniWith lowers github-mini with a manifest made of the service
// block, every operation approved, and extra YAML appended under operations.
func lowerMiniWith(t *testing.T, ops string) (*air.Document, diag.List) {
	t.Helper()
	src := "version: 1\nservice: { name: github }\noperations:\n" + ops
	man, md := manifest.Decode("anvil.yaml", []byte(src))
	if md.HasErrors() {
		t.Fatalf("manifest:\n%s", text(md))
	}
	approved := map[string]bool{}
	for _, e := range man.Operations {
		approved[e.Key] = true
		if e.Op.State == "" {
			e.Op.State = air.StateApproved
		}
	}
	for _, id := range []string{"listIssues", "createIssue", "getIssue", "updateIssue", "listIssueComments", "createIssueComment",
		"deleteIssueComment", "createRelease", "updateRelease", "deleteRelease", "getReleaseByTag", "listPulls"} {
		if !approved[id] {
			man.Operations = append(man.Operations, &manifest.OperationEntry{Key: id, Op: &manifest.Operation{State: air.StateApproved}})
		}
	}
	return Lower(loadMiniSpec(t), man, nil)
}

func codes(ds diag.List, prefix string) string {
	var out []string
	for _, d := range ds {
		if strings.HasPrefix(d.Code, prefix) {
			out = append(out, string(d.Level)+" "+d.Code)
		}
	}
	return strings.Join(out, "; ")
}

func TestEffectReferenceSpellings(t *testing.T) {
	doc, ds := lowerMiniWith(t, `
  createIssueComment:
    effect:
      class: reversible
      inverse:
        operation: delete_issue_comment
        arguments: { owner: request.owner, repo: request.repo, comment_id: response.id }
        deadline: { within_ms: 86400000 }
      compensate:
        operation: github.comments.delete
        arguments: { owner: request.owner, repo: request.repo, comment_id: response.id }
        deadline: { at: response.id }
  createIssue:
    effect:
      class: compensable
      compensate:
        operation: updateIssue
        arguments: { owner: request.owner, repo: request.repo, issue_number: response.number, state: { const: closed } }
`)
	if c := codes(ds, "effect/"); c != "" {
		t.Fatalf("unexpected: %s\n%s", c, text(ds))
	}
	op := doc.Operation("github.comments.create")
	b, _ := json.Marshal(op.Effect)
	want := `{"kind":"mutation","action":"create","resource":"comment","risk":"low","reversible":true,"class":"reversible",` +
		`"inverse":{"operation":"github.comments.delete","arguments":{"owner":"request.owner","repo":"request.repo","comment_id":"response.id"},"deadline":{"withinMs":86400000}},` +
		`"compensate":{"operation":"github.comments.delete","arguments":{"owner":"request.owner","repo":"request.repo","comment_id":"response.id"},"deadline":{"at":"response.id"}}}`
	if string(b) != want {
		t.Errorf("effect\n%s\nwant\n%s", b, want)
	}
}

func TestEffectChecks(t *testing.T) {
	for _, c := range []struct {
		name, ops, want string
	}{
		{"lookup by key with a carrier", `
  createIssueComment:
    idempotency: { strategy: key_supported, key_location: header, header: Idempotency-Key }
    effect:
      lookup:
        operation: listIssueComments
        by: idempotency_key
        arguments: { owner: request.owner, repo: idempotency_key, issue_number: request.issue_number }
`, ""},
		{"lookup by key may not read response", `
  createIssueComment:
    effect:
      lookup:
        operation: listIssueComments
        by: idempotency_key
        arguments: { owner: request.owner, repo: idempotency_key, issue_number: response.id }
`, "error effect/path_root_not_allowed"},
		{"setting the target's idempotency key", `
  deleteIssueComment:
    effect:
      class: compensable
      compensate:
        operation: createIssueComment
        arguments: { owner: request.owner, repo: request.repo, issue_number: { const: 1 }, body: { const: restored }, idempotency_key: { const: k } }
`, "error effect/mapping_sets_safety_control"},
		{"confirm on a target without confirmation is unknown", `
  deleteIssueComment:
    effect:
      class: compensable
      compensate:
        operation: createIssueComment
        arguments: { owner: request.owner, repo: request.repo, issue_number: { const: 1 }, body: { const: restored }, confirm: { const: true } }
`, "error effect/mapping_unknown_argument"},
		{"request path unresolved", `
  createIssueComment:
    effect:
      class: reversible
      inverse:
        operation: deleteIssueComment
        arguments: { owner: request.owner, repo: request.nope, comment_id: response.id }
`, "error effect/path_unresolved"},
		{"integer fits number, nothing else converts", `
  createIssueComment:
    effect:
      class: reversible
      inverse:
        operation: deleteIssueComment
        arguments: { owner: request.issue_number, repo: request.repo, comment_id: { const: 1.5 } }
`, "error effect/mapping_type_mismatch; error effect/mapping_type_mismatch"},
		{"deadline at unresolved", `
  createIssueComment:
    effect:
      class: reversible
      inverse:
        operation: deleteIssueComment
        arguments: { owner: request.owner, repo: request.repo, comment_id: response.id }
        deadline: { at: response.expires_at }
`, "error effect/path_unresolved"},
		{"draft handle unresolved in the draft's response", `
  createRelease:
    effect:
      draft:
        operation: createRelease
        arguments: { owner: request.owner, repo: request.repo, tag_name: request.tag_name, draft: { const: true } }
        handle: response.release_id
        promote:
          operation: updateRelease
          arguments: { owner: request.owner, repo: request.repo, release_id: response.id }
`, "error effect/draft_handle"},
		{"promote reads the draft's response", `
  createIssueComment:
    confirmation: { required: true }
    effect:
      draft:
        operation: createRelease
        arguments: { owner: request.owner, repo: request.repo, tag_name: request.body }
        handle: response.id
        promote:
          operation: updateRelease
          arguments: { owner: request.owner, repo: request.repo, release_id: response.tag_name }
`, "error effect/mapping_type_mismatch"},
		{"lookup self", `
  createRelease:
    effect:
      lookup:
        operation: createRelease
        by: id
        arguments: { owner: request.owner, repo: request.repo, tag_name: request.tag_name }
`, "error effect/lookup_not_read; error effect/operation_self"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ds := lowerMiniWith(t, c.ops)
			got := codes(ds, "effect/")
			if got != c.want {
				t.Errorf("got %q, want %q\n%s", got, c.want, text(ds))
			}
		})
	}
}

// TestEffectAmbiguousReference: a reference naming two operations is
// reported, and so is an ambiguous manifest key.
func TestEffectAmbiguousReference(t *testing.T) {
	spec := &openapi.Spec{Kind: openapi.KindOpenAPI30, File: "api.yaml", Title: "S", Version: "1",
		Operations: []*openapi.Operation{
			{Path: "/items", Method: "GET", OperationID: "listItems"},
			{Path: "/other", Method: "GET", OperationID: "s.items.list"},
			{Path: "/items", Method: "POST", OperationID: "createItem"},
		}}
	src := `operations:
  s.items.list: { state: approved }
  createItem:
    effect:
      lookup: { operation: s.items.list, by: id, arguments: {} }
`
	man, md := manifest.Decode("anvil.yaml", []byte(src))
	if md.HasErrors() {
		t.Fatal(text(md))
	}
	doc, ds := Lower(spec, man, &Options{ServiceID: "s"})
	want := "anvil.yaml:2:3: error manifest/ambiguous_operation: operations.s.items.list names more than one operation (s.items.list, s.other.list); use an AIR id\n" +
		"anvil.yaml:5:28: error effect/operation_missing: lookup operation \"s.items.list\" is ambiguous: it names s.items.list, s.other.list\n"
	var got diag.List
	for _, d := range ds {
		if d.Level == diag.Error {
			got = append(got, d)
		}
	}
	if text(got) != want {
		t.Errorf("got\n%s\nwant\n%s", text(got), want)
	}
	if op := doc.Operation("s.items.create"); op.Effect.Lookup != nil || op.Effect.Class != air.ClassIrreversible {
		t.Errorf("not downgraded: %+v", op.Effect)
	}
}

// TestEffectErrorDowngradeNote checks the review note's exact wording.
func TestEffectErrorDowngradeNote(t *testing.T) {
	doc, _ := lowerMiniWith(t, `
  createIssueComment:
    effect:
      class: reversible
      inverse:
        operation: deleteIssueComment
        arguments: { owner: request.owner, comment_id: response.nope }
`)
	op := doc.Operation("github.comments.create")
	want := `Effect contract rejected (2 error(s)); served as irreversible with no undo until it is fixed: ` +
		`effect/path_unresolved: inverse argument "comment_id": response.nope does not resolve: response declares properties body, id and not nope (the response of github.comments.create); ` +
		`effect/mapping_missing_required: inverse does not map the required input "repo" of github.comments.delete`
	if len(op.ReviewNotes) != 1 || op.ReviewNotes[0] != want {
		t.Errorf("notes %q\nwant %q", op.ReviewNotes, want)
	}
	if !op.Confirmation.Required || op.Confirmation.Reason == "" || op.Input.Safety.ConfirmKey != "confirm" {
		t.Errorf("confirmation %+v safety %+v", op.Confirmation, op.Input.Safety)
	}
	// A read keeps class read.
	doc, _ = lowerMiniWith(t, `
  getIssue:
    effect: { class: reversible }
`)
	op = doc.Operation("github.issues.get")
	if op.Effect.Class != air.ClassRead || op.Effect.Reversible || op.Confirmation.Required || !strings.HasPrefix(op.ReviewNotes[0], "Effect contract rejected (2 error(s)); served as read with no undo") {
		t.Errorf("read downgrade: %+v %+v %q", op.Effect, op.Confirmation, op.ReviewNotes)
	}
}
