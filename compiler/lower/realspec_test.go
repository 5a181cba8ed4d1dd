package lower

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/internal/testinput"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// realSpecsDir holds the real-world descriptions scripts/fetch-specs.sh
// downloads; a test that needs one fails under CI when it is absent and
// skips loudly elsewhere (testinput).
func realSpecsDir() string {
	if d := os.Getenv("ANVIL_SPECS_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", ".cache", "specs")
}

func loadRealSpec(t testing.TB, name string) *openapi.Spec {
	t.Helper()
	p := testinput.File(t, filepath.Join(realSpecsDir(), name), "run scripts/fetch-specs.sh (or set ANVIL_SPECS_DIR)")
	spec, err := openapi.Load(p, nil)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return spec
}

var (
	idPattern   = regexp.MustCompile(`^[a-z0-9_]+\.[a-z0-9_]+\.[a-z0-9_]+$`)
	toolPattern = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// TestRealSpecsUniqueNames: with no manifest, every operation of a large
// real API gets a unique id, tool name and CLI command, and lowering is
// deterministic and has no errors; no input schema exceeds the budget.
func TestRealSpecsUniqueNames(t *testing.T) {
	for _, name := range []string{"github.json", "stripe.json", "kubernetes.json", "jira.json"} {
		t.Run(name, func(t *testing.T) {
			spec := loadRealSpec(t, name)
			doc, ds := Lower(spec, nil, &Options{ServiceID: "svc"})
			for _, d := range ds {
				if d.Level == "error" || d.Code == CodeSchemaTruncated {
					t.Errorf("%s: %s", d.Level, d)
				}
			}
			if len(doc.Operations) != len(spec.Operations) {
				t.Fatalf("%d operations, spec has %d", len(doc.Operations), len(spec.Operations))
			}
			for _, f := range []struct {
				name string
				get  func(*air.Operation) string
				re   *regexp.Regexp
			}{
				{"id", func(o *air.Operation) string { return o.ID }, idPattern},
				{"tool", func(o *air.Operation) string { return o.MCP.ToolName }, toolPattern},
				{"CLI", func(o *air.Operation) string { return o.CLI.Command }, nil},
			} {
				seen := map[string]string{}
				for i := range doc.Operations {
					op := &doc.Operations[i]
					v := f.get(op)
					if prev, ok := seen[v]; ok {
						t.Errorf("%s %q shared by %s and %s %s", f.name, v, prev, op.SourceRef.Method, op.SourceRef.Path)
					}
					seen[v] = op.SourceRef.Method + " " + op.SourceRef.Path
					if f.re != nil && !f.re.MatchString(v) {
						t.Errorf("%s %q is malformed", f.name, v)
					}
				}
			}
			if name == "github.json" && len(doc.Operations) < 1000 {
				t.Errorf("only %d operations", len(doc.Operations))
			}
			a, _ := json.Marshal(doc)
			doc2, _ := Lower(spec, nil, &Options{ServiceID: "svc"})
			b, _ := json.Marshal(doc2)
			if !bytes.Equal(a, b) {
				t.Error("lowering is not deterministic")
			}
		})
	}
}

// TestInputSchemasCompile: every published input schema is a valid JSON
// Schema whose $defs resolve, so the gateway can validate arguments with it.
func TestInputSchemasCompile(t *testing.T) {
	doc, _ := lowerMini(t)
	compileInputSchemas(t, doc, len(doc.Operations))
	op := doc.Operation("github.issues.create")
	sch := compileSchema(t, op)
	for _, c := range []struct {
		args string
		ok   bool
	}{
		{`{"owner":"o","repo":"r","title":"t","confirm":true}`, true},
		{`{"owner":"o","repo":"r","title":"t"}`, false},
		{`{"owner":"o","repo":"r","title":"t","confirm":false}`, false},
		{`{"owner":"o","repo":"r","title":"t","confirm":true,"anvil_dry_run":true}`, true},
		{`{"owner":"o","repo":"r","title":"t","confirm":true,"extra":1}`, false},
		{`{"owner":1,"repo":"r","title":"t","confirm":true}`, false},
	} {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(c.args)))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); (err == nil) != c.ok {
			t.Errorf("%s: valid = %v, want %v (%v)", c.args, err == nil, c.ok, err)
		}
	}
	if s := realSpecsDir(); s != "" {
		if _, err := os.Stat(filepath.Join(s, "github.json")); err == nil && !testing.Short() {
			gh, _ := Lower(loadRealSpec(t, "github.json"), nil, nil)
			compileInputSchemas(t, gh, 150) // a sample: compiling all 1,000+ is slow
			assertRoundTrip(t, gh)
		}
	}
}

func compileInputSchemas(t *testing.T, doc *air.Document, n int) {
	t.Helper()
	step := max(1, len(doc.Operations)/n)
	for i := 0; i < len(doc.Operations); i += step {
		compileSchema(t, &doc.Operations[i])
	}
}

func compileSchema(t *testing.T, op *air.Operation) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(op.Input.Schema)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := fmt.Sprintf("mem://%s.json", op.ID)
	if err := c.AddResource(url, v); err != nil {
		t.Fatalf("%s: %v", op.ID, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: input schema does not compile: %v", op.ID, err)
	}
	return sch
}
