package air

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// encoderIndent is what Marshal must write: a json.Encoder without HTML
// escaping, indented by two spaces.
func encoderIndent(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestMarshalMatchesEncoder: Marshal writes exactly the encoder's bytes for
// the committed example bundle (document, schemas, generation) and for
// values with empty containers, escapes and nesting.
func TestMarshalMatchesEncoder(t *testing.T) {
	doc, err := Load(filepath.Join("..", "..", "golden", "compile", "github-mini"))
	if err != nil {
		t.Fatal(err)
	}
	values := []any{doc, &doc.Operations[0], doc.Operations[0].Input.Schema, (*Schema)(nil), nil,
		map[string]any{"a": []any{}, "b": map[string]any{}, "c": []any{map[string]any{}, []any{[]any{}}}, "d": "x\"y,{}[]:<>&\u2028"},
		[]any{1.5, "é", true, nil, json.Number("12"), json.RawMessage(` { "k" : [ 1 , 2 ] } `)},
		"plain", 42, struct{}{}, []string{},
	}
	for i := range doc.Operations {
		values = append(values, doc.Operations[i].Input.Schema)
	}
	for i, v := range values {
		got, err := Marshal(v)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if want := encoderIndent(t, v); !bytes.Equal(got, want) {
			t.Errorf("value %d:\n got %s\nwant %s", i, got, want)
		}
	}
	files, err := Files(doc)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		on, err := os.ReadFile(filepath.Join("..", "..", "golden", "compile", "github-mini", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, on) {
			t.Errorf("%s differs from the golden bundle", name)
		}
	}
}

// FuzzAppendIndented: for any valid JSON, indenting its compact form gives
// json.Indent's bytes.
func FuzzAppendIndented(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{},[]],"b":{"c":"d\"}{"}}`, `"x"`, `[[[]]]`, `{"\\":"\\\\"}`, `1e3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, b) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := appendIndented(nil, compact.Bytes(), IndentAll); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%q:\n got %s\nwant %s", compact.Bytes(), got, want.Bytes())
		}
		// Given in two runs, split anywhere (even inside a string), the
		// indentation is the same.
		for cut := 0; cut <= len(compact.Bytes()); cut += 1 + len(compact.Bytes())/7 {
			ind := Indenter{MaxDepth: IndentAll}
			got := ind.Append(ind.Append(nil, compact.Bytes()[:cut]), compact.Bytes()[cut:])
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("%q cut at %d:\n got %s\nwant %s", compact.Bytes(), cut, got, want.Bytes())
			}
		}
		// Indenting to a depth only adds white space outside strings.
		for depth := range 4 {
			var back bytes.Buffer
			got := appendIndented(nil, compact.Bytes(), depth)
			if err := json.Compact(&back, got); err != nil || !bytes.Equal(back.Bytes(), compact.Bytes()) {
				t.Fatalf("%q to depth %d: %s (%v)", compact.Bytes(), depth, got, err)
			}
		}
	})
}
