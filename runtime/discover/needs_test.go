package discover

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// indexOf builds an index of ops under one connector.
func indexOf(t *testing.T, connector string, ops ...air.Operation) *Index {
	t.Helper()
	b := NewBuilder()
	for i := range ops {
		if err := b.Add(connector, &ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	return b.Build()
}

// needsIndex: a movie API where the credits take a movie_id that the
// search and the popular list produce.
func needsIndex(t *testing.T) *Index {
	t.Helper()
	search := op("search_movie", "Search movies", "GET", "/search/movie", "search", "movie", "Search for movies by their title.", "query")
	popular := op("movie_popular", "Get popular movies", "GET", "/movie/popular", "list", "popular", "The most popular movies.")
	credits := op("movie_credits", "Get movie credits", "GET", "/movie/{movie_id}/credits", "get", "credit", "The cast and crew of a movie: actors, director.", "movie_id")
	credits.Input.Params[0].In, credits.Input.Params[0].Required = "path", true
	credits.Needs = []air.Need{{Argument: "movie_id", From: []air.Producer{
		{Operation: search.ID, Field: "results[].id", Basis: air.ProducerField},
		{Operation: popular.ID, Field: "results[].id", Basis: air.ProducerField}}}}
	return indexOf(t, "tmdb", search, popular, credits)
}

// TestProducerReturnedWithConsumer: a query that names a film, not an id,
// gets the credits and, right after them, the search that yields the
// movie_id; the result says what it needs and what the producer is for.
// A query with an id gets no producer.
func TestProducerReturnedWithConsumer(t *testing.T) {
	ix := needsIndex(t)
	rs := ix.Search("who directed the film Heat cast", Options{Limit: 2})
	if got := strings.Join(names(rs), " "); got != "tmdb__movie_credits tmdb__search_movie" {
		t.Fatalf("got %s", got)
	}
	if len(rs[0].Needs) != 1 || rs[0].Needs[0].Argument != "movie_id" || len(rs[0].Needs[0].From) != 2 {
		t.Errorf("needs %+v", rs[0].Needs)
	}
	if strings.Join(rs[1].ProducerFor, ",") != "tmdb__movie_credits" {
		t.Errorf("producer_for %v", rs[1].ProducerFor)
	}
	if rs := ix.Search("credits of movie 949", Options{Limit: 2}); len(rs) > 1 && rs[1].ProducerFor != nil {
		t.Errorf("an id was given, yet a producer was added: %v", names(rs))
	}
}

// TestProducerLinksGrantFiltered: a producer the caller may not see is
// neither listed in needs nor returned.
func TestProducerLinksGrantFiltered(t *testing.T) {
	ix := needsIndex(t)
	allow := func(e *Entry) bool { return e.Name != "tmdb__search_movie" }
	rs := ix.Search("who directed the film Heat cast", Options{Limit: 5, Allow: allow})
	for _, r := range rs {
		if r.Entry.Name == "tmdb__search_movie" {
			t.Fatalf("hidden producer returned: %v", names(rs))
		}
		for _, n := range r.Needs {
			for _, p := range n.From {
				if p.Name == "tmdb__search_movie" {
					t.Errorf("hidden producer listed in needs of %s", r.Entry.Name)
				}
			}
		}
	}
	if rs[0].Entry.Name != "tmdb__movie_credits" || len(rs[0].Needs) != 1 || rs[0].Needs[0].From[0].Name != "tmdb__movie_popular" {
		t.Errorf("got %v %+v", names(rs), rs[0].Needs)
	}
	b, _ := MarshalResponse(rs[:1])
	if strings.Contains(string(b), "search_movie") {
		t.Errorf("hidden tool in the answer: %s", b)
	}
}

// TestCatalogueWordsAndPlaceholders: "latest" does not outrank what the
// query is about, and a {placeholder} is not a path word.
func TestCatalogueWordsAndPlaceholders(t *testing.T) {
	latest := op("movie_latest", "Get latest", "GET", "/movie/latest", "get", "latest", "The most recently created movie.")
	person := op("person_movie_credits", "Get person movie credits", "GET", "/person/{person_id}/movie_credits", "get", "credit", "The films a person worked on.", "person_id")
	episodes := op("tv_season", "Get season details", "GET", "/tv/{tv_id}/season/{season_number}", "get", "season", "A season of a show.")
	ix := indexOf(t, "tmdb", latest, person, episodes)
	if rs := ix.Search("latest film credits of a person", Options{}); rs[0].Entry.Name != "tmdb__person_movie_credits" {
		t.Errorf("latest outranks the subject: %v", names(rs))
	}
	if rs := ix.Search("number", Options{}); len(rs) > 0 && rs[0].Entry.Name == "tmdb__tv_season" && rs[0].Score > 0 {
		t.Errorf("a path placeholder matched: %v", names(rs))
	}
}

// TestProducerForNamedEntityBelowTheTop: when the query names something
// (a capitalised word inside it), the consumer whose producer is returned
// may be any of the best producerScan results, not only the first; a query
// that names nothing gets producers for the best result only.
func TestProducerForNamedEntityBelowTheTop(t *testing.T) {
	search := op("search_movie", "Search movies", "GET", "/search/movie", "search", "movie", "Search for movies by their title.", "query")
	playing := op("movie_now_playing", "Get movies now playing", "GET", "/movie/now_playing", "list", "playing", "Movies now playing in theatres, with their cast.")
	credits := op("movie_credits", "Get movie credits", "GET", "/movie/{movie_id}/credits", "get", "credit", "The cast and crew of a movie.", "movie_id")
	credits.Input.Params[0].In, credits.Input.Params[0].Required = "path", true
	credits.Needs = []air.Need{{Argument: "movie_id", From: []air.Producer{{Operation: search.ID, Field: "results[].id", Basis: air.ProducerField}}}}
	ix := indexOf(t, "tmdb", search, playing, credits)
	for _, c := range []struct {
		q        string
		producer bool
	}{
		{"movies now playing with the cast of Heat", true},
		{`movies now playing with the cast of "heat"`, true},
		{"movies now playing with the cast of heat", false},
	} {
		rs := ix.Search(c.q, Options{Limit: 3})
		got := strings.Join(names(rs), " ")
		if !strings.HasPrefix(got, "tmdb__movie_now_playing tmdb__movie_credits") {
			t.Fatalf("%q: got %s", c.q, got)
		}
		added := len(rs) == 3 && rs[2].Entry.Name == "tmdb__search_movie" && strings.Join(rs[2].ProducerFor, ",") == "tmdb__movie_credits"
		if added != c.producer {
			t.Errorf("%q: producer added %v, want %v (%s)", c.q, added, c.producer, got)
		}
	}
}

// TestOptionalInputGetsNoProducer: a producer link of an optional input (a
// filter) is listed in needs but its producer is not returned with the
// entry: the call can be made without it.
func TestOptionalInputGetsNoProducer(t *testing.T) {
	commits := op("list_commits", "List commits", "GET", "/repos/{owner}/{repo}/commits", "list", "commit", "Lists commits of a repository.")
	runs := op("list_runs", "List workflow runs", "GET", "/repos/{owner}/{repo}/actions/runs", "list", "run", "Lists workflow runs.", "head_sha")
	runs.Needs = []air.Need{{Argument: "head_sha", From: []air.Producer{{Operation: commits.ID, Field: "[].sha", Basis: air.ProducerField}}}}
	rs := indexOf(t, "gh", commits, runs).Search("list workflow runs", Options{Limit: 2})
	if len(rs) == 0 || rs[0].Entry.Name != "gh__list_runs" || len(rs[0].Needs) != 1 {
		t.Fatalf("got %v", names(rs))
	}
	if len(rs) > 1 && rs[1].ProducerFor != nil {
		t.Errorf("the producer of an optional filter was returned: %v", names(rs))
	}
}

// TestClauseBestsPlaced: in a request of two clauses, the second clause's
// best tool is in the answer even when the first clause's words fill every
// place; the first five places stay the whole query's; a list of names
// after a comma is not a clause.
func TestClauseBestsPlaced(t *testing.T) {
	var ops []air.Operation
	for i := 0; i < 12; i++ {
		ops = append(ops, op(fmt.Sprintf("search_movie_%02d", i), "Search movies by title, year, genre and language", "GET", fmt.Sprintf("/search/movie/%d", i), "search", "movie", "Search movies by their title, year, genre and language."))
	}
	for i := 0; i < 40; i++ { // other tools, so that the query's words are rare
		ops = append(ops, op(fmt.Sprintf("widget_get_%02d", i), "Get a widget", "GET", fmt.Sprintf("/widget/%d", i), "get", "widget", "Gets a widget."))
	}
	ops = append(ops, op("review_delete", "Delete a review", "DELETE", "/review/{review_id}", "delete", "review", "Deletes a review."))
	ix := indexOf(t, "tmdb", ops...)
	has := func(rs []Result, name string) int {
		for i, r := range rs {
			if r.Entry.Name == name {
				return i
			}
		}
		return -1
	}
	for _, c := range []struct {
		q    string
		want bool
	}{
		{"search movies by title, year, genre and language, then delete the review", true},
		{"search movies by title year genre language and then delete a review", true},
		{"search movies by title year genre language: delete review", false}, // one clause: the whole query ranks
		{"search movies by title year genre language, review", false},        // not a request
	} {
		rs := ix.Search(c.q, Options{Limit: 10})
		i := has(rs, "tmdb__review_delete")
		if (i >= 0) != c.want || (i >= 0 && i < clauseKeepTop) || len(rs) != 10 {
			t.Errorf("%q: review_delete at %d (%d results), want placed %v", c.q, i, len(rs), c.want)
		}
	}
	if rs := ix.Search("search movies by title, year, genre and language, then delete the review", Options{Limit: 5}); has(rs, "tmdb__review_delete") >= 0 {
		t.Errorf("placed in an answer of 5: %v", names(rs))
	}
}

// TestFirstClauseBestSecond: the first clause's best tool (a gadget, a
// common word here) goes second when the whole query's rarer words rank
// it lower.
func TestFirstClauseBestSecond(t *testing.T) {
	ops := []air.Operation{op("search_movie", "Search movies", "GET", "/search/movie", "search", "movie", "Search movies by their title.")}
	for i := 0; i < 8; i++ {
		ops = append(ops, op(fmt.Sprintf("review_delete_%d", i), "Delete a widget review", "DELETE", fmt.Sprintf("/widget/%d/review", i), "delete", "review", "Deletes a review of a widget."))
	}
	for i := 0; i < 20; i++ {
		ops = append(ops, op(fmt.Sprintf("gadget_get_%02d", i), "Get a gadget", "GET", fmt.Sprintf("/gadget/%d", i), "get", "gadget", "Gets a gadget."))
	}
	ix := indexOf(t, "tmdb", ops...)
	at := func(q string) int {
		for i, r := range ix.Search(q, Options{Limit: 10}) {
			if r.Entry.Name == "tmdb__gadget_get_00" {
				return i
			}
		}
		return -1
	}
	if i := at("get the gadget, then delete the widget review"); i != 1 {
		t.Errorf("first clause's best at %d, want 1", i)
	}
	if i := at("get the gadget delete the widget review"); i >= 0 && i <= 1 {
		t.Errorf("one clause: gadget_get_00 at %d, yet the whole query ranks it lower", i)
	}
}

// TestMentionsID: a word with a digit is an id the caller has, except a
// count before its noun and a year.
func TestMentionsID(t *testing.T) {
	for q, want := range map[string]bool{
		"credits of movie 949":             true,
		"close issue #42 in the repo":      true,
		"download release v1.2.3":          true,
		"the top 10 tracks of adele":       false,
		"5 albums by the artist":           false,
		"films of 1999 by the director":    false,
		"the director of the film heat":    false,
		"scale to 3":                       true,
		"the 2 most popular movies of him": false,
	} {
		if got := mentionsID(q); got != want {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
}

// TestNamedQueryGetsASearch: a query that names something gets a search
// within its first five, where the name becomes an id: the search among a
// consumer's producers even when a list that also produces the id ranks
// above it, else the connector's only search when no search matched the
// query's words. A search that itself needs an id (find by an external id)
// is never that search, and a query that names nothing (or only the API's
// own common words, capitalised) gets none.
func TestNamedQueryGetsASearch(t *testing.T) {
	search := op("search", "Search for item", "GET", "/search", "search", "search", "Get catalog information about albums, artists and tracks that match a keyword.", "q")
	search.Input.Params[0].Required = true
	releases := op("new_releases", "Get new releases", "GET", "/browse/new-releases", "list", "new_release", "A list of new album releases featured in Spotify.")
	album := op("get_album", "Get album", "GET", "/albums/{id}", "get", "album", "Catalog information for a single album on Spotify.", "id")
	album.Input.Params[0].In, album.Input.Params[0].Required = "path", true
	album.Needs = []air.Need{{Argument: "id", From: []air.Producer{
		{Operation: search.ID, Field: "albums.items[].id", Basis: air.ProducerField},
		{Operation: releases.ID, Field: "albums.items[].id", Basis: air.ProducerField}}}}
	play := op("start_playback", "Start playback", "PUT", "/me/player/play", "update", "play", "Start a new context or resume current playback on the user's active device.", "uris")
	find := op("find_by_id", "Find by external id", "GET", "/find/{external_id}", "search", "find", "Find albums by an external id.", "external_id")
	find.ID = "svc.find.lookup"
	find.Input.Params[0].In, find.Input.Params[0].Required = "path", true
	ix := indexOf(t, "music", search, releases, album, play, find)
	for _, c := range []struct {
		q      string
		search bool
	}{
		{"What new album releases has Adele released", true},
		{"Play the song Hello by Adele", true},
		{"play the song hello", false},
		{"play the song hello on Spotify", false}, // the API's own word names nothing
	} {
		rs := ix.Search(c.q, Options{Limit: 5})
		got := names(rs)
		if slices.Contains(got, "music__find_by_id") && slices.Index(got, "music__find_by_id") < slices.Index(got, "music__search") {
			t.Errorf("%q: the find by id placed as the search: %v", c.q, got)
		}
		if has := slices.Contains(got, "music__search"); has != c.search {
			t.Errorf("%q: search returned %v, want %v: %v", c.q, has, c.search, got)
		}
	}
	if rs := ix.Search("Play the song Hello by Adele", Options{Limit: 5}); len(rs) < 2 || rs[1].Entry.Name != "music__search" {
		t.Errorf("the only search is not placed after the best result: %v", names(rs))
	}
}

// TestUnmatchedQueryListsMostUsedFindersFirst: an answer whose words match
// nothing starts with the finders most other operations take ids from
// (the person search feeds two, the collection search none), and for a
// query that names something the searches come before the lists.
func TestUnmatchedQueryListsMostUsedFindersFirst(t *testing.T) {
	collection := op("search_collection", "Search collections", "GET", "/search/collection", "search", "collection", "Search for collections by their name.", "query")
	person := op("search_person", "Search people", "GET", "/search/person", "search", "person", "Search for people by their name.", "query")
	popular := op("popular", "Popular people", "GET", "/person/popular", "list", "popular", "People popular today.")
	var ops []air.Operation
	for _, tool := range []string{"person_credits", "person_images"} {
		o := op(tool, tool, "GET", "/person/{person_id}/"+tool, "get", tool, "Of a person.", "person_id")
		o.Input.Params[0].In, o.Input.Params[0].Required = "path", true
		o.Needs = []air.Need{{Argument: "person_id", From: []air.Producer{{Operation: person.ID, Field: "results[].id", Basis: air.ProducerField}}}}
		ops = append(ops, o)
	}
	ix := indexOf(t, "tmdb", append(ops, collection, person, popular)...)
	for q, want := range map[string]string{
		"What is Zorblax's filmography?": "tmdb__search_person tmdb__search_collection tmdb__popular",
		"zorblax filmography":            "tmdb__search_person tmdb__popular tmdb__search_collection",
	} {
		rs := ix.Search(q, Options{Limit: 3})
		if got := strings.Join(names(rs), " "); got != want {
			t.Errorf("%q: got %s, want %s", q, got, want)
		}
		for _, r := range rs {
			if !r.Weak {
				t.Errorf("%q: %s not marked weak", q, r.Entry.Name)
			}
		}
	}
}

// TestAgentNameGetsThePeopleSearch: a name that made, did or owns what
// the query asks about (after "by", in the possessive, or qualifying a
// plural noun) is looked up by the search of people, though the search
// of the things ranks first; a name that is one of the things is not.
func TestAgentNameGetsThePeopleSearch(t *testing.T) {
	movies := op("search_movie", "Search movies", "GET", "/search/movie", "search", "movie", "Search for movies by their original, translated and alternative titles.", "query")
	people := op("search_person", "Search people", "GET", "/search/person", "search", "person", "Search for people by their name and also known as names.", "query")
	keywords := op("search_keyword", "Search keywords", "GET", "/search/keyword", "search", "keyword", "Search for keywords by their name.", "query")
	credits := op("person_movie_credits", "Get person movie credits", "GET", "/person/{person_id}/movie_credits", "get", "movie_credit", "The movie credits of a person.", "person_id")
	credits.Input.Params[0].In, credits.Input.Params[0].Required = "path", true
	ix := indexOf(t, "tmdb", movies, people, keywords, credits)
	for _, c := range []struct {
		q      string
		people bool
	}{
		{"Search for Christopher Nolan movies", true},
		{"What are Tarantino's best-rated crime movies?", true},
		{"movies directed by Christopher Nolan", true},
		{"Find the movie Inception", false},
		{"Search movies called Heat and Ronin", false},
	} {
		lower := strings.ToLower(c.q)
		if got := ix.agentName(c.q, lower); got != c.people {
			t.Errorf("agentName(%q) = %v, want %v", c.q, got, c.people)
		}
		got := names(ix.Search(c.q, Options{Limit: 3}))
		if c.people && !slices.Contains(got, "tmdb__search_person") {
			t.Errorf("%q: no search of people in %v", c.q, got)
		}
	}
	// Without a search of people (or with two), nothing is added.
	ix = indexOf(t, "tmdb", movies, keywords)
	if got := names(ix.Search("Search for Christopher Nolan movies", Options{Limit: 5})); len(got) != 2 {
		t.Errorf("a search added where the connector has no search of people: %v", got)
	}
}

// TestWhoQuestionLooksUpTheThing: a question for a person that names
// something holds the connector's most used searches other than the
// search of people within its first five, since the name is what the
// person is related to; "Who is <Name>?" asks about the person named and
// keeps the search of people.
func TestWhoQuestionLooksUpTheThing(t *testing.T) {
	movies := op("search_movie", "Search movies", "GET", "/search/movie", "search", "movie", "Search for movies by their title.", "query")
	tv := op("search_tv", "Search TV shows", "GET", "/search/tv", "search", "tv", "Search for TV shows by their name.", "query")
	people := op("search_person", "Search people", "GET", "/search/person", "search", "person", "Search for people by their name.", "query")
	keywords := op("search_keyword", "Search keywords", "GET", "/search/keyword", "search", "keyword", "Search for keywords by their name.", "query")
	person := op("person_details", "Get person details", "GET", "/person/{person_id}", "get", "person", "The primary details of a person: name, birthday, biography.", "person_id")
	person.Input.Params[0].In, person.Input.Params[0].Required = "path", true
	ops := []air.Operation{movies, tv, people, keywords, person}
	// Movie and TV ids feed two operations each, keyword ids one: the
	// searches most used are the movie and TV searches.
	for _, c := range []struct{ id, search, arg string }{
		{"movie_credits", "search_movie", "movie_id"}, {"movie_images", "search_movie", "movie_id"},
		{"tv_credits", "search_tv", "series_id"}, {"tv_images", "search_tv", "series_id"},
		{"keyword_movies", "search_keyword", "keyword_id"},
	} {
		o := op(c.id, "Get "+strings.ReplaceAll(c.id, "_", " "), "GET", "/"+c.id+"/{"+c.arg+"}", "get", c.id, "The "+c.id+".", c.arg)
		o.Input.Params[0].In, o.Input.Params[0].Required = "path", true
		o.Needs = []air.Need{{Argument: c.arg, From: []air.Producer{{Operation: "tmdb." + c.search, Field: "results[].id", Basis: air.ProducerField}}}}
		ops = append(ops, o)
	}
	for i := range ops {
		ops[i].ID = "tmdb." + ops[i].CanonicalName
	}
	ix := indexOf(t, "tmdb", ops...)
	got := names(ix.Search("Who directed Oppenheimer?", Options{Limit: 5}))
	for _, want := range []string{"tmdb__search_movie", "tmdb__search_tv"} {
		if !slices.Contains(got, want) {
			t.Errorf("who question: %s not in %v", want, got)
		}
	}
	if slices.Contains(got, "tmdb__search_keyword") {
		t.Errorf("who question: more than the two most used searches placed: %v", got)
	}
	hide := func(e *Entry) bool { return e.Name != "tmdb__search_movie" }
	if got := names(ix.Search("Who directed Oppenheimer?", Options{Limit: 5, Allow: hide})); slices.Contains(got, "tmdb__search_movie") {
		t.Errorf("who question: a search the grant hides was placed: %v", got)
	}
	if got := names(ix.Search("Who is Tom Hanks?", Options{Limit: 5})); !slices.Contains(got, "tmdb__search_person") {
		t.Errorf("who is <name>: no search of people in %v", got)
	}
	for q, want := range map[string]bool{"Who directed Oppenheimer?": true, "who is the director of Titanic": true,
		"Who is Tom Hanks?": false, "What did Nolan direct?": false, "whom did Adele marry": true} {
		if asksWho(q) != want {
			t.Errorf("asksWho(%q) = %v", q, !want)
		}
	}
}

// TestKeyNamesTheKeyedResource: a query holding a tracker's key
// (PROJ-123) speaks of the resource whose key most operations take in
// their paths, though it never says its word; a connector whose paths
// take no key, or a word that only looks like one, gains nothing.
func TestKeyNamesTheKeyedResource(t *testing.T) {
	keyed := func(o air.Operation, key string) air.Operation {
		o.Input.Params = append(o.Input.Params, air.Param{Name: key, Key: key, In: air.InPath, Required: true})
		return o
	}
	ops := []air.Operation{
		keyed(op("get_issue", "Get issue", "GET", "/issue/{issueIdOrKey}", "get", "issue", "Returns the details for an issue."), "issueIdOrKey"),
		keyed(op("edit_issue", "Edit issue", "PUT", "/issue/{issueIdOrKey}", "update", "issue", "Edits an issue."), "issueIdOrKey"),
		keyed(op("get_comments", "Get comments", "GET", "/issue/{issueIdOrKey}/comment", "list", "comment", "Returns all comments for an issue."), "issueIdOrKey"),
		keyed(op("get_project", "Get project", "GET", "/project/{projectIdOrKey}", "get", "project", "Returns the project details."), "projectIdOrKey"),
		op("get_status", "Get status", "GET", "/status/{idOrName}", "get", "status", "Returns a status: its name, category and colour."),
		op("get_statuses", "Get all statuses", "GET", "/status", "list", "status", "Returns a list of all statuses: their names and categories."),
	}
	ix := indexOf(t, "jira", ops...)
	if !slices.Equal(ix.keyTerms, []string{stem("issue")}) {
		t.Fatalf("keyTerms %v", ix.keyTerms)
	}
	if got := names(ix.Search("Show me details about PROJ-123", Options{Limit: 3})); len(got) == 0 || got[0] != "jira__get_issue" {
		t.Errorf("a key: %v, want the issue first", got)
	}
	if got := names(ix.Search("Show me details about PROJ", Options{Limit: 3})); len(got) > 0 && got[0] == "jira__get_issue" {
		t.Errorf("no key, yet the issue first: %v", got)
	}
	for w, want := range map[string]bool{"PROJ-123": true, "eng-42": true, "a-1": false, "v1-2": false, "PROJ-": false, "123-45": false, "re-open": false} {
		if isKey(w) != want {
			t.Errorf("isKey(%q) = %v", w, !want)
		}
	}
	if ix := indexOf(t, "svc", fixture()...); len(ix.keyTerms) != 0 {
		t.Errorf("keyTerms of a connector whose paths take no key: %v", ix.keyTerms)
	}
}

// TestUnstatedNameInputRanksLower: of two operations the words match
// alike, the one taking a name the query never speaks of (an environment)
// ranks lower; names nearly every operation takes (owner, repo) and
// identifiers, which come from producers, are never held against one.
func TestUnstatedNameInputRanksLower(t *testing.T) {
	path := func(o air.Operation, names ...string) air.Operation {
		o.Input.Params = nil
		for _, n := range names {
			o.Input.Params = append(o.Input.Params, air.Param{Name: n, Key: n, In: air.InPath, Required: true})
		}
		return o
	}
	ops := []air.Operation{
		path(op("set_repo_secret", "Create or update a repository actions secret", "PUT", "/repos/{owner}/{repo}/actions/secrets/{secret_name}", "update", "secret", "Creates or updates a repository secret."), "owner", "repo", "secret_name"),
		path(op("set_env_secret", "Create or update an environment secret", "PUT", "/repos/{owner}/{repo}/environments/{environment_name}/secrets/{secret_name}", "update", "secret", "Creates or updates an environment secret."), "owner", "repo", "environment_name", "secret_name"),
		path(op("set_release", "Update a release", "PATCH", "/repos/{owner}/{repo}/releases/{release_id}", "update", "release", "Updates a release."), "owner", "repo", "release_id"),
		path(op("get_repo", "Get a repository", "GET", "/repos/{owner}/{repo}", "get", "repo", "Gets a repository."), "owner", "repo"),
		path(op("list_tags", "List repository tags", "GET", "/repos/{owner}/{repo}/tags", "list", "tag", "Lists tags."), "owner", "repo"),
		path(op("list_forks", "List forks", "GET", "/repos/{owner}/{repo}/forks", "list", "fork", "Lists forks."), "owner", "repo"),
	}
	// owner and repo: taken by every operation; environment_name: by one
	// of six, under commonInputShare.
	ix := indexOf(t, "gh", ops...)
	if got := names(ix.Search("Create or update secrets", Options{Limit: 2})); len(got) == 0 || got[0] != "gh__set_repo_secret" {
		t.Errorf("secrets: %v, want the repository's first", got)
	}
	if got := names(ix.Search("Create or update an environment secret", Options{Limit: 2})); len(got) == 0 || got[0] != "gh__set_env_secret" {
		t.Errorf("an environment's secret: %v, want the environment's first", got)
	}
	if got := names(ix.Search("Update a release", Options{Limit: 1})); len(got) == 0 || got[0] != "gh__set_release" {
		t.Errorf("an identifier held against an operation: %v", got)
	}
}
