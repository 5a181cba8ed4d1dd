package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"sort"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// The generated code's behaviour is tested where it runs: runtime/serve
// compares the committed trees (gen/github-mini, runtime/serve/internal/
// testgen/sink) handler by handler with the generic code and drives the
// built binary with a differential script. These tests cover the printer.

func schema(t *testing.T, s string) *air.Schema {
	t.Helper()
	var x air.Schema
	if err := json.Unmarshal([]byte(s), &x); err != nil {
		t.Fatal(err)
	}
	return &x
}

func tinyOp(t *testing.T, id, props string) *air.Operation {
	return &air.Operation{ID: id, MCP: air.MCP{ToolName: strings.ReplaceAll(id, ".", "_")},
		SourceRef: air.SourceRef{Path: "/x", Method: "GET"}, Effect: air.Effect{Kind: air.KindRead},
		Input: air.Input{Schema: schema(t, `{"type":"object","properties":`+props+`,"additionalProperties":false}`)},
		State: air.StateApproved}
}

func tinyWorkspace(t *testing.T, n int) *Workspace {
	doc := &air.Document{Service: air.Service{ID: "svc", Servers: []air.Server{{URL: "https://x.example"}}}}
	c := Connector{ID: "team_svc", Doc: doc}
	for i := 0; i < n; i++ {
		op := tinyOp(t, fmt.Sprintf("svc.things%d.list", i), `{"a-b":{"type":"string"},"Validate":{"type":"boolean"},"validate":{"type":"integer"},"x":{"type":"array"}}`)
		doc.Operations = append(doc.Operations, *op)
	}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		c.Tools = append(c.Tools, Tool{Name: c.ID + "__" + op.MCP.ToolName, Op: op})
	}
	return &Workspace{Yard: "tiny", ImportPath: "example.com/m/gen", Connectors: []Connector{c}}
}

