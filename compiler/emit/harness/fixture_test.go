package harness

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/internal/exampledoc"
	"github.com/anvil-dev/anvil/runtime/air"
)

// testBundleHash stands in for a real bundle hash: the compiled document
// records the spec's absolute path, so a real hash would differ per checkout.
const testBundleHash = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

// repoRoot is the module root.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// example compiles examples/<name> (exampledoc) and returns a fresh copy of
// the document and the compile's diagnostics, or fails the test.
func example(t testing.TB, name string) (*air.Document, diag.List) {
	t.Helper()
	doc, ds, err := exampledoc.Compile(name)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return doc, ds
}

// githubMini compiles examples/github-mini with the real compiler and returns
// a fresh copy of the document.
func githubMini(t testing.TB) *air.Document {
	doc, _ := example(t, "github-mini")
	return doc
}
