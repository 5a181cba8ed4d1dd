package gosdk

import (
	"testing"

	"github.com/anvil-dev/anvil/internal/exampledoc"
	"github.com/anvil-dev/anvil/runtime/air"
)

// example compiles examples/<name> (exampledoc) or fails the test.
func example(t testing.TB, name string) *air.Document {
	t.Helper()
	doc, _, err := exampledoc.Compile(name)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return doc
}
