package lower

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

const (
	miniSpecPath     = "../../examples/github-mini/openapi.yaml"
	miniManifestPath = "../../examples/github-mini/anvil.yaml"
)

func loadMiniSpec(t testing.TB) *openapi.Spec {
	t.Helper()
	spec, err := openapi.Load(miniSpecPath, nil)
	if err != nil {
		t.Fatalf("load github-mini spec: %v", err)
	}
	return spec
}

func loadMini(t testing.TB) (*openapi.Spec, *manifest.Manifest) {
	t.Helper()
	spec := loadMiniSpec(t)
	man, ds := manifest.Load(miniManifestPath)
	if ds.HasErrors() {
		t.Fatalf("decode github-mini manifest:\n%s", text(ds))
	}
	return spec, man
}

func lowerMini(t testing.TB) (*air.Document, diag.List) {
	t.Helper()
	spec, man := loadMini(t)
	return Lower(spec, man, nil)
}

// TestGitHubMiniTable asserts every cell of the reference's github-mini table (§b).
func TestGitHubMiniTable(t *testing.T) {
	doc, ds := lowerMini(t)
	if ds.HasErrors() || ds.Count(diag.Warning) > 0 {
		t.Fatalf("github-mini must compile cleanly:\n%s", text(ds))
	}
	rows := []struct{ opID, method, path, id, tool, cli, canonical string }{
		{"listIssues", "GET", "/repos/{owner}/{repo}/issues", "github.issues.list", "github_list_issue", "issues list", "list_issue"},
		{"createIssue", "POST", "/repos/{owner}/{repo}/issues", "github.issues.create", "github_create_issue", "issues create", "create_issue"},
		{"getIssue", "GET", "/repos/{owner}/{repo}/issues/{issue_number}", "github.issues.get", "github_get_issue", "issues get", "get_issue"},
		{"updateIssue", "PATCH", "/repos/{owner}/{repo}/issues/{issue_number}", "github.issues.update", "github_update_issue", "issues update", "update_issue"},
		{"listIssueComments", "GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", "github.comments.list", "github_list_comment", "comments list", "list_comment"},
		{"createIssueComment", "POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", "github.comments.create", "github_create_comment", "comments create", "create_comment"},
		{"deleteIssueComment", "DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}", "github.comments.delete", "github_delete_comment", "comments delete", "delete_comment"},
		{"createRelease", "POST", "/repos/{owner}/{repo}/releases", "github.releases.create", "github_create_release", "releases create", "create_release"},
		{"updateRelease", "PATCH", "/repos/{owner}/{repo}/releases/{release_id}", "github.releases.update", "github_update_release", "releases update", "update_release"},
		{"deleteRelease", "DELETE", "/repos/{owner}/{repo}/releases/{release_id}", "github.releases.delete", "github_delete_release", "releases delete", "delete_release"},
		{"getReleaseByTag", "GET", "/repos/{owner}/{repo}/releases/tags/{tag}", "github.tags.get", "github_get_release", "releases get", "get_release"},
		{"listPulls", "GET", "/repos/{owner}/{repo}/pulls", "github.pulls.list", "github_list_pull", "pulls list", "list_pull"},
	}
	if len(doc.Operations) != len(rows) {
		t.Fatalf("%d operations, want %d", len(doc.Operations), len(rows))
	}
	if doc.Service.ID != "github" || doc.Service.DisplayName != "GitHub Mini" || doc.Service.Owner != "branchyard-fixtures" || doc.Service.Environment != "prod" {
		t.Errorf("service = %+v", doc.Service)
	}
	byOpID := byOperationID(doc)
	for _, r := range rows {
		op := byOpID[r.opID]
		if op == nil {
			t.Errorf("%s: missing", r.opID)
			continue
		}
		got := []string{op.SourceRef.Method, op.SourceRef.Path, op.ID, op.MCP.ToolName, strings.TrimPrefix(op.CLI.Command, "github "), op.CanonicalName}
		want := []string{r.method, r.path, r.id, r.tool, r.cli, r.canonical}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: cell %d = %q, want %q", r.opID, i, got[i], want[i])
			}
		}
		if !strings.HasPrefix(op.CLI.Command, "github ") {
			t.Errorf("%s: CLI command %q does not start with the service", r.opID, op.CLI.Command)
		}
		if op.State != air.StateApproved {
			t.Errorf("%s: state %s", r.opID, op.State)
		}
		if op.Effect.Resource != Singularize(strings.Fields(r.cli)[0]) {
			t.Errorf("%s: effect.resource %q", r.opID, op.Effect.Resource)
		}
	}
}

