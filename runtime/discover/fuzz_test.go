package discover

import (
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// FuzzSearch: a query is an agent's text, untrusted: whatever it holds
// (names, keys, URLs, questions, broken UTF-8, a megabyte of it), a search
// returns at most its limit of distinct results, each one the caller's
// grant allows, producers and needs included, and never panics.
func FuzzSearch(f *testing.F) {
	ix := fuzzIndex(f)
	for _, q := range append([]string{
		"", " ", "Who directed Heat?", "Who is Tom Hanks?", "movies directed by Michael Mann",
		"Tarantino's crime movies", "What's the status of PROJ-123?", "PROJ-", "-123", "a-1 b-2",
		"review https://github.com/o/r/pull/3", "https://", "http://x", "https://www..:/", "\xff\xfehttps://a",
		"Output detailed information about the given issue", "details of of of", "show me me me",
		"\"quoted name\" and then list issues, then delete it", strings.Repeat("Who ", 300),
	}, benchQueries...) {
		f.Add(q, 5)
	}
	f.Fuzz(func(t *testing.T, q string, limit int) {
		hidden := func(e *Entry) bool {
			return strings.Contains(e.Name, "search_movie") || strings.HasSuffix(e.Name, "_team")
		}
		opts := Options{Limit: limit % (MaxLimit + 3), Allow: func(e *Entry) bool { return !hidden(e) }}
		rs := ix.Search(q, opts)
		want := opts.Limit
		if want <= 0 {
			want = DefaultLimit
		}
		if len(rs) > min(want, MaxLimit) {
			t.Fatalf("%q: %d results for limit %d", q, len(rs), opts.Limit)
		}
		seen := map[*Entry]bool{}
		for _, r := range rs {
			if seen[r.Entry] {
				t.Fatalf("%q: %s twice", q, r.Entry.Name)
			}
			seen[r.Entry] = true
			if hidden(r.Entry) {
				t.Fatalf("%q: a tool the grant hides: %s", q, r.Entry.Name)
			}
			for _, n := range r.Needs {
				for _, p := range n.From {
					if hidden(p) {
						t.Fatalf("%q: a hidden producer in %s's needs: %s", q, r.Entry.Name, p.Name)
					}
				}
			}
		}
	})
}

// fuzzIndex is benchIndex with what the query rules act on besides: a
// search of people, a second search of things, and a tracker's keyed
// resource.
func fuzzIndex(tb testing.TB) *Index {
	tb.Helper()
	b := NewBuilder()
	for _, res := range []string{"pull", "issue", "team"} {
		for _, o := range fixture() {
			o.ID = o.ID + "." + res
			o.CanonicalName = o.CanonicalName + "_" + res
			o.MCP.ToolName = o.CanonicalName
			o.DisplayName += " " + res
			if err := b.Add("gh", &o); err != nil {
				tb.Fatal(err)
			}
		}
	}
	search := op("search_movie", "Search movies", "GET", "/search/movie", "search", "movie", "Search for movies by their title.", "query")
	tv := op("search_tv", "Search TV shows", "GET", "/search/tv", "search", "tv", "Search for TV shows by their name.", "query")
	people := op("search_person", "Search people", "GET", "/search/person", "search", "person", "Search for people by their name.", "query")
	credits := op("movie_credits", "Get movie credits", "GET", "/movie/{movie_id}/credits", "get", "credit", "The cast and crew of a movie.", "movie_id")
	credits.Input.Params[0].In, credits.Input.Params[0].Required = "path", true
	credits.Needs = []air.Need{{Argument: "movie_id", From: []air.Producer{{Operation: search.ID, Field: "results[].id", Basis: air.ProducerField}}}}
	for _, o := range []air.Operation{search, tv, people, credits} {
		if err := b.Add("tmdb", &o); err != nil {
			tb.Fatal(err)
		}
	}
	for _, id := range []string{"get_issue", "edit_issue", "issue_comments"} {
		o := op(id, strings.ReplaceAll(id, "_", " "), "GET", "/issue/{issueIdOrKey}", "get", "issue", "An issue.")
		o.Input.Params = []air.Param{{Name: "issueIdOrKey", Key: "issueIdOrKey", In: air.InPath, Required: true}}
		if err := b.Add("jira", &o); err != nil {
			tb.Fatal(err)
		}
	}
	return b.Build()
}
