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
	e := startLive(t, []string{"github"}, nil)
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
const issues = flow.step("issues", "github.issues.list", { owner: "octo", repo: "hello", state: "all" });
flow.map("comment", "github.comments.create", issues,
  { owner: "octo", repo: "hello", issue_number: item("number"), body: "triaged" });
flow.step("missing", "github.issues.get", { owner: "octo", repo: "hello", issue_number: 99 }, { after: ["comment"] });
const findings = flow.validate();
const plan = flow.plan();
const dry = await flow.dryRun();
const run = await flow.run();
const outcomes = await flow.compensate(run, { confirm: true });
console.log(JSON.stringify({ findings, plan, dry: dry.toJSON(), run: run.toJSON(), ok: run.ok, outcomes }));
`), 0o644); err != nil {
		t.Fatal(err)
	}
	before := commentBodies(e.Mock.State())
	out := runCmd(t, e.env(), need(t, "node"), script)
	var got struct {
		Findings []any
		Plan     struct{ Nodes []struct{ ID, Operation, Connector string } }
		Dry      struct{ Status string }
		Run      struct {
			Status       string
			FailedStep   string `json:"failed_step"`
			Error        struct{ Code string }
			Compensation json.RawMessage
		}
		OK       bool
		Outcomes []struct{ Status string }
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
}
