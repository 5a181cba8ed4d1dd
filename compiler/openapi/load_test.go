package openapi

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/google/go-cmp/cmp"
)

// js renders v as compact JSON (map keys sorted).
func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustLoad(t *testing.T, path string) *Spec {
	t.Helper()
	s, err := Load(path, nil)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return s
}

func opByID(t *testing.T, s *Spec, id string) *Operation {
	t.Helper()
	for _, op := range s.Operations {
		if op.OperationID == id {
			return op
		}
	}
	t.Fatalf("no operation %q", id)
	return nil
}

func paramNames(op *Operation) []string {
	var out []string
	for _, p := range op.Params {
		out = append(out, p.In+":"+p.Name)
	}
	return out
}

func TestGitHubMini(t *testing.T) {
	s := mustLoad(t, githubMini)
	if s.Kind != KindOpenAPI30 || s.Title != "GitHub Mini" || s.Version != "1.0.0" {
		t.Errorf("kind/title/version = %q %q %q", s.Kind, s.Title, s.Version)
	}
	if s.File != githubMini || !strings.HasPrefix(s.SourceHash, "sha256:") || len(s.SourceHash) != 7+64 {
		t.Errorf("file %q hash %q", s.File, s.SourceHash)
	}
	if len(s.Diagnostics) != 0 {
		t.Errorf("diagnostics: %v", s.Diagnostics)
	}
	want := []struct {
		id, method, path string
		line, col        int
	}{
		{"listIssues", "GET", "/repos/{owner}/{repo}/issues", 15, 5},
		{"createIssue", "POST", "/repos/{owner}/{repo}/issues", 37, 5},
		{"getIssue", "GET", "/repos/{owner}/{repo}/issues/{issue_number}", 68, 5},
		{"updateIssue", "PATCH", "/repos/{owner}/{repo}/issues/{issue_number}", 81, 5},
		{"listIssueComments", "GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", 112, 5},
		{"createIssueComment", "POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", 125, 5},
		{"deleteIssueComment", "DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}", 164, 5},
		{"createRelease", "POST", "/repos/{owner}/{repo}/releases", 177, 5},
		// delete comes before patch in the method order, whatever the file says
		{"deleteRelease", "DELETE", "/repos/{owner}/{repo}/releases/{release_id}", 239, 5},
		{"updateRelease", "PATCH", "/repos/{owner}/{repo}/releases/{release_id}", 215, 5},
		{"getReleaseByTag", "GET", "/repos/{owner}/{repo}/releases/tags/{tag}", 255, 5},
		{"listPulls", "GET", "/repos/{owner}/{repo}/pulls", 272, 5},
	}
	if len(s.Operations) != len(want) {
		t.Fatalf("%d operations, want %d", len(s.Operations), len(want))
	}
	for i, w := range want {
		op := s.Operations[i]
		got := diag.Pos{File: githubMini, Line: w.line, Col: w.col}
		if op.OperationID != w.id || op.Method != w.method || op.Path != w.path || op.Pos != got {
			t.Errorf("op %d = %s %s %s at %s, want %s %s %s at %s", i, op.OperationID, op.Method, op.Path, op.Pos, w.id, w.method, w.path, got)
		}
		if len(op.Params) < 2 || op.Params[0].Name != "owner" || op.Params[1].Name != "repo" {
			t.Errorf("%s: params %v, want owner and repo first", op.OperationID, paramNames(op))
			continue
		}
		owner := op.Params[0]
		if owner.In != "path" || !owner.Required || owner.Description != "The account that owns the repository." || js(t, owner.Schema) != `{"type":"string"}` {
			t.Errorf("%s: owner = %+v", op.OperationID, owner)
		}
	}
	// Issue number param, the state query param and the header param.
	if got := paramNames(opByID(t, s, "getIssue")); !cmp.Equal(got, []string{"path:owner", "path:repo", "path:issue_number"}) {
		t.Errorf("getIssue params %v", got)
	}
	li := opByID(t, s, "listIssues")
	if got := js(t, li.Params[2]); got != `{"Name":"state","In":"query","Required":false,"Deprecated":false,"Description":"Which issues to list.","Schema":{"type":"string","enum":["open","closed","all"],"default":"open"},"Example":null,"Style":"","Explode":null}` {
		t.Errorf("state param %s", got)
	}
	if got := js(t, li.Responses); got != `[{"Status":"200","Description":"The issues.","ContentType":"application/json","Schema":{"type":"array","items":{"$ref":"#/$defs/Issue"}}}]` {
		t.Errorf("listIssues responses %s", got)
	}
	ci := opByID(t, s, "createIssueComment")
	if got := paramNames(ci); !cmp.Equal(got, []string{"path:owner", "path:repo", "path:issue_number", "header:Idempotency-Key"}) {
		t.Errorf("createIssueComment params %v", got)
	}
	if rb := ci.RequestBody; rb == nil || !rb.Required || rb.ContentType != "application/json" || js(t, rb.Schema) != `{"type":"object","properties":{"body":{"description":"The comment's text.","type":"string"}},"required":["body"]}` {
		t.Errorf("createIssueComment body %s", js(t, rb))
	}
	gi := opByID(t, s, "getIssue")
	if len(gi.Responses) != 2 || gi.Responses[1].Status != "404" || gi.Responses[1].Schema != nil || gi.Responses[1].ContentType != "" {
		t.Errorf("getIssue responses %s", js(t, gi.Responses))
	}
	for _, name := range []string{"Issue", "Comment", "Release", "Pull"} {
		if s.Schemas[name] == nil {
			t.Errorf("schema %s missing", name)
		}
	}
	if len(s.Schemas) != 4 {
		t.Errorf("%d schemas", len(s.Schemas))
	}
	if got := js(t, s.Schemas["Issue"]); got != `{"type":"object","properties":{"body":{"type":["string","null"]},"number":{"type":"integer"},"state":{"type":"string","enum":["open","closed"]},"title":{"type":"string"}},"required":["number","title","state"]}` {
		t.Errorf("Issue %s", got)
	}
	if got := js(t, s.Security); got != `[[{"Scheme":"bearerAuth","Scopes":null}]]` {
		t.Errorf("security %s", got)
	}
	if bs := s.SecuritySchemes["bearerAuth"]; bs == nil || bs.Type != "http" || bs.Scheme != "bearer" {
		t.Errorf("bearerAuth %+v", bs)
	}
	if js(t, s.Servers) != `[{"url":"https://api.github.example"}]` {
		t.Errorf("servers %s", js(t, s.Servers))
	}
}

