package discover

import (
	"slices"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"listForRepo", "list repo"},
		{"HTTPServer getURLPath", "http server get url path"},
		{"/repos/{owner}/{repo}/pulls/{pull_number}/merge", "repo owner repo pull pull number merg"},
		{"github.teams.create_org", "github team creat org"},
		{"Open a PR", "open pull request"},
		{"See [the docs](https://docs.github.com/rest/pulls) now", "see doc now"},
		{"Repositories, repos and a repository", "repo repo repo"},
		{"branches branch", "branch branch"},
		{"releases released release", "releas releas releas"},
		{"starred star", "star star"},
		{"contributors contributed", "contribut contribut"},
		{"assignees assign", "assign assign"},
		{"statuses status access analysis", "status status access analysi"},
		// Snowball: the plural and the singular meet (a light stemmer
		// made "movies" movy and "movie" movi).
		{"movies movie films", "movi movi film"},
		{"directors directed director", "direct direct direct"},
		{"settings setting set", "set set set"},
		{"string strings", "string string"},
		{"the a of to", ""},
		{"Ünïcode Straße", "ünïcode straße"},
	} {
		got := strings.Join(tokenize(nil, c.in), " ")
		if got != c.want {
			t.Errorf("tokenize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestTokenizeBounded: a token longer than maxTokenLen is dropped, and
// odd input (invalid UTF-8, lone URL) neither panics nor yields empty terms.
func TestTokenizeBounded(t *testing.T) {
	got := tokenize(nil, strings.Repeat("x", maxTokenLen+1)+" keep \xff\xfe https://example.com")
	if !slices.Equal(got, []string{"keep"}) {
		t.Errorf("got %q", got)
	}
}

// TestSynonymGroupsDisjoint: a word belongs to one synonym group, so a
// query's concepts are well defined.
func TestSynonymGroupsDisjoint(t *testing.T) {
	seen := map[string]int{}
	for i, g := range synonymGroups {
		for _, w := range g {
			for _, term := range tokenize(nil, w) {
				if j, ok := seen[term]; ok && j != i {
					t.Errorf("%q (as %q) is in groups %d and %d", w, term, j, i)
				}
				seen[term] = i
			}
		}
	}
}

// TestTokenizeQueryKeepsURLs: a description's URL is a link and is
// skipped, a query's is what it is about: its host, without www and the
// top-level domain, and its path are read.
func TestTokenizeQueryKeepsURLs(t *testing.T) {
	for _, c := range []struct{ in, doc, query string }{
		{"upload code to https://gist.github.com", "upload code", "upload code gist github"},
		{"Review https://www.github.com/octo/hello/pull/3 now", "review now", "review github octo hello pull 3 now"},
		{"see http://localhost:8080/v1/widgets", "see", "see localhost v1 widget"},
		{"https://", "", ""},
	} {
		if got := strings.Join(tokenize(nil, c.in), " "); got != c.doc {
			t.Errorf("tokenize(%q) = %q, want %q", c.in, got, c.doc)
		}
		if got := strings.Join(tokenizeQuery(nil, c.in), " "); got != c.query {
			t.Errorf("tokenizeQuery(%q) = %q, want %q", c.in, got, c.query)
		}
	}
}
