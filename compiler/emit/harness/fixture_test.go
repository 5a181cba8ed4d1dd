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

var (
	miniOnce sync.Once
	miniDoc  []byte
	miniErr  error
)

// githubMini compiles examples/github-mini with the real compiler and returns
// a fresh copy of the document.
func githubMini(t testing.TB) *air.Document {
	t.Helper()
	miniOnce.Do(func() {
		root := repoRoot()
		spec, err := openapi.Load(filepath.Join(root, "examples", "github-mini", "openapi.yaml"), nil)
		if err != nil {
			miniErr = err
			return
		}
		man, ds := manifest.Load(filepath.Join(root, "examples", "github-mini", "anvil.yaml"))
		if ds.HasErrors() {
			miniErr = diagErr(ds)
			return
		}
		doc, ds := lower.Lower(spec, man, nil)
		if ds.HasErrors() {
			miniErr = diagErr(ds)
			return
		}
		miniDoc, miniErr = air.Marshal(doc)
	})
	if miniErr != nil {
		t.Fatalf("compile github-mini: %v", miniErr)
	}
	doc, err := air.Parse(miniDoc)
	if err != nil {
		t.Fatalf("parse github-mini AIR: %v", err)
	}
	return doc
}

func diagErr(ds diag.List) error {
	var b strings.Builder
	_ = ds.WriteText(&b)
	return errors.New(b.String())
}
