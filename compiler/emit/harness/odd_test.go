package harness

import (
	"encoding/json"
	"github.com/anvil-dev/anvil/compiler/emit"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

func str() *air.Schema  { return &air.Schema{Type: air.Types{"string"}} }
func intS() *air.Schema { return &air.Schema{Type: air.Types{"integer"}} }

// oddDocument exercises shapes github-mini does not: reserved words and
// dashes in names, a whole-body input, arrays, maps, unions, nullable and
// recursive types, pagination, a required idempotency key, an operation with
// no inputs, non-ASCII text and a webhook receiver.
func oddDocument() *air.Document {
	obj := func(props map[string]*air.Schema, req ...string) *air.Schema {
		return &air.Schema{Type: air.Types{"object"}, Properties: props, Required: req}
	}
	node := obj(map[string]*air.Schema{
		"name":     str(),
		"children": {Type: air.Types{"array"}, Items: &air.Schema{Ref: "#/$defs/Node"}},
		"kind":     {OneOf: []*air.Schema{str(), intS()}},
		"meta":     {Type: air.Types{"object"}, AdditionalProperties: str()},
		"note":     {Type: air.Types{"string", "null"}, Description: "A */ tricky \"note\" — ünïcode."},
	}, "name")
	op := func(id, canonical, cmd string, kind air.EffectKind, in air.Input, out *air.Schema) air.Operation {
		return air.Operation{
			ID: id, CanonicalName: canonical, DisplayName: "Does " + canonical + " — “quoted”",
			Description: "Line one.\nLine \"two\" with \\ backslash and \"\"\" quotes.",
			Effect:      air.Effect{Kind: kind}, Input: in, Output: air.Output{Schema: out},
			Idempotency: air.Idempotency{Mode: air.IdemNatural, Mechanism: "none", KeyDerivation: "none"},
			CLI:         air.CLI{Command: "odd " + cmd}, MCP: air.MCP{ToolName: "odd_" + canonical},
			State: air.StateApproved,
		}
	}
	search := op("odd.things.search", "search_thing", "things search", air.KindRead, air.Input{
		Params: []air.Param{
			{Name: "class", Key: "class", In: "query", Required: true, Schema: str()},
			{Name: "X-Request-Id", Key: "x_request_id", In: "header", Schema: str()},
			{Name: "page", Key: "page", In: "query", Schema: intS()},
			{Name: "tags", Key: "tags", In: "query", Schema: &air.Schema{Type: air.Types{"array"}, Items: str()}},
			{Name: "from", Key: "from", In: "query", Schema: &air.Schema{Type: air.Types{"string"}, Format: "date-time"}, Example: json.RawMessage(`"2025-01-01T00:00:00Z"`)},
			// Soft keywords and builtins are legal parameter names; self and
			// invoke are what a generated method body itself uses.
			{Name: "type", Key: "type", In: "query", Schema: str()},
			{Name: "match", Key: "match", In: "query", Schema: str()},
			{Name: "self", Key: "self", In: "query", Schema: str()},
			{Name: "invoke", Key: "invoke", In: "query", Schema: str()},
		},
		Schema: obj(map[string]*air.Schema{"class": str(), "x_request_id": str(), "page": intS(),
			"tags": {Type: air.Types{"array"}, Items: str()}, "from": str(), "type": str(), "match": str(), "self": str(),
			"invoke": str(), "anvil_dry_run": {Type: air.Types{"boolean"}}}, "class"),
	}, obj(map[string]*air.Schema{"items": {Type: air.Types{"array"}, Items: &air.Schema{Ref: "#/$defs/Node"}}, "next": str()}))
	search.Pagination = &air.Pagination{Style: "page", CursorParam: "page", ItemsField: "items"}

	put := op("odd.trees.replace", "replace_tree", "trees replace", air.KindMutation, air.Input{
		Params: []air.Param{{Name: "tree-id", Key: "tree_id", In: "path", Required: true, Schema: intS()}},
		Body:   &air.Body{Required: true, ContentType: "application/json", Projection: air.ProjectionWhole, Schema: &air.Schema{Ref: "#/$defs/Node"}},
		Schema: &air.Schema{Type: air.Types{"object"}, Properties: map[string]*air.Schema{"tree_id": intS(), "body": {Ref: "#/$defs/Node"},
			"confirm": {Type: air.Types{"boolean"}}, "idempotency_key": str()}, Required: []string{"tree_id", "body"},
			Defs: map[string]*air.Schema{"Node": node}},
		Safety: air.Safety{ConfirmKey: "confirm", IdempotencyKey: "idempotency_key", DryRun: air.DryRunKey},
	}, &air.Schema{Ref: "#/$defs/Node"})
	put.Confirmation = air.Confirmation{Required: true, Reason: "Replaces a whole tree."}
	put.Idempotency = air.Idempotency{Mode: air.IdemRequired, Mechanism: "header", Key: "Idempotency-Key", KeyDerivation: "client_supplied"}

	ping := op("odd.ping.get", "ping", "ping", air.KindRead, air.Input{Schema: obj(nil)}, nil)
	hook := op("odd.hooks.receive", "receive_hook", "hooks receive", air.KindMutation, air.Input{Schema: obj(nil)}, nil)
	hook.Archetype = "webhook_receiver"

	return &air.Document{
		Schema:     air.SchemaVersion,
		Service:    air.Service{ID: "odd-svc", Version: "2024-01-01", DisplayName: "Odd: Service #1 \"\"\" */ \\"},
		Operations: []air.Operation{search, put, ping, hook},
		Schemas:    map[string]*air.Schema{"Node": node},
	}
}

func TestOddDocumentCompiles(t *testing.T) {
	t.Parallel()
	tree, err := Render(emit.Connector{ID: "odd", Doc: oddDocument()})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "odd")
	if err := tree.WriteTo(dir); err != nil {
		t.Fatal(err)
	}
	python, node, tsc := tool(t, "python3"), tool(t, "node"), tscPath(t)

	var pyFiles []string
	_ = filepath.WalkDir(filepath.Join(dir, "python"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".py") {
			pyFiles = append(pyFiles, p)
		}
		return err
	})
	// Python 3.9 grammar, then import the package and check the signatures.
	check := `
import ast, inspect, json, sys
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        ast.parse(f.read(), filename=path, feature_version=(3, 9))
sys.path.insert(0, ` + jsonOf(filepath.Join(dir, "python")) + `)
from anvil_odd_svc import OddSvcClient, SPEC
out = {}
for name in ("search_thing", "replace_tree", "ping", "search_thing_paginated"):
    out[name] = list(inspect.signature(getattr(OddSvcClient, name)).parameters)
out["ops"] = [op["method"] for op in SPEC["operations"]]
c = OddSvcClient(gateway_url="http://127.0.0.1:9/mcp", token_file="/nonexistent")
for call in (lambda: c.replace_tree(tree_id=1, body={"name": "x"}, confirm=True),
             lambda: c.replace_tree(tree_id=1, body={"name": "x"}),
             lambda: c.search_thing(class_="a", type="t", match="m", self_="s", invoke="i")):
    try:
        call()
    except Exception as e:
        out.setdefault("errors", []).append(e.code)
print(json.dumps(out))
`
	pyLint(t, pyFiles)
	r := run(t, nil, "", python, append([]string{"-c", check}, pyFiles...)...)
	if r.Code != 0 {
		t.Fatalf("python: %s%s", r.Stdout, r.Stderr)
	}
	out := decodeJSON(t, r.Stdout)
	want := map[string]string{
		"search_thing": `["self","class_","x_request_id","page","tags","from_","type","match","self_","invoke",` +
			`"confirm","idempotency_key","dry_run","stage","headers","timeout"]`,
		"replace_tree":           `["self","tree_id","body","confirm","idempotency_key","dry_run","stage","headers","timeout"]`,
		"ping":                   `["self","confirm","idempotency_key","dry_run","stage","headers","timeout"]`,
		"search_thing_paginated": `["self","kwargs"]`,
		"ops":                    `["search_thing","replace_tree","ping"]`,
		"errors":                 `["idempotency_required","confirmation_required","auth_required"]`,
	}
	for k, w := range want {
		if got := jsonOf(out[k]); got != w {
			t.Errorf("%s = %s, want %s", k, got, w)
		}
	}

	if r := run(t, nil, "", node, "--check", filepath.Join(dir, "bin", "odd")); r.Code != 0 {
		t.Errorf("node --check: %s", r.Stderr)
	}
	r = run(t, nil, "", node, filepath.Join(dir, "bin", "odd"), "trees", "replace", "--help")
	if r.Code != 0 || !strings.Contains(r.Stdout, "odd trees replace --tree-id <integer> --body <json> --confirm") {
		t.Errorf("odd help: exit %d\n%s", r.Code, r.Stdout)
	}
	r = run(t, []string{"PATH=" + filepath.Dir(node)}, "", tsc, "--noEmit", "--strict", "-p",
		filepath.Join(dir, "typescript", "tsconfig.json"), "--typeRoots", typeRoots())
	if r.Code != 0 {
		t.Errorf("tsc: %s%s", r.Stdout, r.Stderr)
	}
	types := string(tree["typescript/src/types.ts"].Data)
	for _, w := range []string{"export interface Node {", "children?: Node[];", "kind?: string | number;",
		"meta?: Record<string, string>;", "note?: string | null;", "*\\/ tricky", "export type PingInput = Record<string, never>;",
		"export interface ReplaceTreeInput {", "  body: Node;"} {
		if !strings.Contains(types, w) {
			t.Errorf("types.ts lacks %q", w)
		}
	}
	if _, ok := tree["schemas/receive_hook.schema.json"]; ok {
		t.Errorf("a webhook receiver was packaged")
	}
	if string(tree["examples/search_thing.json"].Data) != "{\n  \"class\": \"<class>\",\n  \"from\": \"2025-01-01T00:00:00Z\"\n}\n" {
		t.Errorf("example = %s", tree["examples/search_thing.json"].Data)
	}
}
