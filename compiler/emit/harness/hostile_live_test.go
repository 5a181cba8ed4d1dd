package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/examples/hostile/upstream"
)

// The hostile spec (examples/hostile) names its inputs after every SDK and
// CLI control: body fields confirm, dry_run, dryRun, idempotency_key, stage,
// headers, timeout and anvil_dry_run on a write that needs confirmation, has
// an idempotency carrier and a draft form, and query parameters dry_run and
// timeout on a read. These tests package it, serve it from the real fleet
// gateway in front of an upstream that records every request, and check in
// each language that every control still does what SKILL.md says: a dry run
// returns the plan and sends nothing upstream, a write without confirm is
// refused before it is sent, the idempotency key goes out as the carrier
// (the field of that name as a field), stage performs the draft, and the
// fields themselves reach the upstream under their own names.

// hostileCreateBody is what the upstream must receive for the real create
// call each language makes: every field under its wire name.
var hostileCreateBody = map[string]any{"name": "real", "confirm": true, "dry_run": true, "dryRun": true,
	"idempotency_key": "field-key", "stage": "field-stage", "timeout": float64(9), "headers": map[string]any{"h": "v"},
	"anvil_dry_run": true}

// wantHostileRequests is the upstream's log after each language's script:
// the real create (with the caller's key as the carrier), the staged create
// (the draft form: only the mapped arguments) and the real list. The dry
// runs and the unconfirmed create sent nothing.
var wantHostileRequests = []upstream.Request{
	{Method: "POST", Path: "/things", IdempotencyKey: "ctl-key", Body: hostileCreateBody},
	{Method: "POST", Path: "/things", Body: map[string]any{"name": "staged", "draft": true}},
	{Method: "GET", Path: "/things", Query: "dry_run=true&timeout=3"},
}

// hostileLive serves the hostile example as connector hostile and writes its
// package; env runs the package's code against that gateway.
func hostileLive(t *testing.T) (up *upstream.Server, pkg string, env []string) {
	t.Helper()
	doc, _ := example(t, "hostile")
	up, err := upstream.Start(liveUpstreamToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	gw := startLiveAt(t, "hostile", doc, up.URL)
	tree, err := Render(emit.Connector{ID: "hostile", Doc: doc})
	if err != nil {
		t.Fatal(err)
	}
	pkg = filepath.Join(t.TempDir(), "hostile")
	if err := tree.WriteTo(pkg); err != nil {
		t.Fatal(err)
	}
	env = []string{"PATH=" + filepath.Dir(tool(t, "node")) + string(os.PathListSeparator) + "/usr/bin:/bin", "HOME=" + t.TempDir(),
		"ANVIL_GATEWAY_URL=" + gw.URL, "ANVIL_GATEWAY_TOKEN_FILE=" + gw.TokenFile,
		"PYTHONPATH=" + filepath.Join(pkg, "python"), "PYTHONDONTWRITEBYTECODE=1"}
	return up, pkg, env
}

// checkHostileRequests compares the upstream's log with
// wantHostileRequests. derived: the SDK derives an idempotency key for a
// keyless call of an operation that supports keys (the staged create), as
// the Python and TypeScript SDKs do and the CLI does not.
func checkHostileRequests(t *testing.T, up *upstream.Server, derived bool) {
	t.Helper()
	got := up.Requests()
	want := append([]upstream.Request(nil), wantHostileRequests...)
	for i := range got {
		if strings.HasPrefix(got[i].IdempotencyKey, "anvil-") && len(got[i].IdempotencyKey) == len("anvil-")+32 {
			got[i].IdempotencyKey = "anvil-<derived>"
		}
	}
	if derived {
		want[1].IdempotencyKey = "anvil-<derived>"
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("the upstream received\n%s\nwant\n%s", g, w)
	}
}

// checkHostilePlan checks a dry run's plan of the create call: the request
// it would send carries every field and the caller's key as the carrier.
func checkHostilePlan(t *testing.T, lang, planJSON string) {
	t.Helper()
	var plan struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Body    map[string]any    `json:"body"`
	}
	if err := json.Unmarshal([]byte(planJSON), &plan); err != nil {
		t.Fatalf("%s: the dry run did not return a plan: %v\n%s", lang, err, planJSON)
	}
	want := map[string]any{}
	for k, v := range hostileCreateBody {
		want[k] = v
	}
	want["name"] = "planned"
	if plan.Method != "POST" || plan.Headers["idempotency-key"] != "ctl-key" || !reflect.DeepEqual(plan.Body, want) {
		t.Errorf("%s: the dry run's plan is %s, want a POST with idempotency-key ctl-key and body %v", lang, planJSON, want)
	}
}

