package gosdk

import (
	"bytes"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/golden"
)

func renderExample(t testing.TB, name, connector string) map[string][]byte {
	t.Helper()
	doc, _ := example(t, name)
	tree, err := Render(emit.Connector{ID: connector, Doc: doc})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return tree.Bytes()
}

func TestGoldenGithubMini(t *testing.T) {
	golden.CheckTree(t, "gosdk/github-mini", renderExample(t, "github-mini", "github"))
}

func TestDeterministic(t *testing.T) {
	a, b := renderExample(t, "github-mini", "github"), renderExample(t, "github-mini", "github")
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Errorf("%s differs between two renders", name)
		}
	}
}
