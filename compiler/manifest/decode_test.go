package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const exampleManifest = "../../examples/github-mini/anvil.yaml"

func path(s string) air.ArgSource { return air.ArgSource{Path: s} }

func lit(js string) air.ArgSource { return air.ArgSource{Const: json.RawMessage(js)} }

func args(kv ...any) Arguments {
	out := Arguments{}
	for i := 0; i < len(kv); i += 2 {
		out = append(out, Argument{Name: kv[i].(string), Source: kv[i+1].(air.ArgSource)})
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// ignorePos compares values without positions (checked separately).
var ignorePos = cmpopts.IgnoreTypes(diag.Pos{}, []diag.Pos{})

func render(l diag.List) []string {
	out := []string{}
	for _, d := range l {
		out = append(out, d.String())
	}
	return out
}

func approved(key, resource, verb string) *OperationEntry {
	return &OperationEntry{Key: key, Op: &Operation{State: "approved", Name: &Name{Resource: resource, Verb: verb}}}
}

func TestGithubMini(t *testing.T) {
	m, diags := Load(exampleManifest)
	if len(diags) != 0 {
		t.Fatalf("diagnostics:\n%s", strings.Join(render(diags), "\n"))
	}
	want := &Manifest{
		File:    exampleManifest,
		Version: "1",
		Service: &Service{Name: "github", DisplayName: "GitHub Mini", Owner: "branchyard-fixtures", Environment: "prod"},
		Operations: []*OperationEntry{
			approved("listIssues", "issues", "list"),
			approved("getIssue", "issues", "get"),
			{Key: "createIssue", Op: &Operation{
				State:       "approved",
				Name:        &Name{Resource: "issues", Verb: "create"},
				SideEffect:  "mutation",
				Risk:        "medium",
				Reversible:  ptr(false),
				Idempotency: &Idempotency{Strategy: StrategyNone},
				Confirmation: &Confirmation{Required: ptr(true), Risk: "medium",
					Reason: "Opening an issue notifies the repository's watchers."},
				Effect: &Effect{Class: "compensable", Compensate: &FollowUp{
					Operation: "updateIssue",
					Arguments: args("owner", path("request.owner"), "repo", path("request.repo"),
						"issue_number", path("response.number"), "state", lit(`"closed"`)),
				}},
			}},
			{Key: "updateIssue", Op: &Operation{
				State:        "approved",
				Name:         &Name{Resource: "issues", Verb: "update"},
				Confirmation: &Confirmation{Required: ptr(true), Reason: "Changing an issue is visible to its watchers."},
			}},
			approved("listIssueComments", "comments", "list"),
			{Key: "createIssueComment", Op: &Operation{
				State:        "approved",
				Name:         &Name{Resource: "comments", Verb: "create"},
				Idempotency:  &Idempotency{Strategy: StrategyKeySupported, KeyLocation: "header", Header: "Idempotency-Key"},
				Confirmation: &Confirmation{Required: ptr(false)},
				Effect: &Effect{Class: "reversible", Inverse: &FollowUp{
					Operation: "deleteIssueComment",
					Arguments: args("owner", path("request.owner"), "repo", path("request.repo"), "comment_id", path("response.id")),
				}},
			}},
			approved("deleteIssueComment", "comments", "delete"),
			{Key: "createRelease", Op: &Operation{
				State: "approved",
				Name:  &Name{Resource: "releases", Verb: "create"},
				Confirmation: &Confirmation{Required: ptr(true), Risk: "medium",
					Reason: "Publishing a release notifies the repository's watchers."},
				Effect: &Effect{
					Class: "irreversible",
					Lookup: &Lookup{Operation: "getReleaseByTag", By: "id",
						Arguments: args("owner", path("request.owner"), "repo", path("request.repo"), "tag", path("request.tag_name"))},
					Draft: &Draft{
						Operation: "createRelease",
						Arguments: args("owner", path("request.owner"), "repo", path("request.repo"),
							"tag_name", path("request.tag_name"), "name", path("request.name?"),
							"body", path("request.body?"), "draft", lit("true")),
						Handle: "response.id",
						Promote: &Call{Operation: "updateRelease",
							Arguments: args("owner", path("request.owner"), "repo", path("request.repo"),
								"release_id", path("response.id"), "draft", lit("false"))},
						Discard: &Call{Operation: "deleteRelease",
							Arguments: args("owner", path("request.owner"), "repo", path("request.repo"), "release_id", path("response.id"))},
					},
				},
			}},
			approved("updateRelease", "releases", "update"),
			approved("deleteRelease", "releases", "delete"),
			approved("getReleaseByTag", "releases", "get"),
			approved("listPulls", "pulls", "list"),
		},
	}
	if d := cmp.Diff(want, m, ignorePos); d != "" {
		t.Fatalf("manifest mismatch (-want +got):\n%s", d)
	}

	// Spot checks, including positions.
	at := func(line, col int) diag.Pos { return diag.Pos{File: exampleManifest, Line: line, Col: col} }
	rel := m.Operations[7]
	if rel.Key != "createRelease" || rel.KeyPos != at(54, 3) || rel.Op.Pos != at(54, 3) {
		t.Errorf("createRelease entry = %q at %v / %v", rel.Key, rel.KeyPos, rel.Op.Pos)
	}
	dr := rel.Op.Effect.Draft
	var names []string
	for _, a := range dr.Arguments {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, ","); got != "owner,repo,tag_name,name,body,draft" {
		t.Errorf("draft argument order = %s", got)
	}
	if a := dr.Arguments[3]; a.Source.Path != "request.name?" || a.Source.IsConst() || a.Pos != at(69, 98) || a.NamePos != at(69, 92) {
		t.Errorf("draft name argument = %+v", a)
	}
	if a := dr.Arguments[5]; !a.Source.IsConst() || string(a.Source.Const) != "true" || a.Source.Path != "" {
		t.Errorf("draft draft argument = %+v", a)
	}
	if dr.Pos != at(67, 7) || dr.OperationPos != at(68, 20) || dr.HandlePos != at(70, 17) || dr.Promote.Pos != at(71, 9) {
		t.Errorf("draft positions: %v %v %v %v", dr.Pos, dr.OperationPos, dr.HandlePos, dr.Promote.Pos)
	}
	comp := m.Operations[2].Op.Effect.Compensate
	if st := comp.Arguments[3]; st.Name != "state" || string(st.Source.Const) != `"closed"` {
		t.Errorf("compensate state = %+v", st)
	}
	b, err := comp.Arguments.mapping().MarshalJSON()
	if err != nil || string(b) != `{"owner":"request.owner","repo":"request.repo","issue_number":"response.number","state":{"const":"closed"}}` {
		t.Errorf("compensate mapping JSON = %s, %v", b, err)
	}
	op := m.Operations[2].Op
	if op.StatePos != at(16, 12) || op.ReversiblePos != at(20, 17) || op.Effect.ClassPos != at(27, 14) || op.Effect.Pos != at(26, 5) {
		t.Errorf("createIssue positions: state %v reversible %v class %v effect %v", op.StatePos, op.ReversiblePos, op.Effect.ClassPos, op.Effect.Pos)
	}
	if m.Service.Pos != at(2, 1) {
		t.Errorf("service pos = %v", m.Service.Pos)
	}
}

// mapping converts arguments to the AIR form, as the lowering stage does.
func (a Arguments) mapping() air.Mapping {
	var m air.Mapping
	for _, x := range a {
		m = append(m, air.MappingEntry{Name: x.Name, ArgSource: x.Source})
	}
	return m
}

func TestDecodeEveryKey(t *testing.T) {
	src := `version: "2"
service: {name: svc, display_name: Svc, owner: me, environment: dev}
auth:
  type: oauth2
  credential_profile: prof
  principal: user
  issuer: https://issuer.example
  audience: aud
  carrier: {in: header, name: Authorization, scheme: Bearer}
  secret_source: vault
  tenant: t
  actor: a
  subject: s
  tls: {client_cert_ref: cert, client_key_ref: key, ca_ref: ca}
  provider:
    token_endpoint: https://t.example/token
    grant: authorization_code
    client_auth: client_secret_basic
    resource: r
    subject_token_type: stt
    requested_token_type: rtt
    api_key: ref
    authorization_endpoint: https://t.example/auth
    pkce: true
    redirect_uri: https://app.example/cb
  scopes: [read, write]
path_grammar: rpc_dotted
operations:
  svc.things.create:
    side_effect: mutation
    risk: financial
    reversible: true
    display_name: Create a thing
    description: Makes one.
    intent_examples: [make a thing, "create: thing"]
    action: create
    name: {resource: things, verb: make}
    idempotency: {strategy: required_request_key, key_location: body, header: H, parameter: p, field: key}
    confirmation: {required: false, risk: high, reason: why, human_approval: true}
    retries: {enabled: true, only_on: [timeout, "429", 503, dns_failure], max_attempts: 5}
    auth: {type: api_key, carrier: {in: query, name: key}}
    pagination: {style: cursor, cursor_param: c, next_field: next, items_field: items, page_size_param: n, max_page_size: 100, default_page_size: 10}
    query_policy: {allow: [a, b], max: 3}
    query_schema: {type: object}
    async_contract: {poll: status, done: [succeeded, failed]}
    stream: {max_events: 10000, max_seconds: 300}
    state: review_required
    reviewed_by: alice
    review_reason: checked
    effect:
      class: reversible
      inverse:
        operation: svc.things.delete
        arguments: {id: response.id, note: {const: {z: 1, a: [true, null, 1.5, "x"], m: {b: 2, a: 1}}}}
        deadline: {within_ms: 86400000, at: response.expires_at}
      compensate: {operation: cancel, arguments: {id: response.id, reason: {const: ~}}}
      lookup: {operation: get, by: idempotency_key, arguments: {key: idempotency_key}}
      draft:
        operation: svc.things.create
        arguments: {name: request.name}
        handle: response.id
        promote: {operation: publish}
        discard: {operation: drop, arguments: {id: response.id}}
workflows:
  onboard: {description: Set up, steps: [svc.things.create, publish]}
  empty: {}
capabilities:
  things: {description: Things, operations: [svc.things.create]}
query_templates:
  recent: {sql: "select 1", limit: 10}
`
	m, diags := Decode("m.yaml", []byte(src))
	if len(diags) != 0 {
		t.Fatalf("diagnostics:\n%s", strings.Join(render(diags), "\n"))
	}
	want := &Manifest{
		File:    "m.yaml",
		Version: "2",
		Service: &Service{Name: "svc", DisplayName: "Svc", Owner: "me", Environment: "dev"},
		Auth: &Auth{
			Type: "oauth2", CredentialProfile: "prof", Principal: "user", Issuer: "https://issuer.example", Audience: "aud",
			Carrier:      &Carrier{In: "header", Name: "Authorization", Scheme: "Bearer"},
			SecretSource: "vault", Tenant: "t", Actor: "a", Subject: "s",
			TLS: &TLS{ClientCertRef: "cert", ClientKeyRef: "key", CARef: "ca"},
			Provider: &Provider{TokenEndpoint: "https://t.example/token", Grant: "authorization_code", ClientAuth: "client_secret_basic",
				Resource: "r", SubjectTokenType: "stt", RequestedTokenType: "rtt", APIKey: "ref",
				AuthorizationEndpoint: "https://t.example/auth", PKCE: ptr(true), RedirectURI: "https://app.example/cb"},
			Scopes: []string{"read", "write"},
		},
		PathGrammar: "rpc_dotted",
		Operations: []*OperationEntry{{Key: "svc.things.create", Op: &Operation{
			SideEffect: "mutation", Risk: "financial", Reversible: ptr(true),
			DisplayName: "Create a thing", Description: "Makes one.",
			IntentExamples: []string{"make a thing", "create: thing"},
			Action:         "create",
			Name:           &Name{Resource: "things", Verb: "make"},
			Idempotency:    &Idempotency{Strategy: "required_request_key", KeyLocation: "body", Header: "H", Parameter: "p", Field: "key"},
			Confirmation:   &Confirmation{Required: ptr(false), Risk: "high", Reason: "why", HumanApproval: ptr(true)},
			Retries:        &Retries{Enabled: ptr(true), OnlyOn: []string{"timeout", "429", "503", "dns_failure"}, MaxAttempts: 5},
			Auth:           &Auth{Type: "api_key", Carrier: &Carrier{In: "query", Name: "key"}},
			Pagination: &Pagination{Style: "cursor", CursorParam: "c", NextField: "next", ItemsField: "items",
				PageSizeParam: "n", MaxPageSize: 100, DefaultPageSize: 10},
			QueryPolicy:   json.RawMessage(`{"allow":["a","b"],"max":3}`),
			QuerySchema:   json.RawMessage(`{"type":"object"}`),
			AsyncContract: json.RawMessage(`{"done":["succeeded","failed"],"poll":"status"}`),
			Stream:        &Stream{MaxEvents: 10000, MaxSeconds: 300},
			State:         "review_required",
			ReviewedBy:    "alice",
			ReviewReason:  "checked",
			Effect: &Effect{
				Class: "reversible",
				Inverse: &FollowUp{Operation: "svc.things.delete",
					Arguments: args("id", path("response.id"), "note", lit(`{"a":[true,null,1.5,"x"],"m":{"a":1,"b":2},"z":1}`)),
					Deadline:  &Deadline{WithinMs: ptr(int64(86400000)), At: "response.expires_at"}},
				Compensate: &FollowUp{Operation: "cancel", Arguments: args("id", path("response.id"), "reason", lit("null"))},
				Lookup:     &Lookup{Operation: "get", By: "idempotency_key", Arguments: args("key", path("idempotency_key"))},
				Draft: &Draft{Operation: "svc.things.create", Arguments: args("name", path("request.name")), Handle: "response.id",
					Promote: &Call{Operation: "publish"},
					Discard: &Call{Operation: "drop", Arguments: args("id", path("response.id"))}},
			},
		}}},
		Workflows: []*Workflow{
			{ID: "onboard", Description: "Set up", Steps: []string{"svc.things.create", "publish"}},
			{ID: "empty"},
		},
		Capabilities:   []*Capability{{ID: "things", Description: "Things", Operations: []string{"svc.things.create"}}},
		QueryTemplates: json.RawMessage(`{"recent":{"limit":10,"sql":"select 1"}}`),
	}
	if d := cmp.Diff(want, m, ignorePos); d != "" {
		t.Fatalf("manifest mismatch (-want +got):\n%s", d)
	}
	at := func(line, col int) diag.Pos { return diag.Pos{File: "m.yaml", Line: line, Col: col} }
	w := m.Workflows[0]
	if w.Pos != at(65, 3) || len(w.StepPos) != 2 || w.StepPos[1] != at(65, 61) {
		t.Errorf("workflow positions: %v %v", w.Pos, w.StepPos)
	}
	if c := m.Capabilities[0]; len(c.OperationPos) != 1 || c.OperationPos[0] != at(68, 46) {
		t.Errorf("capability positions: %v", c.OperationPos)
	}
	dl := m.Operations[0].Op.Effect.Inverse.Deadline
	if dl.Pos != at(55, 9) || dl.AtPos != at(55, 45) {
		t.Errorf("deadline positions: %v %v", dl.Pos, dl.AtPos)
	}
	if m.Auth.TypePos != at(4, 9) || m.PathGrammarPos != at(27, 15) {
		t.Errorf("auth type at %v, path_grammar at %v", m.Auth.TypePos, m.PathGrammarPos)
	}
}

func TestConstValues(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{`closed`, `"closed"`},
		{`"true"`, `"true"`},
		{`true`, `true`},
		{`~`, `null`},
		{`null`, `null`},
		{`42`, `42`},
		{`-7`, `-7`},
		{`0x1F`, `31`},
		{`1_000`, `1000`},
		{`18446744073709551615`, `18446744073709551615`},
		{`1e400`, `"1e400"`}, // out of float range: YAML resolves it as a string
		{`.inf`, ``},         // reported: no JSON form
		{`!!binary aGk=`, `"aGk="`},
		{`!custom x`, ``}, // reported: unknown tag
		{`123456789012345678901234567890`, `1.2345678901234568e+29`},
		{`1.50`, `1.5`},
		{`-0.0`, `0`},
		{`2001-12-14`, `"2001-12-14"`},
		{`"<b>&"`, `"<b>&"`},
		{`[1, [2, {b: x, a: y}]]`, `[1,[2,{"a":"y","b":"x"}]]`},
		{`{}`, `{}`},
		{`[]`, `[]`},
		{`{3: three, true: t}`, `{"3":"three","true":"t"}`},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			src := "operations:\n  x:\n    effect:\n      inverse:\n        operation: y\n        arguments:\n          v: {const: " + tt.yaml + "}\n"
			m, diags := Decode("c.yaml", []byte(src))
			if tt.want == "" {
				if !diags.HasErrors() {
					t.Fatalf("want an error, got none")
				}
				return
			}
			if len(diags) != 0 {
				t.Fatalf("diagnostics: %v", render(diags))
			}
			got := m.Operations[0].Op.Effect.Inverse.Arguments[0].Source
			if !got.IsConst() || string(got.Const) != tt.want {
				t.Errorf("const = %s, want %s", got.Const, tt.want)
			}
		})
	}
}