// TestGitHubMiniEffects asserts the github-mini effect contracts exactly.
func TestGitHubMiniEffects(t *testing.T) {
	doc, _ := lowerMini(t)
	get := func(id string) *air.Operation {
		t.Helper()
		op := doc.Operation(id)
		if op == nil {
			t.Fatalf("no operation %s", id)
		}
		return op
	}
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	cc := get("github.comments.create")
	if cc.Effect.Class != air.ClassReversible || !cc.Effect.Reversible || cc.Effect.Inverse == nil {
		t.Fatalf("createIssueComment effect = %+v", cc.Effect)
	}
	if got, want := js(cc.Effect.Inverse), `{"operation":"github.comments.delete","arguments":{"owner":"request.owner","repo":"request.repo","comment_id":"response.id"}}`; got != want {
		t.Errorf("inverse = %s\nwant      %s", got, want)
	}
	if cc.Idempotency != (air.Idempotency{Mode: air.IdemKeySupported, Mechanism: "header", Key: "Idempotency-Key", KeyDerivation: "request_fingerprint"}) {
		t.Errorf("createIssueComment idempotency = %+v", cc.Idempotency)
	}
	if cc.Input.Safety != (air.Safety{IdempotencyKey: "idempotency_key", DryRun: air.DryRunKey}) {
		t.Errorf("createIssueComment safety = %+v", cc.Input.Safety)
	}
	if cc.Retries.Mode != "safe" {
		t.Errorf("createIssueComment retries = %+v", cc.Retries)
	}

	ci := get("github.issues.create")
	if ci.Effect.Class != air.ClassCompensable || ci.Effect.Reversible || ci.Effect.Risk != "medium" {
		t.Errorf("createIssue effect = %+v", ci.Effect)
	}
	if got, want := js(ci.Effect.Compensate), `{"operation":"github.issues.update","arguments":{"owner":"request.owner","repo":"request.repo","issue_number":"response.number","state":{"const":"closed"}}}`; got != want {
		t.Errorf("compensate = %s\nwant         %s", got, want)
	}
	if ci.Idempotency.Mode != air.IdemNone || ci.Retries.Mode != "none" {
		t.Errorf("createIssue idempotency %+v retries %+v", ci.Idempotency, ci.Retries)
	}
	if ci.Confirmation != (air.Confirmation{Required: true, Risk: "medium", Reason: "Opening an issue notifies the repository's watchers."}) {
		t.Errorf("createIssue confirmation = %+v", ci.Confirmation)
	}

	cr := get("github.releases.create")
	if cr.Effect.Class != air.ClassIrreversible || cr.Effect.Reversible {
		t.Errorf("createRelease effect = %+v", cr.Effect)
	}
	if got, want := js(cr.Effect.Lookup), `{"operation":"github.tags.get","by":"id","arguments":{"owner":"request.owner","repo":"request.repo","tag":"request.tag_name"}}`; got != want {
		t.Errorf("lookup = %s\nwant     %s", got, want)
	}
	wantDraft := `{"operation":"github.releases.create","arguments":{"owner":"request.owner","repo":"request.repo","tag_name":"request.tag_name","name":"request.name?","body":"request.body?","draft":{"const":true}},` +
		`"handle":"response.id",` +
		`"promote":{"operation":"github.releases.update","arguments":{"owner":"request.owner","repo":"request.repo","release_id":"response.id","draft":{"const":false}}},` +
		`"discard":{"operation":"github.releases.delete","arguments":{"owner":"request.owner","repo":"request.repo","release_id":"response.id"}}}`
	if got := js(cr.Effect.Draft); got != wantDraft {
		t.Errorf("draft = %s\nwant    %s", got, wantDraft)
	}

	// Confirmation: as the manifest says, and by classification for deletes.
	wantConfirm := map[string]bool{
		"github.issues.create": true, "github.issues.update": true, "github.releases.create": true,
		"github.comments.create": false,
		"github.comments.delete": true, "github.releases.delete": true,
		"github.issues.list": false, "github.issues.get": false, "github.comments.list": false,
		"github.tags.get": false, "github.pulls.list": false,
	}
	for id, want := range wantConfirm {
		op := get(id)
		if op.Confirmation.Required != want {
			t.Errorf("%s: confirmation.required = %v, want %v", id, op.Confirmation.Required, want)
		}
		_, hasConfirm := op.Input.Schema.Properties["confirm"]
		if hasConfirm != want || (op.Input.Safety.ConfirmKey == "confirm") != want || slices.Contains(op.Input.Schema.Required, "confirm") != want {
			t.Errorf("%s: confirm control published = %v, want %v", id, hasConfirm, want)
		}
	}
	for _, id := range []string{"github.comments.delete", "github.releases.delete"} {
		if op := get(id); op.Effect.Risk != "destructive" || op.Effect.Reversible {
			t.Errorf("%s: effect = %+v", id, op.Effect)
		}
	}
	// Undeclared operations keep the default class.
	for _, id := range []string{"github.issues.list", "github.comments.delete"} {
		if op := get(id); op.Effect.Class != "" || air.HasEffectContract(op) {
			t.Errorf("%s declares no effect but has %+v", id, op.Effect)
		}
	}
	if got := air.EffectClassOf(get("github.comments.delete")); got != air.ClassIrreversible {
		t.Errorf("default class of a mutation = %s", got)
	}
}

