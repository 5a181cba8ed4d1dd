package fleet

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/handler"
)

// issueSchema is a structured output schema as lowering derives one: an
// object of typed members, nested objects and arrays, an anyOf, an allOf,
// a map (additionalProperties), no "required".
const issueSchema = `{"type":"object","properties":{
	"id":{"type":"integer"},
	"title":{"type":"string"},
	"closed_at":{"type":["string","null"]},
	"user":{"type":["object","null"],"properties":{"login":{"type":"string"},"id":{"type":"integer"}}},
	"labels":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"object","properties":{"name":{"type":"string"}}}]}},
	"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}]},
	"counts":{"type":"object","additionalProperties":{"type":"integer"}},
	"both":{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"properties":{"b":{"type":"boolean"}}}]}
}}`

func toolWith(t testing.TB, schema string) *Tool {
	t.Helper()
	var s air.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	return &Tool{Name: "c__x", Connector: &Connector{ID: "c", Doc: &air.Document{}},
		Op: &air.Operation{ID: "x.y.get", Input: air.Input{Schema: &air.Schema{Type: air.Types{"object"}}}, Output: air.Output{StructuredSchema: &s}}}
}

// validator compiles schema as a client would (JSON Schema 2020-12, as
// the gateway compiles input schemas).
func validator(t testing.TB, schema []byte) *jsonschema.Schema {
	t.Helper()
	var s air.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	sch, err := handler.CompileSchema("out", &s)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func validates(sch *jsonschema.Schema, b []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// TestStructuredContentConforms: what conforms is sent as it is (same
// bytes); what does not loses exactly the members that do not, at any
// depth, with the order of the rest kept; an array with an item of the
// wrong type is left out whole; integers are exact.
func TestStructuredContentConforms(t *testing.T) {
	tool := toolWith(t, issueSchema)
	sch := validator(t, tool.OutputSchema())
	for _, c := range []struct{ in, want string }{
		{`{"id":1,"title":"t","closed_at":null,"user":{"login":"a","id":2},"labels":["x",{"name":"y"}],"pair":["a",1.5],"counts":{"go":3},"both":{"a":"x","b":true},"extra":[1]}`, ""},
		{`{"id":1.0,"user":null}`, ""},
		{`{"title":"t","id":"7","user":{"id":"2","login":"a"}}`, `{"title":"t","user":{"login":"a"}}`},
		{`{"labels":["x",3],"id":1}`, `{"id":1}`},
		{`{"labels":[{"name":5},"x"]}`, `{"labels":[{},"x"]}`},
		{`{"pair":[1,"a"],"counts":{"go":3,"c":1.5,"rust":1e2}}`, `{"counts":{"go":3,"rust":1e2}}`},
		{`{"id":1.0000000000000000001}`, `{}`},
		{`{"both":{"a":1,"b":true,"c":null}}`, `{"both":{"b":true,"c":null}}`},
		{`{"result":[1,2]}`, ""},
		{`{"anvil_dry_run":{"method":"GET"}}`, ""},
		{` {"id" : 1 , "title" : 2} `, `{"id":1}`},
		{`{"\u0069d":"x","title":"t"}`, `{"title":"t"}`},
		{`[1,2]`, `{}`},
		{`not json`, `{}`},
	} {
		got := tool.StructuredContent(json.RawMessage(c.in))
		want := c.want
		if want == "" {
			want = c.in
		}
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, want)
		}
		if err := validates(sch, got); err != nil {
			t.Errorf("%s: sent %s, which does not validate: %v", c.in, got, err)
		}
	}
}

// TestOutputSchemaServedOnlyWhenConformable: a schema with a keyword
// StructuredContent cannot make answers conform to is not served, nor is
// one whose root is not an object; a tool without one is listed without
// it and its content passes through; ListOutputSchemas puts it in the
// tools/list entry.
func TestOutputSchemaServedOnlyWhenConformable(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","required":["id"],"properties":{"id":{"type":"integer"}}}`,
		`{"type":"object","properties":{"state":{"enum":["open"]}}}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}}}`,
		`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"}]}}}`,
		`{"type":"object","properties":{"a":{"type":"string","format":"date-time"}}}`,
		`{"type":"array"}`,
		`{"type":["object","null"]}`,
		`{"type":"object","anyOf":[{"type":"object"}]}`,
		`{"type":"object","properties":{"a":false}}`,
	} {
		if tool := toolWith(t, s); tool.OutputSchema() != nil {
			t.Errorf("%s is served", s)
		} else if got := tool.StructuredContent(json.RawMessage(`{"id":"x"}`)); string(got) != `{"id":"x"}` {
			t.Errorf("%s: content changed to %s", s, got)
		}
	}
	tool := toolWith(t, issueSchema)
	if e := tool.MCPTool(); e.OutputSchema != nil {
		t.Errorf("listed with an outputSchema before ListOutputSchemas: %v", e.OutputSchema)
	}
	tool = toolWith(t, issueSchema)
	f := &Fleet{Tools: []*Tool{tool}}
	f.ListOutputSchemas()
	if b := tool.Listing(); !strings.Contains(string(b), `"outputSchema":{"type":"object","properties":{"both"`) {
		t.Errorf("listing: %s", b)
	}
}

