package compose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// triage is the flow of the seed: list the issues, comment on every one,
// then read an issue that does not exist, so the run fails after the
// comments were written.
const triage = `
from anvil_compose import Composite, item
c = Composite()
flow = c.flow("triage")
issues = flow.step("issues", "github.issues.list", owner="octo", repo="hello", state="all")
flow.map("comment", "github.comments.create", over=issues,
         args={"owner": "octo", "repo": "hello", "issue_number": item("number"), "body": "triaged"})
flow.step("missing", "github.issues.get", {"owner": "octo", "repo": "hello", "issue_number": 99}, after=["comment"])
`

// wantCompensation is the triage run's compensation: each comment's
// inverse, newest first, with the mapping's argument order.
const wantCompensation = `[` +
	`{"step": "comment", "call": 1, "connector": "github", "operation": "github.comments.create", "effect_class": "reversible", ` +
	`"undo": {"kind": "inverse", "operation": "github.comments.delete", "arguments": {"owner": "octo", "repo": "hello", "comment_id": 101}}}, ` +
	`{"step": "comment", "call": 0, "connector": "github", "operation": "github.comments.create", "effect_class": "reversible", ` +
	`"undo": {"kind": "inverse", "operation": "github.comments.delete", "arguments": {"owner": "octo", "repo": "hello", "comment_id": 100}}}]`

func TestPythonRunFailsAndCompensates(t *testing.T) {
	t.Parallel()
	e := startLive(t, []string{"github"}, nil)
	before := commentBodies(e.Mock.State())
	out, code := e.python(t, triage+`
import json
run = flow.run()
print(json.dumps({"ok": run.ok, "run": run.to_json()}))
print(json.dumps(run.compensation))
outcomes = flow.compensate(run, confirm=True)
print(json.dumps(outcomes))
`)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got:\n%s", out)
	}
	res := decode(t, lines[0])
	run := res["run"].(map[string]any)
	if res["ok"] != false || run["status"] != "failed" || run["failed_step"] != "missing" {
		t.Fatalf("run: %s", lines[0])
	}
	if got := run["error"].(map[string]any)["code"]; got != "not_found" {
		t.Errorf("error code %v, want not_found", got)
	}
	if got := run["order"]; !reflect.DeepEqual(got, []any{"issues", "comment", "missing"}) {
		t.Errorf("order %v", got)
	}
	steps := run["steps"].(map[string]any)
	comment := steps["comment"].(map[string]any)
	if comment["status"] != "ok" || comment["calls_completed"] != float64(2) {
		t.Errorf("comment step: %v", comment)
	}
	if steps["missing"].(map[string]any)["status"] != "failed" {
		t.Errorf("missing step: %v", steps["missing"])
	}
	if lines[1] != wantCompensation {
		t.Errorf("compensation\n got %s\nwant %s", lines[1], wantCompensation)
	}
	var outcomes []map[string]any
	if err := json.Unmarshal([]byte(lines[2]), &outcomes); err != nil {
		t.Fatal(err)
	}
	if len(outcomes) != 2 {
		t.Fatalf("outcomes: %s", lines[2])
	}
	for _, o := range outcomes {
		if o["status"] != "ok" {
			t.Errorf("outcome %v", o)
		}
	}
	if after := commentBodies(e.Mock.State()); !reflect.DeepEqual(after, before) {
		t.Errorf("comments after compensate %v, want %v", after, before)
	}
	var deletes []string
	for _, r := range e.Mock.Requests() {
		if r.Method == "DELETE" {
			deletes = append(deletes, r.Path)
		}
	}
	want := []string{"/repos/octo/hello/issues/comments/101", "/repos/octo/hello/issues/comments/100"}
	if !reflect.DeepEqual(deletes, want) {
		t.Errorf("deletes %v, want %v (newest first)", deletes, want)
	}
}

func TestPythonCompensateWithoutConfirmFails(t *testing.T) {
	t.Parallel()
	e := startLive(t, []string{"github"}, nil)
	out, code := e.python(t, triage+`
import json
run = flow.run()
print(json.dumps(flow.compensate(run)))
`)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var outcomes []map[string]any
	if err := json.Unmarshal([]byte(out), &outcomes); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(outcomes) != 2 {
		t.Fatalf("want 2 outcomes, got %s", out)
	}
	for _, o := range outcomes {
		errv, _ := o["error"].(map[string]any)
		if o["status"] != "failed" || errv["code"] != "confirmation_required" {
			t.Errorf("outcome %v: want failed with confirmation_required", o)
		}
	}
	if n := len(e.Mock.State().Comments); n != 2 {
		t.Errorf("%d comments left, want both (nothing undone)", n)
	}
	for _, r := range e.Mock.Requests() {
		if r.Method == "DELETE" {
			t.Errorf("an undo reached the upstream without confirm: %v", r)
		}
	}
}