func TestOpenAPI30(t *testing.T) {
	s := mustLoad(t, "testdata/v30.yaml")
	if s.Kind != KindOpenAPI30 {
		t.Errorf("kind %s", s.Kind)
	}
	if got := js(t, s.Servers); got != `[{"url":"https://eu.pets.example/v1","description":"Regional"}]` {
		t.Errorf("servers %s", got)
	}
	// Operations in document order, methods in the fixed order (put before delete).
	var order []string
	for _, op := range s.Operations {
		order = append(order, op.Method+" "+op.Path)
	}
	if want := []string{"GET /pets", "POST /pets", "PUT /pets/{petId}", "DELETE /pets/{petId}", "GET /pets/{petId}/tree/{nodeId}"}; !cmp.Equal(order, want) {
		t.Errorf("order %v", order)
	}

	list := opByID(t, s, "listPets")
	if got := paramNames(list); !cmp.Equal(got, []string{"query:limit", "header:X-Trace", "cookie:session", "query:filter", "query:tags"}) {
		t.Errorf("listPets params %v", got)
	}
	if got := js(t, list.Params[0]); got != `{"Name":"limit","In":"query","Required":false,"Deprecated":false,"Description":"Overrides the path-level limit.","Schema":{"type":"integer","minimum":1,"exclusiveMaximum":100},"Example":null,"Style":"","Explode":null}` {
		t.Errorf("operation's limit should win in place: %s", got)
	}
	if got := js(t, list.Params[3].Schema); got != `{"type":"object","additionalProperties":{"type":"string"}}` {
		t.Errorf("content parameter schema %s", got)
	}
	if p := list.Params[4]; p.Style != "form" || p.Explode == nil || *p.Explode || string(p.Example) != `["a","b"]` {
		t.Errorf("tags param %s", js(t, p))
	}
	if got := js(t, list.Responses); got != `[{"Status":"200","Description":"The pets.","ContentType":"application/json","Schema":{"type":"array","items":{"$ref":"#/$defs/Pet"}}},{"Status":"4XX","Description":"Client error.","ContentType":"application/problem+json","Schema":{"$ref":"#/$defs/Error"}},{"Status":"default","Description":"Anything else.","ContentType":"","Schema":null}]` {
		t.Errorf("listPets responses %s", got)
	}
	if !cmp.Equal(list.Tags, []string{"pets", "read"}) || list.Summary != "List pets" || list.HasSecurity || list.Deprecated {
		t.Errorf("listPets %+v", list)
	}

	create := opByID(t, s, "createPet")
	if !create.HasSecurity || create.Security == nil || len(create.Security) != 0 {
		t.Errorf("security: [] must be an empty, present requirement: %v %v", create.HasSecurity, create.Security)
	}
	if !create.Deprecated || string(create.Extensions["x-internal"]) != `{"owner":"team-pets","rank":2}` {
		t.Errorf("createPet %v %s", create.Deprecated, create.Extensions["x-internal"])
	}
	if got := js(t, create.RequestBody); got != `{"Required":true,"ContentType":"application/json","Schema":{"$ref":"#/$defs/NewPet"},"Description":"The pet to create."}` {
		t.Errorf("createPet body %s", got)
	}
	if got := create.Responses[0]; got.ContentType != "application/json" || js(t, got.Schema) != `{"$ref":"#/$defs/Pet"}` {
		t.Errorf("createPet response prefers JSON over text/plain: %s", js(t, got))
	}

	replace := opByID(t, s, "replacePet")
	if rb := replace.RequestBody; rb.ContentType != "application/vnd.pets+json" || !rb.Required {
		t.Errorf("+json beats form and text: %s", js(t, rb))
	}
	if got := js(t, replace.Security); got != `[[{"Scheme":"oauth","Scopes":["pets:write","pets:read"]},{"Scheme":"apiKey","Scopes":null}]]` {
		t.Errorf("replacePet security %s", got)
	}
	if got := js(t, s.Security); got != `[[{"Scheme":"apiKey","Scopes":null}],[{"Scheme":"oauth","Scopes":["pets:read"]}]]` {
		t.Errorf("document security %s", got)
	}
	oauth := s.SecuritySchemes["oauth"]
	if oauth == nil || oauth.AuthorizationCode == nil || !cmp.Equal(oauth.AuthorizationCode.Scopes, []string{"pets:read", "pets:write"}) || oauth.AuthorizationCode.RefreshURL != "https://auth.example/refresh" || oauth.ClientCredentials == nil || oauth.ClientCredentials.TokenURL != "https://auth.example/token" {
		t.Errorf("oauth %s", js(t, oauth))
	}
	if k := s.SecuritySchemes["apiKey"]; k == nil || k.In != "header" || k.ParamName != "X-API-Key" {
		t.Errorf("apiKey %s", js(t, k))
	}
	if b := s.SecuritySchemes["basic"]; b == nil || b.Scheme != "basic" {
		t.Errorf("basic %s", js(t, b))
	}

	// Schemas: only referenced ones, allOf kept, nullable converted, recursion by name.
	var names []string
	for n := range s.Schemas {
		names = append(names, n)
	}
	if want := []string{"Error", "NewPet", "Node", "Pet"}; !cmp.Equal(names, want, cmpSorted) {
		t.Errorf("schemas %v", names)
	}
	if got := js(t, s.Schemas["Pet"]); got != `{"allOf":[{"$ref":"#/$defs/NewPet"},{"type":"object","properties":{"id":{"type":"string","readOnly":true}},"required":["id"]}]}` {
		t.Errorf("Pet %s", got)
	}
	if got := js(t, s.Schemas["Node"]); got != `{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/Node"}},"value":{"type":"string"}}}` {
		t.Errorf("Node %s", got)
	}
	props := s.Schemas["NewPet"].Properties
	checks := map[string]string{
		"name":   `{"type":"string","examples":["Rex"],"minLength":1,"maxLength":64}`,
		"kind":   `{"type":["string","null"],"enum":["dog","cat",null]}`,
		"weight": `{"type":"number","exclusiveMinimum":0}`,
		"owner":  `{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]}`,
		"parent": `{"anyOf":[{"allOf":[{"$ref":"#/$defs/Pet"}]},{"type":"null"}]}`,
		"meta":   `{"description":"Free-form.","anyOf":[{"type":"object"},{"type":"null"}],"deprecated":true}`,
	}
	for name, want := range checks {
		if got := js(t, props[name]); got != want {
			t.Errorf("NewPet.%s = %s, want %s", name, got, want)
		}
	}

	// The undeclared path parameters are warnings.
	var codes []string
	for _, d := range s.Diagnostics {
		codes = append(codes, d.Code+"@"+d.Pos.String())
	}
	if want := []string{
		"spec/undeclared_path_param@testdata/v30.yaml:113:5",
		"spec/undeclared_path_param@testdata/v30.yaml:119:5",
	}; !cmp.Equal(codes, want) {
		t.Errorf("diagnostics %v", s.Diagnostics)
	}
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func TestOpenAPI31(t *testing.T) {
	s := mustLoad(t, "testdata/v31.yaml")
	if s.Kind != KindOpenAPI31 || len(s.Diagnostics) != 0 {
		t.Fatalf("kind %s diagnostics %v", s.Kind, s.Diagnostics)
	}
	want := `{"Leaf":{"type":"object","properties":{"color":{"type":"string","enum":["red",null]}}},` +
		`"Shape":{"type":"object","properties":{"anything":true,"kind":{"const":"shape"},"leaf":{"$ref":"#/$defs/Leaf"},` +
		`"name":{"type":["string","null"],"examples":["square","circle"]},"nothing":false,` +
		`"point":{"type":"array","items":false,"prefixItems":[{"type":"number"},{"type":"number"}]},` +
		`"sides":{"type":"integer","default":4,"exclusiveMinimum":2}},"required":["kind"]}}`
	if got := js(t, s.Schemas); got != want {
		t.Errorf("schemas\n got %s\nwant %s", got, want)
	}
	op := s.Operations[0]
	// 3.1 keeps keywords beside $ref.
	if got := js(t, op.Responses[0].Schema); got != `{"$ref":"#/$defs/Shape","description":"The created shape."}` {
		t.Errorf("response schema %s", got)
	}
	if op.RequestBody == nil || op.RequestBody.Required {
		t.Errorf("body %s", js(t, op.RequestBody))
	}
}

func TestJSON31(t *testing.T) {
	s := mustLoad(t, "testdata/v31.json")
	op := s.Operations[0]
	if op.Pos != (diag.Pos{File: "testdata/v31.json", Line: 6, Col: 7}) {
		t.Errorf("pos %s", op.Pos)
	}
	if got := js(t, op.Params[0].Schema); got != `{"type":"integer","minimum":1e0}` {
		t.Errorf("param schema %s", got)
	}
	if op.Responses[0].Description != "A thing é😀" {
		t.Errorf("escapes: %q", op.Responses[0].Description)
	}
	if got := js(t, s.Schemas["Thing"]); got != `{"type":"object","properties":{"tags":{"type":"array","default":["a\"b","\n"],"items":{"type":"string"}}}}` {
		t.Errorf("Thing %s", got)
	}
}

func TestSwagger20(t *testing.T) {
	s := mustLoad(t, "testdata/swagger.yaml")
	if s.Kind != KindSwagger20 || len(s.Diagnostics) != 0 {
		t.Fatalf("kind %s diagnostics %v", s.Kind, s.Diagnostics)
	}
	if got := js(t, s.Servers); got != `[{"url":"http://legacy.example/api"},{"url":"https://legacy.example/api"}]` {
		t.Errorf("servers %s", got)
	}
	list := opByID(t, s, "listOrders")
	if got := js(t, list.Params); got != `[`+
		`{"Name":"status","In":"query","Required":false,"Deprecated":false,"Description":"","Schema":{"type":"array","items":{"type":"string","enum":["open","shipped"]}},"Example":null,"Style":"form","Explode":true},`+
		`{"Name":"ids","In":"query","Required":false,"Deprecated":false,"Description":"","Schema":{"type":"array","items":{"type":"integer"}},"Example":null,"Style":"form","Explode":false},`+
		`{"Name":"X-Rate","In":"header","Required":false,"Deprecated":false,"Description":"","Schema":{"type":["number","null"]},"Example":null,"Style":"","Explode":null}]` {
		t.Errorf("listOrders params %s", got)
	}
	if r := list.Responses[0]; r.ContentType != "application/xml" {
		t.Errorf("operation produces wins: %s", js(t, r))
	}
	create := opByID(t, s, "createOrder")
	if got := js(t, create.RequestBody); got != `{"Required":true,"ContentType":"application/json","Schema":{"$ref":"#/$defs/Order"},"Description":"The order."}` {
		t.Errorf("body param -> request body: %s", got)
	}
	if len(create.Params) != 0 || !create.HasSecurity || js(t, create.Security) != `[[{"Scheme":"oauth","Scopes":["write"]}]]` {
		t.Errorf("createOrder %s", js(t, create))
	}
	get := opByID(t, s, "getOrder")
	if got := js(t, get.Params); got != `[{"Name":"orderId","In":"path","Required":true,"Deprecated":false,"Description":"","Schema":{"type":"integer","format":"int64","minimum":1},"Example":null,"Style":"","Explode":null}]` {
		t.Errorf("global parameter ref %s", got)
	}
	if got := js(t, get.Responses[1]); got != `{"Status":"404","Description":"Not found.","ContentType":"application/json","Schema":{"$ref":"#/$defs/Error"}}` {
		t.Errorf("global response ref %s", got)
	}
	up := opByID(t, s, "uploadAttachment")
	if got := js(t, up.RequestBody); got != `{"Required":true,"ContentType":"multipart/form-data","Schema":{"type":"object","properties":{"file":{"description":"The file.","type":"string","format":"binary"},"note":{"type":"string"}},"required":["file"]},"Description":""}` {
		t.Errorf("formData with a file: %s", got)
	}
	note := opByID(t, s, "setNote")
	if got := js(t, note.RequestBody); got != `{"Required":false,"ContentType":"application/x-www-form-urlencoded","Schema":{"type":"object","properties":{"text":{"type":"string","maxLength":200}}},"Description":""}` {
		t.Errorf("formData without a file: %s", got)
	}
	if got := js(t, s.Schemas["Order"]); got != `{"type":"object","properties":{"id":{"type":"integer","format":"int64"},"lines":{"type":"array","items":{"$ref":"#/$defs/Line"}},"note":{"type":["string","null"]},"total":{"type":"number","exclusiveMinimum":0}},"required":["id"]}` {
		t.Errorf("Order %s", got)
	}
	if got := js(t, s.Schemas["Line"]); got != `{"type":"object","properties":{"order":{"$ref":"#/$defs/Order"},"sku":{"type":"string"}}}` {
		t.Errorf("Line %s", got)
	}
	schemes := map[string]string{
		"basicAuth": `{"Name":"basicAuth","Type":"http","Scheme":"basic"`,
		"key":       `{"Name":"key","Type":"apiKey","Scheme":"","BearerFormat":"","In":"query","ParamName":"api_key"`,
		"oauth":     `{"Name":"oauth","Type":"oauth2","Scheme":"","BearerFormat":"","In":"","ParamName":"","Description":"","AuthorizationCode":{"AuthorizationURL":"https://legacy.example/oauth/authorize","TokenURL":"https://legacy.example/oauth/token","RefreshURL":"","Scopes":["read","write"]},"ClientCredentials":null`,
		"machine":   `"ClientCredentials":{"AuthorizationURL":"","TokenURL":"https://legacy.example/oauth/token"`,
	}
	for name, want := range schemes {
		if got := js(t, s.SecuritySchemes[name]); !strings.Contains(got, want) {
			t.Errorf("scheme %s = %s, want it to contain %s", name, got, want)
		}
	}
}

func TestMultiFile(t *testing.T) {
	s := mustLoad(t, "testdata/multi/openapi.yaml")
	if len(s.Diagnostics) != 0 {
		t.Errorf("diagnostics %v", s.Diagnostics)
	}
	want := map[string]string{
		"Error":        `{"description":"The entry document's own Error.","type":"object","properties":{"code":{"type":"integer"}}}`,
		"common_Error": `{"description":"common.yaml's Error.","type":"object","properties":{"detail":{"type":"string"},"entryError":{"$ref":"#/$defs/Error"}}}`,
		"owner":        `{"type":"object","properties":{"name":{"type":"string"},"pets":{"type":"array","items":{"$ref":"#/$defs/pet"}}}}`,
		"pet":          `{"type":"object","properties":{"name":{"type":"string"},"owner":{"$ref":"#/$defs/owner"},"parent":{"$ref":"#/$defs/pet"}},"required":["name"]}`,
	}
	if len(s.Schemas) != len(want) {
		t.Errorf("schemas %s", js(t, s.Schemas))
	}
	for name, w := range want {
		if got := js(t, s.Schemas[name]); got != w {
			t.Errorf("%s = %s, want %s", name, got, w)
		}
	}
	type row struct{ method, path, pos, summary string }
	var got []row
	for _, op := range s.Operations {
		got = append(got, row{op.Method, op.Path, op.Pos.String(), js(t, op.Responses)})
	}
	problem := `{"Status":"default","Description":"A problem.","ContentType":"application/json","Schema":{"$ref":"#/$defs/common_Error"}}`
	wantRows := []row{
		{"GET", "/pets", "testdata/multi/paths/pets.yaml:1:1", `[{"Status":"200","Description":"The pets.","ContentType":"application/json","Schema":{"type":"array","items":{"$ref":"#/$defs/pet"}}}]`},
		{"POST", "/pets", "testdata/multi/paths/pets.yaml:12:1", `[` + problem + `]`},
		{"GET", "/owners/{ownerId}", "testdata/multi/openapi.yaml:9:5", `[{"Status":"200","Description":"The owner.","ContentType":"application/json","Schema":{"$ref":"#/$defs/owner"}},` + problem + `]`},
	}
	if diff := cmp.Diff(wantRows, got, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}
	if got := js(t, s.Operations[2].Params); got != `[{"Name":"ownerId","In":"path","Required":true,"Deprecated":false,"Description":"","Schema":{"type":"string"},"Example":null,"Style":"","Explode":null}]` {
		t.Errorf("params from another file %s", got)
	}
	if got := js(t, s.Operations[1].RequestBody.Schema); got != `{"$ref":"#/$defs/pet"}` {
		t.Errorf("body %s", got)
	}
}

// TestNamesAreDeterministic loads the same multi-file spec repeatedly.
func TestNamesAreDeterministic(t *testing.T) {
	first := js(t, mustLoad(t, "testdata/multi/openapi.yaml"))
	for range 5 {
		if got := js(t, mustLoad(t, "testdata/multi/openapi.yaml")); got != first {
			t.Fatal("two loads differ")
		}
	}
}

func TestFSOption(t *testing.T) {
	fsys := fstest.MapFS{}
	for _, name := range []string{"openapi.yaml", "common.yaml", "paths/pets.yaml", "schemas/pet.yaml", "schemas/owner.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", "multi", name))
		if err != nil {
			t.Fatal(err)
		}
		fsys["api/"+name] = &fstest.MapFile{Data: b}
	}
	s, err := Load("api/openapi.yaml", &Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Operations) != 3 || s.Operations[0].Pos.File != "api/paths/pets.yaml" || len(s.Schemas) != 4 {
		t.Errorf("FS load: %d ops, first at %s, %d schemas", len(s.Operations), s.Operations[0].Pos, len(s.Schemas))
	}
	if s2, err := Load("./api/../api/openapi.yaml", &Options{FS: fsys}); err != nil || s2.File != "./api/../api/openapi.yaml" || len(s2.Operations) != 3 {
		t.Errorf("unclean entry path: %v", err)
	}
	// LoadBytes with the same FS resolves the other files too.
	s2, err := LoadBytes("api/openapi.yaml", fsys["api/openapi.yaml"].Data, &Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	if js(t, s2.Operations) != js(t, s.Operations) {
		t.Error("LoadBytes with FS differs from Load")
	}
	// A file above the FS root cannot be read.
	fsys["api/up.yaml"] = &fstest.MapFile{Data: []byte("openapi: 3.0.0\npaths:\n  /a:\n    $ref: ../../x.yaml\n")}
	_, err = Load("api/up.yaml", &Options{FS: fsys})
	assertFailure(t, err, CodeRefOutsideBase, "api/up.yaml:4:11", "../x.yaml is outside the base directory")
	// Size limit.
	_, err = Load("api/openapi.yaml", &Options{FS: fsys, MaxFileSize: 10})
	assertFailure(t, err, CodeUnreadable, "api/openapi.yaml", "larger than 10 bytes")
}

