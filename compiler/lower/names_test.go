package lower

import (
	"os"
	"slices"
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
	return &routing{ID: id, Canonical: canonical, CLI: cli, Tool: service + "_" + canonical, route: routeKey(method, path), tokens: pathTokens(path)}
}

func TestCollisionsThreeWay(t *testing.T) {
	ops := []*routing{
		route("gh", "gh.issues.list", "list_issue_a", "gh issues list", "/repos/{owner}/{repo}/issues", "GET"),
		route("gh", "gh.issues.list", "list_issue_b", "gh issues list", "/issues", "GET"),
		route("gh", "gh.issues.list", "list_issue_c", "gh issues list", "/orgs/{org}/issues", "GET"),
	}
	notes := resolveCollisions("gh", ops)
	// Every member is qualified by its own path (/issues has no segment
	// the name lacks: the route hash); the tool names, which do not
	// collide, are left alone.
	want := [][3]string{
		{"gh.issues.list_repos", "gh_list_issue_a", "gh issues list_repos"},
		{"gh.issues.list_" + routeHash("GET /issues"), "gh_list_issue_b", "gh issues list_" + routeHash("GET /issues")},
		{"gh.issues.list_orgs", "gh_list_issue_c", "gh issues list_orgs"},
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
	if len(notes) != 6 || notes[0].op != 0 || notes[5].op != 2 || notes[0].message != `CLI command "gh issues list" is shared by 3 operations; this operation's CLI command is now "gh issues list_repos"` {
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
	h := routeHash("GET /e")
	want := []string{
		"s.a.list s_dup_v1_a s a list", // every segment the name lacks, in path order
		"s.b.list s_dup_v2_b s b list",
		"s.c.get_x s_get_c s c get", // only the id collides, so only the id changes
		"s.c.get_y s_get_d s d get",
		"s.e.list_" + h + " s_e_" + h + " s e list_" + h,
		"s.e.list_" + h + "_2 s_e_" + h + "_2 s e list_" + h + "_2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCollisionsStableUnderUnrelatedChanges: an operation's names depend
// on its own identity and on the operations sharing its name, never on
// the others or on the spec's order; an operation joining a group
// qualifies every member, so no name passes from one operation to
// another; a pinned name is kept and the others are qualified around it.
func TestCollisionsStableUnderUnrelatedChanges(t *testing.T) {
	names := func(ops []*routing) map[string]string {
		out := map[string]string{}
		for _, r := range ops {
			out[r.route] = r.ID + " " + r.Tool + " " + r.CLI
		}
		return out
	}
	base := func() []*routing {
		return []*routing{
			route("s", "s.variables.list", "list_org_variables", "s variables list", "/orgs/{org}/actions/variables", "GET"),
			route("s", "s.variables.list", "list_repo_variables", "s variables list", "/repos/{owner}/{repo}/actions/variables", "GET"),
			route("s", "s.jobs.get", "get_job", "s jobs get", "/repos/{owner}/{repo}/actions/jobs/{job_id}", "GET"),
		}
	}
	before := base()
	resolveCollisions("s", before)
	// An unrelated operation joins (another jobs.get elsewhere), and the
	// order changes: the variables keep their names.
	after := append([]*routing{route("s", "s.jobs.get", "get_runner_job", "s jobs get", "/orgs/{org}/runners/jobs/{job_id}", "GET")}, base()...)
	slices.Reverse(after)
	resolveCollisions("s", after)
	b, a := names(before), names(after)
	for _, k := range []string{"GET /orgs/{}/actions/variables", "GET /repos/{}/{}/actions/variables"} {
		if b[k] != a[k] || b[k] == "" {
			t.Errorf("%s: %q before, %q after an unrelated operation joined", k, b[k], a[k])
		}
	}
	if got := a["GET /repos/{}/{}/actions/jobs/{}"]; got != "s.jobs.get_repos_actions s_get_job s jobs get_repos_actions" {
		t.Errorf("the group joined: %q", got)
	}
	if b["GET /repos/{}/{}/actions/jobs/{}"] != "s.jobs.get s_get_job s jobs get" {
		t.Errorf("alone: %q", b["GET /repos/{}/{}/actions/jobs/{}"])
	}
	// Pinned, the first jobs.get keeps its bare id; the newcomer is qualified.
	pinned := []*routing{
		route("s", "s.jobs.get", "get_job", "s jobs get", "/repos/{owner}/{repo}/actions/jobs/{job_id}", "GET"),
		route("s", "s.jobs.get", "get_runner_job", "s jobs get", "/orgs/{org}/runners/jobs/{job_id}", "GET"),
	}
	pinned[0].fixed = [nameKinds]bool{true, true, true}
	resolveCollisions("s", pinned)
	if pinned[0].ID != "s.jobs.get" || pinned[0].CLI != "s jobs get" || pinned[1].ID != "s.jobs.get_orgs_runners" {
		t.Errorf("pinned: %q %q, newcomer %q", pinned[0].ID, pinned[0].CLI, pinned[1].ID)
	}
	// Two pins of one name: the first keeps it.
	twice := []*routing{
		route("s", "s.a.list", "x", "s a list", "/a", "GET"),
		route("s", "s.a.list", "y", "s b list", "/b/a", "GET"),
	}
	twice[0].fixed[kindID], twice[1].fixed[kindID] = true, true
	resolveCollisions("s", twice)
	if twice[0].ID != "s.a.list" || twice[1].ID != "s.a.list_b" {
		t.Errorf("two pins of one id: %q %q", twice[0].ID, twice[1].ID)
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
	h := routeHash("GET /orders")
	want := `api.yaml:3:5: info naming_collision_resolved: CLI command "shop orders list" is shared by 2 operations; this operation's CLI command is now "shop orders list_` + h + `"
api.yaml:3:5: info naming_collision_resolved: id "shop.orders.list" is shared by 2 operations; this operation's id is now "shop.orders.list_` + h + `"
api.yaml:9:5: info naming_collision_resolved: CLI command "shop orders list" is shared by 2 operations; this operation's CLI command is now "shop orders list_users"
api.yaml:9:5: info naming_collision_resolved: id "shop.orders.list" is shared by 2 operations; this operation's id is now "shop.orders.list_users"
api.yaml:15:5: info weak_operation_name: GET /ping: the operation has no operationId; its canonical name "list_ping" comes from its path
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if doc.Operations[1].ID != "shop.orders.list_users" || doc.Operations[1].MCP.ToolName != "shop_list_user_orders" || doc.Diagnostics[2].OperationID != "shop.orders.list_users" {
		t.Errorf("ids: %s / %+v", doc.Operations[1].ID, doc.Diagnostics[2])
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
		// missing resource: effect.resource (order); the override's canonical
		// name collides with getCart's, so both canonical names (and tools)
		// are qualified; the ids and CLI commands do not collide
		"shop.orders.get | show_order_" + routeHash("GET /orders/{}") + " | shop_show_order_" + routeHash("GET /orders/{}") + " | shop order show | order",
		"shop.carts.get | show_order_carts | shop_show_order_carts | shop orders show | order",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if doc.Operations[0].State != air.StateReviewRequired {
		t.Errorf("state %s", doc.Operations[0].State)
	}
}

// TestShorteningExamples checks the examples docs/mcp.md gives of names
// shortened for service github.
func TestShorteningExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "| derived canonical name | shortened |\n| --- | --- |\n")
	if !ok {
		t.Fatal("docs/mcp.md has no shortening table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := 0
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(row, "| "), " | ")
		if len(cells) != 2 {
			t.Fatalf("row %q", row)
		}
		in, want := strings.Trim(cells[0], "`"), strings.Trim(cells[1], "`")
		if got := shortenName(in, canonicalBudget("github")); got != want {
			t.Errorf("%s: shortened to %s, the docs say %s", in, got, want)
		}
		rows++
	}
	if rows < 4 {
		t.Errorf("%d examples", rows)
	}
}
