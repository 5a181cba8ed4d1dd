package manifest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/tools/txtar"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/schemas"
)

// compiledSchema compiles the embedded manifest schema.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := schemas.CompileManifest()
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	return sch
}

// schemaJSON is the schema as a generic JSON value, for walking it.
func schemaJSON(t *testing.T) map[string]any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas.Manifest))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

// validate reports whether the YAML manifest text validates against sch.
func validate(t *testing.T, sch *jsonschema.Schema, file string, data []byte) error {
	t.Helper()
	js, diags := ToJSON(file, data)
	if diags.HasErrors() {
		t.Fatalf("%s: not YAML the decoder reads:\n%s", file, diagText(diags))
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(v)
}

func diagText(l diag.List) string {
	var b strings.Builder
	_ = l.WriteText(&b)
	return b.String()
}

// repoManifests lists every manifest the repository holds: the examples'
// anvil.yaml files, this package's testdata, and the anvil.yaml section of
// every golden txtar case. A manifest in clean is one the decoder accepts.
func repoManifests(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pat := range []string{"../../examples/*/anvil.yaml", "testdata/*.yaml"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = b
		}
	}
	cases, _ := filepath.Glob("../../golden/*/*/*.txtar")
	for _, f := range cases {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ar.Files {
			if s.Name == "anvil.yaml" {
				out[f+"#anvil.yaml"] = s.Data
			}
		}
	}
	if len(out) < 4 {
		t.Fatalf("found only %d manifests; the globs are wrong", len(out))
	}
	return out
}

// TestRepositoryManifestsValidate: every manifest of the repository the
// decoder accepts validates against the schema, and every one it rejects
// for a shape problem (type, value, unknown key) is rejected by the schema.
func TestRepositoryManifestsValidate(t *testing.T) {
	sch := compiledSchema(t)
	var clean int
	for name, data := range repoManifests(t) {
		_, diags := Decode(name, data)
		shape := false
		for _, d := range diags {
			switch d.Code {
			case CodeType, CodeInvalidValue, CodeUnknownKey:
				shape = true
			}
		}
		js, jd := ToJSON(name, data)
		if js == nil {
			if !jd.HasErrors() {
				t.Errorf("%s: ToJSON returned nothing and no error", name)
			}
			continue
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
		if err != nil {
			t.Fatal(err)
		}
		verr := sch.Validate(v)
		switch {
		case !diags.HasErrors():
			clean++
			if verr != nil {
				t.Errorf("%s decodes cleanly but fails the schema: %v", name, verr)
			}
		case shape && verr == nil:
			t.Errorf("%s has shape errors but passes the schema:\n%s", name, diagText(diags))
		}
	}
	if clean < 3 {
		t.Errorf("only %d clean manifests validated", clean)
	}
}

// bogus is a key and a value no grammar location accepts or suggests.
const bogus = "zzzzzzzzzzzzzzzz"

// keyLocation places a mapping of the grammar in a document: doc holds %s
// where entries may be added to that mapping (doc alone decodes cleanly),
// def is the schema object describing it, and keys names the grammar.go
// variable listing its keys.
type keyLocation struct {
	doc, def, keys string
}

var grammarKeyLocations = []keyLocation{
	{"{version: 1%s}", "#", "topKeys"},
	{"{service: {name: s%s}}", "#/$defs/service", "serviceKeys"},
	{"{auth: {type: none%s}}", "#/$defs/auth", "authKeys"},
	{"{auth: {carrier: {in: header%s}}}", "#/$defs/carrier", "carrierKeys"},
	{"{auth: {tls: {ca_ref: x%s}}}", "#/$defs/tls", "tlsKeys"},
	{"{auth: {provider: {grant: x%s}}}", "#/$defs/provider", "providerKeys"},
	{"{operations: {op: {risk: low%s}}}", "#/$defs/operation", "operationKeys"},
	{"{operations: {op: {auth: {type: none%s}}}}", "#/$defs/auth", "authKeys"},
	{"{operations: {op: {name: {verb: v%s}}}}", "#/$defs/name", "nameKeys"},
	{"{operations: {op: {idempotency: {strategy: none%s}}}}", "#/$defs/idempotency", "idempotencyKeys"},
	{"{operations: {op: {confirmation: {required: true%s}}}}", "#/$defs/confirmation", "confirmationKeys"},
	{"{operations: {op: {retries: {enabled: true%s}}}}", "#/$defs/retries", "retriesKeys"},
	{"{operations: {op: {pagination: {style: cursor%s}}}}", "#/$defs/pagination", "paginationKeys"},
	{"{operations: {op: {stream: {max_events: 1%s}}}}", "#/$defs/stream", "streamKeys"},
	{"{operations: {op: {effect: {class: irreversible%s}}}}", "#/$defs/effect", "effectKeys"},
	{"{operations: {op: {effect: {inverse: {operation: x%s}}}}}", "#/$defs/followUp", "followUpKeys"},
	{"{operations: {op: {effect: {compensate: {operation: x%s}}}}}", "#/$defs/followUp", "followUpKeys"},
	{"{operations: {op: {effect: {inverse: {operation: x, deadline: {within_ms: 1%s}}}}}}", "#/$defs/deadline", "deadlineKeys"},
	{"{operations: {op: {effect: {lookup: {operation: x, by: id%s}}}}}", "#/$defs/lookup", "lookupKeys"},
	{"{operations: {op: {effect: {draft: {operation: x, handle: response.id, promote: {operation: y}%s}}}}}", "#/$defs/draft", "draftKeys"},
	{"{operations: {op: {effect: {draft: {operation: x, handle: response.id, promote: {operation: y%s}}}}}}", "#/$defs/call", "callKeys"},
	{"{operations: {op: {effect: {draft: {operation: x, handle: response.id, promote: {operation: y}, discard: {operation: z%s}}}}}}", "#/$defs/call", "callKeys"},
	{"{workflows: {w: {steps: [a]%s}}}", "#/$defs/workflow", "workflowKeys"},
	{"{capabilities: {c: {operations: [a]%s}}}", "#/$defs/capability", "capabilityKeys"},
}

// enumLocation places an enumerated value: doc holds %s for the value,
// def is the schema holding its enum, and values names the grammar.go
// variable listing the allowed values.
type enumLocation struct {
	doc, def, values string
}

var grammarEnumLocations = []enumLocation{
	{"{path_grammar: %s}", "#/properties/path_grammar", "pathGrammars"},
	{"{auth: {type: %s}}", "#/$defs/auth/properties/type", "authTypes"},
	{"{auth: {carrier: {in: %s}}}", "#/$defs/carrier/properties/in", "carrierIns"},
	{"{operations: {op: {side_effect: %s}}}", "#/$defs/operation/properties/side_effect", "sideEffects"},
	{"{operations: {op: {risk: %s}}}", "#/$defs/operation/properties/risk", "risks"},
	{"{operations: {op: {confirmation: {risk: %s}}}}", "#/$defs/confirmation/properties/risk", "risks"},
	{"{operations: {op: {action: %s}}}", "#/$defs/operation/properties/action", "actions"},
	{"{operations: {op: {state: %s}}}", "#/$defs/operation/properties/state", "states"},
	{"{operations: {op: {idempotency: {strategy: %s}}}}", "#/$defs/idempotency/properties/strategy", "strategies"},
	{"{operations: {op: {idempotency: {key_location: %s}}}}", "#/$defs/idempotency/properties/key_location", "keyLocations"},
	{"{operations: {op: {retries: {only_on: [%s]}}}}", "#/$defs/retries/properties/only_on/items/anyOf/0", "retryReasons"},
	{"{operations: {op: {pagination: {style: %s}}}}", "#/$defs/pagination/properties/style", "pageStyles"},
	{"{operations: {op: {effect: {class: %s}}}}", "#/$defs/effect/properties/class", "classes"},
	{"{operations: {op: {effect: {lookup: {operation: x, by: %s}}}}}", "#/$defs/lookup/properties/by", "lookupBys"},
}

// pointer resolves a JSON pointer of the form #/a/b/0 in the schema,
// following a $ref met at the end.
func pointer(t *testing.T, root map[string]any, ptr string) map[string]any {
	t.Helper()
	var cur any = root
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "#"), "/")[1:] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i >= len(c) {
				t.Fatalf("%s: bad index %q", ptr, seg)
			}
			cur = c[i]
		default:
			t.Fatalf("%s: cannot step into %T at %q", ptr, cur, seg)
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("%s names no schema object", ptr)
	}
	if ref, ok := m["$ref"].(string); ok {
		return pointer(t, root, ref)
	}
	return m
}