func TestLoadBytes(t *testing.T) {
	data, err := os.ReadFile(githubMini)
	if err != nil {
		t.Fatal(err)
	}
	s, err := LoadBytes("mem.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Operations) != 12 || s.File != "mem.yaml" || s.Operations[0].Pos != (diag.Pos{File: "mem.yaml", Line: 15, Col: 5}) {
		t.Errorf("LoadBytes: %d ops, %s", len(s.Operations), s.Operations[0].Pos)
	}
	// Other files cannot be read from memory.
	data, err = os.ReadFile("testdata/multi/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = LoadBytes("openapi.yaml", data, nil)
	assertFailure(t, err, CodeDanglingRef, "openapi.yaml:7:11", "no file system")
}

// assertFailure checks that err is a *diag.Failure whose first diagnostic has
// code, position pos and a message containing msg.
func assertFailure(t *testing.T, err error, code, pos, msg string) {
	t.Helper()
	var f *diag.Failure
	if !errors.As(err, &f) {
		t.Fatalf("error %v (%T), want a *diag.Failure", err, err)
	}
	if len(f.Diagnostics) == 0 {
		t.Fatal("failure without diagnostics")
	}
	d := f.Diagnostics[0]
	if d.Code != code || d.Pos.String() != pos || !strings.Contains(d.Message, msg) || d.Level != diag.Error {
		t.Errorf("got %s\nwant %s: error %s: ...%s...", d, pos, code, msg)
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		file, code, pos, msg string
	}{
		{"missing.yaml", CodeUnreadable, "testdata/bad/missing.yaml", "cannot read testdata/bad/missing.yaml: no such file"},
		{"", CodeUnreadable, "testdata/bad", "it is a directory"},
		{"empty.yaml", CodeEmpty, "testdata/bad/empty.yaml", "is empty"},
		{"comments.yaml", CodeEmpty, "testdata/bad/comments.yaml", "holds no YAML document"},
		{"truncated.yaml", CodeInvalidYAML, "testdata/bad/truncated.yaml:7", "invalid YAML: did not find expected ',' or '}'"},
		{"truncated.json", CodeInvalidJSON, "testdata/bad/truncated.json:5:15", "unexpected end of input inside an object (the file is truncated?)"},
		{"invalid.json", CodeInvalidJSON, "testdata/bad/invalid.json:5:37", "unexpected character '}', expected a string key"},
		{"list.yaml", CodeNotAnObject, "testdata/bad/list.yaml:1:1", "must be an object, not a list"},
		{"noversion.yaml", CodeMissingVersion, "testdata/bad/noversion.yaml:1:1", "neither \"openapi\" nor \"swagger\""},
		{"v4.yaml", CodeUnsupportedVersion, "testdata/bad/v4.yaml:1:10", `unsupported OpenAPI version "4.0.0"`},
		{"swagger12.yaml", CodeUnsupportedVersion, "testdata/bad/swagger12.yaml:1:10", `unsupported Swagger version "1.2"`},
		{"nopaths.yaml", CodeNoPaths, "testdata/bad/nopaths.yaml:1:1", `no "paths"`},
		{"emptypaths.yaml", CodeNoOperations, "testdata/bad/emptypaths.yaml:3:8", `"paths" declares no operation`},
		{"dangling.yaml", CodeDanglingRef, "testdata/bad/dangling.yaml:12:23", `$ref "#/components/schemas/Nope" does not resolve: testdata/bad/dangling.yaml has no "Nope" under "/components/schemas"`},
		{"dangling-file.yaml", CodeDanglingRef, "testdata/bad/dangling-file.yaml:7:17", `$ref "missing.yaml#/components/parameters/id" does not resolve: cannot read testdata/bad/missing.yaml: no such file`},
		{"dangling-pointer.yaml", CodeDanglingRef, "testdata/bad/dangling-pointer.yaml:7:17", `testdata/bad/other.yaml has no "nope" under "/parameters"`},
		{"cycle.yaml", CodeRefCycle, "testdata/bad/cycle.yaml:14:13", `$ref cycle: "#/components/parameters/b" -> "#/components/parameters/a" -> "#/components/parameters/b"`},
		{"remote.yaml", CodeRemoteRef, "testdata/bad/remote.yaml:12:23", `remote $ref "https://schemas.example/pet.json#/Pet" is refused`},
		{"dupid.yaml", CodeDuplicateOperationID, "testdata/bad/dupid.yaml:10:20", `operationId "getThing" is used twice: by GET /a at testdata/bad/dupid.yaml:6:20 and by GET /b at testdata/bad/dupid.yaml:10:20`},
		{"params-not-list.yaml", CodeInvalidStructure, "testdata/bad/params-not-list.yaml:7:9", `"parameters" must be a list, not an object`},
		{"param-no-in.yaml", CodeInvalidParameter, "testdata/bad/param-no-in.yaml:7:11", `parameter "id": "in" must be one of path, query, header, cookie, not ""`},
		{"responses-list.yaml", CodeInvalidStructure, "testdata/bad/responses-list.yaml:7:9", `"responses" must be an object, not a list`},
		{"operation-scalar.yaml", CodeInvalidStructure, "testdata/bad/operation-scalar.yaml:5:10", "operation GET /a must be an object, not a string"},
		{"yaml-bomb.yaml", CodeInvalidYAML, "testdata/bad/yaml-bomb.yaml:9:6", "aliases expand to more than"},
		{"too-complex.yaml", CodeTooComplex, "testdata/bad/too-complex.yaml:8:6", "takes too much work"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			s, err := Load(filepath.Join("testdata", "bad", c.file), nil)
			if s != nil {
				t.Errorf("a spec came back with the error")
			}
			assertFailure(t, err, c.code, c.pos, c.msg)
		})
	}
}

