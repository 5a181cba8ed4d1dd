package discover

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsStdlibAndAIROnly: the package stays a leaf the gateways can
// embed: the standard library, runtime/air and the Snowball stemmer (a
// dependency-free module), nothing else (tests aside).
func TestImportsStdlibAndAIROnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(p, "/")
			if strings.Contains(first, ".") && p != "github.com/anvil-dev/anvil/runtime/air" && p != "github.com/kljensen/snowball/english" {
				t.Errorf("%s imports %s; runtime/discover may import only the standard library and runtime/air", f, p)
			}
		}
	}
}