func propertyNames(m map[string]any) []string {
	var out []string
	for k := range m["properties"].(map[string]any) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// afterMarker returns the comma-separated list that follows marker in the
// single diagnostic of diags, stopping at ';' or " or ".
func afterMarker(t *testing.T, diags diag.List, code, marker string) []string {
	t.Helper()
	for _, d := range diags {
		if d.Code != code {
			continue
		}
		i := strings.Index(d.Message, marker)
		if i < 0 {
			t.Fatalf("message %q lacks %q", d.Message, marker)
		}
		rest := d.Message[i+len(marker):]
		if j := strings.IndexAny(rest, ";"); j >= 0 {
			rest = rest[:j]
		}
		if j := strings.Index(rest, " or "); j >= 0 {
			rest = rest[:j]
		}
		return sortedCopy(strings.Split(rest, ", "))
	}
	t.Fatalf("no %s diagnostic in:\n%s", code, diagText(diags))
	return nil
}

// grammarLists parses grammar.go and returns every package-level []string
// variable whose elements are all string literals (the key lists) and the
// names of the others (the enumerations built from AIR constants too).
func grammarLists(t *testing.T) (literal map[string][]string, all []string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "grammar.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	literal = map[string][]string{}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				cl, ok := vs.Values[i].(*ast.CompositeLit)
				if !ok {
					continue
				}
				if at, ok := cl.Type.(*ast.ArrayType); !ok || fmt.Sprint(at.Elt) != "string" {
					continue
				}
				all = append(all, name.Name)
				var vals []string
				lit := true
				for _, e := range cl.Elts {
					bl, ok := e.(*ast.BasicLit)
					if !ok {
						lit = false
						break
					}
					s, _ := strconv.Unquote(bl.Value)
					vals = append(vals, s)
				}
				if lit {
					literal[name.Name] = vals
				}
			}
		}
	}
	return literal, all
}

