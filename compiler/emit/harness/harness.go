// Package harness renders one connector's harness package from an AIR
// document: SKILL.md and its references, input schemas and examples, the
// Python, TypeScript and Go SDKs (the Go module from compiler/emit/gosdk,
// under go/), the bin/<connector> CLI and harness.json. Every
// SDK and the CLI call the Anvil gateway (MCP over Streamable HTTP) and
// nothing else.
//
// Render has the shape of every file emitter (package emit): a connector in,
// an in-memory files.Tree out; writing it is the caller's job.
package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"text/template"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/compiler/emit/gosdk"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/templates"
)

// Errors Render returns, wrapped with detail.
var (
	// ErrNothingApproved: the document has no operation the gateway serves
	// (approved and not a webhook receiver), so there is nothing to package.
	ErrNothingApproved = errors.New("harness: no approved operations to package")
	// ErrInvalidConnector: the connector id does not match ^[A-Za-z0-9_-]{1,64}$.
	ErrInvalidConnector = errors.New("harness: invalid connector id")
	// ErrInvalidDocument: the document is missing or has no service id.
	ErrInvalidDocument = errors.New("harness: invalid AIR document")
	// ErrTemplate: a template failed to parse or execute (a bug in Anvil).
	ErrTemplate = errors.New("harness: template failed")
)

// ManifestFile is the package's list of the files anvil package harness
// wrote (files.Manifest): a repackaging into the same directory replaces and
// removes only those, and leaves every other file (node_modules, dist, a
// person's own tests) alone.
const ManifestFile = "anvil-generated.json"

// Render renders the whole harness package of connector c: tools are called
// as <c.ID>__<tool>, the CLI is bin/<c.ID>, and harness.json records
// c.BundleHash when it is 64 hex characters (else null). Only served
// operations (air.IsServed) appear in it.
func Render(c emit.Connector) (files.Tree, error) {
	if c.Doc == nil || c.Doc.Service.ID == "" {
		return nil, fmt.Errorf("%w: no service id", ErrInvalidDocument)
	}
	if !air.ValidConnectorID.MatchString(c.ID) {
		return nil, fmt.Errorf("%w: %q must match ^[A-Za-z0-9_-]{1,64}$", ErrInvalidConnector, c.ID)
	}
	v, err := buildView(c.Doc, c.ID)
	if err != nil {
		return nil, err
	}
	tree := files.Tree{}
	for _, set := range []struct{ dir, out string }{
		{"skill", ""}, {"python", "python"}, {"typescript", "typescript"}, {"bin", "bin"},
	} {
		ts, err := renderSet(tree, set.dir, set.out, v)
		if err != nil {
			return nil, err
		}
		if set.dir == "python" && v.PyLazy {
			if err := renderPyParts(tree, ts, v); err != nil {
				return nil, err
			}
		}
	}
	cliPath := "bin/" + v.Connector
	f, ok := tree[cliPath]
	if !ok {
		return nil, fmt.Errorf("%w: no CLI template", ErrTemplate)
	}
	tree.AddMode(cliPath, f.Data, 0o755)

	for i, o := range v.Ops {
		name := fileName(o)
		s := o.Schema
		if s == nil {
			s = &air.Schema{Type: air.Types{"object"}}
		}
		b, err := pretty(s)
		if err != nil {
			return nil, fmt.Errorf("harness: schema of %s: %w", o.ID, err)
		}
		tree.Add("schemas/"+name+".schema.json", b)
		ex, err := exampleInput(v, i)
		if err != nil {
			return nil, fmt.Errorf("harness: example of %s: %w", o.ID, err)
		}
		tree.Add("examples/"+name+".json", ex)
	}
	gt, err := gosdk.Render(c)
	if err != nil {
		return nil, err
	}
	for name, f := range gt {
		tree.AddMode(path.Join("go", name), f.Data, f.Mode)
	}
	hj, err := harnessJSON(v, c.BundleHash)
	if err != nil {
		return nil, err
	}
	tree.Add("harness.json", hj)
	return tree, nil
}