// TestInlineBadInput covers small cases best written inline.
func TestInlineBadInput(t *testing.T) {
	const head = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\n"
	cases := []struct {
		name, src, code, pos, msg string
	}{
		{"whitespace", " \n\t\n", CodeEmpty, "in.yaml", "is empty"},
		{"scalar top", "just text\n", CodeNotAnObject, "in.yaml:1:1", "not a string"},
		{"json scalar", "[1, 2]", CodeNotAnObject, "in.yaml:1:1", "not a list"},
		{"json trailing", `{"openapi": "3.0.0"} x`, CodeInvalidJSON, "in.json:1:22", "after the top-level value"},
		{"bad version type", "openapi: [3]\npaths: {}\n", CodeUnsupportedVersion, "in.yaml:1:10", "must be a version string"},
		{"version 3.2", "openapi: 3.2.0\npaths: {}\n", CodeUnsupportedVersion, "in.yaml:1:10", `"3.2.0"`},
		{"paths list", head + "paths: []\n", CodeInvalidStructure, "in.yaml:3:8", `"paths" must be an object, not a list`},
		{"ref not string", head + "paths:\n  /a:\n    get:\n      parameters:\n        - $ref: 3\n      responses: {}\n", CodeInvalidRef, "in.yaml:7:17", "$ref must be a string, not a number"},
		{"ref anchor", head + "paths:\n  /a:\n    get:\n      parameters:\n        - $ref: '#foo'\n      responses: {}\n", CodeInvalidRef, "in.yaml:7:17", "must be a JSON pointer"},
		{"ref scheme", head + "paths:\n  /a:\n    get:\n      parameters:\n        - $ref: 'urn:x:y'\n      responses: {}\n", CodeInvalidRef, "in.yaml:7:17", "unsupported URI scheme"},
		{"ref absolute", head + "paths:\n  /a:\n    get:\n      parameters:\n        - $ref: '/etc/x.yaml'\n      responses: {}\n", CodeInvalidRef, "in.yaml:7:17", "absolute path"},
		{"http ref upper", head + "paths:\n  /a:\n    $ref: 'HTTP://x.example/p.yaml'\n", CodeRemoteRef, "in.yaml:5:11", "refused"},
		{"path item self cycle", head + "paths:\n  /a:\n    $ref: '#/paths/~1a'\n", CodeRefCycle, "in.yaml:5:11", `$ref cycle: "#/paths/~1a" -> "#/paths/~1a"`},
		{"response cycle", head + "paths:\n  /a:\n    get:\n      responses:\n        '200': {$ref: '#/components/responses/r'}\ncomponents:\n  responses:\n    r: {$ref: '#/components/responses/r'}\n", CodeRefCycle, "in.yaml:10:15", `$ref cycle: "#/components/responses/r" -> "#/components/responses/r"`},
		{"pointer through itself", head + "paths:\n  /a:\n    get:\n      parameters:\n        - $ref: '#/components/parameters/a/x'\n      responses: {}\ncomponents:\n  parameters:\n    a: {$ref: '#/components/parameters/a/x'}\n", CodeRefCycle, "in.yaml:11:15", "more than 64 nested $refs"},
		{"tags not list", head + "paths:\n  /a:\n    get:\n      tags: x\n      responses: {}\n", CodeInvalidStructure, "in.yaml:6:13", `"tags" must be a list`},
		{"security not list", head + "paths:\n  /a:\n    get:\n      security: {a: []}\n      responses: {}\n", CodeInvalidStructure, "in.yaml:6:17", `"security" must be a list`},
		{"requestBody scalar", head + "paths:\n  /a:\n    post:\n      requestBody: true\n      responses: {}\n", CodeInvalidStructure, "in.yaml:6:20", `"requestBody" must be an object, not a boolean`},
		{"param not object", head + "paths:\n  /a:\n    get:\n      parameters: [x]\n      responses: {}\n", CodeInvalidStructure, "in.yaml:6:20", "a parameter must be an object"},
		{"param no name", head + "paths:\n  /a:\n    get:\n      parameters: [{in: query}]\n      responses: {}\n", CodeInvalidParameter, "in.yaml:6:20", `needs a "name"`},
		{"operationId list", head + "paths:\n  /a:\n    get:\n      operationId: [a]\n      responses: {}\n", CodeInvalidStructure, "in.yaml:6:20", `"operationId" must be a string`},
		{"swagger body twice", "swagger: '2.0'\npaths:\n  /a:\n    post:\n      parameters:\n        - {name: a, in: body, schema: {}}\n        - {name: b, in: body, schema: {}}\n      responses: {}\n", CodeInvalidParameter, "in.yaml:7:11", "more than one body parameter"},
		{"deep json", strings.Repeat("[", 5000), CodeInvalidJSON, "in.json:1:1001", "nesting deeper than 1000 levels"},
		{"only x- paths", head + "paths:\n  x-note: {}\n", CodeNoOperations, "in.yaml:4:3", "declares no operation"},
		{"null paths", head + "paths:\n", CodeNoOperations, "in.yaml:3:7", "declares no operation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "in.yaml"
			if strings.HasPrefix(c.pos, "in.json") {
				name = "in.json"
			}
			_, err := LoadBytes(name, []byte(c.src), nil)
			assertFailure(t, err, c.code, c.pos, c.msg)
		})
	}
}