// TestSchemaMatchesGrammar walks the decoder's grammar against the schema
// both ways, so neither can gain or lose a key or a value alone:
//   - at every location a mapping of the grammar can appear, the keys the
//     decoder lists for an unknown key are exactly the schema's properties
//     there, and both reject the unknown key;
//   - every []string variable of grammar.go is a location's key list or an
//     enumeration checked here, and every key list is written with the same
//     keys as the schema object of its location;
//   - every strict object of the schema is some location's;
//   - at every enumerated value, the values the decoder lists are exactly the
//     schema's enum, both reject an unknown value and both accept each listed
//     one.
func TestSchemaMatchesGrammar(t *testing.T) {
	sch := compiledSchema(t)
	root := schemaJSON(t)
	literal, all := grammarLists(t)

	covered := map[string]bool{}
	defsSeen := map[string]bool{}
	for _, loc := range grammarKeyLocations {
		covered[loc.keys] = true
		def := pointer(t, root, loc.def)
		defsSeen[loc.def] = true
		want := propertyNames(def)

		clean := fmt.Sprintf(loc.doc, "")
		if _, d := Decode("x.yaml", []byte(clean)); d.HasErrors() {
			t.Fatalf("%s does not decode cleanly:\n%s", clean, diagText(d))
		}
		if err := validate(t, sch, "x.yaml", []byte(clean)); err != nil {
			t.Errorf("%s fails the schema: %v", clean, err)
		}
		bad := fmt.Sprintf(loc.doc, ", "+bogus+": 1")
		_, d := Decode("x.yaml", []byte(bad))
		got := afterMarker(t, d, CodeUnknownKey, "valid keys: ")
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: the decoder accepts %v, the schema %s %v", loc.doc, got, loc.def, want)
		}
		if err := validate(t, sch, "x.yaml", []byte(bad)); err == nil {
			t.Errorf("%s: the schema accepts an unknown key", bad)
		}
		if lit, ok := literal[loc.keys]; !ok {
			t.Errorf("grammar.go has no literal key list %s", loc.keys)
		} else if strings.Join(sortedCopy(lit), ",") != strings.Join(want, ",") {
			t.Errorf("%s = %v, the schema %s has %v", loc.keys, lit, loc.def, want)
		}
	}
	for _, loc := range grammarEnumLocations {
		covered[loc.values] = true
		def := pointer(t, root, loc.def)
		var want []string
		for _, v := range def["enum"].([]any) {
			want = append(want, v.(string))
		}
		want = sortedCopy(want)
		bad := fmt.Sprintf(loc.doc, bogus)
		_, d := Decode("x.yaml", []byte(bad))
		got := afterMarker(t, d, CodeInvalidValue, "is not one of ")
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: the decoder allows %v, the schema %s %v", loc.doc, got, loc.def, want)
		}
		if err := validate(t, sch, "x.yaml", []byte(bad)); err == nil {
			t.Errorf("%s: the schema accepts an unknown value", bad)
		}
		for _, v := range want {
			ok := fmt.Sprintf(loc.doc, strconv.Quote(v))
			if _, d := Decode("x.yaml", []byte(ok)); d.HasErrors() {
				t.Errorf("%s:\n%s", ok, diagText(d))
			}
			if err := validate(t, sch, "x.yaml", []byte(ok)); err != nil {
				t.Errorf("%s fails the schema: %v", ok, err)
			}
		}
	}
	for _, name := range all {
		if !covered[name] {
			t.Errorf("grammar.go's %s is checked against no schema location: add it to grammarKeyLocations or grammarEnumLocations", name)
		}
	}
	for name, def := range root["$defs"].(map[string]any) {
		m := def.(map[string]any)
		if m["additionalProperties"] == false && m["properties"] != nil && !defsSeen["#/$defs/"+name] && name != "constSource" {
			t.Errorf("the schema's strict object $defs/%s is at no grammar location", name)
		}
	}
	// {const: v} is the one strict object with no key list: the argument
	// decoder takes exactly that key.
	for doc, wantOK := range map[string]bool{
		"{operations: {op: {effect: {inverse: {operation: x, arguments: {a: {const: 1}}}}}}}":       true,
		"{operations: {op: {effect: {inverse: {operation: x, arguments: {a: {const: 1, b: 2}}}}}}}": false,
		"{operations: {op: {effect: {inverse: {operation: x, arguments: {a: request.x?, b: 2}}}}}}": false,
	} {
		_, d := Decode("x.yaml", []byte(doc))
		err := validate(t, sch, "x.yaml", []byte(doc))
		if d.HasErrors() == wantOK || (err == nil) != wantOK {
			t.Errorf("%s: decoder errors %v, schema error %v; want accepted=%v", doc, d.HasErrors(), err, wantOK)
		}
	}
}
