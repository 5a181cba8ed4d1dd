package lower

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

// structuredOf lowers one GET operation whose 200 response has the
// schema (JSON) and content type, with the named schemas, and returns the
// structured output schema's JSON ("" for none).
func structuredOf(t *testing.T, contentType, schema string, named map[string]string) string {
	t.Helper()
	var s *air.Schema
	if schema != "" {
		s = &air.Schema{}
		if err := json.Unmarshal([]byte(schema), s); err != nil {
			t.Fatal(err)
		}
	}
	spec := pinSpec(&openapi.Operation{Path: "/things", Method: "GET", OperationID: "listThings",
		Responses: []*openapi.Response{{Status: "200", ContentType: contentType, Schema: s}}})
	spec.Schemas = map[string]*air.Schema{}
	for name, text := range named {
		var d air.Schema
		if err := json.Unmarshal([]byte(text), &d); err != nil {
			t.Fatal(err)
		}
		spec.Schemas[name] = &d
	}
	doc, _ := Lower(spec, nil, &Options{ServiceID: "s"})
	out := doc.Operations[0].Output.StructuredSchema
	if out == nil {
		return ""
	}
	b, err := out.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStructuredSchemaDerivation: the schema of structuredContent is the
// loosened response schema for an object (a nullable one, an allOf of
// objects merged), {"result": …} around anything else; refs are inlined,
// recursion becomes a stand-in, and only the conformable vocabulary is
// kept; a response that is not JSON, or declares no schema, gets none.
func TestStructuredSchemaDerivation(t *testing.T) {
	user := `{"type":["object","null"],"required":["login"],"additionalProperties":false,"properties":{"login":{"type":"string","minLength":1,"description":"The handle."},"plan":{"type":"string","enum":["free","pro"]}}}`
	named := map[string]string{
		"User":  user,
		"Issue": `{"title":"Issue","type":"object","required":["id"],"properties":{"id":{"type":"integer","format":"int64","minimum":1},"user":{"$ref":"#/$defs/User"},"parent":{"$ref":"#/$defs/Issue"},"kind":{"oneOf":[{"type":"string"},{"type":"integer"}]},"labels":{"type":"array","maxItems":5,"items":{"anyOf":[{"type":"string"},{}]}}}}`,
		"Base":  `{"type":"object","properties":{"id":{"type":"integer"},"at":{"type":"string","format":"date-time"}}}`,
	}
	for _, c := range []struct{ name, ct, schema, want string }{
		{"object, refs inlined, recursion cut", "application/json", `{"$ref":"#/$defs/Issue"}`,
			`{"type":"object","properties":{"id":{"type":"integer"},"kind":{"anyOf":[{"type":"string"},{"type":"integer"}]},"labels":{"type":"array"},"parent":{"type":"object"},"user":{"type":["object","null"],"properties":{"login":{"type":"string"},"plan":{"type":"string"}}}}}`},
		{"array wrapped", "application/json", `{"type":"array","items":{"$ref":"#/$defs/User"}}`,
			`{"type":"object","properties":{"result":{"type":"array","items":{"type":["object","null"],"properties":{"login":{"type":"string"},"plan":{"type":"string"}}}}}}`},
		{"nullable object", "application/vnd.github+json", `{"$ref":"#/$defs/User"}`,
			`{"type":"object","properties":{"login":{"type":"string"},"plan":{"type":"string"}}}`},
		{"allOf merged", "application/json", `{"allOf":[{"$ref":"#/$defs/Base"},{"type":"object","properties":{"name":{"type":"string"},"id":{"type":"number"}}}]}`,
			`{"type":"object","properties":{"at":{"type":"string"},"id":{"allOf":[{"type":"integer"},{"type":"number"}]},"name":{"type":"string"}}}`},
		{"map", "application/json", `{"type":"object","additionalProperties":{"type":"integer","minimum":0}}`,
			`{"type":"object","additionalProperties":{"type":"integer"}}`},
		{"string", "application/json", `{"type":"string","format":"uri"}`,
			`{"type":"object","properties":{"result":{"type":"string"}}}`},
		{"not JSON", "text/plain", `{"type":"string"}`, ""},
		{"no schema", "application/json", "", ""},
	} {
		if got := structuredOf(t, c.ct, c.schema, named); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestStructuredSchemaBounded: a schema too deep or too large is cut to
// the deepest form within MaxStructuredSchemaBytes (nesting at most
// maxStructuredDepth), what is cut keeping its types; a schema too wide
// even at depth 1 is {"type":"object"}.
func TestStructuredSchemaBounded(t *testing.T) {
	// Eight levels of nesting: cut at maxStructuredDepth.
	deep := `{"type":"string"}`
	for range 8 {
		deep = `{"type":"object","properties":{"next":` + deep + `}}`
	}
	got := structuredOf(t, "application/json", deep, nil)
	if n := strings.Count(got, `"next"`); n != maxStructuredDepth || !strings.Contains(got, `{"next":{"type":"object"}}`) {
		t.Errorf("deep: %d levels: %s", n, got)
	}
	// Wide and nested: 60 members of 30 members each is over the budget
	// at depth 2, so depth 1 keeps the members' types.
	var inner, outer []string
	for i := range 30 {
		inner = append(inner, fmt.Sprintf(`"field_number_%02d":{"type":"string"}`, i))
	}
	for i := range 60 {
		outer = append(outer, fmt.Sprintf(`"member_%02d":{"type":"object","properties":{%s}}`, i, strings.Join(inner, ",")))
	}
	got = structuredOf(t, "application/json", `{"type":"object","properties":{`+strings.Join(outer, ",")+`}}`, nil)
	if len(got) > MaxStructuredSchemaBytes || strings.Contains(got, "field_number") || !strings.Contains(got, `"member_59":{"type":"object"}`) {
		t.Errorf("wide: %d bytes: %.300s", len(got), got)
	}
	var huge []string
	for i := range 400 {
		huge = append(huge, fmt.Sprintf(`"a_rather_long_member_name_%03d":{"type":"string"}`, i))
	}
	if got := structuredOf(t, "application/json", `{"type":"object","properties":{`+strings.Join(huge, ",")+`}}`, nil); got != `{"type":"object"}` {
		t.Errorf("too wide: %.200s", got)
	}
}