var safeFileName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// fileName names an operation's schema and example files: its canonical name.
func fileName(o *opView) string {
	if safeFileName.MatchString(o.Canonical) && !strings.HasPrefix(o.Canonical, ".") {
		return o.Canonical
	}
	return o.PyMethod
}

// exampleInput is one example input: every required input, plus optional
// ones that declare an example.
func exampleInput(v *pkgView, i int) ([]byte, error) {
	o := v.Ops[i]
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, in := range o.Inputs {
		if !in.Required && !in.HasExample {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(in.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(in.Example)
		n++
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// funcs are the helpers every template set gets.
var funcs = template.FuncMap{
	"pystr": pyString,
	"toml":  tomlString,
	"jsstr": jsString,
	"pydoc": pyDoc,
	"jsdoc": jsDoc,
	"md":    mdCell,
	"yaml":  yamlScalar,
	"join":  strings.Join,
	"lower": strings.ToLower,
	"json": func(v any) (string, error) {
		s, err := jsonText(v)
		return asciiJSON(s), err
	},
	"add":      func(a, b int) int { return a + b },
	"tsref":    tsRef,
	"indent":   templates.Indent,
	"verbatim": templates.Source,
}

// renderPyParts writes a large API's python/<pkg>/_methods/ package: one
// module per pyPart (the "pymodule" template of set), which client.py loads
// the first time one of its methods is used.
func renderPyParts(tree files.Tree, set *template.Template, v *pkgView) error {
	dir := path.Join("python", v.PyPackage, "_methods")
	tree.Add(dir+"/__init__.py", []byte("# Code generated by anvil. DO NOT EDIT.\n\"\"\"The methods of "+v.ClassName+
		", one module per part, each loaded the first time one of its methods is used (client.py).\"\"\"\n"))
	for i := range v.PyParts {
		var buf bytes.Buffer
		if err := set.ExecuteTemplate(&buf, "pymodule", &v.PyParts[i]); err != nil {
			return fmt.Errorf("%w: _methods/%s.py: %v", ErrTemplate, v.PyParts[i].Name, err)
		}
		tree.Add(dir+"/"+v.PyParts[i].Name+".py", buf.Bytes())
	}
	return nil
}

// renderSet renders one language's tree: its templates are parsed as one set
// of their own (names are paths, so base names never collide) and each file
// template is executed; every other file is real source, copied verbatim
// behind the generated-code marker. It returns the set, whose named
// templates render files that are not one per template.
func renderSet(tree files.Tree, dir, out string, v *pkgView) (*template.Template, error) {
	all, err := templates.Files(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTemplate, err)
	}
	set := template.New(dir).Funcs(funcs).Option("missingkey=error")
	for _, f := range all {
		if !f.Template {
			continue
		}
		if _, err := set.New(f.Path).Parse(string(f.Data)); err != nil {
			return nil, fmt.Errorf("%w: %s/%s: %v", ErrTemplate, dir, f.Path, err)
		}
	}
	for _, f := range all {
		rel := strings.TrimSuffix(f.Path, ".tmpl")
		rel = strings.ReplaceAll(rel, "__pkg__", v.PyPackage)
		rel = strings.ReplaceAll(rel, "__connector__", v.Connector)
		if out != "" {
			rel = path.Join(out, rel)
		}
		switch {
		case !f.Template:
			tree.Add(rel, templates.Marked(rel, f.Data))
		case !strings.HasSuffix(f.Path, ".partial.tmpl"):
			var buf bytes.Buffer
			if err := set.ExecuteTemplate(&buf, f.Path, v); err != nil {
				return nil, fmt.Errorf("%w: %s/%s: %v", ErrTemplate, dir, f.Path, err)
			}
			tree.Add(rel, buf.Bytes())
		}
	}
	return set, nil
}

// tsRef qualifies a result type with the types module (T.) unless it is built in.
func tsRef(t string) string {
	base := strings.TrimSuffix(t, "[]")
	switch base {
	case "unknown", "string", "number", "boolean", "null", "never":
		return t
	}
	return "T." + t
}
