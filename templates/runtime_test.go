package templates

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"
)

// The verbatim client code is tested in its own language: Python unittest
// for the SDK's modules and the composite's package, node --test for the
// CLI's runtime, tsc --strict and node --test for the TypeScript SDK's
// modules. These tests run those suites, so `go test ./templates` runs them.

// need finds a program the suites cannot run without, or fails the test.
func need(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is required to test the templates' client code and was not found on PATH", name)
	}
	return p
}

// runSuite runs a test program in dir with a small, fixed environment and
// fails the test with its output when it exits non-zero.
func runSuite(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "PYTHONDONTWRITEBYTECODE=1", "LANG=C.UTF-8"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}

func TestPythonSDKRuntime(t *testing.T) {
	t.Parallel()
	out := runSuite(t, filepath.Join("test", "python"), need(t, "python3"), "-m", "unittest", "discover", "-v")
	if !strings.Contains(out, "OK") {
		t.Errorf("unittest did not report OK:\n%s", out)
	}
}

func TestComposePythonRuntime(t *testing.T) {
	t.Parallel()
	out := runSuite(t, filepath.Join("test", "compose"), need(t, "python3"), "-m", "unittest", "discover", "-v")
	if !strings.Contains(out, "OK") {
		t.Errorf("unittest did not report OK:\n%s", out)
	}
}

func TestCLIRuntime(t *testing.T) {
	t.Parallel()
	node, tsc, typeRoots := tsTools(t)
	runSuite(t, ".", node, "--check", filepath.Join("cli", "runtime.cjs"))
	// Type-checked as JavaScript: strict, except that untyped parameters may be any.
	runSuite(t, ".", tsc, "--allowJs", "--checkJs", "--noEmit", "--strict", "--noImplicitAny", "false",
		"--target", "ES2022", "--module", "nodenext", "--types", "node", "--typeRoots", typeRoots, filepath.Join("cli", "runtime.cjs"))
	out := runSuite(t, filepath.Join("test", "cli"), node, "--test", "runtime.test.cjs")
	checkNodeTest(t, out)
}

// tsTools finds node and tools/ts's pinned tsc, or fails the test.
func tsTools(t *testing.T) (node, tsc, typeRoots string) {
	t.Helper()
	node = need(t, "node")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tsc = filepath.Join(root, "tools", "ts", "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Fatalf("tsc not found at tools/ts/node_modules/.bin/tsc: run `npm ci --prefix tools/ts` first")
	}
	return node, tsc, filepath.Join(root, "tools", "ts", "node_modules", "@types")
}

// tsTree writes files (slash paths) under a new directory, type-checks it
// with tsc --strict (its tsconfig.json writes to out/) and runs the compiled
// suite with node --test.
func tsTree(t *testing.T, files map[string][]byte, suite string) {
	t.Helper()
	node, tsc, typeRoots := tsTools(t)
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runSuite(t, dir, tsc, "-p", "tsconfig.json", "--strict", "--noEmitOnError", "--outDir", "out", "--typeRoots", typeRoots)
	checkNodeTest(t, runSuite(t, dir, node, "--test", filepath.Join("out", suite)))
}

// verbatim adds the non-template files of the tree dir to files under to/.
func verbatim(t *testing.T, files map[string][]byte, dir, to string) {
	t.Helper()
	all, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range all {
		if !f.Template {
			files[to+f.Path] = f.Data
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no verbatim files in %s", dir)
	}
}

// render executes the template name of FS with data into files[to].
func render(t *testing.T, files map[string][]byte, name, to string, data any) {
	t.Helper()
	funcs := template.FuncMap{"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	}, "jsdoc": func(s string) string { return s }} // the fixtures' titles are plain text
	tmpl, err := template.New(path.Base(name)).Funcs(funcs).Option("missingkey=error").ParseFS(FS, name)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, path.Base(name), data); err != nil {
		t.Fatal(err)
	}
	files[to] = buf.Bytes()
}

// testFile reads a file of test/.
func testFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("test", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTypeScriptSDKRuntime checks the SDK's verbatim modules beside the
// suite, with a spec.ts rendered from spec.ts.tmpl (connector "shop").
func TestTypeScriptSDKRuntime(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{}
	verbatim(t, files, "typescript/src", "")
	render(t, files, "typescript/src/spec.ts.tmpl", "spec.ts",
		map[string]string{"Title": "Shop", "TSSpec": string(testFile(t, "typescript/spec.json"))})
	files["runtime.test.ts"] = testFile(t, "typescript/runtime.test.ts")
	files["package.json"] = []byte(`{"type":"module"}` + "\n")
	files["tsconfig.json"] = []byte(`{
  "compilerOptions": {
    "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "lib": ["ES2022"],
    "types": ["node"], "strict": true, "verbatimModuleSyntax": true, "erasableSyntaxOnly": true,
    "rewriteRelativeImportExtensions": true, "skipLibCheck": true
  },
  "include": ["*.ts"]
}
`)
	tsTree(t, files, "runtime.test.js")
}

// TestComposeTypeScriptRuntime checks the composite's flow engine under its
// own tsconfig.json, with catalog.ts and clients.ts rendered from their
// templates over the fixture catalog and the stand-in SDK of test/compose.
func TestComposeTypeScriptRuntime(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{}
	verbatim(t, files, "compose/typescript", "")
	render(t, files, "compose/typescript/src/catalog.ts.tmpl", "src/catalog.ts", map[string]string{
		"CatalogJSON": strings.TrimSpace(string(testFile(t, "compose/catalog.json"))),
		"TypesJSON":   strings.TrimSpace(string(testFile(t, "compose/input_types.json"))),
	})
	type conn struct {
		ID, Client, Alias, Import string
		Methods                   []string
	}
	render(t, files, "compose/typescript/src/clients.ts.tmpl", "src/clients.ts", map[string]any{"Connectors": []conn{{
		ID: "shop", Client: "ShopClient", Alias: "Client0", Import: "./shop-sdk.js",
		Methods: []string{"listItem", "closeItem", "reopenItem"}}}})
	files["src/shop-sdk.ts"] = testFile(t, "compose/shop-sdk.ts")
	files["src/flow.test.ts"] = testFile(t, "compose/flow.test.ts")
	files["package.json"] = []byte(`{"type":"module"}` + "\n")
	tsTree(t, files, "flow.test.js")
}

// checkNodeTest fails unless node --test ran some tests and none failed.
func checkNodeTest(t *testing.T, out string) {
	t.Helper()
	if !strings.Contains(out, "\n# fail 0\n") || strings.Contains(out, "\n# pass 0\n") || !strings.Contains(out, "\n# pass ") {
		t.Errorf("node --test did not report passing tests and zero failures:\n%s", out)
	}
}
