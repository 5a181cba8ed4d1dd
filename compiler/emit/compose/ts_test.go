package compose

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
)

// tsc returns the pinned TypeScript compiler (tools/ts; `npm ci --prefix tools/ts`).
func tsc(t *testing.T) string {
	t.Helper()
	need(t, "node")
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "..", "tools", "ts", "node_modules", ".bin", "tsc")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("tsc is required for the composite's tests (run `npm ci --prefix tools/ts`): %v", err)
	}
	return p
}

// linkNodeModules makes tools/ts/node_modules (for @types/node) visible from dir.
func linkNodeModules(t *testing.T, dir string) {
	t.Helper()
	nm, err := filepath.Abs(filepath.Join(filepath.Dir(tsc(t)), ".."))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(nm, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
}

func runCmd(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s%s", filepath.Base(name), args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestTypeScriptFlow type-checks the composite against the connector SDKs it
// imports (tsc --strict, failing on any error), compiles both with tsc and
// runs the triage flow through node against the live gateway.
func TestTypeScriptFlow(t *testing.T) {
	t.Parallel()
	e := startLive(t, []string{"github", "gh_home"}, requireKey)
	linkNodeModules(t, e.Root)
	dist := filepath.Join(t.TempDir(), "dist")
	runCmd(t, e.env(), tsc(t), "-p", filepath.Join(e.Compose, "typescript", "tsconfig.json"),
		"--strict", "--noEmitOnError", "--rootDir", e.Root, "--outDir", dist)
	if err := os.WriteFile(filepath.Join(dist, "package.json"), []byte(`{"type":"module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dist, "triage.mjs")
	if err := os.WriteFile(script, []byte(`
import { Composite, item } from "./_compose/typescript/src/index.js";
const c = new Composite();
const flow = c.flow("triage");
const issues = flow.step("issues", "github:github.issues.list", { owner: "octo", repo: "hello", state: "all" });
flow.map("comment", "github.comments.create", issues,
  { owner: "octo", repo: "hello", issue_number: item("number"), body: "triaged" }, { connector: "github" });
flow.step("missing", "github:github.issues.get", { owner: "octo", repo: "hello", issue_number: 99 }, { after: ["comment"] });
const cases = {};
for (const [name, doc] of Object.entries(JSON.parse(process.argv[2]))) {
  const f = c.load(doc);
  cases[name] = JSON.stringify({ findings: f.validate(), plan: f.plan(), flow: f.toJSON() });
}
const findings = flow.validate();
const plan = flow.plan();
const dry = await flow.dryRun();
const run = await flow.run();
const outcomes = await flow.compensate(run, { confirm: true });
const o = { owner: "octo", repo: "hello" };
const cf = c.flow("conditions");
const all = cf.step("issues", "github:github.issues.list", { ...o, state: "all" });
const first = cf.step("first", "github:github.issues.get", { ...o, issue_number: all.ref("[0].number") });
cf.step("if_open", "github:github.comments.create", { ...o, issue_number: first.ref("number"), body: "open" },
  { when: first.ref("state").equals("open") });
const closed = cf.step("if_closed", "github:github.comments.create", { ...o, issue_number: first.ref("number"), body: "closed" },
  { when: first.ref("state").equals("closed") });
cf.step("after_skip", "github:github.comments.delete", { ...o, comment_id: closed.ref("id") }, { confirm: true });
cf.map("not_a_list", "github:github.issues.get", first, { ...o, issue_number: 1 }, { after: ["if_open", "after_skip"] });
const conditions = (await cf.run()).toJSON();
await cf.compensate(conditions, { confirm: true });
console.log(JSON.stringify({ findings, plan, dry: dry.toJSON(), run: run.toJSON(), ok: run.ok, outcomes, cases, conditions }));
`), 0o644); err != nil {
		t.Fatal(err)
	}
	before := commentBodies(e.Mock.State())
	out := runCmd(t, e.env(), need(t, "node"), script, validationDocs())
	var got struct {
		Findings []any
		Plan     struct {
			Nodes []struct{ ID, Operation, Connector string }
		}
		Dry struct{ Status string }
		Run struct {
			Status       string
			FailedStep   string `json:"failed_step"`
			Error        struct{ Code string }
			Compensation json.RawMessage
		}
		OK         bool
		Outcomes   []struct{ Status string }
		Cases      map[string]string
		Conditions struct {
			FailedStep   string `json:"failed_step"`
			Error        struct{ Code string }
			Steps        map[string]struct{ Status string }
			Compensation []struct{ Step string }
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got.Findings) != 0 || len(got.Plan.Nodes) != 3 || got.Plan.Nodes[1].Operation != "github.comments.create" {
		t.Errorf("findings %v, plan %+v", got.Findings, got.Plan)
	}
	if got.Dry.Status != "succeeded" {
		t.Errorf("dry run: %s", out)
	}
	if got.OK || got.Run.Status != "failed" || got.Run.FailedStep != "missing" || got.Run.Error.Code != "not_found" {
		t.Errorf("run: %s", out)
	}
	if c, w := compact(t, string(got.Run.Compensation)), compact(t, wantCompensation); c != w {
		t.Errorf("compensation (key order matters)\n got %s\nwant %s", c, w)
	}
	if len(got.Outcomes) != 2 || got.Outcomes[0].Status != "ok" || got.Outcomes[1].Status != "ok" {
		t.Errorf("outcomes: %+v", got.Outcomes)
	}
	if after := commentBodies(e.Mock.State()); !reflect.DeepEqual(after, before) {
		t.Errorf("comments after compensate %v, want %v", after, before)
	}

	cond := got.Conditions
	status := map[string]string{}
	for id, s := range cond.Steps {
		status[id] = s.Status
	}
	wantStatus := map[string]string{"issues": "ok", "first": "ok", "if_open": "ok", "if_closed": "skipped",
		"after_skip": "skipped", "not_a_list": "failed"}
	if !reflect.DeepEqual(status, wantStatus) || cond.FailedStep != "not_a_list" || cond.Error.Code != "not_a_list" ||
		len(cond.Compensation) != 1 || cond.Compensation[0].Step != "if_open" {
		t.Errorf("conditions run: %+v", cond)
	}

	// Both runtimes read a flow document the same way: the same findings,
	// plan and document, byte for byte.
	pyOut, code := e.python(t, `
import json, sys
from anvil_compose import Composite
c = Composite()
out = {}
for name, doc in json.loads(sys.argv[1]).items():
    f = c.load(doc)
    out[name] = json.dumps({"findings": f.validate(), "plan": f.plan(), "flow": f.to_json()},
                           separators=(",", ":"), ensure_ascii=False)
print(json.dumps(out))
`, validationDocs())
	if code != 0 {
		t.Fatalf("python exit %d\n%s", code, pyOut)
	}
	var py map[string]string
	if err := json.Unmarshal([]byte(pyOut), &py); err != nil {
		t.Fatal(err)
	}
	if len(py) != len(validationCases) || len(got.Cases) != len(validationCases) {
		t.Fatalf("python read %d cases, typescript %d, want %d", len(py), len(got.Cases), len(validationCases))
	}
	for name, want := range py {
		if got.Cases[name] != want {
			t.Errorf("%s: typescript and python differ\n  ts %s\n  py %s", name, got.Cases[name], want)
		}
	}
}
