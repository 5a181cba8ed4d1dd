package serve

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/discover"
	"github.com/anvil-dev/anvil/runtime/door/mcpdoor"
	"github.com/anvil-dev/anvil/runtime/fleet"
)

// reTraceID matches the trace ids that differ between two calls.
var reTraceID = regexp.MustCompile(`trace_[0-9a-f]{32}`)

func sdkCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func textOf(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if len(r.Content) != 1 {
		t.Fatalf("content %v", r.Content)
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T", r.Content[0])
	}
	return tc.Text
}

// TestDiscoverSurfaceOverSDK drives the discover surface with the official
// SDK client: tools/list is exactly the three discovery tools, anvil_search
// answers structured content equal to its text, and anvil_call answers
// exactly what a direct call does, with an audit line naming the real
// operation (a direct call by the real name still works).
func TestDiscoverSurfaceOverSDK(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{edit: func(c *Config) { c.ToolSurface = mcpdoor.SurfaceDiscover }})
	ctx := sdkCtx(t)
	cs, err := f.sdkSession(ctx, f.turn(fxReadGrant))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lr.Tools {
		names = append(names, tl.Name)
	}
	if want := []string{"anvil_search", "anvil_describe", "anvil_call"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tools/list %v, want %v", names, want)
	}

	sr, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "anvil_search", Arguments: map[string]any{"query": "list the issues of a repository", "limit": 2}})
	if err != nil || sr.IsError {
		t.Fatalf("anvil_search: %v %v", err, sr)
	}
	var got discover.SearchResponse
	if err := json.Unmarshal([]byte(textOf(t, sr)), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Tools) != 2 || got.Tools[0].Name != "github__github_list_issue" || got.Tools[0].OperationID != "github.issues.list" {
		t.Fatalf("search result %+v", got)
	}
	var fromText any
	_ = json.Unmarshal([]byte(textOf(t, sr)), &fromText)
	if !reflect.DeepEqual(sr.StructuredContent, fromText) {
		t.Errorf("structured content %v differs from text %s", sr.StructuredContent, textOf(t, sr))
	}
	// The read grant hides mutations from the search too.
	sr, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "anvil_search", Arguments: map[string]any{"query": "create an issue", "limit": 50}})
	if strings.Contains(textOf(t, sr), "github__github_create_issue") {
		t.Errorf("search under a read grant shows a mutation: %s", textOf(t, sr))
	}

	args := map[string]any{"owner": "octo", "repo": "hello"}
	direct, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_list_issue", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	via, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "anvil_call", Arguments: map[string]any{"name": "github__github_list_issue", "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	db, _ := json.Marshal(direct)
	vb, _ := json.Marshal(via)
	if string(db) != string(vb) || direct.IsError {
		t.Errorf("anvil_call answered\n%s\na direct call\n%s", vb, db)
	}
	_, lines := f.auditLines()
	if len(lines) < 2 {
		t.Fatalf("audit lines %v", lines)
	}
	last := lines[len(lines)-2:]
	for _, l := range last {
		if l["operation"] != "github.issues.list" || l["connector"] != "github" {
			t.Errorf("audit line %v does not name the real operation", l)
		}
		delete(l, "time")
		delete(l, "latency_ms")
		delete(l, "trace_id")
		delete(l, "seq") // the audit chain's: each line's own place
		delete(l, "prev")
	}
	if !reflect.DeepEqual(last[0], last[1]) {
		t.Errorf("audit lines differ:\n%v\n%v", last[0], last[1])
	}
	// Refusals are the direct call's too.
	direct, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__github_create_issue", Arguments: map[string]any{"owner": "o", "repo": "r", "title": "x", "confirm": true}})
	via, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "anvil_call", Arguments: map[string]any{"name": "github__github_create_issue", "arguments": map[string]any{"owner": "o", "repo": "r", "title": "x", "confirm": true}}})
	if !direct.IsError || !strings.Contains(textOf(t, direct), "policy_denied") ||
		reTraceID.ReplaceAllString(textOf(t, direct), "") != reTraceID.ReplaceAllString(textOf(t, via), "") {
		t.Errorf("refusals differ:\n%s\n%s", textOf(t, direct), textOf(t, via))
	}

	// An unknown name is not_found, naming the tool meant.
	via, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "anvil_call", Arguments: map[string]any{"name": "github_get_issue"}})
	if !via.IsError || !strings.Contains(textOf(t, via), "not_found") || !strings.Contains(textOf(t, via), "Did you mean github__github_get_issue") {
		t.Errorf("anvil_call of an unknown tool: %s", textOf(t, via))
	}

	dr, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "anvil_describe", Arguments: map[string]any{"names": []string{"github__github_get_issue"}}})
	if err != nil || dr.IsError {
		t.Fatalf("anvil_describe: %v %v", err, dr)
	}
	listing := string(f.g.Fleet().Tool("github__github_get_issue").Listing())
	// The producer links, grant-filtered: a read grant does not show the
	// create that also yields an issue_number.
	want := `{"tools":[` + listing[:len(listing)-1] + `,"needs":[{"argument":"issue_number","from":["github__github_list_issue"]}]}]}`
	if textOf(t, dr) != want {
		t.Errorf("anvil_describe %s, want %s", textOf(t, dr), want)
	}
}

