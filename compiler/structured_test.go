package compiler

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/internal/testinput"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/handler"
)

// TestStructuredOutputOnRealSpecs compiles GitHub, Stripe and Kubernetes
// (and the example) and checks every tool's structured output schema as a
// client and the gateway use it: it is derived for each JSON success
// response with a schema; it is an object schema holding no $ref, within
// lower.MaxStructuredSchemaBytes, that compiles as JSON Schema 2020-12
// (santhosh-tekuri/jsonschema/v6) and that the gateway serves
// (fleet.Tool.OutputSchema). Every example the description gives for a
// success response, shaped as structuredContent, is sent so that it
// validates (fleet.Tool.StructuredContent), unchanged when it validates as
// it is.
func TestStructuredOutputOnRealSpecs(t *testing.T) {
	specs := []string{exampleSpec}
	dir := os.Getenv("ANVIL_SPECS_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".cache", "specs")
	}
	for _, n := range []string{"github.json", "stripe.json", "kubernetes.json"} {
		specs = append(specs, filepath.Join(dir, n))
	}
	for _, spec := range specs {
		t.Run(filepath.Base(spec), func(t *testing.T) {
			testinput.File(t, spec, "run scripts/fetch-specs.sh (or set ANVIL_SPECS_DIR)")
			doc, l := Compile(Inputs{Spec: spec}, Options{})
			if doc == nil {
				t.Fatalf("%s", codes(l))
			}
			examples := responseExamples(t, spec)
			var sizes []int
			sent, asIs := 0, 0
			for i := range doc.Operations {
				op := &doc.Operations[i]
				s := op.Output.StructuredSchema
				if json := op.Output.Schema != nil && jsonType(op.Output.ContentType); json != (s != nil) {
					t.Errorf("%s: JSON success response with a schema %v, structured schema %v", op.ID, json, s != nil)
				}
				if s == nil {
					continue
				}
				b, err := air.MarshalCompact(s)
				if err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, len(b))
				if len(b) > lower.MaxStructuredSchemaBytes || hasRef(s) {
					t.Errorf("%s: %d bytes, or a $ref: %.200s", op.ID, len(b), b)
				}
				tool := &fleet.Tool{Name: "c__" + op.MCP.ToolName, Op: op}
				served := tool.OutputSchema()
				if !bytes.Equal(served, b) {
					t.Errorf("%s: the gateway does not serve the schema: %.200s", op.ID, b)
					continue
				}
				sch := compileSchema(t, op.ID, s)
				for _, ex := range examples[strings.ToUpper(op.SourceRef.Method)+" "+op.SourceRef.Path] {
					content := ex
					if !bytes.HasPrefix(ex, []byte("{")) {
						content = []byte(`{"result":` + string(ex) + `}`)
					}
					got := tool.StructuredContent(content)
					if err := validate(sch, got); err != nil {
						t.Errorf("%s: sent %.200s, which does not validate: %v", op.ID, got, err)
					}
					sent++
					if validate(sch, content) == nil {
						asIs++
						if !bytes.Equal(got, content) {
							t.Errorf("%s: a conforming example was changed", op.ID)
						}
					}
				}
			}
			slices.Sort(sizes)
			if len(sizes) == 0 {
				t.Fatal("no structured schema")
			}
			t.Logf("%d of %d operations have a structured schema: max %d bytes, median %d; %d response examples, %d conform as they are, every one sent conforming",
				len(sizes), len(doc.Operations), sizes[len(sizes)-1], sizes[len(sizes)/2], sent, asIs)
		})
	}
}

// hasRef reports whether s or a schema it nests has a $ref or $defs.
func hasRef(s *air.Schema) bool {
	if s.Ref != "" || len(s.Defs) > 0 {
		return true
	}
	found := false
	s.EachChild(func(c *air.Schema) { found = found || hasRef(c) })
	return found
}

func jsonType(ct string) bool {
	ct = strings.ToLower(ct)
	return strings.HasPrefix(ct, "application/json") || strings.Contains(ct, "+json")
}

func compileSchema(t *testing.T, name string, s *air.Schema) *jsonschema.Schema {
	t.Helper()
	sch, err := handler.CompileSchema(name, s)
	if err != nil {
		t.Fatalf("%s: the structured schema does not compile: %v", name, err)
	}
	return sch
}

func validate(sch *jsonschema.Schema, b []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// responseExamples reads, from a JSON description, the examples of each
// operation's first success response (lowest 2xx status) with a JSON media
// type: "example", and each "examples" entry's value, local $refs
// followed. A YAML description gives none.
func responseExamples(t *testing.T, spec string) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	if !strings.HasSuffix(spec, ".json") {
		return out
	}
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	deref := func(v any) any {
		for range 16 {
			m, ok := v.(map[string]any)
			ref, _ := m["$ref"].(string)
			if !ok || !strings.HasPrefix(ref, "#/") {
				return v
			}
			var cur any = root
			for _, p := range strings.Split(ref[2:], "/") {
				p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
				cm, _ := cur.(map[string]any)
				cur = cm[p]
			}
			v = cur
		}
		return v
	}
	paths, _ := root["paths"].(map[string]any)
	for path, item := range paths {
		im, _ := deref(item).(map[string]any)
		for method, op := range im {
			om, _ := op.(map[string]any)
			responses, _ := om["responses"].(map[string]any)
			for _, code := range slices.Sorted(maps.Keys(responses)) {
				if len(code) != 3 || code[0] != '2' {
					continue
				}
				rm, _ := deref(responses[code]).(map[string]any)
				content, _ := rm["content"].(map[string]any)
				for ct, mt := range content {
					mm, _ := mt.(map[string]any)
					if !jsonType(ct) || mm == nil {
						continue
					}
					var vals []any
					if ex, ok := mm["example"]; ok {
						vals = append(vals, ex)
					}
					exs, _ := mm["examples"].(map[string]any)
					for _, name := range slices.Sorted(maps.Keys(exs)) {
						em, _ := deref(exs[name]).(map[string]any)
						if v, ok := em["value"]; ok {
							vals = append(vals, v)
						}
					}
					for _, v := range vals {
						b, _ := json.Marshal(v)
						k := strings.ToUpper(method) + " " + path
						out[k] = append(out[k], b)
					}
				}
				break
			}
		}
	}
	return out
}
