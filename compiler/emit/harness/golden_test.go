package harness

import (
	"bytes"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit"

	"github.com/anvil-dev/anvil/compiler/emit/gosdk"
	"github.com/anvil-dev/anvil/golden"
	"github.com/anvil-dev/anvil/templates"
)

func renderMini(t testing.TB) map[string][]byte {
	t.Helper()
	tree, err := Render(emit.Connector{ID: "github", Doc: githubMini(t), BundleHash: testBundleHash})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return tree.Bytes()
}

func TestGoldenGithubMini(t *testing.T) {
	verbatim, err := templates.Verbatim()
	if err != nil {
		t.Fatal(err)
	}
	// The Go SDK's runtime is the gosdk template under the SDK's package.
	runtime, err := gosdk.RuntimeSource("github")
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckTree(t, "harness/github-mini", renderMini(t), verbatim, golden.Sources{"templates/gosdk/runtime.go (as package github)": runtime})
}

func TestDeterministic(t *testing.T) {
	a, b := renderMini(t), renderMini(t)
	if len(a) != len(b) {
		t.Fatalf("file counts differ: %d vs %d", len(a), len(b))
	}
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Errorf("%s differs between two renders", name)
		}
	}
}
