package lower

import (
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

func TestSingularize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// ies → y
		{"entries", "entry"}, {"repositories", "repository"}, {"policies", "policy"},
		// caches, niches and similar lose only the s
		{"caches", "cache"}, {"niches", "niche"}, {"webcaches", "webcache"}, {"avalanches", "avalanche"},
		// (ch|sh|x|zz|ss)es lose es
		{"branches", "branch"}, {"pushes", "push"}, {"boxes", "box"}, {"buzzes", "buzz"}, {"classes", "class"}, {"addresses", "address"},
		// uses loses es
		{"statuses", "status"}, {"buses", "bus"},
		// other ses loses the final s
		{"releases", "release"}, {"licenses", "license"}, {"databases", "database"}, {"responses", "response"},
		// a final s is dropped unless ss or us
		{"issues", "issue"}, {"comments", "comment"}, {"pulls", "pull"}, {"tags", "tag"},
		{"status", "status"}, {"access", "access"}, {"campus", "campus"},
		// nothing to do
		{"issue", "issue"}, {"data", "data"}, {"", ""}, {"s", "s"},
		// case of the stem is kept
		{"Releases", "Release"}, {"ENTRIES", "ENTRy"},
	} {
		if got := Singularize(c.in); got != c.want {
			t.Errorf("Singularize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestInputKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"owner", "owner"}, {"issue_number", "issue_number"}, {"Page", "Page"}, {"_x", "_x"},
		{"Idempotency-Key", "idempotency_key"}, {"X-GitHub-Api-Version", "x_git_hub_api_version"},
		{"per-page", "per_page"}, {"$filter", "filter"}, {"2fa", "_2fa"}, {"$", "param"}, {"a.b", "a_b"},
	} {
		if got := InputKey(c.in); got != c.want {
			t.Errorf("InputKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDeriveNames(t *testing.T) {
	for _, c := range []struct {
		method, path, opID string
		id, canonical, cli string
		weak               bool
	}{
		{"GET", "/repos/{owner}/{repo}/issues", "listIssues", "s.issues.list", "list_issues", "s issues list", false},
		{"GET", "/repos/{owner}/{repo}/issues/{n}", "getIssue", "s.issues.get", "get_issue", "s issues get", false},
		{"HEAD", "/things/{id}", "headThing", "s.things.get", "head_thing", "s things get", false},
		{"POST", "/repos/{owner}/{repo}/issues", "", "s.issues.create", "create_issue", "s issues create", true},
		{"POST", "/items/{id}", "updateItem", "s.items.update", "update_item", "s items update", false},
		{"POST", "/items/{id}", "removeItem", "s.items.delete", "remove_item", "s items delete", false},
		{"PUT", "/items/{id}", "putItem", "s.items.replace", "put_item", "s items replace", false},
		{"PUT", "/items/{id}", "upsertItem", "s.items.upsert", "upsert_item", "s items upsert", false},
		{"PATCH", "/items/{id}", "", "s.items.update", "update_item", "s items update", true},
		{"PATCH", "/items/{id}", "upsertItem", "s.items.upsert", "upsert_item", "s items upsert", false},
		{"DELETE", "/repos/{o}/{r}/issues/comments/{id}", "deleteIssueComment", "s.comments.delete", "delete_issue_comment", "s comments delete", false},
		{"GET", "/repos/{o}/{r}/releases/tags/{tag}", "getReleaseByTag", "s.tags.get", "get_release_by_tag", "s tags get", false},
		// format suffix and OData key
		{"GET", "/users.json", "", "s.users.list", "list_user", "s users list", true},
		{"GET", "/Customers('ALFKI')", "", "s.customers.list", "list_customer", "s Customers list", true},
		// RPC dotted
		{"POST", "/api/chat.postMessage", "", "s.chat.post_message", "post_message_chat", "s chat post_message", true},
		// bare trailing verb and CRUD segments
		{"GET", "/field/search", "", "s.field.search", "search_field", "s field search", true},
		{"POST", "/transactions/get", "", "s.transactions.get", "get_transaction", "s transactions get", true},
		{"POST", "/items/{id}/delete", "", "s.items.delete", "delete_item", "s items delete", true},
		{"POST", "/runs/{id}/cancel", "cancelRun", "s.runs.cancel", "cancel_run", "s runs cancel", false},
		// custom methods
		{"POST", "/v1/{name}:cancel", "", "s.v1.cancel", "cancel_v1", "s v1 cancel", true},
		{"POST", "/v1/images:annotate", "", "s.images.annotate", "annotate_image", "s images annotate", true},
		// read-intent words
		{"GET", "/search/issues", "search/issues-and-pull-requests", "s.issues.search", "search_issues_and_pull_requests", "s issues search", false},
		{"POST", "/reports", "exportReports", "s.reports.export", "export_reports", "s reports export", false},
		// kebab resources keep their spelling in the CLI
		{"GET", "/repos/{o}/{r}/check-runs", "checks/list", "s.check_runs.list", "checks_list", "s check-runs list", false},
		// root and weak single-word operationIds
		{"GET", "/", "", "s.root.list", "list_root", "s root list", true},
		{"GET", "/ping", "ping", "s.ping.list", "ping", "s ping list", true},
	} {
		b := deriveNames("s", c.path, c.method, c.opID, "")
		if b.ID != c.id || b.Canonical != c.canonical || b.CLI != c.cli || (b.Weak != "") != c.weak {
			t.Errorf("%s %s (%q): got id %q canonical %q cli %q weak %q; want %q %q %q weak=%v",
				c.method, c.path, c.opID, b.ID, b.Canonical, b.CLI, b.Weak, c.id, c.canonical, c.cli, c.weak)
		}
	}
}

func route(service, id, canonical, cli, path, method string) *routing {
	return &routing{ID: id, Canonical: canonical, CLI: cli, Tool: service + "_" + canonical, tokens: pathTokens(path, method)}
}

func TestCollisionsThreeWay(t *testing.T) {
	ops := []*routing{
		route("gh", "gh.issues.list", "list_issue_a", "gh issues list", "/repos/{owner}/{repo}/issues", "GET"),
		route("gh", "gh.issues.list", "list_issue_b", "gh issues list", "/issues", "GET"),
		route("gh", "gh.issues.list", "list_issue_c", "gh issues list", "/orgs/{org}/issues", "GET"),
	}
	notes := resolveCollisions("gh", ops)
	want := [][3]string{
		{"gh.issues.list_repo", "gh_list_issue_a_repo", "gh issues list_repo"},
		{"gh.issues.list", "gh_list_issue_b", "gh issues list"},
		{"gh.issues.list_org", "gh_list_issue_c_org", "gh issues list_org"},
	}
	for i, w := range want {
		got := [3]string{ops[i].ID, ops[i].Tool, ops[i].CLI}
		if got != w {
			t.Errorf("op %d = %v, want %v", i, got, w)
		}
		if ops[i].Tool != "gh_"+ops[i].Canonical {
			t.Errorf("op %d: tool %q does not follow canonical %q", i, ops[i].Tool, ops[i].Canonical)
		}
	}
	if len(notes) != 2 || notes[0].op != 0 || notes[1].op != 2 || !strings.Contains(notes[0].message, `CLI command "gh issues list" is shared by 3 operations; appended "_repo"`) {
		t.Errorf("notes = %+v", notes)
	}
}

func TestCollisionsToolAndID(t *testing.T) {
	// Same operationId on two paths: the CLI differs, the tool collides.
	ops := []*routing{
		route("s", "s.a.list", "dup", "s a list", "/v1/a", "GET"),
		route("s", "s.b.list", "dup", "s b list", "/v2/b", "GET"),
		// Same id, different CLI and tool (a name override re-homed one).
		route("s", "s.c.get", "get_c", "s c get", "/x/c/{id}", "GET"),
		route("s", "s.c.get", "get_d", "s d get", "/y/c/{id}", "GET"),
		// Identical path and method: nothing tells them apart but a number.
		route("s", "s.e.list", "e", "s e list", "/e", "GET"),
		route("s", "s.e.list", "e", "s e list", "/e", "GET"),
	}
	resolveCollisions("s", ops)
	got := []string{}
	for _, r := range ops {
		got = append(got, r.ID+" "+r.Tool+" "+r.CLI)
	}
	want := []string{
		"s.a.list_a s_dup_a s a list_a", // the shortest token wins
		"s.b.list_b s_dup_b s b list_b",
		"s.c.get_x s_get_c_x s c get_x",
		"s.c.get_y s_get_d_y s d get_y",
		"s.e.list s_e s e list",
		"s.e.list_2 s_e_2 s e list_2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCollisionsManyAlwaysUnique: whatever the input, the result is unique.
func TestCollisionsManyAlwaysUnique(t *testing.T) {
	var ops []*routing
	paths := []string{"/a", "/a", "/b/a", "/a/{x}", "/c/a", "/c/b/a", "/a", "/d/{x}/a"}
	for i := 0; i < 40; i++ {
		p := paths[i%len(paths)]
		ops = append(ops, route("s", "s.a.list", "list_a", "s a list", p, "GET"))
	}
	resolveCollisions("s", ops)
	for _, get := range []func(*routing) string{
		func(r *routing) string { return r.ID },
		func(r *routing) string { return r.Tool },
		func(r *routing) string { return r.CLI },
	} {
		seen := map[string]bool{}
		for _, r := range ops {
			if seen[get(r)] {
				t.Fatalf("duplicate name %q", get(r))
			}
			seen[get(r)] = true
		}
	}
}

// TestCollisionDiagnostics lowers a spec with colliding paths and checks
// the naming_collision_resolved and weak_operation_name infos.
func TestCollisionDiagnostics(t *testing.T) {
	spec := &openapi.Spec{Kind: openapi.KindOpenAPI30, File: "api.yaml", Title: "Shop", Version: "1",
		Operations: []*openapi.Operation{
			{Path: "/orders", Method: "GET", OperationID: "listOrders", Pos: diag.Pos{File: "api.yaml", Line: 3, Col: 5}},
			{Path: "/users/{id}/orders", Method: "GET", OperationID: "listUserOrders", Pos: diag.Pos{File: "api.yaml", Line: 9, Col: 5}},
			{Path: "/ping", Method: "GET", Pos: diag.Pos{File: "api.yaml", Line: 15, Col: 5}},
		}}
	doc, ds := Lower(spec, nil, nil)
	if doc.Service.ID != "shop" {
		t.Errorf("service id %q", doc.Service.ID)
	}
	got := text(ds)
	want := `api.yaml:9:5: info naming_collision_resolved: CLI command "shop orders list" is shared by 2 operations; appended "_id" to this operation's names (id shop.orders.list_id, tool shop_list_user_orders_id, CLI "shop orders list_id")
api.yaml:15:5: info weak_operation_name: GET /ping: the operation has no operationId; its canonical name "list_ping" comes from its path
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if doc.Operations[1].ID != "shop.orders.list_id" || doc.Diagnostics[0].OperationID != "shop.orders.list_id" {
		t.Errorf("ids: %s / %+v", doc.Operations[1].ID, doc.Diagnostics[0])
	}
}

// TestNameOverride: the manifest re-homes the canonical name, CLI and tool
// (never the id), resolves collisions again, and falls back for a missing
// resource or verb.
func TestNameOverride(t *testing.T) {
	spec := &openapi.Spec{Kind: openapi.KindOpenAPI30, File: "api.yaml", Title: "Shop", Version: "1",
		Operations: []*openapi.Operation{
			{Path: "/orders", Method: "GET", OperationID: "listOrders"},
			{Path: "/orders/{id}", Method: "GET", OperationID: "fetchOrder"},
			{Path: "/carts/{id}", Method: "GET", OperationID: "getCart"},
		}}
	man := &manifest.Manifest{File: "anvil.yaml", Service: &manifest.Service{Name: "shop"}, Operations: []*manifest.OperationEntry{
		{Key: "listOrders", Op: &manifest.Operation{Name: &manifest.Name{Resource: "purchases", Verb: "browse"}}},
		{Key: "fetch_order", Op: &manifest.Operation{Name: &manifest.Name{Verb: "show"}}},
		{Key: "shop.carts.get", Op: &manifest.Operation{Name: &manifest.Name{Resource: "orders", Verb: "show"}}},
	}}
	doc, ds := Lower(spec, man, nil)
	if ds.HasErrors() {
		t.Fatal(text(ds))
	}
	got := []string{}
	for _, op := range doc.Operations {
		got = append(got, strings.Join([]string{op.ID, op.CanonicalName, op.MCP.ToolName, op.CLI.Command, op.Effect.Resource}, " | "))
	}
	want := []string{
		"shop.orders.list | browse_purchase | shop_browse_purchase | shop purchases browse | purchase",
		// missing resource: effect.resource (order); the override collides with getCart's, so both get a token
		"shop.orders.get_orders | show_order_orders | shop_show_order_orders | shop order show_orders | order",
		"shop.carts.get_carts | show_order_carts | shop_show_order_carts | shop orders show_carts | order",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if doc.Operations[0].State != air.StateReviewRequired {
		t.Errorf("state %s", doc.Operations[0].State)
	}
}
