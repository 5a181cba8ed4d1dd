package lower

import (
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/openapi"
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

// TestRouteTitle: an operationId that only spells the route gives way to
// the description's short first sentence, as plain text; an id that says
// more, a long description or none keep the title made from the name.
func TestRouteTitle(t *testing.T) {
	for _, c := range []struct{ id, method, path, desc, want string }{
		{"GetAccountsAccountBankAccountsId", "GET", "/v1/accounts/{account}/bank_accounts/{id}",
			"<p>Retrieve a specified external account for a given bank account.</p>", "Retrieve a specified external account for a given bank account"},
		{"PostAccountsAccountReject", "POST", "/v1/accounts/{account}/reject",
			"<p>With <a href=\"/docs/connect\">Connect</a>, you may flag accounts as suspicious.</p><p>More.</p>", "With Connect, you may flag accounts as suspicious"},
		{"admin.apps.approve", "POST", "/admin.apps.approve", "Approve an app for installation on a workspace.", "Approve an app for installation on a workspace"},
		{"getIssues", "GET", "/issues", "fetch &amp; list issues", "Fetch & list issues"},
		// Kept: the id says what the path does not, the sentence is long, no description, no id.
		{"patchCoreV1NamespacedPod", "PATCH", "/api/v1/namespaces/{namespace}/pods/{name}", "partially update the specified Pod", ""},
		{"GetCustomers", "GET", "/v1/customers", "Returns a list of your customers, sorted by creation date with the most recent customers appearing first, always.", ""},
		{"GetCustomers", "GET", "/v1/customers", "", ""},
		{"", "GET", "/v1/customers", "List customers.", ""},
	} {
		op := &openapi.Operation{OperationID: c.id, Method: c.method, Path: c.path, Description: c.desc}
		if got := routeTitle(op); got != c.want {
			t.Errorf("routeTitle(%s %s %q) = %q, want %q", c.method, c.path, c.id, got, c.want)
		}
	}
}

// TestTitleFromLongName: a title made from a canonical name that was
// shortened to fit the wire limit reads the whole name, not the hashed stump.
func TestTitleFromLongName(t *testing.T) {
	r := &routing{Canonical: "delete_core_v1_collection_namespaced_persistent_volume_claim"}
	routes := []*routing{r}
	shortenNames("kubernetes", routes)
	if r.Canonical == r.long || r.long == "" {
		t.Fatalf("not shortened: %q", r.Canonical)
	}
	if got := humanize(r.titleName()); got != "Delete core v1 collection namespaced persistent volume claim" {
		t.Errorf("title %q", got)
	}
	short := &routing{Canonical: "list_pods"}
	shortenNames("kubernetes", []*routing{short})
	if short.titleName() != "list_pods" {
		t.Errorf("an unshortened name: %q", short.titleName())
	}
}
