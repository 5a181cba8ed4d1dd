package gosdk

import (
	"bytes"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/golden"
)

func renderExample(t testing.TB, name, connector string) map[string][]byte {
	t.Helper()
	tree, err := Render(emit.Connector{ID: connector, Doc: example(t, name)})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return tree.Bytes()
}

// TestGoldenHostile pins the Go SDK of the hostile spec (examples/hostile),
// whose inputs take the controls' names (github-mini's is in
// golden/harness/github-mini/go). runtime_gen.go is the runtime template
// under the SDK's package name (TestRuntimeIsTheTemplate), so the golden
// leaves it out.
func TestGoldenHostile(t *testing.T) {
	files := renderExample(t, "hostile", "hostile")
	delete(files, "runtime_gen.go")
	golden.CheckTree(t, "gosdk/hostile", files)
}

func TestRuntimeIsTheTemplate(t *testing.T) {
	files := renderExample(t, "hostile", "hostile")
	want, err := RuntimeSource("hostile")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files["runtime_gen.go"], want) || !bytes.HasPrefix(want, []byte("// "+Header+"\n\npackage hostile\n")) {
		t.Errorf("runtime_gen.go is not templates/gosdk/runtime.go under package hostile:\n%.300s", files["runtime_gen.go"])
	}
}

func TestDeterministic(t *testing.T) {
	a, b := renderExample(t, "github-mini", "github"), renderExample(t, "github-mini", "github")
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Errorf("%s differs between two renders", name)
		}
	}
}