// TestGitHubMiniInputs checks the published tool input schemas.
func TestGitHubMiniInputs(t *testing.T) {
	doc, _ := lowerMini(t)
	cases := []struct {
		id   string
		want string
	}{
		{"github.comments.create", `{"type":"object","properties":{` +
			`"anvil_dry_run":{"type":"boolean"},` +
			`"body":{"description":"The comment's text.","type":"string"},` +
			`"idempotency_key":{"description":"Repeating a key returns the first comment instead of creating another.","type":"string"},` +
			`"issue_number":{"description":"The issue's number.","type":"integer"},` +
			`"owner":{"description":"The account that owns the repository.","type":"string"},` +
			`"repo":{"description":"The repository's name.","type":"string"}},` +
			`"required":["body","issue_number","owner","repo"],"additionalProperties":false}`},
		{"github.issues.create", `{"type":"object","properties":{` +
			`"anvil_dry_run":{"type":"boolean"},` +
			`"body":{"description":"The issue's text.","type":"string"},` +
			`"confirm":{"description":"Must be true to confirm this call. Opening an issue notifies the repository's watchers.","type":"boolean","const":true},` +
			`"owner":{"description":"The account that owns the repository.","type":"string"},` +
			`"repo":{"description":"The repository's name.","type":"string"},` +
			`"title":{"description":"The issue's title.","type":"string"}},` +
			`"required":["confirm","owner","repo","title"],"additionalProperties":false}`},
		{"github.issues.list", `{"type":"object","properties":{` +
			`"anvil_dry_run":{"type":"boolean"},` +
			`"owner":{"description":"The account that owns the repository.","type":"string"},` +
			`"repo":{"description":"The repository's name.","type":"string"},` +
			`"state":{"description":"Which issues to list.","type":"string","enum":["open","closed","all"],"default":"open"}},` +
			`"required":["owner","repo"],"additionalProperties":false}`},
	}
	for _, c := range cases {
		op := doc.Operation(c.id)
		b, err := json.Marshal(op.Input.Schema)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%s input schema =\n%s\nwant\n%s", c.id, b, c.want)
		}
	}
	cc := doc.Operation("github.comments.create")
	if len(cc.Input.Params) != 4 || cc.Input.Params[3].Name != "Idempotency-Key" || cc.Input.Params[3].Key != "idempotency_key" || cc.Input.Params[3].In != "header" {
		t.Errorf("params = %+v", cc.Input.Params)
	}
	if b := cc.Input.Body; b == nil || b.Projection != air.ProjectionFields || len(b.Fields) != 1 || b.Fields[0] != (air.BodyField{Name: "body", Key: "body", Required: true}) {
		t.Errorf("body = %+v", cc.Input.Body)
	}
	if o := cc.Output; o.Status != 201 || o.ContentType != "application/json" || o.Schema == nil || o.Schema.Ref != "#/$defs/Comment" {
		t.Errorf("output = %+v", o)
	}
	gi := doc.Operation("github.issues.get")
	if len(gi.Errors) != 1 || gi.Errors[0].Status != "404" {
		t.Errorf("errors = %+v", gi.Errors)
	}
	if got := strings.Join(slices.Sorted(maps.Keys(doc.Schemas)), ","); got != "Comment,Issue,Pull,Release" {
		t.Errorf("document schemas = %s", got)
	}
	if doc.Service.Auth.Type != air.AuthBearer || doc.Service.Auth.Carrier == nil || doc.Service.Auth.Carrier.Scheme != "Bearer" {
		t.Errorf("service auth = %+v", doc.Service.Auth)
	}
	for _, op := range doc.Operations {
		if op.Auth != nil {
			t.Errorf("%s has its own auth %+v", op.ID, op.Auth)
		}
	}
}