// FuzzStructuredContent: whatever the answer, the structured content sent
// is a JSON object that validates against the served outputSchema.
func FuzzStructuredContent(f *testing.F) {
	for _, s := range []string{`{"id":1}`, `{"user":{"login":5}}`, `{"labels":[1,{"name":2}]}`, `{"counts":{"a":1.5}}`, `{"both":{"a":[]}}`, `{"pair":["x","y",3]}`, `{"id":-0.0e-3}`} {
		f.Add(s)
	}
	tool := toolWith(f, issueSchema)
	sch := validator(f, tool.OutputSchema())
	f.Fuzz(func(t *testing.T, in string) {
		got := tool.StructuredContent(json.RawMessage(in))
		if len(got) == 0 || got[0] != '{' || !json.Valid(got) {
			t.Fatalf("%q: sent %q", in, got)
		}
		if err := validates(sch, got); err != nil {
			t.Fatalf("%q: sent %s, which does not validate: %v", in, got, err)
		}
		if json.Valid([]byte(in)) && strings.HasPrefix(strings.TrimSpace(in), "{") && validates(sch, []byte(in)) == nil {
			var a, b any
			json.Unmarshal([]byte(in), &a)
			json.Unmarshal(got, &b)
			if ab, _ := json.Marshal(a); string(ab) != string(must(json.Marshal(b))) {
				t.Fatalf("%q conforms, yet was changed to %s", in, got)
			}
		}
	})
}

func must(b []byte, _ error) []byte { return b }

// TestDocsStructuredExample runs the example of docs/mcp.md: its answer,
// under its outputSchema, is sent as its structured content.
func TestDocsStructuredExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	block := func(name string) string {
		_, rest, ok := strings.Cut(string(doc), "```json "+name+"\n")
		if !ok {
			t.Fatalf("docs/mcp.md has no %s example", name)
		}
		b, _, _ := strings.Cut(rest, "\n```")
		return b
	}
	tool := toolWith(t, block("outputSchema"))
	if tool.OutputSchema() == nil {
		t.Fatal("the documented schema is not served")
	}
	if got, want := string(tool.StructuredContent(json.RawMessage(block("answer")))), block("structuredContent"); got != want {
		t.Errorf("sent %s, the docs say %s", got, want)
	}
}

// benchAnswer is a list answer of n issues, shaped as structuredContent
// ({"result": [...]}), every tenth with a member of the wrong type.
func benchAnswer(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"result":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		id := strconv.Itoa(i)
		if i%10 == 0 {
			id = `"` + id + `"`
		}
		b.WriteString(`{"id":` + id + `,"title":"Crash on start when the configuration file is missing","closed_at":null,` +
			`"user":{"login":"octocat","id":583231},"labels":["bug",{"name":"p1"}],"pair":["a",1],"counts":{"go":3,"ts":5},` +
			`"body":"A long enough body of text that an issue would carry, repeated to make the answer realistic in size."}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkStructuredContent conforms a 100-issue list answer (about 30 KB)
// to its outputSchema; BenchmarkStructuredValidateBaseline is what only
// checking it with santhosh-tekuri/jsonschema/v6 costs (decoding included),
// the baseline a validate-then-fall-back rule would pay on every call.
func BenchmarkStructuredContent(b *testing.B) {
	tool := toolWith(b, `{"type":"object","properties":{"result":{"type":"array","items":`+issueSchema+`}}}`)
	answer := benchAnswer(100)
	b.SetBytes(int64(len(answer)))
	b.ReportAllocs()
	for b.Loop() {
		tool.StructuredContent(answer)
	}
}

func BenchmarkStructuredValidateBaseline(b *testing.B) {
	sch := validator(b, []byte(`{"type":"object","properties":{"result":{"type":"array","items":`+issueSchema+`}}}`))
	answer := benchAnswer(100)
	b.SetBytes(int64(len(answer)))
	b.ReportAllocs()
	for b.Loop() {
		_ = validates(sch, answer)
	}
}
