package lower

import (
	"strings"
	"testing"
)

// TestPathTitle: a title that names only the path's last literal
// segments gains the segment before them; a bare verb gains the
// resource; any other title is kept.
func TestPathTitle(t *testing.T) {
	for _, c := range []struct{ title, path, want string }{
		{"Person", "/3/search/person", "Search person"},
		{"TV", "/3/search/tv", "Search TV"},
		{"People", "/3/trending/person/{time_window}", "Trending people"},
		{"Movies", "/3/trending/movie/{time_window}", "Trending movies"},
		{"Credits", "/3/movie/{movie_id}/credits", "Movie credits"},
		{"Watch Providers", "/3/movie/{movie_id}/watch/providers", "Movie watch providers"},
		{"Movie Providers", "/3/watch/providers/movie", "Watch movie providers"},
		{"Rated TV Episodes", "/3/account/{account_id}/rated/tv/episodes", "Account rated TV episodes"},
		{"Primary Translations", "/3/configuration/primary_translations", "Configuration primary translations"},
		{"Entries", "/v2/feed/entry", "Feed entries"},
		{"Create", "/3/list", "Create list"},
		{"Clear", "/3/list/{list_id}/clear", "Clear list"},
		{"Delete", "/repos/{owner}/{repo}/hooks/{hook_id}", "Delete hook"},
		{"List", "/v1/widgets", "List widgets"},
		// Kept: a word the path does not say, nothing before the named
		// segments, no path words at all, a version is no segment.
		{"Details", "/3/movie/{movie_id}", "Details"},
		{"Movie Certifications", "/3/certification/movie/list", "Movie Certifications"},
		{"Available Regions", "/3/watch/providers/regions", "Available Regions"},
		{"Customers", "/v1/customers", "Customers"},
		{"Get a repository", "/repos/{owner}/{repo}", "Get a repository"},
		{"Create", "/{id}", "Create"},
		{"", "/a/b", ""},
		{"Search", "/search", "Search"},
	} {
		if got := pathTitle(c.title, c.path, nil); got != c.want {
			t.Errorf("pathTitle(%q, %q) = %q, want %q", c.title, c.path, got, c.want)
		}
	}
}

// TestSameWord: singular and plural alike, irregular plurals included,
// where Singularize alone says movy.
func TestSameWord(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"movies", "movie", true}, {"people", "person", true}, {"entries", "entry", true},
		{"series", "series", true}, {"ids", "id", true}, {"movie", "move", false}, {"list", "lists", true},
		{"tv", "movie", false},
	} {
		if got := sameWord(c.a, c.b); got != c.want {
			t.Errorf("sameWord(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// TestTMDBTitles: on TMDB's description every title is unique without a
// bracketed route, and the titles the spec left bare name what their
// operation does.
func TestTMDBTitles(t *testing.T) {
	doc, _ := Lower(loadRealSpec(t, "tmdb.json"), nil, &Options{ServiceID: "svc"})
	seen := map[string]string{}
	byOp := map[string]string{}
	for _, op := range doc.Operations {
		k := strings.ToLower(op.DisplayName)
		if o, ok := seen[k]; ok {
			t.Errorf("%s and %s share the title %q", o, op.SourceRef.OperationID, op.DisplayName)
		}
		seen[k] = op.SourceRef.OperationID
		if strings.Contains(op.DisplayName, " ("+op.SourceRef.Method+" /") {
			t.Errorf("%s: %q is told apart only by its route", op.SourceRef.OperationID, op.DisplayName)
		}
		byOp[op.SourceRef.OperationID] = op.DisplayName
	}
	for id, want := range map[string]string{
		"search-person": "Search person", "search-multi": "Search multi", "search-movie": "Search movie",
		"discover-movie": "Discover movie", "trending-people": "Trending people", "trending-movies": "Trending movies",
		"list-create": "Create list", "list-clear": "Clear list", "list-delete": "Delete list",
		"movie-credits": "Movie credits", "person-movie-credits": "Person movie credits",
		"changes-movie-list": "Movie changes list", "genre-movie-list": "Movie genre list",
	} {
		if byOp[id] != want {
			t.Errorf("%s: %q, want %q", id, byOp[id], want)
		}
	}
}

// TestSpelling: a path word a title gains is written as the spec's titles
// write it, an initial capital alone teaching nothing.
func TestSpelling(t *testing.T) {
	sp := spelling{}
	for _, title := range []string{"Discover TV", "External IDs", "Tv Thing", "Get (iOS) apps", "Movie Details"} {
		sp.learn(title)
	}
	if got := strings.Join(sp.words([]string{"tv", "ids", "ios", "movie", "details", "on"}), " "); got != "TV IDs iOS movie details on" {
		t.Errorf("spelled %q", got)
	}
	if got := pathTitle("Airing Today", "/3/tv/airing_today", nil); got != "Tv airing today" {
		t.Errorf("without spelling: %q", got)
	}
	if got := pathTitle("Airing Today", "/3/tv/airing_today", sp); got != "TV airing today" {
		t.Errorf("with spelling: %q", got)
	}
	if got := withContext("Top Rated", "/3/tv/top_rated", sp.words([]string{"tv"})); got != "TV top rated" {
		t.Errorf("context spelled: %q", got)
	}
}