func TestHostileSpecCompilesWithWarnings(t *testing.T) {
	doc, ds := example(t, "hostile")
	var warned []string
	for _, d := range ds {
		if d.Code == lower.CodeReservedControlName {
			warned = append(warned, d.Message)
		}
	}
	// dry_run and timeout on the read; confirm, dryRun, dry_run, headers,
	// idempotency_key, stage and timeout on the write (anvil_dry_run is
	// moved to body_anvil_dry_run by the tool's own rule).
	if len(warned) != 9 {
		t.Errorf("%d %s warnings, want 9:\n%s", len(warned), lower.CodeReservedControlName, strings.Join(warned, "\n"))
	}
	names := map[string]string{}
	for _, op := range doc.Operations {
		for _, p := range op.Input.Params {
			names[op.CanonicalName+"."+p.Key] = p.SDKName
		}
		if op.Input.Body != nil {
			for _, f := range op.Input.Body.Fields {
				names[op.CanonicalName+"."+f.Key] = f.SDKName
			}
		}
	}
	for key, want := range map[string]string{
		"list_thing.dry_run": "dry_run_field", "list_thing.timeout": "timeout_field",
		"create_thing.confirm": "confirm_field", "create_thing.dryRun": "dry_run_field", "create_thing.dry_run": "dry_run_field_2",
		"create_thing.idempotency_key": "idempotency_key_field", "create_thing.stage": "stage_field",
		"create_thing.headers": "headers_field", "create_thing.timeout": "timeout_field",
		"create_thing.name": "", "create_thing.body_anvil_dry_run": "", "create_thing.anvil_idempotency_key": "",
	} {
		if got, ok := names[key]; !ok || got != want {
			t.Errorf("SDK name of %s = %q (present %v), want %q", key, got, ok, want)
		}
	}
}

const hostilePython = `
import json
from anvil_hostile import HostileClient, AnvilError

c = HostileClient()
fields = dict(confirm_field=True, dry_run_field=True, dry_run_field_2=True, idempotency_key_field="field-key",
              stage_field="field-stage", timeout_field=9, headers_field={"h": "v"}, body_anvil_dry_run=True)
out = {}
out["plan"] = c.create_thing(name="planned", **fields, idempotency_key="ctl-key", confirm=True, dry_run=True)
try:
    c.create_thing(name="unconfirmed", **fields, idempotency_key="ctl-key")
    out["unconfirmed"] = "sent"
except AnvilError as e:
    out["unconfirmed"] = e.code
out["real"] = c.create_thing(name="real", **fields, idempotency_key="ctl-key", confirm=True, timeout=30)
out["staged"] = c.create_thing(name="staged", confirm=True, stage=True)
out["staged_effect"] = sorted((c.last_effect or {}).get("staged") or {})
out["list_plan"] = c.list_thing(dry_run_field=True, timeout_field=3, dry_run=True)
out["list"] = c.list_thing(dry_run_field=True, timeout_field=3, timeout=30)
print(json.dumps(out))
`