// TestWarnings covers non-fatal findings.
func TestWarnings(t *testing.T) {
	const src = `openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /a/{id}:
    get:
      parameters:
        - {name: id, in: path, schema: {type: string}}
        - {name: other, in: path, required: true, schema: {type: string}}
        - {name: q, in: query}
        - {name: q, in: query}
      security:
        - nope: []
      requestBody:
        content: {}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  n: {type: integer, minLength: -1, required: true, enum: 3}
  notapath: {}
components:
  securitySchemes:
    weird: {type: carrier-pigeon}
`
	s, err := LoadBytes("w.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range s.Diagnostics {
		if d.Level != diag.Warning {
			t.Errorf("level %s", d.Level)
		}
		got = append(got, d.Pos.String()+" "+d.Code)
	}
	want := []string{
		"w.yaml:5:5 spec/unused_path_param",
		"w.yaml:7:11 spec/path_param_not_required",
		"w.yaml:10:11 spec/duplicate_parameter",
		"w.yaml:12:11 spec/unknown_security_scheme",
		"w.yaml:14:9 spec/empty_request_body",
		"w.yaml:23:38 spec/invalid_schema",
		"w.yaml:23:69 spec/invalid_schema",
		"w.yaml:24:3 spec/invalid_path",
		"w.yaml:27:12 spec/invalid_security_scheme",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s\n%v", diff, s.Diagnostics)
	}
	op := s.Operations[0]
	if !op.Params[0].Required || op.RequestBody != nil || len(op.Params) != 3 {
		t.Errorf("op %s", js(t, op))
	}
	if got := js(t, op.Responses[0].Schema.Properties["n"]); got != `{"type":"integer"}` {
		t.Errorf("bad keywords are ignored: %s", got)
	}
}

