package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode checks that no input makes Decode panic or work more than
// linearly in its size, and that every diagnostic carries a code, a short
// message and a position in the named file, in order.
func FuzzDecode(f *testing.F) {
	seeds := []string{exampleManifest}
	more, _ := filepath.Glob("testdata/*.yaml")
	seeds = append(seeds, more...)
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, c := range errorCases {
		f.Add([]byte(c.src))
	}
	f.Add([]byte("a: &a [*a, *a]\nquery_templates: {<<: *a}\n"))
	f.Add([]byte("operations: {x: {effect: {inverse: {operation: y, arguments: {<<: [{a: b}, {a: c}], b: {const: [1, {z: 2}]}}}}}}\n"))
	f.Add([]byte("\x00\xff\xfe{[?:-"))
	for _, a := range adversarialInputs(0.02) {
		f.Add([]byte(a.src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := &decoder{file: "fuzz.yaml"}
		m, diags := dec.decode(data)
		if m == nil {
			t.Fatal("nil manifest")
		}
		// The work is linear in the input: each node is walked a few
		// times, plus what the alias budget pays for (see
		// TestAdversarialInputs).
		if dec.expansion > dec.maxExpansion+len(data)/bytesPerUnit+diagnosticCost {
			t.Errorf("spent %d units of a %d budget", dec.expansion, dec.maxExpansion)
		}
		if limit := 4*dec.nodes + dec.expansion; dec.steps > limit {
			t.Errorf("walked %d steps for %d nodes and %d units of expansion", dec.steps, dec.nodes, dec.expansion)
		}
		for _, d := range diags {
			if d.Code == "" || d.Message == "" || d.Level == "" {
				t.Errorf("incomplete diagnostic %+v", d)
			}
			if len(d.Message) > 1024 {
				t.Errorf("message of %d bytes: %.200s…", len(d.Message), d.Message)
			}
			if d.Pos.File != "fuzz.yaml" || d.Pos.Line < 1 || d.Pos.Col < 0 {
				t.Errorf("diagnostic without a position: %+v", d)
			}
		}
		for i := 1; i < len(diags); i++ {
			a, b := diags[i-1].Pos, diags[i].Pos
			if a.Line > b.Line || a.Line == b.Line && a.Col > b.Col {
				t.Errorf("diagnostics not sorted: %v before %v", diags[i-1], diags[i])
			}
		}
	})
}

// FuzzToJSON checks that ToJSON never panics, answers valid JSON or an
// error, and converts every document Decode accepts.
func FuzzToJSON(f *testing.F) {
	b, err := os.ReadFile(exampleManifest)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("a: &a [*a, *a]\nquery_templates: {<<: *a}\n"))
	f.Add([]byte("operations: {x: {effect: {inverse: {operation: y, arguments: {a: request.b?}}}}}\n"))
	f.Add([]byte("x: .inf\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		js, diags := ToJSON("fuzz.yaml", data)
		if js != nil && !json.Valid(js) {
			t.Fatalf("not JSON: %s", js)
		}
		if js == nil && !diags.HasErrors() {
			t.Fatal("no JSON and no error")
		}
		if _, d := Decode("fuzz.yaml", data); !d.HasErrors() && js == nil {
			t.Fatalf("Decode accepts what ToJSON refuses: %v", diags)
		}
	})
}
