package compiler

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	gatewayemit "github.com/anvil-dev/anvil/compiler/emit/gateway"
)

// TestUnformattedGeneratedFileIsKept: a generated file that does not format
// (a generator bug) is written where it can be read, and the coded error
// names it; other errors pass unchanged.
func TestUnformattedGeneratedFileIsKept(t *testing.T) {
	src := []byte("package ops000\n\nfunc f() {\n")
	err := keepUnformatted(fmt.Errorf("generating: %w", &gatewayemit.FormatError{Name: "workspace/github/ops000/ops_gen.go", Source: src, Err: errors.New("expected '}'")}))
	if !errors.Is(err, gatewayemit.ErrFormat) {
		t.Fatalf("%v does not wrap ErrFormat", err)
	}
	_, dump, ok := strings.Cut(err.Error(), "the unformatted file is ")
	if !ok {
		t.Fatalf("%q names no file", err)
	}
	t.Cleanup(func() { os.Remove(dump) })
	if b, rerr := os.ReadFile(dump); rerr != nil || !bytes.Equal(b, src) {
		t.Errorf("%s: %q, %v; want the unformatted source", dump, b, rerr)
	}
	if !strings.HasSuffix(dump, "ops_gen.go") || !strings.HasPrefix(dump, os.TempDir()) {
		t.Errorf("dump %s: want a file in the temporary directory named after the generated one", dump)
	}
	other := errors.New("x")
	if keepUnformatted(other) != other {
		t.Error("another error changed")
	}
}
