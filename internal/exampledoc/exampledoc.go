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

	"github.com/anvil-dev/anvil/compiler"
	"github.com/anvil-dev/anvil/compiler/diag"
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
		doc, ds := compiler.Compile(compiler.Inputs{Spec: filepath.Join(dir, "openapi.yaml"), Manifest: filepath.Join(dir, "anvil.yaml")}, compiler.Options{})
		if doc == nil || ds.HasErrors() {
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
