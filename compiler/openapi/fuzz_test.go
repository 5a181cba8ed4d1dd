package openapi

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
)

// FuzzLoadBytes checks that no input makes the loader panic or hang, and
// that every error is a *diag.Failure with at least one coded diagnostic.
func FuzzLoadBytes(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.*")
	more, _ := filepath.Glob("testdata/*/*.yaml")
	moreJSON, _ := filepath.Glob("testdata/*/*.json")
	seeds = append(append(append(seeds, more...), moreJSON...), githubMini)
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(filepath.Base(p), b)
	}
	f.Add("x.json", []byte(`{"openapi":"3.1.0","paths":{"/a":{"get":{"responses":{"200":{"content":{"application/json":{"schema":{"$ref":"#"}}}}}}}}}`))
	f.Add("x.yaml", []byte("openapi: 3.0.0\npaths:\n  /a:\n    get:\n      parameters: [{$ref: '#/paths/~1a/get/parameters/0'}]\n"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		s, err := LoadBytes(name, data, nil)
		if err != nil {
			var fail *diag.Failure
			if !errors.As(err, &fail) {
				t.Fatalf("error %T is not a *diag.Failure: %v", err, err)
			}
			if len(fail.Diagnostics) == 0 {
				t.Fatal("failure without diagnostics")
			}
			for _, d := range fail.Diagnostics {
				if d.Code == "" || d.Level != diag.Error {
					t.Fatalf("bad diagnostic %v", d)
				}
			}
			if s != nil {
				t.Fatal("spec returned with an error")
			}
			return
		}
		if s == nil || len(s.Operations) == 0 {
			t.Fatal("success without operations")
		}
		for _, d := range s.Diagnostics {
			if d.Code == "" || d.Level == diag.Error {
				t.Fatalf("bad warning %v", d)
			}
		}
	})
}