// TestAutoSurface: auto serves discover exactly when the caller's grant
// shows more tools than the threshold.
func TestAutoSurface(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true, mcp: mcpdoor.Options{AutoThreshold: 5}})
	narrow := []any{map[string]any{"connector": "github", "operations": []any{"issues.*"}, "mode": "read"}}
	if got := f.rawInitialize(f.turn(narrow)).toolNames(); len(got) == 0 || len(got) > 5 || got[0] == "anvil_search" {
		t.Errorf("narrow grant (<= 5 tools) listed %v, want the full surface", got)
	}
	if got := f.rawInitialize(f.turn(fxWriteGrant)).toolNames(); !reflect.DeepEqual(got, []string{"anvil_search", "anvil_describe", "anvil_call"}) {
		t.Errorf("write grant (12 tools) listed %v, want the discover surface", got)
	}
	f = newFleetFixture(t, &fleetOptions{noConnect: true}) // the default threshold, mcpdoor.AutoDiscoverThreshold
	if got := f.rawInitialize(f.turn(fxWriteGrant)).toolNames(); len(got) != 12 {
		t.Errorf("12 tools under the default threshold listed %v", got)
	}
}

// TestToolsListPaging pages tools/list in full mode: the SDK client's
// iterator follows the cursors to the whole grant-filtered list.
func TestToolsListPaging(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true, edit: func(c *Config) { c.ToolsPageSize = 5; c.ToolSurface = mcpdoor.SurfaceFull }})
	ctx := sdkCtx(t)
	cs, err := f.sdkSession(ctx, f.turn(fxWriteGrant))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	first, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Tools) != 5 || first.NextCursor == "" {
		t.Fatalf("first page: %d tools, cursor %q", len(first.Tools), first.NextCursor)
	}
	var all []string
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, tl.Name)
	}
	var want []string
	for _, tl := range f.g.Fleet().Tools {
		want = append(want, tl.Name)
	}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("paged listing %v, want %v", all, want)
	}
	if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: "not-a-cursor"}); err == nil {
		t.Error("a bad cursor was accepted")
	}
}