// TestSchemaNames covers naming of schemas that are not components.
func TestSchemaNames(t *testing.T) {
	fsys := fstest.MapFS{
		"api.yaml": {Data: []byte(`openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /a:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  a: {$ref: '#/components/schemas/Odd name!'}
                  b: {$ref: 'lib.yaml#/Odd name!'}
                  c: {$ref: '#/components/schemas/Holder/properties/inner'}
                  d: {$ref: 'lib.yaml#/definitions/Odd_name'}
                  e: {$ref: 'lib.yaml#/definitions/Odd_name'}
                  f: {$ref: 'lib.yaml#/definitions/Odd%20name'}
components:
  schemas:
    Odd name!: {type: string}
    Odd_name: {type: integer}
    Holder:
      type: object
      properties:
        inner: {type: boolean}
`)},
		"lib.yaml": {Data: []byte(`Odd name!: {type: number}
definitions:
  Odd_name: {type: 'null'}
  Odd name: {type: array}
`)},
	}
	s, err := Load("api.yaml", &Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	props := s.Operations[0].Responses[0].Schema.Properties
	got := map[string]string{}
	for k, v := range props {
		got[k] = v.Ref
	}
	want := map[string]string{
		"a": "#/$defs/Odd_name_2",              // sanitized component name; the clean "Odd_name" keeps its own
		"b": "#/$defs/lib_Odd_name",            // another file: the file stem is added on collision
		"c": "#/$defs/Holder_properties_inner", // a pointer into a component
		"d": "#/$defs/lib_Odd_name_2",          // then a numeric suffix
		"e": "#/$defs/lib_Odd_name_2",          // the same target, the same name
		"f": "#/$defs/lib_Odd_name_3",          // percent-decoded, sanitized, suffixed
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	var names []string
	for n := range s.Schemas {
		names = append(names, n)
	}
	if wantNames := []string{"Odd_name_2", "lib_Odd_name", "Holder_properties_inner", "lib_Odd_name_2", "lib_Odd_name_3"}; !cmp.Equal(names, wantNames, cmpSorted) {
		t.Errorf("schemas %v", names)
	}
	if js(t, s.Schemas["lib_Odd_name_3"]) != `{"type":"array"}` || js(t, s.Schemas["Odd_name_2"]) != `{"type":"string"}` {
		t.Errorf("schemas %s", js(t, s.Schemas))
	}
}

// TestYAMLFeatures covers anchors, aliases, merge keys, YAML scalars and a BOM.
func TestYAMLFeatures(t *testing.T) {
	src := "\xef\xbb\xbf" + `openapi: 3.0
info: {title: yaml, version: 1.10}
x-common: &common
  responses:
    '200': {description: ok}
paths:
  /a:
    get:
      <<: *common
      operationId: a
      parameters:
        - &p {name: n, in: query, schema: {type: integer, maximum: 0x10, minimum: -0o7, default: 1_000, multipleOf: 0.5e1}}
    put:
      <<: [*common]
      operationId: b
      responses:
        '201': {description: created}
      parameters: [*p]
`
	s, err := LoadBytes("y.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != KindOpenAPI30 || s.Version != "1.10" {
		t.Errorf("kind %s version %q", s.Kind, s.Version)
	}
	a, b := s.Operations[0], s.Operations[1]
	if len(a.Responses) != 1 || a.Responses[0].Status != "200" {
		t.Errorf("merged responses %s", js(t, a.Responses))
	}
	if len(b.Responses) != 1 || b.Responses[0].Status != "201" {
		t.Errorf("explicit keys win over merged ones: %s", js(t, b.Responses))
	}
	want := `{"type":"integer","default":1000,"minimum":-7,"maximum":16,"multipleOf":0.5e1}`
	if got := js(t, a.Params[0].Schema); got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	if got := js(t, b.Params[0].Schema); got != want {
		t.Errorf("aliased parameter %s", got)
	}
}

// TestRefEdgeCases covers pointers through $ref'd objects, escaped pointer
// tokens and $ref siblings in 3.0.
func TestRefEdgeCases(t *testing.T) {
	src := `openapi: 3.0.3
info: {title: refs, version: '1'}
paths:
  /a/{id}:
    parameters:
      - $ref: '#/paths/~1b~1%7Bid%7D/parameters/0'
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                $ref: '#/components/responses/Alias/content/application~1json/schema'
                description: ignored in 3.0
  /b/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string}}
    get:
      responses:
        '200': {$ref: '#/components/responses/Alias'}
components:
  responses:
    Alias: {$ref: '#/components/responses/Real'}
    Real:
      description: real
      content:
        application/json:
          schema: {type: object, properties: {x: {type: string}}}
`
	s, err := LoadBytes("r.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Diagnostics) != 0 {
		t.Errorf("diagnostics %v", s.Diagnostics)
	}
	a := s.Operations[0]
	if got := paramNames(a); !cmp.Equal(got, []string{"path:id"}) {
		t.Errorf("params %v", got)
	}
	// The pointer passes through Alias (a $ref) into Real; the target is not
	// a component schema, so it gets a name derived from the pointer.
	if got := js(t, a.Responses[0].Schema); got != `{"$ref":"#/$defs/components_responses_Alias_content_application_json_schema"}` {
		t.Errorf("schema %s", got)
	}
	if got := js(t, s.Schemas["components_responses_Alias_content_application_json_schema"]); got != `{"type":"object","properties":{"x":{"type":"string"}}}` {
		t.Errorf("named %s", got)
	}
	if got := js(t, s.Operations[1].Responses); got != `[{"Status":"200","Description":"real","ContentType":"application/json","Schema":{"type":"object","properties":{"x":{"type":"string"}}}}]` {
		t.Errorf("response chain %s", got)
	}
}
