package lower

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

func lowerNeeds(t *testing.T, man string) (*air.Document, string) {
	t.Helper()
	spec, err := openapi.Load("testdata/needs/movies.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var m *manifest.Manifest
	if man != "" {
		var md interface{ HasErrors() bool }
		m, md = manifestDecode(man)
		if md.HasErrors() {
			t.Fatalf("manifest: %v", md)
		}
	}
	doc, ds := Lower(spec, m, nil)
	return doc, text(ds)
}

func manifestDecode(src string) (*manifest.Manifest, interface{ HasErrors() bool }) {
	m, d := manifest.Decode("anvil.yaml", []byte(src))
	return m, d
}

func needsOf(doc *air.Document, id string) string {
	op := doc.Operation(id)
	if op == nil {
		return "no operation " + id
	}
	b, _ := json.Marshal(op.Needs)
	return string(b)
}

// TestProducerLinks: an id input is linked to the operations whose answers
// carry it (a search's results of the resource's schema, a list of the
// resource), a declared OpenAPI link is recorded with its field, an enum
// path parameter needs nothing, and an operation never produces its own
// input.
func TestProducerLinks(t *testing.T) {
	doc, ds := lowerNeeds(t, "")
	for _, c := range []struct{ id, want string }{
		// A search first, then what yields a movie id without needing one;
		// two at most (movies.person.get's known_for[].id is the third).
		{"movies.movie.get", `[{"argument":"movie_id","from":[{"operation":"movies.movie.search","field":"results[].id","basis":"field"},` +
			`{"operation":"movies.trending.get","field":"results[].id","basis":"field"}]}]`},
		// The enum of /trending/{media_type} names what its results are.
		{"movies.person.get", `[{"argument":"person_id","from":[{"operation":"movies.trending.get","field":"results[].id","basis":"field"}]}]`},
		{"movies.trending.get", `null`},
		{"movies.tracks.create", `[{"argument":"playlist_id","from":[{"operation":"movies.playlists.create","field":"id","basis":"link"}]}]`},
	} {
		if got := needsOf(doc, c.id); got != c.want {
			t.Errorf("%s needs\n got %s\nwant %s", c.id, got, c.want)
		}
	}
	if strings.Contains(ds, "error") {
		t.Errorf("diagnostics: %s", ds)
	}
}

// TestProducerLinksManifest: needs: replaces the inferred producers of the
// inputs it names (an empty list removes them), and bad references are
// coded errors.
func TestProducerLinksManifest(t *testing.T) {
	doc, ds := lowerNeeds(t, `
operations:
  getMovieImages:
    needs: {movie_id: [getTrending, searchMovie]}
  getMovie:
    needs: {movie_id: []}
`)
	if got, want := needsOf(doc, "movies.images.list_movie"), `[{"argument":"movie_id","from":[{"operation":"movies.trending.get","basis":"manifest"},{"operation":"movies.movie.search","basis":"manifest"}]}]`; got != want {
		t.Errorf("images: got %s\nwant %s", got, want)
	}
	if got := needsOf(doc, "movies.movie.get"); got != "null" {
		t.Errorf("emptied: %s", got)
	}
	if strings.Contains(ds, "error") {
		t.Errorf("diagnostics: %s", ds)
	}
	_, ds = lowerNeeds(t, `
operations:
  getMovie:
    needs: {film_id: [searchMovie], movie_id: [nosuchOp, getMovie]}
`)
	for _, code := range []string{"manifest/unknown_argument", "manifest/unknown_operation", "manifest/invalid_need"} {
		if !strings.Contains(ds, code) {
			t.Errorf("no %s in\n%s", code, ds)
		}
	}
}

// TestDistinctTitles: titles are trimmed to one line, and titles the spec
// repeats gain the path words they lack.
func TestDistinctTitles(t *testing.T) {
	doc, _ := lowerNeeds(t, "")
	for id, want := range map[string]string{
		"movies.movie.search":       "Search Movies",
		"movies.movie.get":          "Get movie details",
		"movies.person.get":         "Get person details",
		"movies.images.list_movie":  "Get movie images",
		"movies.images.list_person": "Get person images",
	} {
		op := doc.Operation(id)
		if op == nil {
			var ids []string
			for _, o := range doc.Operations {
				ids = append(ids, o.ID)
			}
			t.Fatalf("no %s in %v", id, ids)
		}
		if op.DisplayName != want {
			t.Errorf("%s: %q, want %q", id, op.DisplayName, want)
		}
	}
	for _, c := range []struct{ title, path, want string }{
		{"Get Images", "/3/tv/{tv_id}/season/{season_number}/images", "Get tv season images"},
		{"Images", "/movie/{id}/images", "Movie images"},
		{"Get TV Images", "/tv/{id}/images", "Get TV Images"},
		{"List", "/v1/widgets", "Widgets list"},
		{"Get an organization secret", "/orgs/{org}/actions/secrets/{name}", "Get an organization orgs actions secret"},
		// A title the path spells is a name, kept whole.
		{"Top Rated", "/3/movie/top_rated", "Movie top rated"},
		{"Account States", "/3/tv/{series_id}/account_states", "Tv account states"},
		{"Movie List", "/3/genre/movie/list", "Movie genre list"},
	} {
		if got := withContext(c.title, c.path, pathContext(c.title, c.path)); got != c.want {
			t.Errorf("withContext(%q, %q) = %q, want %q", c.title, c.path, got, c.want)
		}
	}
}

// TestNameArgument: names (one producer) against opaque identifiers (two).
func TestNameArgument(t *testing.T) {
	for snake, want := range map[string]bool{"owner": true, "repo": true, "namespace": true, "team_slug": true,
		"movie_id": false, "ids": false, "pull_number": false, "key": false, "commit_sha": false, "id": false} {
		if got := nameArgument(snake); got != want {
			t.Errorf("nameArgument(%q) = %v", snake, got)
		}
	}
}

// TestPathWordProducerTakesTheID: an input whose resource comes from the
// path word before its placeholder (…/owner/{owningObjectId}) is produced
// by what lists owners, never by an operation whose own path takes an id
// after that word (POST …/owner/{entityId} answers an avatar, not an owner).
func TestPathWordProducerTakesTheID(t *testing.T) {
	spec, err := openapi.Load("testdata/needs/avatars.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, ds := Lower(spec, nil, nil)
	if strings.Contains(text(ds), "error") {
		t.Fatalf("diagnostics: %s", text(ds))
	}
	bySource := map[string]*air.Operation{}
	for i := range doc.Operations {
		bySource[doc.Operations[i].SourceRef.OperationID] = &doc.Operations[i]
	}
	del, store, owners := bySource["deleteAvatar"], bySource["storeAvatar"], bySource["listOwners"]
	if del == nil || store == nil || owners == nil {
		t.Fatal("operations not lowered")
	}
	var from []string
	for _, n := range del.Needs {
		if n.Argument == "owningObjectId" {
			for _, p := range n.From {
				from = append(from, p.Operation)
			}
		}
	}
	if len(from) == 0 || from[0] != owners.ID || slices.Contains(from, store.ID) {
		t.Errorf("owningObjectId from %v, want %s and not the avatar upload %s", from, owners.ID, store.ID)
	}
}

// TestByName: a read of one member by a name the segment before it names
// ranks as a search, for that member's own identifier only.
func TestByName(t *testing.T) {
	for path, want := range map[string]bool{
		"/repos/{owner}/{repo}/releases/tags/{tag}": true,
		"/users/{username}":                         true,
		"/orgs/{org}/teams/{team_slug}":             true,
		"/me/top/{type}":                            false, // a selector the segment does not name
		"/3/movie/{movie_id}":                       false, // an identifier
		"/releases/{release_id}/assets":             false, // ends in a literal
		"/{name}":                                   false,
	} {
		if got := byName(path); got != want {
			t.Errorf("byName(%q) = %v", path, got)
		}
	}
	get := &air.Operation{Effect: air.Effect{Action: "get"}}
	if r := yieldRank(get, "/repos/{owner}/{repo}/releases/tags/{tag}", "id", "release"); r != 0 {
		t.Errorf("the tag lookup's release id ranks %d, want a search's 0", r)
	}
	if r := yieldRank(get, "/apps/{app_slug}", "owner.login", "owner"); r != rankGet {
		t.Errorf("an app lookup's owner ranks %d, want a get's %d", r, rankGet)
	}
}
