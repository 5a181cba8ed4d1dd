package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/naming"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

func TestNames(t *testing.T) {
	cases := []struct{ in, snake, camel, pascal, kebab string }{
		{"listIssues", "list_issues", "listIssues", "ListIssues", "list-issues"},
		{"createIssueComment", "create_issue_comment", "createIssueComment", "CreateIssueComment", "create-issue-comment"},
		{"create_comment", "create_comment", "createComment", "CreateComment", "create-comment"},
		{"Idempotency-Key", "idempotency_key", "idempotencyKey", "IdempotencyKey", "idempotency-key"},
		{"HTTPServer2Go", "http_server2_go", "httpServer2Go", "HttpServer2Go", "http-server2-go"},
		{"github", "github", "github", "Github", "github"},
		{"my-api.v2", "my_api_v2", "myApiV2", "MyApiV2", "my-api-v2"},
	}
	for _, c := range cases {
		if got := naming.Snake(c.in); got != c.snake {
			t.Errorf("naming.Snake(%q) = %q, want %q", c.in, got, c.snake)
		}
		if got := naming.Camel(c.in); got != c.camel {
			t.Errorf("naming.Camel(%q) = %q, want %q", c.in, got, c.camel)
		}
		if got := naming.Pascal(c.in); got != c.pascal {
			t.Errorf("naming.Pascal(%q) = %q, want %q", c.in, got, c.pascal)
		}
		if got := naming.Kebab(c.in); got != c.kebab {
			t.Errorf("naming.Kebab(%q) = %q, want %q", c.in, got, c.kebab)
		}
	}
	for in, want := range map[string]string{"class": "class_", "from": "from_", "2fa": "_2fa", "self": "self_", "owner": "owner",
		"type": "type", "match": "match", "case": "case", "print": "print", "None": "none", "async": "async_"} {
		if got := naming.PyIdent(in); got != want {
			t.Errorf("naming.PyIdent(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"github": "github", "team_github": "team-github", "GH__Work-": "gh-work", "___": "connector"} {
		if got := skillName(in); got != want {
			t.Errorf("skillName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderRefusals(t *testing.T) {
	doc := githubMini(t)
	if _, err := Render(emit.Connector{ID: "bad/id", Doc: doc}); !errors.Is(err, ErrInvalidConnector) {
		t.Errorf("bad connector: %v", err)
	}
	if _, err := Render(emit.Connector{ID: strings.Repeat("x", 65), Doc: doc}); !errors.Is(err, ErrInvalidConnector) {
		t.Errorf("long connector: %v", err)
	}
	if _, err := Render(emit.Connector{ID: "github", Doc: nil}); !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("nil document: %v", err)
	}
	for i := range doc.Operations {
		if i%2 == 0 {
			doc.Operations[i].State = air.StateReviewRequired
		} else {
			doc.Operations[i].Archetype = "webhook_receiver"
		}
	}
	if _, err := Render(emit.Connector{ID: "github", Doc: doc}); !errors.Is(err, ErrNothingApproved) {
		t.Errorf("nothing served: %v", err)
	}
}

func TestOnlyServedOperationsAppear(t *testing.T) {
	doc := githubMini(t)
	hidden := map[string]string{"github.pulls.list": "webhook_receiver", "github.tags.get": "review"}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		switch hidden[op.ID] {
		case "webhook_receiver":
			op.Archetype = "webhook_receiver"
		case "review":
			op.State = air.StateReviewRequired
		}
	}
	tree, err := Render(emit.Connector{ID: "github", Doc: doc})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range tree {
		for _, needle := range []string{"list_pull", "listPull", "pulls list", "github.pulls.list", "get_release", "github.tags.get"} {
			if bytes.Contains(f.Data, []byte(needle)) {
				t.Errorf("%s mentions %q, which is not served", name, needle)
			}
		}
	}
	var h struct {
		Operations []map[string]any `json:"operations"`
	}
	if err := json.Unmarshal(tree["harness.json"].Data, &h); err != nil || len(h.Operations) != 10 {
		t.Errorf("harness.json operations: %d (%v)", len(h.Operations), err)
	}
	if _, ok := tree["schemas/list_pull.schema.json"]; ok {
		t.Errorf("schema of an unserved operation written")
	}
}

func TestConnectorOverride(t *testing.T) {
	tree, err := Render(emit.Connector{ID: "gh_work", Doc: githubMini(t), BundleHash: "not-a-hash"})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := tree["bin/gh_work"]; !ok || f.Mode != 0o755 {
		t.Fatalf("bin/gh_work missing or not executable")
	}
	if _, ok := tree["bin/github"]; ok {
		t.Errorf("bin/github written for connector gh_work")
	}
	gw := string(tree["python/anvil_github/_gateway.py"].Data)
	if !strings.Contains(gw, `DEFAULT_CONNECTOR = "gh_work"`) {
		t.Errorf("_gateway.py has no DEFAULT_CONNECTOR = \"gh_work\"")
	}
	var h map[string]any
	if err := json.Unmarshal(tree["harness.json"].Data, &h); err != nil {
		t.Fatal(err)
	}
	ops := h["operations"].([]any)
	first := ops[0].(map[string]any)
	if h["connector"] != "gh_work" || h["bundleHash"] != nil || first["tool"] != "gh_work__github_list_issue" ||
		first["cli"] != "gh_work issues list" || jsonOf(h["entrypoints"]) != `{"cli":"bin/gh_work","go":"go","python":"python/anvil_github","skill":"SKILL.md","typescript":"typescript/src/index.ts"}` {
		t.Errorf("harness.json = %s", tree["harness.json"].Data)
	}
	if !strings.Contains(string(tree["SKILL.md"].Data), "\nname: gh-work\n") {
		t.Errorf("SKILL.md name")
	}
	if !strings.Contains(string(tree["bin/gh_work"].Data), `"connector": "gh_work"`) {
		t.Errorf("CLI SPEC connector")
	}
}

func TestHarnessJSONShape(t *testing.T) {
	tree, err := Render(emit.Connector{ID: "github", Doc: githubMini(t), BundleHash: testBundleHash})
	if err != nil {
		t.Fatal(err)
	}
	b := tree["harness.json"].Data
	if !bytes.HasSuffix(b, []byte("}\n")) || !bytes.HasPrefix(b, []byte("{\n  \"schemaVersion\": 1,\n  \"connector\": \"github\",\n")) {
		t.Errorf("harness.json is not pretty-printed in order:\n%s", b)
	}
	keys := topLevelKeys(t, b)
	want := "schemaVersion connector service bundleHash gateway entrypoints requires operations"
	if strings.Join(keys, " ") != want {
		t.Errorf("keys = %v", keys)
	}
	var h struct {
		Operations []struct {
			ID          string          `json:"id"`
			Effect      string          `json:"effect"`
			Confirm     bool            `json:"confirm"`
			EffectClass string          `json:"effect_class"`
			Undo        json.RawMessage `json:"undo"`
		} `json:"operations"`
	}
	_ = json.Unmarshal(b, &h)
	got := map[string]string{}
	for _, op := range h.Operations {
		var undo bytes.Buffer
		_ = json.Compact(&undo, op.Undo)
		got[op.ID] = fmt.Sprintf("%s %v %s %s", op.Effect, op.Confirm, op.EffectClass, undo.String())
	}
	want2 := map[string]string{
		"github.issues.list":     "read false read null",
		"github.comments.create": `mutation false reversible {"kind":"inverse","operation":"github.comments.delete","tool":"github__github_delete_comment"}`,
		"github.issues.create":   `mutation true compensable {"kind":"compensate","operation":"github.issues.update","tool":"github__github_update_issue"}`,
		"github.releases.create": "mutation true irreversible null",
	}
	for id, w := range want2 {
		if got[id] != w {
			t.Errorf("%s: %s, want %s", id, got[id], w)
		}
	}
}

func topLevelKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestGeneratedMarkersAndNoLeaks(t *testing.T) {
	tree, err := Render(emit.Connector{ID: "github", Doc: githubMini(t), BundleHash: testBundleHash})
	if err != nil {
		t.Fatal(err)
	}
	root := repoRoot()
	for name, f := range tree {
		s := string(f.Data)
		if strings.Contains(s, root) || strings.Contains(s, "/work/") || strings.Contains(s, "0.1.0") {
			t.Errorf("%s contains an absolute path or a toolchain version", name)
		}
		if !strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\n\n") {
			t.Errorf("%s does not end in exactly one newline", name)
		}
		marker := "Code generated by anvil. DO NOT EDIT."
		switch {
		case strings.HasSuffix(name, ".json"):
			if !json.Valid(f.Data) {
				t.Errorf("%s is not valid JSON", name)
			}
		case name == "SKILL.md":
			if !strings.HasPrefix(s, "---\n# "+marker+"\n") {
				t.Errorf("SKILL.md does not open with frontmatter holding the marker")
			}
		case strings.HasSuffix(name, ".md"):
			if !strings.HasPrefix(s, "<!-- "+marker+" -->\n") {
				t.Errorf("%s lacks the marker", name)
			}
		case strings.HasSuffix(name, ".py"), strings.HasSuffix(name, ".pyi"), strings.HasSuffix(name, ".toml"), strings.HasSuffix(name, "/py.typed"):
			if !strings.HasPrefix(s, "# "+marker+"\n") {
				t.Errorf("%s lacks the marker", name)
			}
		case strings.HasSuffix(name, ".ts"), strings.HasSuffix(name, ".go"), name == "go/go.mod":
			if !strings.HasPrefix(s, "// "+marker+"\n") {
				t.Errorf("%s lacks the marker", name)
			}
		case name == "bin/github":
		default:
			t.Errorf("unexpected file %s", name)
		}
	}
	skill := string(tree["SKILL.md"].Data)
	for _, bad := range []string{"GITHUB_TOKEN", "_TOKEN", "ANVIL_GATEWAY_TOKEN"} {
		if strings.Contains(skill, bad) {
			t.Errorf("SKILL.md mentions %s", bad)
		}
	}
	if !strings.Contains(skill, "\ndescription: Use when a task needs GitHub Mini — 5 read and 7 write operation(s) over issues, comments, releases and pulls.") {
		t.Errorf("SKILL.md description:\n%s", skill)
	}
	for _, section := range []string{"## Call it", "## Operations", "## Safety", "## When a call is refused",
		"| CLI | Python method | Effect | What it does |", "bin/github issues list --owner <owner> --repo <repo>",
		"| `comments create` | `create_comment` | write, can be undone |",
		"| `issues create` | `create_issue` | write, can be compensated (not undone), needs confirm |",
		"| `releases create` | `create_release` | write, cannot be undone, needs confirm |"} {
		if !strings.Contains(skill, section) {
			t.Errorf("SKILL.md lacks %q", section)
		}
	}
}

// bigDocument is a service with n served operations.
func bigDocument(n int) *air.Document {
	doc := &air.Document{Schema: air.SchemaVersion, Service: air.Service{ID: "big", Version: "2", DisplayName: "Big API"}}
	for i := 0; i < n; i++ {
		res := fmt.Sprintf("things%d", i)
		kind := air.KindRead
		if i%3 == 0 {
			kind = air.KindMutation
		}
		doc.Operations = append(doc.Operations, air.Operation{
			ID: "big." + res + ".list", CanonicalName: "list_" + res, DisplayName: "List " + res,
			Effect: air.Effect{Kind: kind},
			Input: air.Input{
				Params: []air.Param{{Name: "id", Key: "id", In: "path", Required: true, Schema: &air.Schema{Type: air.Types{"string"}}}},
				Schema: &air.Schema{Type: air.Types{"object"}, Properties: map[string]*air.Schema{"id": {Type: air.Types{"string"}}}, Required: []string{"id"}},
			},
			Idempotency:  air.Idempotency{Mode: air.IdemNatural, Mechanism: "none", KeyDerivation: "none"},
			Confirmation: air.Confirmation{Required: kind == air.KindMutation},
			CLI:          air.CLI{Command: "big " + res + " list"}, MCP: air.MCP{ToolName: "big_list_" + res},
			State: air.StateApproved,
		})
	}
	return doc
}

func TestSkillStaysShortForLargeAPIs(t *testing.T) {
	for _, n := range []int{1, 29, 30, 31, skillSearchThreshold, skillSearchThreshold + 1, 250, 1500} {
		tree, err := Render(emit.Connector{ID: "big", Doc: bigDocument(n)})
		if err != nil {
			t.Fatal(err)
		}
		skill := string(tree["SKILL.md"].Data)
		if lines := strings.Count(skill, "\n"); lines >= 80 {
			t.Errorf("%d operations: SKILL.md has %d lines", n, lines)
		}
		truncated := strings.Contains(skill, "more in `reference/operations.md`")
		if truncated != (n > maxSkillRows && n <= skillSearchThreshold) {
			t.Errorf("%d operations: truncated = %v", n, truncated)
		}
		if search := strings.Contains(skill, "\n## Find an operation\n"); search != (n > skillSearchThreshold) {
			t.Errorf("%d operations: points at search = %v", n, search)
		}
		if n > skillSearchThreshold && len(skill) > skillSearchMaxBytes {
			t.Errorf("%d operations: SKILL.md is %d bytes, over %d", n, len(skill), skillSearchMaxBytes)
		}
		if ops := string(tree["reference/operations.md"].Data); strings.Count(ops, "\n## ") != n {
			t.Errorf("%d operations: reference/operations.md has %d sections", n, strings.Count(ops, "\n## "))
		}
	}
}

// TestSafetyControlsAreNeverRenamed: a document whose inputs take the
// controls' names without the SDK names lowering gives them (an older
// document, or one built by hand) still never shadows a control: the input
// moves aside, the control keeps its name.
func TestSafetyControlsAreNeverRenamed(t *testing.T) {
	doc := bigDocument(1)
	op := &doc.Operations[0]
	for _, k := range []string{"confirm", "dry_run", "headers", "timeout", "class"} {
		op.Input.Params = append(op.Input.Params, air.Param{Name: k, Key: k, In: "query", Schema: &air.Schema{Type: air.Types{"string"}}})
	}
	op.Input.Params = append(op.Input.Params, air.Param{Name: "stage", Key: "stage", SDKName: "stage_field", In: "query", Schema: &air.Schema{Type: air.Types{"string"}}})
	op.Confirmation.Required = true
	op.Input.Safety.ConfirmKey = "anvil_confirm"
	tree, err := Render(emit.Connector{ID: "big", Doc: doc})
	if err != nil {
		t.Fatal(err)
	}
	client := string(tree["python/anvil_big/client.py"].Data)
	for _, want := range []string{"        confirm_2: Optional[str] = None,", "        confirm: bool = False,",
		"        dry_run: bool = False,", "        headers: Optional[Dict[str, str]] = None,", "        stage_field: Optional[str] = None,",
		"        timeout: Optional[float] = None,", "        class_: Optional[str] = None,",
		"        idempotency_key: Optional[str] = None,", `"class": class_,`, `"confirm": confirm_2,`, `"stage": stage_field,`, "confirm=confirm,"} {
		if !strings.Contains(client, want) {
			t.Errorf("client.py lacks %q", want)
		}
	}
	cli := string(tree["bin/big"].Data)
	for _, want := range []string{`"confirm": "confirm"`, `"dryRun": "dry-run"`, `"stage": "stage"`, `"confirmKey": "anvil_confirm"`, `"flag": "confirm-2"`, `"flag": "stage-field"`} {
		if !strings.Contains(cli, want) {
			t.Errorf("bin/big lacks %s", want)
		}
	}
}
