package templates

import (
	"bytes"
	"context"
	"os"
	"os/exec"
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
	node := need(t, "node")
	runSuite(t, ".", node, "--check", filepath.Join("cli", "runtime.cjs"))
	out := runSuite(t, filepath.Join("test", "cli"), node, "--test", "runtime.test.cjs")
	checkNodeTest(t, out)
}

// TestTypeScriptSDKRuntime copies the SDK's verbatim modules beside the test
// suite with a spec.ts rendered from spec.ts.tmpl, type-checks them with
// tsc --strict and runs the suite under node --test.
func TestTypeScriptSDKRuntime(t *testing.T) {
	t.Parallel()
	node := need(t, "node")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tsc := filepath.Join(root, "tools", "ts", "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Fatalf("tsc not found at tools/ts/node_modules/.bin/tsc: run `npm ci --prefix tools/ts` first")
	}
	dir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	all, err := Files("typescript/src")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range all {
		if !f.Template {
			write(f.Path, f.Data)
			n++
		}
	}
	if n < 3 {
		t.Fatalf("only %d verbatim TypeScript modules", n)
	}
	tmpl, err := template.New("spec").Option("missingkey=error").ParseFS(FS, "typescript/src/spec.ts.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile(filepath.Join("test", "typescript", "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, "spec.ts.tmpl", map[string]string{"Title": "Shop", "TSSpec": string(spec)}); err != nil {
		t.Fatal(err)
	}
	write("spec.ts", buf.Bytes())
	suite, err := os.ReadFile(filepath.Join("test", "typescript", "runtime.test.ts"))
	if err != nil {
		t.Fatal(err)
	}
	write("runtime.test.ts", suite)
	write("package.json", []byte(`{"type":"module"}`+"\n"))
	write("tsconfig.json", []byte(`{
  "compilerOptions": {
    "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "lib": ["ES2022"],
    "types": ["node"], "strict": true, "verbatimModuleSyntax": true, "erasableSyntaxOnly": true,
    "rewriteRelativeImportExtensions": true, "skipLibCheck": true, "outDir": "out"
  },
  "include": ["*.ts"]
}
`))
	runSuite(t, dir, tsc, "-p", "tsconfig.json", "--strict", "--typeRoots", filepath.Join(root, "tools", "ts", "node_modules", "@types"))
	out := runSuite(t, dir, node, "--test", filepath.Join("out", "runtime.test.js"))
	checkNodeTest(t, out)
}

// checkNodeTest fails unless node --test ran some tests and none failed.
func checkNodeTest(t *testing.T, out string) {
	t.Helper()
	if !strings.Contains(out, "\n# fail 0\n") || strings.Contains(out, "\n# pass 0\n") || !strings.Contains(out, "\n# pass ") {
		t.Errorf("node --test did not report passing tests and zero failures:\n%s", out)
	}
}