// TestListingTrimsDescriptions: listings carry descriptions trimmed to
// discover.ListingDescriptionMax; the tool's own entry (anvil_describe)
// keeps the full text.
func TestListingTrimsDescriptions(t *testing.T) {
	doc, err := air.Load("testdata/workspace/github")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("Lists the issues of a repository in great detail. ", 20)
	doc.Operations[0].Description = long
	fl, err := fleet.New([]*fleet.Connector{{ID: "github", Dir: "github", Doc: doc}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tl := range fl.Tools {
		if tl.Op.Description != long {
			if tl.ListEntry() != tl.MCPTool() {
				t.Errorf("%s: short description copied", tl.Name)
			}
			continue
		}
		n++
		d := tl.ListEntry().Description
		if utf8.RuneCountInString(d) > discover.ListingDescriptionMax || !strings.HasSuffix(d, "…") {
			t.Errorf("listed description of %d characters: %q", utf8.RuneCountInString(d), d)
		}
		if !strings.Contains(string(tl.Listing()), long) || tl.MCPTool().Description != long {
			t.Error("the tool's own entry lost its full description")
		}
	}
	if n != 1 {
		t.Fatalf("%d tools with the long description", n)
	}
}

func TestSurfaceEnv(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		surface string
		page    int
		err     string
	}{
		{env: nil, surface: mcpdoor.SurfaceAuto},
		{env: map[string]string{"ANVIL_TOOL_SURFACE": "discover", "ANVIL_TOOLS_PAGE_SIZE": "25"}, surface: mcpdoor.SurfaceDiscover, page: 25},
		{env: map[string]string{"ANVIL_TOOL_SURFACE": "full"}, surface: mcpdoor.SurfaceFull},
		{env: map[string]string{"ANVIL_TOOL_SURFACE": "search"}, err: "ANVIL_TOOL_SURFACE must be full, discover or auto"},
		{env: map[string]string{"ANVIL_TOOLS_PAGE_SIZE": "0"}, err: "ANVIL_TOOLS_PAGE_SIZE must be"},
		{env: map[string]string{"ANVIL_TOOLS_PAGE_SIZE": "ten"}, err: "ANVIL_TOOLS_PAGE_SIZE must be"},
	} {
		cfg, err := ConfigFromEnv(func(k string) string { return c.env[k] })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err %v, want %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || cfg.ToolSurface != c.surface || cfg.ToolsPageSize != c.page {
			t.Errorf("%v: %q %d %v", c.env, cfg.ToolSurface, cfg.ToolsPageSize, err)
		}
	}
}

// TestRESTToolsAndSuggestions: GET /tools is grant-filtered, ?search ranks
// as anvil_search, GET /tools/<tool> describes one tool, an unknown tool's 404 names the tool meant (the served
// name with its connector prefix), and an unknown body key is a 400 naming
// it.
func TestRESTToolsAndSuggestions(t *testing.T) {
	f := newFleetFixture(t, nil)
	read := f.turn(fxReadGrant)
	a := f.do("GET", "/tools", read, "", "", nil)
	if a.status != 200 || strings.Contains(a.body, "create") || !strings.Contains(a.body, `"name":"github__github_list_issue","operation_id":"github.issues.list","title":"List issues"`) {
		t.Errorf("GET /tools: %d %s", a.status, a.body)
	}
	a = f.do("GET", "/tools?search=merge+pull+requests&limit=1", f.turn(fxWriteGrant), "", "", nil)
	if a.status != 200 || !strings.HasPrefix(a.body, `{"tools":[{"name":"github__github_list_pull"`) {
		t.Errorf("GET /tools?search: %d %s", a.status, a.body)
	}
	// GET /tools/<tool> is anvil_describe of it: the listing and the
	// producer links the grant shows (a read grant: not the create).
	a = f.do("GET", "/tools/github__github_get_issue", read, "", "", nil)
	listing := string(f.g.Fleet().Tool("github__github_get_issue").Listing())
	if want := `{"tools":[` + listing[:len(listing)-1] + `,"needs":[{"argument":"issue_number","from":["github__github_list_issue"]}]}]}`; a.status != 200 || a.body != want {
		t.Errorf("GET /tools/<tool>: %d %s\nwant %s", a.status, a.body, want)
	}
	a = f.do("GET", "/tools/github__github_create_issue", read, "", "", nil)
	if a.status != 404 || a.errCode() != "not_found" {
		t.Errorf("GET /tools/<hidden tool>: %d %s", a.status, a.body)
	}
	a = f.do("GET", "/tools/github_get_issue", read, "", "", nil)
	if a.status != 404 || !strings.Contains(a.body, "Did you mean github__github_get_issue") {
		t.Errorf("GET /tools/<unknown tool>: %d %s", a.status, a.body)
	}
	a = f.do("GET", "/tools/github__github_get_issue?search=x", read, "", "", nil)
	if a.status != 400 || a.errCode() != "validation_error" {
		t.Errorf("GET /tools/<tool>?search: %d %s", a.status, a.body)
	}
	a = f.call(read, "github_list_issue", `{"arguments":{"owner":"octo","repo":"hello"}}`, nil)
	if a.status != 404 || a.errCode() != "not_found" || !strings.Contains(a.body, "Did you mean github__github_list_issue") {
		t.Errorf("unknown tool: %d %s", a.status, a.body)
	}
	a = f.call(read, "github__github_list_issue", `{"arguments":{"owner":"octo","repo":"hello"},"status":"open"}`, nil)
	if a.status != 400 || a.errCode() != "validation_error" || !strings.Contains(a.body, `\"status\"`) {
		t.Errorf("unknown body key: %d %s", a.status, a.body)
	}
}

// TestServeStdioDiscover: stdio serves the same surfaces to its local
// caller, and anvil_call works there as a direct call does.
func TestServeStdioDiscover(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true, edit: func(cfg *Config) {
		cfg.Auth = auth.Config{Mode: auth.ModeNone}
		cfg.ToolSurface = mcpdoor.SurfaceDiscover
	}})
	f.connectKey("github", "", fxUpstream)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx := sdkCtx(t)
	done := make(chan error, 1)
	go func() { done <- f.g.ServeStdio(ctx, inR, outW); outW.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := cs.ListTools(ctx, nil)
	if err != nil || len(lr.Tools) != 3 || lr.Tools[0].Name != "anvil_search" {
		t.Fatalf("tools/list: %v %v", err, lr)
	}
	sr, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "anvil_search", Arguments: map[string]any{"query": "create a release", "limit": 1}})
	if err != nil || sr.IsError || !strings.Contains(textOf(t, sr), `"name":"github__github_create_release"`) {
		t.Fatalf("anvil_search: %v %v", err, sr)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "anvil_call", Arguments: map[string]any{"name": "github__github_list_pull", "arguments": map[string]any{"owner": "o", "repo": "r"}}})
	if err != nil || res.IsError {
		t.Fatalf("anvil_call: %v %v", err, res)
	}
	if rep, _ := res.Meta["effect"].(map[string]any); rep["operation"] != "github.pulls.list" {
		t.Errorf("effect: %v", res.Meta)
	}
	cs.Close()
	inW.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("ServeStdio did not return when stdin closed")
	}
}
