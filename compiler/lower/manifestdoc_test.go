package lower

import (
	"bytes"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/schemas"
)

const manifestDoc = "../../docs/manifest.md"

var (
	schemaMarker = regexp.MustCompile(`(?m)^<!-- schema: (\S+) -->$`)
	codeSpan     = regexp.MustCompile("`[^`\n]+`")
	word         = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	yamlBlock    = regexp.MustCompile("(?s)```yaml\n(.*?)```")
)

// docSections maps each schema location a `<!-- schema: … -->` marker
// names to the text of its section: from the marker to the next heading.
func docSections(t *testing.T, doc string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range schemaMarker.FindAllStringSubmatchIndex(doc, -1) {
		rest := doc[m[1]:]
		if i := regexp.MustCompile(`(?m)^#{2,3} `).FindStringIndex(rest); i != nil {
			rest = rest[:i[0]]
		}
		out[doc[m[2]:m[3]]] = rest
	}
	return out
}

// spanWords is every word written inside a code span of text.
func spanWords(text string) map[string]bool {
	out := map[string]bool{}
	for _, s := range codeSpan.FindAllString(text, -1) {
		for _, w := range word.FindAllString(s, -1) {
			out[w] = true
		}
	}
	return out
}

// TestManifestDocCoversSchema: docs/manifest.md has a section for every
// strict object of the manifest schema naming each of its keys in code, and
// names every enumerated value somewhere in code.
func TestManifestDocCoversSchema(t *testing.T) {
	raw, err := os.ReadFile(manifestDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	var root map[string]any
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas.Manifest))
	if err != nil {
		t.Fatal(err)
	}
	root = v.(map[string]any)
	objects := map[string]map[string]any{"#": root}
	for name, def := range root["$defs"].(map[string]any) {
		if m := def.(map[string]any); m["properties"] != nil {
			objects["#/$defs/"+name] = m
		}
	}
	sections := docSections(t, doc)
	for loc, obj := range objects {
		text, ok := sections[loc]
		if !ok {
			t.Errorf("docs/manifest.md has no <!-- schema: %s --> section", loc)
			continue
		}
		words := spanWords(text)
		var missing []string
		for key := range obj["properties"].(map[string]any) {
			if !words[key] {
				missing = append(missing, key)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("the %s section of docs/manifest.md does not document %v", loc, missing)
		}
	}
	for loc := range sections {
		if objects[loc] == nil {
			t.Errorf("docs/manifest.md marks a section for %s, which the schema does not define", loc)
		}
	}
	all := spanWords(doc)
	var walk func(any)
	walk = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			if e, ok := n["enum"].([]any); ok {
				for _, x := range e {
					if s, ok := x.(string); ok && !all[s] {
						t.Errorf("docs/manifest.md never names the value %q", s)
					}
				}
			}
			for _, c := range n {
				walk(c)
			}
		case []any:
			for _, c := range n {
				walk(c)
			}
		}
	}
	walk(root)
}

// TestManifestDocExamples: every YAML example of docs/manifest.md decodes,
// validates against the schema, and compiles against the github-mini spec
// with no error.
func TestManifestDocExamples(t *testing.T) {
	raw, err := os.ReadFile(manifestDoc)
	if err != nil {
		t.Fatal(err)
	}
	sch := compileManifestSchema(t)
	blocks := yamlBlock.FindAllSubmatch(raw, -1)
	if len(blocks) < 15 {
		t.Fatalf("found %d YAML examples", len(blocks))
	}
	spec := loadMiniSpec(t)
	for i, b := range blocks {
		src := b[1]
		man, md := manifest.Decode("example.yaml", src)
		if md.HasErrors() {
			t.Errorf("example %d does not decode:\n%s\n%s", i+1, src, text(md))
			continue
		}
		js, jd := manifest.ToJSON("example.yaml", src)
		if jd.HasErrors() {
			t.Fatal(text(jd))
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("example %d fails the schema: %v\n%s", i+1, err, src)
		}
		_, ds := Lower(spec, man, nil)
		if ds.HasErrors() {
			var errs []string
			for _, d := range ds {
				if d.Level == "error" {
					errs = append(errs, d.Code+": "+d.Message)
				}
			}
			t.Errorf("example %d does not compile against github-mini:\n%s\n%s", i+1, src, strings.Join(errs, "\n"))
		}
	}
}

func compileManifestSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := schemas.CompileManifest()
	if err != nil {
		t.Fatal(err)
	}
	return sch
}
