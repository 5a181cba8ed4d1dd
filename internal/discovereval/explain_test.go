package discovereval

import (
	"os"
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
	_, ix := githubIndex(t)
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
