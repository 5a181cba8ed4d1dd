package harness

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
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

// compiled is an example compiled once per test binary.
type compiled struct {
	once sync.Once
	doc  []byte
	diag diag.List
	err  error
}

var examples = map[string]*compiled{"github-mini": {}, "hostile": {}}

// example compiles examples/<name> (openapi.yaml and anvil.yaml) with the
// real compiler and returns a fresh copy of the document and the compile's
// diagnostics.
func example(t testing.TB, name string) (*air.Document, diag.List) {
	t.Helper()
	c := examples[name]
	c.once.Do(func() {
		dir := filepath.Join(repoRoot(), "examples", name)
		spec, err := openapi.Load(filepath.Join(dir, "openapi.yaml"), nil)
		if err != nil {
			c.err = err
			return
		}
		man, ds := manifest.Load(filepath.Join(dir, "anvil.yaml"))
		if ds.HasErrors() {
			c.err = diagErr(ds)
			return
		}
		doc, ds := lower.Lower(spec, man, nil)
		if ds.HasErrors() {
			c.err = diagErr(ds)
			return
		}
		c.diag = ds
		c.doc, c.err = air.Marshal(doc)
	})
	if c.err != nil {
		t.Fatalf("compile %s: %v", name, c.err)
	}
	doc, err := air.Parse(c.doc)
	if err != nil {
		t.Fatalf("parse %s AIR: %v", name, err)
	}
	return doc, c.diag
}

// githubMini compiles examples/github-mini with the real compiler and returns
// a fresh copy of the document.
func githubMini(t testing.TB) *air.Document {
	doc, _ := example(t, "github-mini")
	return doc
}

func diagErr(ds diag.List) error {
	var b strings.Builder
	_ = ds.WriteText(&b)
	return errors.New(b.String())
}
