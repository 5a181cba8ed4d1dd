package discover

import (
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

func TestRequestIntent(t *testing.T) {
	ix := buildIndex(t, "gh")
	term := func(w string) uint32 {
		ts := tokenize(nil, w)
		id, ok := ix.terms[ts[len(ts)-1]]
		if !ok {
			t.Fatalf("%s not indexed", w)
		}
		return id
	}
	for _, c := range []struct {
		q     string
		class uint8
		verb  string
		head  string
	}{
		{"Create an issue for the bug", actCreate, "", "issue"},
		{"please show me the pull requests of octocat", actList, "", "requests"},
		{"list my repos", actList, "", "repos"},
		{"fetch the repository", actGet, "", "repository"},
		{"List labels", actList, "", "labels"},
		{"Create or update labels", actCreate, "", "labels"},
		{"merge a pull request", actNone, "", "merge"}, // no entry's action is merge: the phrase starts at once
		{"replace a pull request", actUpdate, "", "request"},
		{"labels for an issue", actNone, "", "labels"},
		{"Delete the label named bug", actDelete, "", "label"},
		{"remove label 42", actDelete, "", "label"},
		{"", actNone, "", ""},
		// Questions read, whatever verb follows; a polite opener is an imperative.
		{"What labels has octocat created?", actList, "", "labels"},
		{"did my issue get a label", actGet, "", "issue"},
		{"which issue is the bug in", actGet, "", "issue"},
		{"can you create an issue", actCreate, "", "issue"},
		{"how do I delete a label", actDelete, "", "label"},
		{"how to create labels", actCreate, "", "labels"},
		// A light noun's object is the phrase after it; "output" opening a request reads.
		{"Output detailed information about the given issue.", actGet, "", "issue"},
		{"show the details of a label", actGet, "", "label"},
		{"list information about labels", actList, "", "labels"},
		{"Output labels", actList, "", "labels"},
		{"labels for output", actNone, "", "labels"},
	} {
		in := ix.requestIntent(c.q)
		want := intent{class: c.class, verb: noTerm, head: noTerm}
		if c.verb != "" {
			want.verb = term(c.verb)
		}
		if c.head != "" {
			want.head = term(c.head)
		}
		if in != want {
			t.Errorf("%q: got %+v, want %+v", c.q, in, want)
		}
	}
}

// TestShapeRanksActionAndResource: among entries that match a request's
// words alike, the one whose action the first verb names and whose
// resource is its object ranks first; later verbs count less; a deprecated
// operation ranks below its replacement.
func TestShapeRanksActionAndResource(t *testing.T) {
	ops := []air.Operation{
		op("roles_list", "List roles for pods", "GET", "/roles", "list", "role", "Lists roles that get pods."),
		op("roles_create", "Create roles for pods", "POST", "/roles", "create", "role", "Creates roles that get pods."),
		op("pods_create", "Create pods for roles", "POST", "/pods", "create", "pod", "Creates pods that get roles."),
		op("pods_watch", "Watch pods", "GET", "/watch/pods", "list", "pod", "watch pods. deprecated: use the watch parameter of the list operation instead."),
		op("pods_list", "List pods", "GET", "/pods", "list", "pod", "list pods."),
	}
	b := NewBuilder()
	for i := range ops {
		if err := b.Add("k", &ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	ix := b.Build()
	for _, c := range []struct{ q, want string }{
		{"create a role that allows get on pods", "k__roles_create"},
		{"create pods for roles", "k__pods_create"},
		{"list pods", "k__pods_list"},
		{"get the pods", "k__pods_list"},
	} {
		if rs := ix.Search(c.q, Options{}); len(rs) == 0 || rs[0].Entry.Name != c.want {
			t.Errorf("%q: got %v, want %s first", c.q, names(rs), c.want)
		}
	}
}

// TestBodyFieldDescriptionsIndexed: a word only a body field's
// description carries finds the operation.
func TestBodyFieldDescriptionsIndexed(t *testing.T) {
	o := op("repos_update", "Update a repository", "PATCH", "/repos/{owner}/{repo}", "update", "repo", "Updates a repository.")
	o.Input.Body = &air.Body{Fields: []air.BodyField{{Name: "archived", Key: "archived"}}, Schema: &air.Schema{
		Properties: map[string]*air.Schema{"archived": {Description: "Whether to archive this repository."}}}}
	other := op("repos_get", "Get a repository", "GET", "/repos/{owner}/{repo}", "get", "repo", "Gets a repository.")
	b := NewBuilder()
	for _, x := range []*air.Operation{&o, &other} {
		if err := b.Add("gh", x); err != nil {
			t.Fatal(err)
		}
	}
	if rs := b.Build().Search("archive a repository", Options{}); len(rs) == 0 || rs[0].Entry.Name != "gh__repos_update" {
		t.Errorf("got %v", names(rs))
	}
}
