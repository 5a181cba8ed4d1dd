package discover

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// op builds an operation the way the compiler lowers one: tool name,
// canonical name, title, description, effect, path and parameter keys.
func op(tool, title, method, path, action, resource, desc string, params ...string) air.Operation {
	o := air.Operation{
		ID: "svc." + resource + "." + action, CanonicalName: tool, DisplayName: title, Description: desc,
		SourceRef: air.SourceRef{Path: path, Method: method},
		Effect:    air.Effect{Kind: air.KindRead, Action: action, Resource: resource},
		MCP:       air.MCP{ToolName: tool},
	}
	if method != "GET" {
		o.Effect.Kind = air.KindMutation
		o.Confirmation.Required = method == "DELETE"
	}
	for _, p := range params {
		o.Input.Params = append(o.Input.Params, air.Param{Name: p, Key: p, In: "query"})
	}
	return o
}

func fixture() []air.Operation {
	return []air.Operation{
		op("pulls_list", "List pull requests", "GET", "/repos/{owner}/{repo}/pulls", "list", "pull", "Lists pull requests in a repository.", "state", "per_page"),
		op("pulls_create", "Create a pull request", "POST", "/repos/{owner}/{repo}/pulls", "create", "pull", "Opens a pull request."),
		op("pulls_merge", "Merge a pull request", "PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge", "replace", "merge", "Merges a pull request into the base branch."),
		op("issues_list_labels", "List labels for an issue", "GET", "/repos/{owner}/{repo}/issues/{issue_number}/labels", "list", "label", "Lists all labels for an issue."),
		op("issues_remove_label", "Remove a label from an issue", "DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", "delete", "label", "Removes the label from the issue."),
		op("issues_create", "Create an issue", "POST", "/repos/{owner}/{repo}/issues", "create", "issue", "Any user with pull access can create an issue."),
		op("repos_get", "Get a repository", "GET", "/repos/{owner}/{repo}", "get", "repo", "The parent and source objects are present when the repository is a fork."),
		op("repos_delete", "Delete a repository", "DELETE", "/repos/{owner}/{repo}", "delete", "repo", "Deleting a repository requires admin access."),
		op("users_get_authenticated", "Get the authenticated user", "GET", "/user", "get", "user", "Gets the signed-in user's profile."),
	}
}