func TestTwoConnectorsFromOneServiceLoadApart(t *testing.T) {
	t.Parallel()
	e := startLive(t, []string{"gh_home", "gh_work"}, nil)
	out, code := e.python(t, `
import json, sys
from anvil_compose import Composite
c = Composite()
home, work = c.client("gh_home"), c.client("gh_work")
print(json.dumps({
    "modules": [type(home).__module__, type(work).__module__],
    "same_class": type(home) is type(work),
    "loaded": sorted(m for m in sys.modules if m in ("_anvil_compose__gh_home", "_anvil_compose__gh_work")),
    "connectors": [home._gateway.connector, work._gateway.connector],
    "home": [i["number"] for i in c.call("gh_home:github.issues.list", {"owner": "octo", "repo": "hello", "state": "all"})],
    "work": [i["number"] for i in c.call("github.issues.list", {"owner": "octo", "repo": "hello", "state": "open"}, connector="gh_work")],
}))
try:
    c.call("github.issues.list", {"owner": "octo", "repo": "hello"})
except Exception as e:
    print(json.dumps({"code": e.code}))
`)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	got := decode(t, lines[0])
	want := map[string]any{
		"modules":    []any{"_anvil_compose__gh_home.client", "_anvil_compose__gh_work.client"},
		"same_class": false,
		"loaded":     []any{"_anvil_compose__gh_home", "_anvil_compose__gh_work"},
		"connectors": []any{"gh_home", "gh_work"},
		"home":       []any{float64(2), float64(1)},
		"work":       []any{float64(2)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if len(lines) != 2 || decode(t, lines[1])["code"] != "ambiguous_operation" {
		t.Errorf("an operation both connectors have, named without a connector: %v", lines)
	}
	if n := len(e.Mock.Requests()); n != 2 {
		t.Errorf("upstream saw %d requests, want 2", n)
	}
}

func TestPythonModuleRunsFlowDocument(t *testing.T) {
	t.Parallel()
	e := startLive(t, []string{"github"}, nil)
	doc := `{"schema":"anvil.compose-flow/v1","name":"triage","steps":[
  {"id":"issues","operation":"github.issues.list","args":{"owner":"octo","repo":"hello","state":"all"}},
  {"id":"comment","operation":"github.comments.create",
   "args":{"owner":"octo","repo":"hello","issue_number":{"$item":"number"},"body":"triaged"},"for_each":{"$ref":"issues"}},
  {"id":"missing","operation":"github.issues.get","args":{"owner":"octo","repo":"hello","issue_number":99},"after":["comment"]}]}`
	path := filepath.Join(t.TempDir(), "flow.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}

	// The subcommands that send nothing, in one interpreter (each process start is slow here).
	bad := filepath.Join(t.TempDir(), "bad.json")
	_ = os.WriteFile(bad, []byte(`{"schema":"anvil.compose-flow/v1","steps":[{"id":"a"}]}`), 0o644)
	invalid := filepath.Join(t.TempDir(), "invalid.json")
	_ = os.WriteFile(invalid, []byte(`{"steps":[{"id":"a","operation":"github.issues.create","args":{"owner":"o","repo":"r","title":"t"}}]}`), 0o644)
	out, code := e.python(t, `
import contextlib, io, json, sys
from anvil_compose.__main__ import main
flow, bad, invalid = sys.argv[1:4]
res = {}
for name, argv in [
    ("validate", ["validate", flow]),
    ("plan", ["plan", flow]),
    ("mermaid", ["plan", flow, "--mermaid"]),
    ("malformed", ["run", bad]),
    ("invalid", ["validate", invalid]),
    ("operations", ["operations", "github"]),
    ("connectors", ["connectors"]),
    ("unknown", ["operations", "jira"]),
]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    res[name] = {"code": code, "out": out.getvalue(), "err": err.getvalue()}
print(json.dumps(res))
`, path, bad, invalid)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var cli map[string]struct {
		Code int
		Out  string
		Err  string
	}
	if err := json.Unmarshal([]byte(out), &cli); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	check := func(name string, code int, contains string) {
		t.Helper()
		c := cli[name]
		if c.Code != code || !strings.Contains(c.Out+c.Err, contains) {
			t.Errorf("%s: exit %d (want %d), want %q in\n%s%s", name, c.Code, code, contains, c.Out, c.Err)
		}
	}
	check("validate", 0, "[]")
	check("plan", 0, `"schema": "anvil.compose-plan/v1"`)
	check("mermaid", 0, "flowchart TD\n")
	check("mermaid", 0, "s0 --> s1")
	check("malformed", 2, `"code": "invalid_flow"`) // a ComposeError exits 2
	check("invalid", 1, "confirmation_required")    // validate exits 1 on an error finding
	check("operations", 0, `"qualified": "github:github.comments.create"`)
	check("connectors", 0, `"id": "github"`)
	check("unknown", 2, `"code": "unknown_connector"`)
	if n := len(e.Mock.Requests()); n != 0 || e.gatewayHits.Load() != 0 {
		t.Errorf("reading the flow sent %d upstream and %d gateway request(s)", n, e.gatewayHits.Load())
	}

	// A dry run sends nothing upstream.
	out, code = e.python(t, "", "-m", "anvil_compose", "run", path, "--dry-run")
	dry := decode(t, out)
	if code != 0 || dry["dry_run"] != true || dry["status"] != "succeeded" || len(dry["compensation"].([]any)) != 0 {
		t.Errorf("dry run: exit %d\n%s", code, out)
	}
	if n := len(e.Mock.Requests()); n != 0 {
		t.Errorf("a dry run reached the upstream %d time(s)", n)
	}
	if e.gatewayHits.Load() == 0 {
		t.Errorf("a dry run went nowhere near the SDKs' gateway")
	}

	out, code = e.python(t, "", "-m", "anvil_compose", "run", path)
	if code != 1 {
		t.Errorf("run of a failing flow exits %d, want 1", code)
	}
	run := decode(t, out)
	if run["schema"] != "anvil.compose-run/v1" || run["status"] != "failed" || run["failed_step"] != "missing" {
		t.Errorf("run:\n%s", out)
	}
	var raw struct{ Compensation json.RawMessage }
	_ = json.Unmarshal([]byte(out), &raw)
	if c, w := compact(t, string(raw.Compensation)), compact(t, wantCompensation); c != w {
		t.Errorf("compensation (key order matters)\n got %s\nwant %s", c, w)
	}
}

func TestPythonConditionsAndRefs(t *testing.T) {
	t.Parallel()
	e := startLive(t, []string{"github"}, nil)
	out, code := e.python(t, `
import json
from anvil_compose import Composite, ref
c = Composite()
o = {"owner": "octo", "repo": "hello"}
flow = c.flow("conditions")
issues = flow.step("issues", "github.issues.list", dict(o, state="all"))
first = flow.step("first", "github.issues.get", dict(o, issue_number=issues["[0].number"]))
flow.step("if_open", "github.comments.create", dict(o, issue_number=first["number"], body="open"),
          when=ref(first, "state").equals("open"))
closed = flow.step("if_closed", "github.comments.create", dict(o, issue_number=first["number"], body="closed"),
                   when=ref(first, "state").equals("closed"))
flow.step("after_skip", "github.comments.delete", dict(o, comment_id=closed["id"]), confirm=True)
flow.map("not_a_list", "github.issues.get", over=first, args=dict(o, issue_number=1), after=["if_open", "after_skip"])
run = flow.run().to_json()
flow2 = c.flow("unresolved")
issues = flow2.step("issues", "github.issues.list", o)
flow2.step("tenth", "github.issues.get", dict(o, issue_number=ref(issues, "[9].number")))
run2 = flow2.run().to_json()
print(json.dumps({"run": run, "run2": run2}))
`)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var got struct {
		Run, Run2 struct {
			Status       string
			FailedStep   string `json:"failed_step"`
			Error        struct{ Code string }
			Steps        map[string]struct{ Status string }
			Compensation []struct {
				Step string
				Undo struct{ Arguments map[string]any }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r := got.Run
	status := map[string]string{}
	for id, s := range r.Steps {
		status[id] = s.Status
	}
	want := map[string]string{"issues": "ok", "first": "ok", "if_open": "ok", "if_closed": "skipped",
		"after_skip": "skipped", "not_a_list": "failed"}
	if !reflect.DeepEqual(status, want) {
		t.Errorf("statuses %v, want %v", status, want)
	}
	if r.Status != "failed" || r.FailedStep != "not_a_list" || r.Error.Code != "not_a_list" {
		t.Errorf("run: %s", out)
	}
	if len(r.Compensation) != 1 || r.Compensation[0].Step != "if_open" || r.Compensation[0].Undo.Arguments["comment_id"] != float64(100) {
		t.Errorf("compensation: %+v", r.Compensation)
	}
	if got.Run2.Status != "failed" || got.Run2.FailedStep != "tenth" || got.Run2.Error.Code != "unresolved_ref" ||
		len(got.Run2.Compensation) != 0 {
		t.Errorf("run with a ref to nothing: %+v", got.Run2)
	}
}
