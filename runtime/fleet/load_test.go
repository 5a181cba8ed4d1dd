package fleet

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/handler"
)

// airFiles lists the AIR documents committed in the repository's test
// data and goldens.
func airFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, root := range []string{"../serve/testdata", "../../golden", "../../examples"} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == air.DocumentFile {
				out = append(out, p)
			}
			return nil
		})
	}
	if len(out) < 3 {
		t.Fatalf("found only %d AIR documents", len(out))
	}
	return out
}

// TestDecodeDocumentMatchesParse: the streaming, interning decoder reads
// every committed AIR document as air.Parse does (the same canonical
// bytes).
func TestDecodeDocumentMatchesParse(t *testing.T) {
	for _, p := range airFiles(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := air.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got, err := loadDocument(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want.Diagnostics = nil // the compiler's report: a gateway does not read it
		wb, _ := air.Marshal(want)
		gb, err := air.Marshal(got)
		if err != nil || !bytes.Equal(wb, gb) {
			t.Errorf("%s: the streamed document differs from air.Parse's (%v)", p, err)
		}
	}
}

// TestDecodeDocumentSharesSchemas: equal schemas in different operations
// (a named schema each input schema carries in $defs) are one object;
// different ones stay apart.
func TestDecodeDocumentSharesSchemas(t *testing.T) {
	def := `{"type":"object","properties":{"line1":{"type":"string"},"n":{"type":"integer","minimum":1}}}`
	other := `{"type":"object","properties":{"line1":{"type":"string"},"n":{"type":"integer","minimum":2}}}`
	op := func(id, d string) string {
		return `{"id":"` + id + `","input":{"params":[],"schema":{"$defs":{"Address":` + d + `},"type":"object","properties":{"a":{"$ref":"#/$defs/Address"},"id":{"type":"string"}}}}}`
	}
	doc := `{"schema":"` + air.SchemaVersion + `","service":{"id":"s"},"operations":[` + op("a", def) + `,` + op("b", def) + `,` + op("c", other) + `]}`
	d, err := decodeDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := d.Operations[0].Input.Schema, d.Operations[1].Input.Schema, d.Operations[2].Input.Schema
	if a != b {
		t.Error("equal input schemas were not shared")
	}
	if a.Defs["Address"] == c.Defs["Address"] || a == c {
		t.Error("different schemas were shared")
	}
	if a.Properties["id"] != c.Properties["id"] || a.Defs["Address"].Properties["line1"] != c.Defs["Address"].Properties["line1"] {
		t.Error("equal subschemas of different schemas were not shared")
	}
	if d.Service.ID != "s" || len(d.Operations) != 3 {
		t.Errorf("document: %+v", d)
	}
}

// TestDecodeDocumentRefusesWhatParseRefuses: trailing data, a document
// that is not an object, and bad members are errors, not partial reads;
// so is a second operations member (json.Unmarshal would keep the last).
func TestDecodeDocumentRefusesWhatParseRefuses(t *testing.T) {
	v := `"schema":"` + air.SchemaVersion + `"`
	for _, doc := range []string{
		`{` + v + `,"operations":[]} {}`,
		`[]`,
		`{` + v + `,"operations":[{"id":1}]}`,
		`{` + v + `,"operations":{}}`,
		`{` + v + `,"service":{"id":2}}`,
		`{` + v + `,"operations":[`,
	} {
		if _, err := decodeDocument([]byte(doc)); err == nil {
			t.Errorf("%s: decoded", doc)
		}
		if _, err := air.Parse([]byte(doc)); err == nil {
			t.Errorf("%s: air.Parse takes it", doc)
		}
	}
	if _, err := decodeDocument([]byte(`{` + v + `,"operations":[],"operations":[]}`)); err == nil {
		t.Error("two operations members decoded")
	}
	if _, err := loadDocument([]byte(`{"schema":"anvil.air/v0","operations":[]}`)); err == nil || !strings.Contains(err.Error(), "unsupported schema") {
		t.Errorf("an old schema version: %v", err)
	}
}

// TestNewCompilesNoValidator: building a fleet compiles no input schema, so
// a schema that does not compile loads, and its tool refuses calls with
// internal_error (handler.Prepare) instead of the fleet failing to load;
// nor does it encode a tools/list entry (a gateway of tens of thousands of
// tools starts without doing either): both happen on first use.
func TestNewCompilesNoValidator(t *testing.T) {
	bad := &air.Schema{Type: air.Types{"object"}, Properties: map[string]*air.Schema{"x": {Ref: "#/$defs/Missing"}}}
	doc := &air.Document{Schema: air.SchemaVersion, Service: air.Service{ID: "svc"}, Operations: []air.Operation{
		{ID: "svc.things.get", State: air.StateApproved, MCP: air.MCP{ToolName: "things_get"}, Input: air.Input{Schema: bad}},
	}}
	f, err := New([]*Connector{{ID: "svc", Dir: "svc", Doc: doc}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	tool := f.Tool("svc__things_get")
	if tool == nil {
		t.Fatal("the tool is not served")
	}
	if !tool.schema.Pending() {
		t.Error("New compiled the validator")
	}
	if tool.listing != nil || tool.mcpTool != nil {
		t.Error("New encoded the tool's tools/list entry")
	}
	if e := tool.ListEntry(); e == nil || e.Name != "svc__things_get" || !bytes.Contains(tool.Listing(), []byte(`"#/$defs/Missing"`)) {
		t.Errorf("the entry built on first use: %+v %s", e, tool.Listing())
	}
	if e := handler.Prepare(tool.Handler); e == nil || e.Code != envelope.InternalError {
		t.Errorf("Prepare = %v; want internal_error", e)
	}
}
