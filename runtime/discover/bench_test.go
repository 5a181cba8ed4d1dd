package discover

import (
	"fmt"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// benchIndex is a few hundred tools: the fixture's, repeated under
// resources of other names, and a movie API whose credits need a movie_id
// (so producers are added to some answers).
func benchIndex(b testing.TB) *Index {
	b.Helper()
	bl := NewBuilder()
	for i, res := range []string{"pull", "issue", "release", "webhook", "deployment", "secret", "workflow", "branch", "commit", "team"} {
		for _, o := range fixture() {
			o.ID = fmt.Sprintf("%s.%d", o.ID, i)
			o.CanonicalName = fmt.Sprintf("%s_%s", o.CanonicalName, res)
			o.MCP.ToolName = o.CanonicalName
			o.DisplayName += " " + res
			o.Effect.Resource = res
			if err := bl.Add("gh", &o); err != nil {
				b.Fatal(err)
			}
		}
	}
	search := op("search_movie", "Search movies", "GET", "/search/movie", "search", "movie", "Search for movies by their title.", "query")
	credits := op("movie_credits", "Get movie credits", "GET", "/movie/{movie_id}/credits", "get", "credit", "The cast and crew of a movie: actors, director.", "movie_id")
	credits.Input.Params[0].In, credits.Input.Params[0].Required = "path", true
	credits.Needs = []air.Need{{Argument: "movie_id", From: []air.Producer{{Operation: search.ID, Field: "results[].id", Basis: air.ProducerField}}}}
	for _, o := range []air.Operation{search, credits} {
		if err := bl.Add("tmdb", &o); err != nil {
			b.Fatal(err)
		}
	}
	return bl.Build()
}

// benchQueries are searches of the kinds agents send: short intents,
// entity-laden requests (some naming a film, so a producer is added), a
// single verb, capitals, a miss.
var benchQueries = []string{
	"merge a pull request", "List open issues in a Repository", "who directed the film Heat",
	"delete a release", "Show me the cast of Casablanca", "get the latest release of octocat/hello-world 2",
	"update the status of a deployment", "list", "zzqx nothing",
}

// BenchmarkSearch: one search per iteration, the queries in turn, so
// allocs/op is a search's allocations (the result slice among them).
func BenchmarkSearch(b *testing.B) {
	ix := benchIndex(b)
	for _, q := range benchQueries { // warm: the WordNet table, the stem cache
		ix.Search(q, Options{})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.Search(benchQueries[i%len(benchQueries)], Options{})
	}
}

// TestSearchAllocatesOnlyItsResult: a search allocates its result slice
// and, for a query with capitals, the query in lower case, whatever else
// the query holds (a URL, a key, a name, a question, nothing that
// matches), so a loaded gateway's searches make no garbage beyond them.
func TestSearchAllocatesOnlyItsResult(t *testing.T) {
	if raceDetector {
		t.Skip("allocations are not counted under the race detector (its sync.Pool drops entries on purpose); the plain go test run counts them")
	}
	ix := benchIndex(t)
	queries := append([]string{"review https://github.com/o/r/pull/3", "What's the status of PROJ-123?",
		"Who directed Heat?", "movies directed by Michael Mann"}, benchQueries...)
	for _, q := range queries {
		ix.Search(q, Options{}) // warm: the WordNet table, the stem cache
	}
	for _, q := range queries {
		want := 1.0
		if strings.ToLower(q) != q {
			want = 2
		}
		if n := testing.AllocsPerRun(20, func() { ix.Search(q, Options{}) }); n > want {
			t.Errorf("%q: %v allocations a search, want %v", q, n, want)
		}
	}
}
