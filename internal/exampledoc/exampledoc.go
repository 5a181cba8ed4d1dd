// Package exampledoc compiles the repository's examples (examples/<name>:
// openapi.yaml and anvil.yaml) with the real compiler, once per process, for
// the emitters' tests: each caller gets a fresh copy of the AIR document,
// as a bundle loader would give it.
package exampledoc

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

type compiled struct {
	once sync.Once
	doc  []byte
	diag diag.List
	err  error
}

var (
	mu    sync.Mutex
	cache = map[string]*compiled{}
)

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Compile compiles examples/<name> and returns a fresh copy of its AIR
// document (marshalled and parsed again, so its schemas are linked as a
// loaded bundle's are) and the compile's diagnostics. A compile with errors
// is an error that lists them.
func Compile(name string) (*air.Document, diag.List, error) {
	mu.Lock()
	c := cache[name]
	if c == nil {
		c = &compiled{}
		cache[name] = c
	}
	mu.Unlock()
	c.once.Do(func() {
		dir := filepath.Join(Root(), "examples", name)
		spec, err := openapi.Load(filepath.Join(dir, "openapi.yaml"), nil)
		if err != nil {
			c.err = err
			return
		}
		man, ds := manifest.Load(filepath.Join(dir, "anvil.yaml"))
		if ds.HasErrors() {
			c.err = listErr(ds)
			return
		}
		doc, ds := lower.Lower(spec, man, nil)
		if ds.HasErrors() {
			c.err = listErr(ds)
			return
		}
		c.diag = ds
		c.doc, c.err = air.Marshal(doc)
	})
	if c.err != nil {
		return nil, nil, c.err
	}
	doc, err := air.Parse(c.doc)
	return doc, c.diag, err
}

func listErr(ds diag.List) error {
	var b strings.Builder
	_ = ds.WriteText(&b)
	return errors.New(b.String())
}