// TestGitHubMiniNoManifest lowers the spec alone: every operation is
// review_required and named from its operationId.
func TestGitHubMiniNoManifest(t *testing.T) {
	doc, ds := Lower(loadMiniSpec(t), nil, &Options{ServiceID: "gh"})
	if ds.HasErrors() {
		t.Fatalf("errors:\n%s", text(ds))
	}
	if doc.Service.ID != "gh" {
		t.Errorf("service id %q", doc.Service.ID)
	}
	for _, op := range doc.Operations {
		if op.State != air.StateReviewRequired {
			t.Errorf("%s: state %s", op.ID, op.State)
		}
	}
	op := doc.Operation("gh.comments.create")
	if op == nil || op.CanonicalName != "create_issue_comment" || op.MCP.ToolName != "gh_create_issue_comment" || op.CLI.Command != "gh comments create" {
		t.Fatalf("gh.comments.create = %+v", op)
	}
	// The spec declares Idempotency-Key: key_supported by default.
	if op.Idempotency.Mode != air.IdemKeySupported || op.Idempotency.Key != "Idempotency-Key" || op.Confirmation.Required {
		t.Errorf("default idempotency %+v confirmation %+v", op.Idempotency, op.Confirmation)
	}
	if ci := doc.Operation("gh.issues.create"); ci.Idempotency.Mode != air.IdemNone || !ci.Confirmation.Required {
		t.Errorf("POST default: %+v %+v", ci.Idempotency, ci.Confirmation)
	}
	if doc.Operation("gh.tags.get").CanonicalName != "get_release_by_tag" {
		t.Errorf("getReleaseByTag canonical = %q", doc.Operation("gh.tags.get").CanonicalName)
	}
	// Without --service or a manifest the id comes from the title.
	doc, _ = Lower(loadMiniSpec(t), nil, nil)
	if doc.Service.ID != "git_hub_mini" {
		t.Errorf("derived service id %q", doc.Service.ID)
	}
}

// TestDeterministic lowers twice and compares the JSON bytes, and checks
// that the document's diagnostics mirror the returned list.
func TestDeterministic(t *testing.T) {
	spec, man := loadMini(t)
	man.Operations[0].Op.Effect = &manifest.Effect{Class: "reversible"} // produce a few diagnostics
	var first []byte
	for i := 0; i < 3; i++ {
		doc, ds := Lower(spec, man, nil)
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
			back, err := air.Parse(b)
			if err != nil {
				t.Fatalf("the document does not parse back: %v", err)
			}
			if b2, _ := json.Marshal(back); !bytes.Equal(b, b2) {
				t.Fatal("the document does not round-trip through air.Parse")
			}
		} else if !bytes.Equal(first, b) {
			t.Fatal("two lowerings of the same input differ")
		}
		if len(ds) == 0 || len(doc.Diagnostics) != len(ds) {
			t.Fatalf("document has %d diagnostics, list has %d", len(doc.Diagnostics), len(ds))
		}
		for j, d := range ds {
			ad := doc.Diagnostics[j]
			if ad != d { // one type: recorded as listed when no SourceName maps files
				t.Errorf("diagnostic %d: %+v vs %s", j, ad, d)
			}
		}
	}
}

