package harness

import (
	"bytes"
	"testing"

	"github.com/anvil-dev/anvil/golden"
)

func renderMini(t testing.TB) map[string][]byte {
	t.Helper()
	tree, err := Render(githubMini(t), Options{Connector: "github", BundleHash: testBundleHash})
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