func TestHostileSpecPython(t *testing.T) {
	t.Parallel()
	up, _, env := hostileLive(t)
	r := run(t, env, "", tool(t, "python3"), "-c", hostilePython)
	if r.Code != 0 {
		t.Fatalf("python: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var out struct {
		Plan         json.RawMessage `json:"plan"`
		Unconfirmed  string          `json:"unconfirmed"`
		Real         map[string]any  `json:"real"`
		Staged       map[string]any  `json:"staged"`
		StagedEffect []string        `json:"staged_effect"`
		ListPlan     map[string]any  `json:"list_plan"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("python printed %s: %v", r.Stdout, err)
	}
	checkHostilePlan(t, "python", string(out.Plan))
	if out.Unconfirmed != "confirmation_required" {
		t.Errorf("python: create without confirm=True: %s, want confirmation_required", out.Unconfirmed)
	}
	if out.Staged["draft"] != true || len(out.StagedEffect) == 0 {
		t.Errorf("python: stage=True answered %v with staged %v, want the draft and its promote call", out.Staged, out.StagedEffect)
	}
	if u, _ := out.ListPlan["url"].(string); !strings.HasSuffix(u, "/things?dry_run=true&timeout=3") {
		t.Errorf("python: the list's dry run planned %v", out.ListPlan)
	}
	checkHostileRequests(t, up, true)
}

func TestHostileSpecCLI(t *testing.T) {
	t.Parallel()
	up, pkg, env := hostileLive(t)
	cli := filepath.Join(pkg, "bin", "hostile")
	fields := []string{"--confirm-field", "true", "--dry-run-field", "true", "--dry-run-field-2", "true",
		"--idempotency-key-field", "field-key", "--stage-field", "field-stage", "--timeout-field", "9",
		"--headers-field", `{"h":"v"}`, "--body-anvil-dry-run", "true", "--idempotency-key", "ctl-key"}
	cmd := func(args ...string) runResult { return run(t, env, "", cli, args...) }
	create := func(name string, extra ...string) runResult {
		return cmd(append(append([]string{"things", "create", "--name", name}, fields...), extra...)...)
	}

	if r := create("planned", "--confirm", "--dry-run"); r.Code != 0 {
		t.Errorf("cli --dry-run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	} else {
		checkHostilePlan(t, "cli", r.Stdout)
	}
	if r := create("unconfirmed"); r.Code != 3 || !strings.Contains(r.Stderr, "confirmation_required") {
		t.Errorf("cli without --confirm: exit %d, want 3 (confirmation_required)\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := create("real", "--confirm"); r.Code != 0 {
		t.Errorf("cli --confirm: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := cmd("things", "create", "--name", "staged", "--confirm", "--stage"); r.Code != 0 || !strings.Contains(r.Stdout, `"draft":true`) {
		t.Errorf("cli --stage: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := cmd("things", "list", "--dry-run-field", "true", "--timeout-field", "3", "--dry-run"); r.Code != 0 ||
		!strings.Contains(r.Stdout, "/things?dry_run=true&timeout=3") {
		t.Errorf("cli list --dry-run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := cmd("things", "list", "--dry-run-field", "true", "--timeout-field", "3"); r.Code != 0 {
		t.Errorf("cli list: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	checkHostileRequests(t, up, false)
}

const hostileTS = `import { HostileClient, AnvilError } from "./typescript/src/index.ts";

const c = new HostileClient();
const fields = { confirm: true, dry_run: true, dryRun: true, idempotency_key: "field-key", stage: "field-stage",
  timeout: 9, headers: { h: "v" }, body_anvil_dry_run: true };
const out: Record<string, unknown> = {};
out.plan = await c.createThing({ name: "planned", ...fields }, { idempotencyKey: "ctl-key", confirm: true, dryRun: true });
try {
  await c.createThing({ name: "unconfirmed", ...fields }, { idempotencyKey: "ctl-key" });
  out.unconfirmed = "sent";
} catch (e) {
  out.unconfirmed = e instanceof AnvilError ? e.code : String(e);
}
out.real = await c.createThing({ name: "real", ...fields }, { idempotencyKey: "ctl-key", confirm: true, timeoutMs: 30000 });
out.staged = await c.createThing({ name: "staged" }, { confirm: true, stage: true });
out.staged_effect = Object.keys(c.lastEffect?.staged ?? {}).sort();
out.list_plan = await c.listThing({ dry_run: true, timeout: 3 }, { dryRun: true });
out.list = await c.listThing({ dry_run: true, timeout: 3 });
console.log(JSON.stringify(out));
`

func TestHostileSpecTypeScript(t *testing.T) {
	t.Parallel()
	up, pkg, env := hostileLive(t)
	node, tsc := tool(t, "node"), tscPath(t)
	writeFile(t, filepath.Join(pkg, "hostile.ts"), hostileTS)
	writeFile(t, filepath.Join(pkg, "package.json"), `{"type":"module"}`)
	writeFile(t, filepath.Join(pkg, "tsconfig.hostile.json"), `{"extends": "./typescript/tsconfig.json",
  "compilerOptions": {"rootDir": ".", "outDir": "hostile-out"}, "include": ["hostile.ts", "typescript/src"]}`)
	if r := runFor(t, 5*time.Minute, env, "", tsc, "-p", filepath.Join(pkg, "tsconfig.hostile.json"), "--typeRoots", typeRoots()); r.Code != 0 {
		t.Fatalf("tsc: %s%s", r.Stdout, r.Stderr)
	}
	r := run(t, env, "", node, filepath.Join(pkg, "hostile-out", "hostile.js"))
	if r.Code != 0 {
		t.Fatalf("node: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var out struct {
		Plan         json.RawMessage `json:"plan"`
		Unconfirmed  string          `json:"unconfirmed"`
		Staged       map[string]any  `json:"staged"`
		StagedEffect []string        `json:"staged_effect"`
		ListPlan     map[string]any  `json:"list_plan"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("node printed %s: %v", r.Stdout, err)
	}
	checkHostilePlan(t, "typescript", string(out.Plan))
	if out.Unconfirmed != "confirmation_required" {
		t.Errorf("typescript: create without confirm: %s, want confirmation_required", out.Unconfirmed)
	}
	if out.Staged["draft"] != true || len(out.StagedEffect) == 0 {
		t.Errorf("typescript: stage answered %v with staged %v", out.Staged, out.StagedEffect)
	}
	if u, _ := out.ListPlan["url"].(string); !strings.HasSuffix(u, "/things?dry_run=true&timeout=3") {
		t.Errorf("typescript: the list's dry run planned %v", out.ListPlan)
	}
	checkHostileRequests(t, up, true)
}