// TestHumanApproval checks the --human-approval policies.
func TestHumanApproval(t *testing.T) {
	spec, man := loadMini(t)
	for _, c := range []struct {
		policy  string
		id      string
		confirm bool
		human   bool
	}{
		{"none", "github.comments.create", false, false},
		{"unsafe", "github.comments.create", false, false},
		{"unsafe", "github.releases.update", true, true},
		{"all", "github.comments.create", true, true},
		{"all", "github.issues.list", false, false},
	} {
		doc, ds := Lower(spec, man, &Options{HumanApproval: c.policy})
		if ds.HasErrors() {
			t.Fatalf("%s: %s", c.policy, text(ds))
		}
		op := doc.Operation(c.id)
		if op.Confirmation.Required != c.confirm || op.Confirmation.HumanApproval != c.human {
			t.Errorf("%s %s: confirmation %+v", c.policy, c.id, op.Confirmation)
		}
		if _, ok := op.Input.Schema.Properties["confirm"]; ok != c.confirm {
			t.Errorf("%s %s: confirm published = %v", c.policy, c.id, ok)
		}
	}
	_, ds := Lower(spec, man, &Options{HumanApproval: "some"})
	if !ds.HasErrors() {
		t.Error("a bad --human-approval value is not an error")
	}
}

// TestManifestKeys checks operation keys by operationId, canonical name
// and AIR id, and the unknown, ambiguous and duplicate errors.
func TestManifestKeys(t *testing.T) {
	spec := loadMiniSpec(t)
	src := `version: 1
service: { name: github }
operations:
  github.issues.list: { state: approved }
  get_issue: { state: approved }
  listPulls: { state: blocked }
  listPull: { state: approved }
  listIssues: { state: approved }
`
	man, md := manifest.Decode("anvil.yaml", []byte(src))
	if md.HasErrors() {
		t.Fatal(text(md))
	}
	doc, ds := Lower(spec, man, nil)
	if s := doc.Operation("github.issues.list").State; s != air.StateApproved {
		t.Errorf("by AIR id: %s", s)
	}
	if s := doc.Operation("github.issues.get").State; s != air.StateApproved {
		t.Errorf("by canonical name: %s", s)
	}
	if s := doc.Operation("github.pulls.list").State; s != air.StateBlocked {
		t.Errorf("blocked: %s", s)
	}
	want := "anvil.yaml:7:3: error manifest/unknown_operation: operations.listPull names no operation of the service (use an operationId, canonical name or AIR id); did you mean \"listPulls\"?\n" +
		"anvil.yaml:8:3: error manifest/duplicate_operation: operations.listIssues names github.issues.list, which operations.github.issues.list already configures; this entry is ignored\n"
	var got diag.List
	for _, d := range ds {
		if strings.HasPrefix(d.Code, "manifest/") {
			got = append(got, d)
		}
	}
	if text(got) != want {
		t.Errorf("got\n%s\nwant\n%s", text(got), want)
	}
}

// TestCapabilitiesAndWorkflows resolves their operation references to AIR ids.
func TestCapabilitiesAndWorkflows(t *testing.T) {
	src := `service: { name: github }
capabilities:
  triage:
    description: Triage issues.
    operations: [listIssues, github.issues.update, get_issue, nope]
workflows:
  comment:
    steps: [getIssue, createIssueComment]
`
	man, md := manifest.Decode("anvil.yaml", []byte(src))
	if md.HasErrors() {
		t.Fatal(text(md))
	}
	doc, ds := Lower(loadMiniSpec(t), man, nil)
	b, _ := json.Marshal([]any{doc.Capabilities, doc.Workflows})
	want := `[[{"id":"triage","description":"Triage issues.","operations":["github.issues.list","github.issues.update","github.issues.get"]}],` +
		`[{"id":"comment","steps":["github.issues.get","github.comments.create"]}]]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if got := codes(ds, "capability_"); got != "error capability_unknown_operation" {
		t.Errorf("diagnostics %q", got)
	}
}
