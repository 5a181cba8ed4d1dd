package gosdk

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

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

type compiled struct {
	once sync.Once
	doc  []byte
	err  error
}

var examples = map[string]*compiled{"github-mini": {}, "hostile": {}}

// example compiles examples/<name> with the real compiler and returns a
// fresh copy of its document.
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
		c.doc, c.err = air.Marshal(doc)
	})
	if c.err != nil {
		t.Fatalf("compile %s: %v", name, c.err)
	}
	doc, err := air.Parse(c.doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc, nil
}

func diagErr(ds diag.List) error {
	var b strings.Builder
	_ = ds.WriteText(&b)
	return errors.New(b.String())
}
