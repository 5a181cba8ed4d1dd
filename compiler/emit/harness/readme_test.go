package harness

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/runtime/air"
)

// codeBlock returns the body of the first fenced block of lang in md.
func codeBlock(t *testing.T, md, lang string) string {
	t.Helper()
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(md)
	if m == nil {
		t.Fatalf("no ```%s block in:\n%s", lang, md)
	}
	return m[1]
}

// typedDocument is github-mini whose first read takes required inputs that
// are not strings: an integer and an array of enum values.
func typedDocument(t *testing.T) *air.Document {
	doc := githubMini(t)
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if op.ID != "github.issues.list" {
			continue
		}
		states := &air.Schema{Type: air.Types{"array"}, Items: &air.Schema{Type: air.Types{"string"},
			Enum: []json.RawMessage{json.RawMessage(`"open"`), json.RawMessage(`"closed"`)}}}
		op.Input.Params = append(op.Input.Params,
			air.Param{Name: "per_page", Key: "per_page", In: "query", Required: true, Schema: intS()},
			air.Param{Name: "states", Key: "states", In: "query", Required: true, Schema: states})
		op.Input.Schema.Properties["per_page"] = intS()
		op.Input.Schema.Properties["states"] = states
		op.Input.Schema.Required = append(op.Input.Schema.Required, "per_page", "states")
	}
	return doc
}

// The TypeScript README's example is type-checked against the package it
// documents, with tsc --strict, for string and for typed required inputs.
func TestTypeScriptREADMEExampleTypeChecks(t *testing.T) {
	t.Parallel()
	node, tsc := tool(t, "node"), tscPath(t)
	for name, doc := range map[string]*air.Document{"github-mini": githubMini(t), "typed": typedDocument(t)} {
		tree, err := Render(emit.Connector{ID: "github", Doc: doc})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), name)
		if err := tree.WriteTo(dir); err != nil {
			t.Fatal(err)
		}
		ts := filepath.Join(dir, "typescript")
		example := codeBlock(t, string(tree["typescript/README.md"].Data), "ts")
		writeFile(t, filepath.Join(ts, "readme.ts"), example)
		writeFile(t, filepath.Join(ts, "tsconfig.readme.json"),
			`{"extends": "./tsconfig.json", "compilerOptions": {"noEmit": true, "rootDir": "."}, "include": ["src", "readme.ts"]}`)
		r := run(t, []string{"PATH=" + filepath.Dir(node)}, "", tsc, "-p", filepath.Join(ts, "tsconfig.readme.json"),
			"--typeRoots", typeRoots())
		if r.Code != 0 {
			t.Errorf("%s: the README example does not type-check:\n%s\n%s%s", name, example, r.Stdout, r.Stderr)
		}
		if name == "typed" && !strings.Contains(example, `per_page: 1, states: ["open"]`) {
			t.Errorf("typed example = %s", example)
		}
	}
}