func buildIndex(t testing.TB, connectors ...string) *Index {
	t.Helper()
	ops := fixture()
	b := NewBuilder()
	for _, c := range connectors {
		for i := range ops {
			if err := b.Add(c, &ops[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b.Build()
}

func names(rs []Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Entry.Name)
	}
	return out
}

func TestSearchRanksIntent(t *testing.T) {
	ix := buildIndex(t, "gh")
	for _, c := range []struct{ q, want string }{
		{"merge a pull request", "gh__pulls_merge"},
		{"open a new PR", "gh__pulls_create"},
		{"show me the pull requests", "gh__pulls_list"},
		{"remove a label", "gh__issues_remove_label"},
		{"file a new issue", "gh__issues_create"},
		{"get rid of this repository", "gh__repos_delete"},
		{"who am I logged in as", "gh__users_get_authenticated"},
		{"fetch the repo", "gh__repos_get"},
		{"tell me the repository", "gh__repos_get"}, // "me" after tell is who is told, not whose
	} {
		rs := ix.Search(c.q, Options{})
		if len(rs) == 0 || rs[0].Entry.Name != c.want {
			t.Errorf("%q: got %v, want %s first", c.q, names(rs), c.want)
		}
	}
}

func TestSearchFilters(t *testing.T) {
	ix := buildIndex(t, "a", "b")
	rs := ix.Search("pull request", Options{Connector: "b"})
	if len(rs) == 0 {
		t.Fatal("no results")
	}
	for _, r := range rs {
		if r.Entry.Connector != "b" {
			t.Errorf("connector filter let %s through", r.Entry.Name)
		}
	}
	calls := 0
	rs = ix.Search("pull request", Options{Allow: func(e *Entry) bool { calls++; return e.Effect == air.ClassRead }})
	for _, r := range rs {
		if r.Entry.Effect != air.ClassRead {
			t.Errorf("Allow filter let %s (%s) through", r.Entry.Name, r.Entry.Effect)
		}
	}
	if len(rs) != 2 || calls == 0 || calls >= ix.Len() {
		t.Errorf("got %v after %d Allow calls; want the two list tools, Allow called only for matches", names(rs), calls)
	}
	if rs := ix.Search("pull request", Options{Allow: func(*Entry) bool { return false }}); len(rs) != 0 {
		t.Errorf("deny-all grant returned %v", names(rs))
	}
}

func TestSearchLimits(t *testing.T) {
	b := NewBuilder()
	ops := make([]air.Operation, 120)
	for i := range ops {
		ops[i] = op(fmt.Sprintf("widget_%03d", i), "Get a widget", "GET", "/widgets/{id}", "get", "widget", "Gets a widget.")
		if err := b.Add("w", &ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	ix := b.Build()
	for _, c := range []struct{ limit, want int }{{0, DefaultLimit}, {-3, DefaultLimit}, {7, 7}, {50, 50}, {500, MaxLimit}} {
		if got := len(ix.Search("widget", Options{Limit: c.limit})); got != c.want {
			t.Errorf("limit %d: %d results, want %d", c.limit, got, c.want)
		}
	}
	// Equal scores fall back to name order.
	rs := ix.Search("widget", Options{Limit: 3})
	if got := strings.Join(names(rs), " "); got != "w__widget_000 w__widget_001 w__widget_002" {
		t.Errorf("tie order: %s", got)
	}
	// No searchable word: the allowed entries in name order.
	if got := names(ix.Search("  the of ", Options{Limit: 2})); strings.Join(got, " ") != "w__widget_000 w__widget_001" {
		t.Errorf("empty query: %v", got)
	}
	// Words that match nothing: never empty, every result marked weak.
	got := ix.Search("nothing matches zzqx", Options{})
	if len(got) != DefaultLimit {
		t.Errorf("unmatched query: %v", names(got))
	}
	for _, r := range got {
		if !r.Weak {
			t.Errorf("unmatched query: %s not weak", r.Entry.Name)
		}
	}
	if rs := ix.Search("widget", Options{Limit: 3}); rs[0].Weak {
		t.Errorf("a full match is weak")
	}
}

// TestSearchDeterministic: the order operations are added in and repeated
// searches do not change the answer.
func TestSearchDeterministic(t *testing.T) {
	ops := fixture()
	fwd, rev := NewBuilder(), NewBuilder()
	for i := range ops {
		fwd.Add("gh", &ops[i])
		rev.Add("gh", &ops[len(ops)-1-i])
	}
	a, b := fwd.Build(), rev.Build()
	for _, q := range []string{"pull request", "issue label", "repository", "list", "get"} {
		want := fmt.Sprint(names(a.Search(q, Options{Limit: 50})))
		for i := 0; i < 3; i++ {
			if got := fmt.Sprint(names(b.Search(q, Options{Limit: 50}))); got != want {
				t.Fatalf("%q: %s, then %s", q, want, got)
			}
		}
	}
}

func TestBuilderRefusesDuplicate(t *testing.T) {
	ops := fixture()
	b := NewBuilder()
	if err := b.Add("gh", &ops[0]); err != nil {
		t.Fatal(err)
	}
	if err := b.Add("gh", &ops[0]); !errors.Is(err, ErrDuplicate) {
		t.Errorf("got %v, want ErrDuplicate", err)
	}
}

// TestSearchBoundedQuery: an oversized query is cut, not refused, and costs
// at most maxQueryTerms concepts.
func TestSearchBoundedQuery(t *testing.T) {
	ix := buildIndex(t, "gh")
	q := "merge pull request " + strings.Repeat("label issue repository widget ", 10000)
	if rs := ix.Search(q, Options{}); len(rs) == 0 {
		t.Error("no results for an oversized query")
	}
	if g, _ := ix.queryGroups(new(scratch), strings.Repeat("alpha beta gamma delta ", 200)+"pull"); len(g) > maxQueryTerms {
		t.Errorf("%d groups", len(g))
	}
}

func TestEntryFields(t *testing.T) {
	ix := buildIndex(t, "gh")
	rs := ix.Search("delete a repository", Options{Limit: 1})
	if len(rs) != 1 {
		t.Fatal("no result")
	}
	e := rs[0].Entry
	if e.Name != "gh__repos_delete" || e.OperationID != "svc.repo.delete" || e.Title != "Delete a repository" ||
		e.Effect != air.ClassIrreversible || !e.ConfirmRequired || e.Connector != "gh" {
		t.Errorf("entry %+v", *e)
	}
}

// TestSearchConcurrent: searches share the index and the scratch pool
// safely and give the same answers as one at a time (run with -race).
func TestSearchConcurrent(t *testing.T) {
	ix := buildIndex(t, "a", "b", "c")
	queries := []string{"merge a pull request", "remove a label", "list", "get the authenticated user", "repository"}
	want := make([]string, len(queries))
	for i, q := range queries {
		want[i] = fmt.Sprint(names(ix.Search(q, Options{Limit: 50})))
	}
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func(g int) {
			for i := 0; i < 200; i++ {
				k := (g + i) % len(queries)
				if got := fmt.Sprint(names(ix.Search(queries[k], Options{Limit: 50}))); got != want[k] {
					done <- fmt.Errorf("%q: %s, want %s", queries[k], got, want[k])
					return
				}
			}
			done <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestSearchAfterPanickingAllow: a grant callback that panics does not
// leave state behind that changes later searches.
func TestSearchAfterPanickingAllow(t *testing.T) {
	ix := buildIndex(t, "gh")
	want := fmt.Sprint(names(ix.Search("pull request", Options{Limit: 50})))
	for i := 0; i < 20; i++ {
		func() {
			defer func() { recover() }()
			ix.Search("merge label issue", Options{Allow: func(*Entry) bool { panic("grant") }})
		}()
		if got := fmt.Sprint(names(ix.Search("pull request", Options{Limit: 50}))); got != want {
			t.Fatalf("after a panicking Allow: %s, want %s", got, want)
		}
	}
}

// TestAddBoundsText: a huge description is read only up to its bound and
// still indexes its opening words.
func TestAddBoundsText(t *testing.T) {
	o := op("huge", "Get a huge thing", "GET", "/huge", "get", "huge", "zebra "+strings.Repeat("lorem ipsum ", 1<<20))
	b := NewBuilder()
	if err := b.Add("x", &o); err != nil {
		t.Fatal(err)
	}
	ix := b.Build()
	if rs := ix.Search("zebra", Options{}); len(rs) != 1 {
		t.Errorf("got %v", names(rs))
	}
	if n := len(ix.postings); n > 20 {
		t.Errorf("%d terms", n)
	}
}

// TestSearchMatchesIntentExamples: a manifest's example requests
// (skill.intentExamples) are the connector author's words for an
// operation; a request in those words finds it even when no name, title or
// description uses them.
func TestSearchMatchesIntentExamples(t *testing.T) {
	ops := fixture()
	const q = "cordon the main line so nobody lands changes"
	build := func(examples ...string) *Index {
		b := NewBuilder()
		for i := range ops {
			o := ops[i]
			if o.MCP.ToolName == "pulls_merge" {
				continue
			}
			if o.MCP.ToolName == "repos_get" {
				o.Skill.IntentExamples = examples
			}
			if err := b.Add("gh", &o); err != nil {
				t.Fatal(err)
			}
		}
		return b.Build()
	}
	if rs := build().Search(q, Options{}); len(rs) > 0 && rs[0].Entry.Name == "gh__repos_get" && !rs[0].Weak {
		t.Fatalf("without intent examples %q already finds repos_get strongly: the test proves nothing", q)
	}
	rs := build("cordon the main line", "stop changes landing on the main line").Search(q, Options{})
	if len(rs) == 0 || rs[0].Entry.Name != "gh__repos_get" {
		t.Fatalf("%q: got %v, want gh__repos_get first (its intent examples say so)", q, names(rs))
	}
}
