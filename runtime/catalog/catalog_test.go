package catalog_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/catalog"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/grant"
	"github.com/anvil-dev/anvil/runtime/identity"
)

// The committed github-mini workspace the gateway tests serve: 12 tools,
// 5 of them reads.
const workspace = "../serve/testdata/workspace"

var (
	local  = &identity.Principal{Sub: "local", Unrestricted: true}
	reader = &identity.Principal{Sub: "ada", Grants: grant.List{{Connector: "github", Operations: []string{"*"}, Mode: "read"}}}
	issues = &identity.Principal{Sub: "bob", Grants: grant.List{{Connector: "github", Operations: []string{"issues.*"}, Mode: "read"}}}
)

func load(t *testing.T) *fleet.Fleet {
	t.Helper()
	f, err := fleet.Load(workspace)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// names decodes a catalogue answer's tool names.
func names(t *testing.T, b []byte) []string {
	t.Helper()
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	out := []string{}
	for _, tool := range r.Tools {
		out = append(out, tool.Name)
	}
	return out
}

// TestVisible: the local person sees every tool, a grant its own, no
// caller nothing.
func TestVisible(t *testing.T) {
	f := load(t)
	list, create := f.Tool("github__github_list_issue"), f.Tool("github__github_create_issue")
	for _, c := range []struct {
		p          *identity.Principal
		list, make bool
	}{{local, true, true}, {reader, true, false}, {nil, false, false}, {&identity.Principal{Sub: "none"}, false, false}} {
		if catalog.Visible(c.p, list) != c.list || catalog.Visible(c.p, create) != c.make {
			t.Errorf("principal %+v: list %v, create %v", c.p, catalog.Visible(c.p, list), catalog.Visible(c.p, create))
		}
	}
}

// TestList: every tool the grant shows, in name order, of one connector
// when asked; an unserved connector is a validation_error.
func TestList(t *testing.T) {
	f := load(t)
	b, e := catalog.List(f, local, "")
	if e != nil || len(names(t, b)) != 12 {
		t.Fatalf("local: %v %s", e, b)
	}
	b, _ = catalog.List(f, reader, "github")
	got := names(t, b)
	if strings.Join(got, ",") != "github__github_get_issue,github__github_get_release,github__github_list_comment,github__github_list_issue,github__github_list_pull" {
		t.Errorf("reader lists %v", got)
	}
	if _, e := catalog.List(f, local, "gitlab"); e == nil || e.Code != envelope.ValidationError || !strings.Contains(e.Message, `"gitlab"`) {
		t.Errorf("unserved connector: %+v", e)
	}
}

// TestSearch: ranked results among the visible tools only, the limit
// bounded, the connector checked.
func TestSearch(t *testing.T) {
	f := load(t)
	b, e := catalog.Search(f, local, "create an issue", "", nil)
	if e != nil {
		t.Fatal(e)
	}
	if got := names(t, b); len(got) == 0 || got[0] != "github__github_create_issue" {
		t.Errorf("local search: %v", got)
	}
	b, _ = catalog.Search(f, issues, "issue", "", nil)
	for _, n := range names(t, b) {
		if n != "github__github_get_issue" && n != "github__github_list_issue" {
			t.Errorf("a search for an issues.* reader found %s", n)
		}
	}
	one := 1
	if b, _ := catalog.Search(f, local, "issue", "github", &one); len(names(t, b)) != 1 {
		t.Errorf("limit 1: %s", b)
	}
	for _, n := range []int{0, 51} {
		if _, e := catalog.Search(f, local, "issue", "", &n); e == nil || e.Code != envelope.ValidationError {
			t.Errorf("limit %d: %+v", n, e)
		}
	}
	if _, e := catalog.Search(f, local, "issue", "gitlab", nil); e == nil || !strings.Contains(e.Message, "served: github") {
		t.Errorf("unserved connector: %+v", e)
	}
}

// TestUnknownTool: the refusal names the visible tools the caller likely
// meant, then the hint; with nothing to suggest (no tool the caller may
// see) it is the refusal given.
func TestUnknownTool(t *testing.T) {
	f := load(t)
	base := &envelope.Error{Code: envelope.NotFound, Message: "No such tool."}
	e := catalog.UnknownTool(f, local, "github_list_issue", base, "GET /tools lists the served tools.")
	if e.Code != envelope.NotFound || !strings.HasPrefix(e.Message, "No tool named github_list_issue is served by this gateway. Did you mean github__github_list_issue") ||
		!strings.HasSuffix(e.Message, "? GET /tools lists the served tools.") {
		t.Errorf("suggestion: %+v", e)
	}
	if base.Message != "No such tool." {
		t.Error("the given refusal was changed")
	}
	if e := catalog.UnknownTool(f, reader, "github_create_issue", base, "hint"); strings.Contains(e.Message, "github__github_create_issue") {
		t.Errorf("a hidden tool was suggested: %s", e.Message)
	}
	if e := catalog.UnknownTool(f, &identity.Principal{Sub: "nobody"}, "github_list_issue", base, "hint"); e != base {
		t.Errorf("nothing to suggest: %+v", e)
	}
}

// TestDescribe: anvil_describe's answer is each tool's full listing plus
// its producer links in search's shape, filtered by the caller's grant
// like search: a producer the caller may not call is not shown, and an
// argument left with none is dropped; hidden and unknown names are one
// not_found naming them.
func TestDescribe(t *testing.T) {
	f := load(t)
	const get = "github__github_get_issue"
	only := &identity.Principal{Sub: "cy", Grants: grant.List{{Connector: "github", Operations: []string{"issues.get"}, Mode: "read"}}}
	for _, c := range []struct {
		p     *identity.Principal
		needs string
	}{
		{local, `[{"argument":"issue_number","from":["github__github_list_issue","github__github_create_issue"]}]`},
		{reader, `[{"argument":"issue_number","from":["github__github_list_issue"]}]`},
		{only, ``},
	} {
		b, e := catalog.Describe(f, c.p, []string{get})
		if e != nil {
			t.Fatalf("%s: %v", c.p.Sub, e)
		}
		listing := string(f.Tool(get).Listing())
		want := `{"tools":[` + listing + `]}`
		if c.needs != "" {
			want = `{"tools":[` + listing[:len(listing)-1] + `,"needs":` + c.needs + `}]}`
		}
		if string(b) != want {
			t.Errorf("%s: describe\n%s\nwant\n%s", c.p.Sub, b, want)
		}
		// Search shows the same links to the same caller.
		s, _ := catalog.Search(f, c.p, "get an issue", "", nil)
		if c.needs != "" && !strings.Contains(string(s), `"needs":`+c.needs) {
			t.Errorf("%s: search shows other links than describe: %s", c.p.Sub, s)
		}
	}
	b, e := catalog.Describe(f, local, []string{get, "github__github_list_issue"})
	if e != nil || strings.Join(names(t, b), ",") != get+",github__github_list_issue" {
		t.Errorf("two names: %v %s", e, b)
	}
	if _, e := catalog.Describe(f, reader, []string{get, "github__github_create_issue", "nope"}); e == nil || e.Code != envelope.NotFound ||
		!strings.Contains(e.Message, "github__github_create_issue, nope") {
		t.Errorf("hidden and unknown: %v", e)
	}
}
