// Package golden compares test output with files committed under golden/ and
// rewrites them on request. It owns the -update flag; `make golden` sets
// ANVIL_UPDATE_GOLDEN=1 instead, which works in every test package at once.
package golden

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files instead of comparing")

// Updating reports whether golden files are being rewritten.
func Updating() bool {
	return *update || os.Getenv("ANVIL_UPDATE_GOLDEN") == "1"
}

// Dir is the absolute path of the golden/ directory.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Path returns the absolute path of a golden file given relative to golden/.
func Path(rel string) string { return filepath.Join(Dir(), filepath.FromSlash(rel)) }

// Check compares got with the golden file rel (relative to golden/).
func Check(t testing.TB, rel string, got []byte) {
	t.Helper()
	p := Path(rel)
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("golden %s: %v (run `make golden` to create it)", rel, err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("golden %s differs (-want +got):\n%s", rel, cmp.Diff(string(want), string(got)))
	}
}

// CheckTree compares a whole tree of files (slash paths relative to the
// tree's root) with the golden directory rel. Files missing on either side
// are reported; with updating on, the directory is replaced.
func CheckTree(t testing.TB, rel string, files map[string][]byte) {
	t.Helper()
	root := Path(rel)
	if Updating() {
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	have := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(root, p)
		have[filepath.ToSlash(r)] = b
		return nil
	})
	if err != nil {
		t.Fatalf("golden tree %s: %v (run `make golden` to create it)", rel, err)
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	for n := range have {
		if _, ok := files[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var problems []string
	for _, n := range names {
		want, inGolden := have[n]
		got, inOutput := files[n]
		switch {
		case !inGolden:
			problems = append(problems, "new file not in golden: "+n)
		case !inOutput:
			problems = append(problems, "golden file not produced: "+n)
		case !bytes.Equal(want, got):
			problems = append(problems, "differs: "+n+"\n"+cmp.Diff(string(want), string(got)))
		}
	}
	if len(problems) > 0 {
		t.Errorf("golden tree %s (run `make golden` to accept):\n%s", rel, strings.Join(problems, "\n"))
	}
}
