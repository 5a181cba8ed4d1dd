package discovereval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/discover"
)

// TestExplain prints, for the query in ANVIL_DISCOVER_QUERY, the top ten and
// how each and the tools in ANVIL_DISCOVER_NAMES (comma separated) score: a
// tuning aid, skipped unless the query is set.
func TestExplain(t *testing.T) {
	q := os.Getenv("ANVIL_DISCOVER_QUERY")
	if q == "" {
		t.Skip("ANVIL_DISCOVER_QUERY not set")
	}
	doc, err := Compile(filepath.Join(specsDir(), "github.json"), "github")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Index("github", doc)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, r := range ix.Search(q, discover.Options{Limit: 10}) {
		names = append(names, r.Entry.Name)
	}
	if n := os.Getenv("ANVIL_DISCOVER_NAMES"); n != "" {
		names = append(names, strings.Split(n, ",")...)
	}
	for _, n := range names {
		t.Logf("%s\n%s", n, ix.Explain(q, n))
	}
}
