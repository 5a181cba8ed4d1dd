package lower

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	asciiToolName  = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	asciiCanonical = regexp.MustCompile(`^[a-z0-9_]+$`)
	asciiID        = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$`)
	servedName     = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// checkRouted asserts what `anvil compile` promises of every document: ids,
// tool names and CLI commands unique; ids, canonical names and tool names in
// AIR's ASCII forms; tool names within MaxToolName; every input schema
// compiles as draft 2020-12.
func checkRouted(t *testing.T, doc *air.Document) {
	t.Helper()
	seen := map[string]string{}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		for _, n := range []string{"id " + op.ID, "tool " + op.MCP.ToolName, "cli " + op.CLI.Command} {
			if prev, ok := seen[n]; ok {
				t.Errorf("%s shared by %s and %s %s", n, prev, op.SourceRef.Method, op.SourceRef.Path)
			}
			seen[n] = op.SourceRef.Method + " " + op.SourceRef.Path
		}
		if !asciiID.MatchString(op.ID) || !asciiCanonical.MatchString(op.CanonicalName) || !asciiToolName.MatchString(op.MCP.ToolName) || len(op.MCP.ToolName) > MaxToolName(doc.Service.ID) {
			t.Errorf("names out of AIR's forms: id %q canonical %q tool %q", op.ID, op.CanonicalName, op.MCP.ToolName)
		}
		// Served under its service id, every name fits as it is when the
		// service id leaves room; it always fits once fitted.
		w := air.WireToolName(doc.Service.ID, op)
		fits := len(doc.Service.ID) <= air.MaxWireName-3-6 // room for the fitted name's hash
		if (fits && !servedName.MatchString(w)) || (2*len(doc.Service.ID)+3+minCanonical <= air.MaxWireName && w != doc.Service.ID+"__"+op.MCP.ToolName) {
			t.Errorf("served name %q of tool %q", w, op.MCP.ToolName)
		}
		b, _ := json.Marshal(op.Input.Schema)
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err := c.AddResource("t.json", v); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile("t.json"); err != nil {
			t.Errorf("%s: input schema does not compile: %v", op.ID, err)
		}
	}
}

func lowerEdge(t *testing.T, service string) (*air.Document, diag.List) {
	t.Helper()
	spec, err := openapi.Load("testdata/robust/edge.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	return Lower(spec, nil, &Options{ServiceID: service})
}

func opAt(t *testing.T, doc *air.Document, method, path string) *air.Operation {
	t.Helper()
	for i := range doc.Operations {
		if op := &doc.Operations[i]; op.SourceRef.Method == method && op.SourceRef.Path == path {
			return op
		}
	}
	t.Fatalf("no %s %s", method, path)
	return nil
}

func inputKeys(op *air.Operation) string {
	var keys []string
	for _, p := range op.Input.Params {
		keys = append(keys, string(p.In)+":"+p.Name+"="+p.Key)
	}
	if op.Input.Body != nil {
		keys = append(keys, "body:"+string(op.Input.Body.Projection))
	}
	return strings.Join(keys, " ")
}

func TestRobustNames(t *testing.T) {
	doc, ds := lowerEdge(t, "")
	checkRouted(t, doc)
	if doc.Service.ID != "uberschall_api" {
		t.Errorf("service id %q: the title's ASCII spelling", doc.Service.ID)
	}
	if op := opAt(t, doc, "GET", "/items/{id}"); op.CanonicalName != "get_item" || op.ID != "uberschall_api.items.get" {
		t.Errorf("a CJK operationId names nothing: canonical %q id %q", op.CanonicalName, op.ID)
	}
	if op := opAt(t, doc, "GET", "/ünïcödé/{ключ}/{other}"); op.ID != "uberschall_api.unicode.get" || op.CLI.Command != "uberschall_api ünïcödé get" {
		t.Errorf("Latin letters lose their diacritics in ids (the CLI keeps the word as written): id %q cli %q", op.ID, op.CLI.Command)
	}
	del, post := opAt(t, doc, "DELETE", "/items/{id}"), opAt(t, doc, "POST", "/items/{id}")
	for _, op := range []*air.Operation{del, post} {
		if len(op.MCP.ToolName) > MaxToolName(doc.Service.ID) || !strings.HasPrefix(op.CanonicalName, "remove_item_catalogue") {
			t.Errorf("long name: canonical %q tool %q (%d)", op.CanonicalName, op.MCP.ToolName, len(op.MCP.ToolName))
		}
	}
	if del.CanonicalName == post.CanonicalName {
		t.Errorf("two long names sharing a prefix both shortened to %q", del.CanonicalName)
	}
	var infos []string
	for _, d := range ds {
		if d.Code == "naming_shortened" || (d.Code == "weak_operation_name" && strings.Contains(d.Message, "no ASCII letter")) {
			infos = append(infos, d.Code)
		}
	}
	if strings.Join(infos, ",") != "weak_operation_name,naming_shortened,naming_shortened" {
		t.Errorf("infos %v", infos)
	}
	// Shortening depends only on the name itself.
	if again, _ := lowerEdge(t, ""); opAt(t, again, "DELETE", "/items/{id}").MCP.ToolName != del.MCP.ToolName {
		t.Error("shortened names are not stable")
	}
}

func TestRobustInputs(t *testing.T) {
	doc, _ := lowerEdge(t, "svc")
	// Undeclared path parameters become required path inputs.
	op := opAt(t, doc, "GET", "/ünïcödé/{ключ}/{other}")
	if got := inputKeys(op); got != "path:ключ=ключ path:other=other" || !op.Input.Params[0].Required {
		t.Errorf("undeclared path params: %s", got)
	}
	// Business inputs named like safety controls move aside.
	del := opAt(t, doc, "DELETE", "/items/{id}")
	if got := inputKeys(del); got != "path:id=id query:confirm=confirm header:anvil_dry_run=header_anvil_dry_run" {
		t.Errorf("delete inputs: %s", got)
	}
	if del.Input.Safety.ConfirmKey != "anvil_confirm" || del.Input.Safety.DryRun != air.DryRunKey {
		t.Errorf("delete safety %+v", del.Input.Safety)
	}
	post := opAt(t, doc, "POST", "/items/{id}")
	if got := inputKeys(post); got != "path:id=id header:Idempotency-Key=idempotency_key query:idempotency_key=query_idempotency_key query:body=query_body body:whole" {
		t.Errorf("post inputs: %s", got)
	}
	if post.Input.Safety.IdempotencyKey != "idempotency_key" {
		t.Errorf("post safety %+v", post.Input.Safety)
	}
	checkRouted(t, doc)
}

func TestRobustServiceID(t *testing.T) {
	for _, c := range []struct{ given, want string }{{"my service", "my_service"}, {"ünï", "uni"}, {"接口", "service"}, {strings.Repeat("a", 70), strings.Repeat("a", 64)}} {
		doc, ds := lowerEdge(t, c.given)
		if doc.Service.ID != c.want {
			t.Errorf("--service %q: id %q, want %q", c.given, doc.Service.ID, c.want)
		}
		if !ds.HasErrors() || ds[0].Code != "lower/invalid_service_id" {
			t.Errorf("--service %q: want lower/invalid_service_id, got %v", c.given, ds)
		}
		checkRouted(t, doc)
	}
	for _, c := range []struct{ title, want string }{
		{"GitHub Mini", "git_hub_mini"},
		{"Spotify Web API with fixes and improvements from sonallux", "spotify_web_api_with_fixes_and"},
		{"2048 Game", "s_2048_game"},
		{"接口", "service"},
		{"Ærø Ødegård", "aero_odegard"},
	} {
		if got := serviceFromTitle(c.title); got != c.want {
			t.Errorf("serviceFromTitle(%q) = %q, want %q", c.title, got, c.want)
		}
	}
}

// TestRobustManyOperations: many operations whose names collide after
// snake-casing, long names and 150 parameters still get unique, valid names.
func TestRobustManyOperations(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("openapi: 3.0.3\ninfo: {title: Many, version: '1'}\npaths:\n")
	params := "      parameters:\n"
	for i := 0; i < 150; i++ {
		params += fmt.Sprintf("        - {name: p%d, in: query, schema: {type: string}}\n", i)
	}
	ids := []string{"getThing", "get-thing", "GetThing", "get_thing", "GET_THING", "get.thing", "'get thing'"}
	for i := 0; i < 20; i++ {
		ids = append(ids, fmt.Sprintf("get_thing_for_the_account_of_the_user_in_the_current_organisation_%d", i))
	}
	for i := 0; i < 60; i++ {
		op := ""
		if i < len(ids) {
			op = "      operationId: " + ids[i] + "\n"
		}
		fmt.Fprintf(&sb, "  /v1/things/%d/{id}:\n    get:\n%s%s      responses: {'200': {description: ok}}\n", i, op, params)
		if i%9 == 8 {
			sb.WriteString(fmt.Sprintf("  /v1/things/%d/{id}/:\n    get:\n%s      responses: {'200': {description: ok}}\n", i, params))
		}
	}
	spec, err := openapi.LoadBytes("many.yaml", []byte(sb.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, ds := Lower(spec, nil, &Options{ServiceID: "a_rather_long_service_identifier"})
	if ds.HasErrors() {
		t.Fatalf("errors: %v", ds)
	}
	if len(doc.Operations) != 66 || len(doc.Operations[0].Input.Params) != 151 {
		t.Fatalf("%d operations, %d params", len(doc.Operations), len(doc.Operations[0].Input.Params))
	}
	checkRouted(t, doc)
}
