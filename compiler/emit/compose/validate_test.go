package compose

import (
	"encoding/json"
	"fmt"
	"github.com/anvil-dev/anvil/compiler/emit"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// requireKey makes gh_home's comment creation need a caller's idempotency key.
func requireKey(cid string, doc *air.Document) {
	if cid != "gh_home" {
		return
	}
	op := doc.Operation("github.comments.create")
	op.Idempotency.Mode = air.IdemRequired
	op.Idempotency.KeyDerivation = "client_supplied"
}

const (
	listA   = `{"id":"a","operation":"github:github.issues.list","args":{"owner":"o","repo":"r"}}`
	mapOver = `{"id":"c","operation":"github:github.comments.create","for_each":{"$ref":"a"},` +
		`"args":{"owner":"o","repo":"r","issue_number":{"$item":"number"},"body":"b"}%s}`
)

// validationCases has one flow per finding code; want lists level:code:step.
var validationCases = []struct {
	name  string
	steps string
	want  []string
}{
	{"valid", listA + "," + fmt.Sprintf(mapOver, ""), nil},
	{"unknown_step", `{"id":"a","operation":"github:github.issues.list","args":{"owner":{"$ref":"nope"},"repo":"r"}}`,
		[]string{"error:unknown_step:a"}},
	{"unknown_step_after", listA + `,{"id":"b","operation":"github:github.pulls.list","args":{"owner":"o","repo":"r"},"after":["nope"]}`,
		[]string{"error:unknown_step:b"}},
	{"cycle", `{"id":"a","operation":"github:github.issues.list","args":{"owner":{"$ref":"b","path":"[0].title"},"repo":"r"}},` +
		`{"id":"b","operation":"github:github.issues.list","args":{"owner":"o","repo":"r"},"after":["a"]}`,
		[]string{"error:cycle:"}},
	{"cycle_self", `{"id":"a","operation":"github:github.issues.list","args":{"owner":{"$ref":"a"},"repo":"r"}}`,
		[]string{"error:cycle:a"}},
	{"unknown_operation", `{"id":"a","operation":"github:github.nope.list","args":{}}`,
		[]string{"error:unknown_operation:a"}},
	{"ambiguous_operation", `{"id":"a","operation":"github.issues.list","args":{"owner":"o","repo":"r"}}`,
		[]string{"error:ambiguous_operation:a"}},
	{"unknown_connector", `{"id":"a","operation":"github.issues.list","connector":"jira","args":{"owner":"o","repo":"r"}}`,
		[]string{"error:unknown_connector:a"}},
	{"item_outside_map", `{"id":"a","operation":"github:github.issues.list","args":{"owner":{"$item":"login"},"repo":"r"}}`,
		[]string{"error:item_outside_map:a"}},
	{"unknown_input", `{"id":"a","operation":"github:github.issues.list","args":{"owner":"o","repo":"r","ownr":"x"}}`,
		[]string{"error:unknown_input:a"}},
	{"invalid_path", listA + `,{"id":"b","operation":"github:github.issues.get",` +
		`"args":{"owner":"o","repo":"r","issue_number":{"$ref":"a","path":"[0]..number"}}}`,
		[]string{"error:invalid_path:b"}},
	{"missing_input", `{"id":"a","operation":"github:github.issues.list","args":{"owner":"o"}}`,
		[]string{"error:missing_input:a"}},
	{"confirmation_required", `{"id":"a","operation":"github:github.issues.create","args":{"owner":"o","repo":"r","title":"t"}}`,
		[]string{"error:confirmation_required:a"}},
	{"idempotency_required", `{"id":"a","operation":"gh_home:github.comments.create",` +
		`"args":{"owner":"o","repo":"r","issue_number":1,"body":"b"}}`,
		[]string{"error:idempotency_required:a"}},
	{"idempotency_required_map", listA + "," + fmt.Sprintf(mapOver, `,"idempotency_key":"one-key"`),
		[]string{"error:idempotency_required:c"}},
	{"irreversible", `{"id":"a","operation":"github:github.releases.create","confirm":true,` +
		`"args":{"owner":"o","repo":"r","tag_name":"v1"}}`,
		[]string{"warning:irreversible:a"}},
}

// validationDocs is a JSON object of every validation case's flow document.
func validationDocs() string {
	var docs []string
	for _, c := range validationCases {
		docs = append(docs, fmt.Sprintf(`%q: {"schema":"anvil.compose-flow/v1","name":%q,"steps":[%s]}`, c.name, c.name, c.steps))
	}
	return "{" + strings.Join(docs, ",") + "}"
}

func TestValidateFindingsAndRefusal(t *testing.T) {
	t.Parallel()
	e := startLive(t, []string{"github", "gh_home"}, requireKey)
	out, code := e.python(t, `
import json, sys
from anvil_compose import Composite
c = Composite()
res = {}
for name, doc in json.loads(sys.argv[1]).items():
    flow = c.load(doc)
    findings = flow.validate()
    run = flow.run().to_json()
    res[name] = {"findings": findings, "run": run}
print(json.dumps(res))
`, validationDocs())
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	type finding struct {
		Level, Code, Message string
		Step                 *string
	}
	var res map[string]struct {
		Findings []finding
		Run      struct {
			Status string
			Order  []string
			Error  *struct {
				Code    string
				Details struct{ Findings []finding }
			}
			Steps map[string]struct{ Status string }
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, c := range validationCases {
		t.Run(c.name, func(t *testing.T) {
			r := res[c.name]
			var got []string
			hasError := false
			for _, f := range r.Findings {
				step := ""
				if f.Step != nil {
					step = *f.Step
				}
				got = append(got, f.Level+":"+f.Code+":"+step)
				seen[f.Code] = true
				if f.Message == "" {
					t.Errorf("finding %s has no message", f.Code)
				}
				hasError = hasError || f.Level == "error"
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("findings %v, want %v\n%s", got, c.want, out)
			}
			switch {
			case hasError:
				if r.Run.Status != "refused" || r.Run.Error == nil || r.Run.Error.Code != "invalid_flow" ||
					!reflect.DeepEqual(r.Run.Error.Details.Findings, r.Findings) || len(r.Run.Order) != 0 {
					t.Errorf("run of a flow with an error: %+v", r.Run)
				}
				for id, s := range r.Run.Steps {
					if s.Status != "not_run" {
						t.Errorf("step %s is %s in a refused run", id, s.Status)
					}
				}
			case r.Run.Status == "refused":
				t.Errorf("a flow without errors was refused: %+v", r.Run.Error)
			}
		})
	}
	for _, code := range []string{"unknown_step", "cycle", "unknown_operation", "ambiguous_operation", "unknown_connector",
		"item_outside_map", "unknown_input", "invalid_path", "missing_input", "confirmation_required",
		"idempotency_required", "irreversible"} {
		if !seen[code] {
			t.Errorf("no case produced %s", code)
		}
	}
	// Only the two flows without errors reached the gateway: "valid" (a list, a
	// comment per issue) and "irreversible" (one release).
	var paths []string
	for _, r := range e.Mock.Requests() {
		paths = append(paths, r.Method+" "+r.Path)
	}
	want := []string{"GET /repos/o/r/issues", "POST /repos/o/r/issues/2/comments", "POST /repos/o/r/issues/1/comments",
		"POST /repos/o/r/releases"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("upstream saw %v, want only %v (a flow with an error sends nothing)", paths, want)
	}
}

// TestWorldloomPlan checks what Worldloom reads of a plan: a node per step
// with a unique id, the AIR operation, the gateway connector id and
// depends_on (empty for roots), every dependency a known node, no cycle.
func TestWorldloomPlan(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	doc := miniDoc(t)
	writeHarness(t, root, "team_github", doc)
	out := writeComposite(t, root, []emit.Connector{{ID: "team_github", Doc: doc}})
	stdout, code := runPython(t, []string{"PYTHONPATH=" + filepath.Join(out, "python"), "PYTHONDONTWRITEBYTECODE=1"}, out, `
import json
from anvil_compose import Composite, item, ref
c = Composite()
flow = c.flow("triage")
issues = flow.step("issues", "github.issues.list", owner="octo", repo="hello")
flow.map("comment", "github.comments.create", over=issues,
         args={"owner": "octo", "repo": "hello", "issue_number": item("number"), "body": "triaged"})
flow.step("close", "team_github:github.issues.update",
          {"owner": "octo", "repo": "hello", "issue_number": ref(issues, "[0].number"), "state": "closed"},
          after=["comment"], confirm=True)
print(json.dumps({"plan": flow.plan(), "flow": flow.to_json()}))
`)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	var got struct {
		Plan struct {
			Schema string
			Nodes  []map[string]any
			Edges  [][2]string
			Waves  [][]string
		}
		Flow json.RawMessage
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	p := got.Plan
	if p.Schema != "anvil.compose-plan/v1" || len(p.Nodes) != 3 {
		t.Fatalf("plan: %s", stdout)
	}
	ids := map[string]bool{}
	deps := map[string][]string{}
	wantOps := []string{"github.issues.list", "github.comments.create", "github.issues.update"}
	wantDeps := [][]string{{}, {"issues"}, {"issues", "comment"}}
	for i, n := range p.Nodes {
		id, _ := n["id"].(string)
		if id == "" || ids[id] {
			t.Errorf("node %d: id %v missing or duplicate", i, n["id"])
		}
		ids[id] = true
		if n["operation"] != wantOps[i] || n["connector"] != "team_github" {
			t.Errorf("node %s: operation %v connector %v", id, n["operation"], n["connector"])
		}
		raw, ok := n["depends_on"].([]any)
		if !ok {
			t.Fatalf("node %s has no depends_on list: %v", id, n)
		}
		var d []string
		for _, x := range raw {
			d = append(d, x.(string))
		}
		if d == nil {
			d = []string{}
		}
		if !reflect.DeepEqual(d, wantDeps[i]) {
			t.Errorf("node %s depends_on %v, want %v", id, d, wantDeps[i])
		}
		deps[id] = d
	}
	// Every dependency names a node, none is a self-edge, and the graph is acyclic.
	done := map[string]bool{}
	for range p.Nodes {
		for id, d := range deps {
			ready := true
			for _, x := range d {
				if !ids[x] || x == id {
					t.Fatalf("node %s depends on %q", id, x)
				}
				ready = ready && done[x]
			}
			if ready {
				done[id] = true
			}
		}
	}
	if len(done) != len(ids) {
		t.Errorf("plan has a cycle: %v", deps)
	}
	if !reflect.DeepEqual(p.Waves, [][]string{{"issues"}, {"comment"}, {"close"}}) {
		t.Errorf("waves %v", p.Waves)
	}
	if !strings.Contains(string(got.Flow), `"for_each": {"$ref": "issues"}`) && !strings.Contains(string(got.Flow), `"for_each":{"$ref":"issues"}`) {
		t.Errorf("flow document does not carry the map's dependency: %s", got.Flow)
	}
}

// TestPythonComposeErrors covers the ComposeErrors a flow raises while it is
// built or read, before anything could be sent.
func TestPythonComposeErrors(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	doc := miniDoc(t)
	writeHarness(t, root, "github", doc)
	out := writeComposite(t, root, []emit.Connector{{ID: "github", Doc: doc}})
	stdout, code := runPython(t, []string{"PYTHONPATH=" + filepath.Join(out, "python"), "PYTHONDONTWRITEBYTECODE=1"}, out, `
import json
from anvil_compose import Composite, ComposeError, item, ref, COMPOSE_ERROR_CODES
c = Composite("github")
codes = {}
def attempt(name, fn):
    try:
        fn()
        codes[name] = None
    except ComposeError as e:
        codes[name] = e.code
def dup():
    f = c.flow("f"); f.step("a", "github.issues.list"); f.step("a", "github.pulls.list")
def cycle():
    f = c.flow("f"); f.step("a", "github.issues.list", {"owner": ref("b")}); f.step("b", "github.issues.list", {"owner": ref("a")}); f.order()
def not_a_flow():
    c.load('{"schema": "anvil.compose-plan/v1", "nodes": []}')
attempt("duplicate_step", dup)
attempt("cycle", cycle)
attempt("invalid_path", lambda: ref("a", "x..y"))
attempt("invalid_item_path", lambda: item("[x]"))
attempt("unknown_connector", lambda: Composite(["jira"]))
attempt("unknown_operation", lambda: c.resolve("github.nope"))
attempt("unknown_input", lambda: c.call("github.issues.list", {"ownr": "o"}))
attempt("invalid_flow", not_a_flow)
attempt("map_over", lambda: c.flow("f").map("m", "github.issues.get", over="issues", args={}))
f = c.flow("order")
a = f.step("a", "github.issues.list", owner="o", repo="r")
f.step("c", "github.pulls.list", owner="o", repo="r", after=[a])
f.step("b", "github.issues.get", {"owner": "o", "repo": "r", "issue_number": a["[0].number"]})
# Every catalog method is the SDK's own, for the same operation, with the same controls.
sdk = c._module("github")
client = c.client("github")
drift = []
for op in c.operations("github"):
    spec = sdk.OPERATIONS.get(op["method"]["python"])
    if spec is None or spec["id"] != op["id"] or not callable(getattr(client, op["method"]["python"], None)):
        drift.append(op["id"])
    elif [i["key"] for i in spec["inputs"]] != [i["key"] for i in op["inputs"]]:
        drift.append(op["id"] + " inputs")
    elif spec["controls"]["confirm"] != op["safety"]["confirm"] or spec["controls"]["dry_run"] != op["safety"]["dryRun"]:
        drift.append(op["id"] + " controls")
print(json.dumps({"codes": codes, "all": list(COMPOSE_ERROR_CODES), "order": f.order(), "drift": drift,
                  "resolve": c.resolve("github:github.comments.create")["method"]}))
`)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	var got struct {
		Codes   map[string]*string
		All     []string
		Order   []string
		Drift   []string
		Resolve map[string]string
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	want := map[string]string{"duplicate_step": "duplicate_step", "cycle": "cycle", "invalid_path": "invalid_path",
		"invalid_item_path": "invalid_path", "unknown_connector": "unknown_connector", "unknown_operation": "unknown_operation",
		"unknown_input": "unknown_input", "invalid_flow": "invalid_flow", "map_over": "invalid_flow"}
	for name, code := range want {
		if got.Codes[name] == nil || *got.Codes[name] != code {
			t.Errorf("%s: raised %v, want %s", name, got.Codes[name], code)
		}
	}
	wantAll := []string{"duplicate_step", "cycle", "unknown_operation", "ambiguous_operation", "unknown_connector",
		"connector_missing", "unknown_input", "invalid_path", "unresolved_ref", "not_a_list", "invalid_flow"}
	if !reflect.DeepEqual(got.All, wantAll) {
		t.Errorf("COMPOSE_ERROR_CODES %v", got.All)
	}
	if len(got.Drift) != 0 {
		t.Errorf("the catalog and the Python SDK disagree on %v", got.Drift)
	}
	if !reflect.DeepEqual(got.Order, []string{"a", "c", "b"}) {
		t.Errorf("order %v", got.Order)
	}
	if got.Resolve["python"] != "create_comment" || got.Resolve["typescript"] != "createComment" {
		t.Errorf("resolve: %v", got.Resolve)
	}
}
