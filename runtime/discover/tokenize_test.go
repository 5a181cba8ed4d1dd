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