func TestGenerateRefusals(t *testing.T) {
	good := tinyWorkspace(t, 1)
	for name, ws := range map[string]*Workspace{
		"nil":            nil,
		"empty yard":     {Yard: "", ImportPath: "a/b", Connectors: good.Connectors},
		"climbing yard":  {Yard: "..", ImportPath: "a/b", Connectors: good.Connectors},
		"slash in yard":  {Yard: "a/b", ImportPath: "a/b", Connectors: good.Connectors},
		"bad import":     {Yard: "y", ImportPath: "/abs/path", Connectors: good.Connectors},
		"no connectors":  {Yard: "y", ImportPath: "a/b"},
		"no doc":         {Yard: "y", ImportPath: "a/b", Connectors: []Connector{{ID: "c"}}},
		"bad connector":  {Yard: "y", ImportPath: "a/b", Connectors: []Connector{{ID: "a b", Doc: good.Connectors[0].Doc}}},
		"twice the same": {Yard: "y", ImportPath: "a/b", Connectors: []Connector{good.Connectors[0], good.Connectors[0]}},
		"no operation":   {Yard: "y", ImportPath: "a/b", Connectors: []Connector{{ID: "c", Doc: good.Connectors[0].Doc, Tools: []Tool{{Name: "c__t"}}}}},
	} {
		if _, err := Generate(ws); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestGenerateTree(t *testing.T) {
	ws := tinyWorkspace(t, 2*opsPerPackage+3)
	tree, err := Generate(ws)
	if err != nil {
		t.Fatal(err)
	}
	out := tree.Bytes()
	var names []string
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	want := []string{"main_gen.go", "workspace/team_svc.air.json", "workspace/team_svc/ops000/ops_gen.go",
		"workspace/team_svc/ops001/ops_gen.go", "workspace/team_svc/ops002/ops_gen.go", "workspace/team_svc_gen.go",
		"workspace/workspace_gen.go"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("files %v, want %v", names, want)
	}
	for _, c := range ws.Connectors {
		for _, tool := range c.Tools {
			if Specialised(tool.Op) { // the array input asks for the shared validator
				t.Errorf("%s is counted as specialised", tool.Name)
			}
		}
	}
	fset := token.NewFileSet()
	for n, b := range out {
		if !strings.HasSuffix(n, ".go") {
			continue
		}
		if !bytes.HasPrefix(b, []byte("// "+Header+"\n")) {
			t.Errorf("%s: no header", n)
		}
		if f, err := format.Source(b); err != nil || !bytes.Equal(f, b) {
			t.Errorf("%s: not gofmt-clean: %v", n, err)
		}
		if _, err := parser.ParseFile(fset, n, b, 0); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	ops := strings.Join(strings.Fields(string(out["workspace/team_svc/ops000/ops_gen.go"])), " ")
	for _, want := range []string{"AB handler.Opt[string]", "ValidateArg handler.Opt[bool]", "ValidateArg2 handler.Opt[json.Number]", "X handler.Opt[any]",
		"func (in *svcThings0ListInput) Validate() error", `"example.com/m/gen/tiny/workspace"`} {
		if !strings.Contains(ops+string(out["main_gen.go"]), want) {
			t.Errorf("the generated code lacks %q", want)
		}
	}
	if !strings.Contains(string(out["workspace/team_svc_gen.go"]), "//go:embed team_svc.air.json") {
		t.Error("the connector does not embed its AIR")
	}
	if !json.Valid(out["workspace/team_svc.air.json"]) {
		t.Error("the embedded AIR is not JSON")
	}
	againTree, err := Generate(tinyWorkspace(t, 2*opsPerPackage+3))
	if err != nil {
		t.Fatal(err)
	}
	again := againTree.Bytes()
	for n := range out {
		if !bytes.Equal(out[n], again[n]) {
			t.Errorf("%s differs between two runs", n)
		}
	}
}

func TestAnalyseField(t *testing.T) {
	for _, c := range []struct {
		schema   string
		kind     kind
		nullable bool
		check    func(f *field) bool
	}{
		{`{"type":"string","enum":["a",1,null]}`, kString, false, func(f *field) bool { return len(f.strEnum) == 1 && f.nullInEnum }},
		{`{"type":["string","null"]}`, kString, true, nil},
		{`{"type":["integer","number"]}`, kNumber, false, func(f *field) bool { return !f.integer }},
		{`{"type":"integer","minimum":1,"exclusiveMaximum":5}`, kNumber, false, func(f *field) bool { return f.integer && f.minimum == "1" && f.exclMax == "5" }},
		{`{"type":"integer","multipleOf":2}`, kAny, false, nil},
		{`{"type":"string","pattern":"(?=x)"}`, kAny, false, nil},
		{`{"type":"string","const":"x","enum":["y"]}`, kString, false, func(f *field) bool { return f.hasEnum && len(f.strEnum) == 0 }},
		{`{"type":"boolean","const":true}`, kBool, false, func(f *field) bool { return len(f.boolEnum) == 1 && f.boolEnum[0] }},
		{`{"type":["string","integer"]}`, kAny, false, nil},
		{`{"oneOf":[{"type":"string"}]}`, kAny, false, nil},
		{`{"$ref":"#/$defs/x"}`, kAny, false, nil},
		{`{"description":"anything"}`, kAny, false, func(f *field) bool { return trivialSchema(f.schema) }},
		{`false`, kAny, false, func(f *field) bool { return f.never }},
	} {
		f := analyseField(schema(t, c.schema))
		if f.kind != c.kind || f.nullable != c.nullable || (c.check != nil && !c.check(f)) {
			t.Errorf("%s: kind %d nullable %v %+v", c.schema, f.kind, f.nullable, f)
		}
	}
}

// TestChunksKeepDraftsTogether: an operation's draft mapping builds the
// draft operation's typed input, so both must land in one package however
// far apart they are in AIR order.
func TestChunksKeepDraftsTogether(t *testing.T) {
	ws := tinyWorkspace(t, 2*opsPerPackage+3)
	c := &ws.Connectors[0]
	last := c.Tools[len(c.Tools)-1].Op
	first := c.Tools[0].Op
	first.Effect.Draft = &air.Draft{Operation: last.ID}
	g := newGenerator(ws)
	if _, err := g.run(); err != nil {
		t.Fatal(err)
	}
	chunks := g.chunks(c)
	total := 0
	for _, ch := range chunks {
		total += len(ch)
		if len(ch) > opsPerPackage+1 {
			t.Errorf("a package of %d operations", len(ch))
		}
	}
	if total != len(c.Tools) {
		t.Fatalf("%d operations in packages, want %d", total, len(c.Tools))
	}
	var ids []string
	for _, o := range chunks[0] {
		ids = append(ids, o.tool.Op.ID)
	}
	if ids[0] != first.ID || !strings.Contains(strings.Join(ids, " "), last.ID) {
		t.Errorf("the first package %v does not hold %s with its draft %s", ids, first.ID, last.ID)
	}
	out, err := Generate(ws)
	if err != nil {
		t.Fatal(err)
	}
	if b := out["workspace/team_svc/ops000/ops_gen.go"].Data; !bytes.Contains(b, []byte("d := handler.New(&"+lowerName(last.ID)+"Input{})")) {
		t.Errorf("the draft mapping does not build its draft's input in the same package")
	}
}

// TestImportsAreGrouped: the standard library's imports come first, then
// a blank line and the runtime's, with no aliases.
func TestImportsAreGrouped(t *testing.T) {
	out, err := Generate(tinyWorkspace(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	b := string(out["workspace/team_svc/ops000/ops_gen.go"].Data)
	start, end := strings.Index(b, "import (\n"), strings.Index(b, "\n)\n")
	if start < 0 || end < start {
		t.Fatalf("no import block:\n%s", b)
	}
	groups := strings.Split(b[start+len("import (\n"):end], "\n\n")
	if len(groups) != 2 || strings.Contains(groups[0], ".") || !strings.Contains(groups[1], `"github.com/anvil-dev/anvil/runtime/handler"`) ||
		strings.Contains(groups[1], `handler "`) {
		t.Errorf("imports not in two groups (standard library, then the runtime without aliases):\n%s", b[start:end])
	}
}

// TestUnformattableSourceIsKept: a file the formatter refuses (a generator
// bug) fails with ErrFormat, carrying the unformatted source.
func TestUnformattableSourceIsKept(t *testing.T) {
	src := []byte("package x\n\nfunc f() {\n")
	_, err := formatSource("workspace/x/ops000/ops_gen.go", src)
	var fe *FormatError
	if !errors.Is(err, ErrFormat) || !errors.As(err, &fe) || !bytes.Equal(fe.Source, src) || fe.Name != "workspace/x/ops000/ops_gen.go" {
		t.Fatalf("err %v, want a FormatError with the source", err)
	}
	if !strings.Contains(err.Error(), "ops_gen.go") {
		t.Errorf("%q does not name the file", err)
	}
}

// TestSensitivityComesFromAIR: the generated hasher redacts what the AIR
// records; AIR that does not record what the contract's rule says (a bundle
// compiled before lowering recorded it) is refused, not generated wrong.
func TestSensitivityComesFromAIR(t *testing.T) {
	ws := tinyWorkspace(t, 1)
	op := ws.Connectors[0].Tools[0].Op
	op.Input.Schema.Properties["api_token"] = schema(t, `{"type":"string"}`)
	if _, err := Generate(ws); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "api_token") {
		t.Fatalf("unrecorded sensitivity: %v", err)
	}
	op.Input.Sensitive = []string{"api_token", "x"}
	if _, err := Generate(ws); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("sensitivity recorded for a non-sensitive input: %v", err)
	}
	op.Input.Sensitive = []string{"api_token"}
	out, err := Generate(ws)
	if err != nil {
		t.Fatal(err)
	}
	if b := out["workspace/team_svc/ops000/ops_gen.go"].Data; !bytes.Contains(b, []byte(`handler.Redacted(f, "api_token", in.ApiToken)`)) {
		t.Errorf("the hasher does not redact api_token:\n%s", b)
	}
}
