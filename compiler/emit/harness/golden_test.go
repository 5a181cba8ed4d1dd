package harness

import (
	"bytes"
	"github.com/anvil-dev/anvil/compiler/emit"
	"testing"

	"github.com/anvil-dev/anvil/golden"
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
	golden.CheckTree(t, "harness/github-mini", renderMini(t))
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
