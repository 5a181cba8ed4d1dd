package harness

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/runtime/air"
)

// nasty holds characters each target language treats specially: NUL and
// other controls, DEL, quotes of every kind and their triples, backslashes
// (one ending the text too), comment terminators, template and markup
// openers, line and paragraph separators, and text that is not UTF-8.
const nasty = "N\x00U\x01L\x1f\x7f \"\"\" ''' ` ${x} */ /* <!-- --> </script> | \\ \u2028 \u2029 \xff é 𝄞 \\"

// withStrings is github-mini with every author-controlled string of the
// package (service title and description, each operation's title,
// description and confirmation reason, parameter and schema descriptions,
// enum values) set to s.
func withStrings(t testing.TB, s string) *air.Document {
	doc := githubMini(t)
	doc.Service.DisplayName, doc.Service.Description = s, s
	for i := range doc.Operations {
		op := &doc.Operations[i]
		op.DisplayName, op.Description = s, s
		if op.Confirmation.Required {
			op.Confirmation.Reason = s
		}
		for j := range op.Input.Params {
			op.Input.Params[j].Description = s
		}
		if p := op.Input.Schema.Properties["state"]; p != nil && len(p.Enum) > 0 {
			v, _ := json.Marshal(strings.ToValidUTF8(s, "\uFFFD"))
			p.Enum = append(p.Enum, v)
		}
		if o := op.Output.Schema; o != nil {
			o.Description = s
		}
	}
	return doc
}

// checkPackageParses writes the package of doc and checks, in one Python
// process, that every module compiles and the package imports (and its
// operation table loads), that pyproject.toml is TOML and package.json and
// harness.json are JSON; and that node parses the CLI. tsc, when not "",
// also type-checks the TypeScript package.
func checkPackageParses(t testing.TB, doc *air.Document, python, node, tsc string) {
	tree, err := Render(emit.Connector{ID: "github", Doc: doc})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	for name, f := range tree {
		if !utf8.Valid(f.Data) {
			t.Errorf("%s is not UTF-8", name)
		}
	}
	pkg := filepath.Join(t.TempDir(), "github")
	if err := tree.WriteTo(pkg); err != nil {
		t.Fatal(err)
	}
	script := `
import compileall, json, os, sys, tomllib
pkg = sys.argv[1]
ok = compileall.compile_dir(os.path.join(pkg, "python"), quiet=1, force=True)
if not ok:
    sys.exit("python: a module does not compile")
sys.path.insert(0, os.path.join(pkg, "python"))
import anvil_github
anvil_github.SPEC
with open(os.path.join(pkg, "python", "pyproject.toml"), "rb") as f:
    tomllib.load(f)
for name in ("typescript/package.json", "harness.json"):
    with open(os.path.join(pkg, name), encoding="utf-8") as f:
        json.load(f)
`
	cmd := exec.Command(python, "-c", script, pkg)
	cmd.Env = []string{"PYTHONPYCACHEPREFIX=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("python: %v\n%s", err, out)
	}
	if out, err := exec.Command(node, "--check", filepath.Join(pkg, "bin", "github")).CombinedOutput(); err != nil {
		t.Errorf("node --check bin/github: %v\n%s", err, out)
	}
	if tsc != "" {
		cmd := exec.Command(tsc, "--noEmit", "-p", filepath.Join(pkg, "typescript", "tsconfig.json"), "--typeRoots", typeRoots())
		cmd.Env = []string{"PATH=" + filepath.Dir(node) + ":/usr/bin:/bin"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("tsc: %v\n%s", err, out)
		}
	}
}

// TestEveryEmittedStringIsSafe: author text full of what each language
// treats specially still gives a package whose Python imports, whose
// pyproject.toml, package.json and harness.json parse, whose CLI parses and
// whose TypeScript type-checks.
func TestEveryEmittedStringIsSafe(t *testing.T) {
	t.Parallel()
	checkPackageParses(t, withStrings(t, nasty), tool(t, "python3"), tool(t, "node"), tscPath(t))
}

// FuzzEmittedStringsAreSafe is TestEveryEmittedStringIsSafe's property over
// any text (tsc, seconds per run, is left to the test above: the fuzz target
// checks Python, TOML, JSON and the CLI, about 0.1 s an input).
func FuzzEmittedStringsAreSafe(f *testing.F) {
	python, err1 := exec.LookPath("python3")
	node, err2 := exec.LookPath("node")
	if err1 != nil || err2 != nil {
		f.Fatalf("python3 and node are required: %v %v", err1, err2)
	}
	for _, s := range []string{"", "plain", nasty, "\x00", "\"\"\"", "\\", "a\r\nb", "'''\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 {
			return
		}
		checkPackageParses(t, withStrings(t, s), python, node, "")
	})
}