func TestAliasesAndMergeKeys(t *testing.T) {
	src := `operations:
  a:
    state: &st approved
    effect:
      class: reversible
      inverse:
        operation: b
        arguments: &or { owner: request.owner, repo: request.repo }
  c:
    state: *st
    effect:
      class: compensable
      compensate:
        operation: d
        arguments:
          id: response.id
          <<: *or
          repo: request.other
`
	m, diags := Decode("a.yaml", []byte(src))
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", render(diags))
	}
	if got := m.Operations[1].Op.State; got != "approved" {
		t.Errorf("aliased state = %q", got)
	}
	want := args("id", path("response.id"), "owner", path("request.owner"), "repo", path("request.other"))
	if d := cmp.Diff(want, m.Operations[1].Op.Effect.Compensate.Arguments, ignorePos); d != "" {
		t.Errorf("merged arguments (-want +got):\n%s", d)
	}
	if p := m.Operations[1].Op.Effect.Compensate.Arguments[1].Pos; p != (diag.Pos{File: "a.yaml", Line: 8, Col: 33}) {
		t.Errorf("merged argument keeps the anchor's position, got %v", p)
	}
}

func TestEmptyDocuments(t *testing.T) {
	for _, src := range []string{"", "\n\n", "# just a comment\n", "~\n", "null", "---\n", "--- ~\n...\n"} {
		m, diags := Decode("e.yaml", []byte(src))
		if len(diags) != 0 {
			t.Errorf("%q: diagnostics %v", src, render(diags))
		}
		if d := cmp.Diff(&Manifest{File: "e.yaml"}, m); d != "" {
			t.Errorf("%q: manifest not empty: %s", src, d)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "anvil.yaml")
	if err := os.WriteFile(p, []byte("service: {name: x}\nbogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, diags := Load(p)
	if m.Service == nil || m.Service.Name != "x" || m.File != p {
		t.Errorf("manifest = %+v", m)
	}
	want := []string{p + `:2:1: error manifest/unknown_key: unknown key "bogus" at the top level; valid keys: version, service, auth, path_grammar, operations, workflows, capabilities, query_templates`}
	if d := cmp.Diff(want, render(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}

	missing := filepath.Join(dir, "nope.yaml")
	m, diags = Load(missing)
	if m == nil || m.File != missing {
		t.Errorf("manifest = %+v", m)
	}
	want = []string{missing + ": error manifest/read_error: cannot read manifest: no such file or directory"}
	if d := cmp.Diff(want, render(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		b.WriteString("a" + itoa(i) + ": &a" + itoa(i) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	b.WriteString("query_templates: *a9\n")
	_, diags := Decode("bomb.yaml", []byte(b.String()))
	found := false
	for _, d := range diags {
		if d.Code == CodeParseError && strings.Contains(d.Message, "too many aliases") {
			found = true
		}
	}
	if !found {
		t.Fatalf("want an alias budget error, got %v", render(diags))
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestDeepNesting(t *testing.T) {
	const depth = 5000
	src := "query_templates: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
	m, diags := Decode("deep.yaml", []byte(src))
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", render(diags))
	}
	if want := strings.Repeat("[", depth) + strings.Repeat("]", depth); string(m.QueryTemplates) != want {
		t.Errorf("query_templates has %d bytes", len(m.QueryTemplates))
	}
	// Past the parser's own limit: a parse error, not a crash.
	src = "query_templates: " + strings.Repeat("[", 20000) + "\n"
	_, diags = Decode("deep.yaml", []byte(src))
	if len(diags) != 1 || diags[0].Code != CodeParseError {
		t.Errorf("diagnostics: %v", render(diags))
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"inverce", "inverse"},
		{"Inverse", "inverse"},
		{"compensat", "compensate"},
		{"lokup", "lookup"},
		{"retires", "retries"},
		{"undo", ""},
		{"x", ""},
		{"", ""},
	}
	keys := append(append([]string{}, effectKeys...), "retries")
	for _, tt := range tests {
		got, ok := Suggest(tt.in, keys)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Suggest(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}
