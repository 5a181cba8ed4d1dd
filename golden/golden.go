// Package golden compares test output with files committed under golden/ and
// rewrites them on request. It owns the -update flag; `make golden` sets
// ANVIL_UPDATE_GOLDEN=1 instead, which works in every test package at once.
package golden

import (
	"bytes"
	"flag"
	"fmt"
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

// Path returns the absolute path of a golden file given relative to golden/
// (an absolute path is returned as it is: the package's own tests use one).
func Path(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(Dir(), filepath.FromSlash(rel))
}

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

// DerivedList is the file, inside a golden tree, that names the tree's
// derived files: one "<file> <- <source>" line each, sorted.
const DerivedList = "DERIVED"

// Sources are files an emitter copies verbatim (a template tree's real
// source files, as Marked), by their path in the source tree. A produced
// file whose bytes equal one of them is derived: the golden tree records
// which source it comes from instead of a second copy, and the check
// compares it with that source as it is now.
type Sources map[string][]byte

// CheckTree compares a whole tree of files (slash paths relative to the
// tree's root) with the golden directory rel. Files missing on either side
// are reported; with updating on, the directory is replaced. With sources,
// a produced file that equals one of them is checked against its source
// and listed in rel/DERIVED rather than stored.
func CheckTree(t testing.TB, rel string, files map[string][]byte, sources ...Sources) {
	t.Helper()
	root := Path(rel)
	derived := derive(files, sources)
	if Updating() {
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			if _, ok := derived[name]; ok {
				continue
			}
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if len(derived) > 0 {
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, DerivedList), formatDerived(derived), 0o644); err != nil {
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
	var problems []string
	if list, ok := have[DerivedList]; ok {
		delete(have, DerivedList)
		recorded, err := parseDerived(list)
		if err != nil {
			t.Fatalf("golden tree %s: %s: %v", rel, DerivedList, err)
		}
		for name, src := range recorded {
			got, inOutput := files[name]
			want, known := lookup(sources, src)
			switch {
			case !inOutput:
				problems = append(problems, "derived golden file not produced: "+name)
			case !known:
				problems = append(problems, "derived golden file "+name+" names an unknown source "+src)
			case !bytes.Equal(want, got):
				problems = append(problems, "differs from its source "+src+": "+name+"\n"+cmp.Diff(string(want), string(got)))
			}
			if inOutput {
				have[name] = got // checked above; not compared again below
			}
		}
	}
	problems = append(problems, CompareTrees(have, files, "in golden", "produced")...)
	if len(problems) > 0 {
		t.Errorf("golden tree %s (run `make golden` to accept):\n%s", rel, strings.Join(problems, "\n"))
	}
}

// derive maps each produced file that equals a source to that source's
// path (the lexically first, when several sources have the same bytes).
func derive(files map[string][]byte, sources []Sources) map[string]string {
	out := map[string]string{}
	for name, b := range files {
		best := ""
		for _, set := range sources {
			for src, data := range set {
				if bytes.Equal(b, data) && (best == "" || src < best) {
					best = src
				}
			}
		}
		if best != "" {
			out[name] = best
		}
	}
	return out
}

func lookup(sources []Sources, src string) ([]byte, bool) {
	for _, set := range sources {
		if b, ok := set[src]; ok {
			return b, true
		}
	}
	return nil, false
}

func formatDerived(derived map[string]string) []byte {
	names := make([]string, 0, len(derived))
	for n := range derived {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		b.WriteString(n + " <- " + derived[n] + "\n")
	}
	return b.Bytes()
}

func parseDerived(list []byte) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(strings.TrimSuffix(string(list), "\n"), "\n") {
		name, src, ok := strings.Cut(line, " <- ")
		if !ok || name == "" || src == "" {
			return nil, fmt.Errorf("line %d: want \"<file> <- <source>\", got %q", i+1, line)
		}
		out[name] = src
	}
	return out, nil
}
