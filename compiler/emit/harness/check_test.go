package harness

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeCompiles: every .py compiles, the CLI parses, and the
// TypeScript SDK type-checks under --strict.
func TestGeneratedCodeCompiles(t *testing.T) {
	t.Parallel()
	pkg := packageDir(t)
	python, node, tsc := tool(t, "python3"), tool(t, "node"), tscPath(t)

	var pyFiles []string
	err := filepath.WalkDir(filepath.Join(pkg, "python"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".py") {
			pyFiles = append(pyFiles, p)
		}
		return err
	})
	if err != nil || len(pyFiles) != 10 { // the nine of the contract and _transport.py
		t.Fatalf("python files: %d (%v)", len(pyFiles), err)
	}
	r := run(t, []string{"PYTHONPYCACHEPREFIX=" + t.TempDir()}, "", python, append([]string{"-m", "py_compile"}, pyFiles...)...)
	if r.Code != 0 {
		t.Errorf("py_compile: %s", r.Stderr)
	}
	pyLint(t, pyFiles)
	if r := run(t, nil, "", node, "--check", filepath.Join(pkg, "bin", "github")); r.Code != 0 {
		t.Errorf("node --check bin/github: %s", r.Stderr)
	}
	r = run(t, []string{"PATH=" + filepath.Dir(node)}, "", tsc, "--noEmit", "--strict", "-p",
		filepath.Join(pkg, "typescript", "tsconfig.json"), "--typeRoots", typeRoots())
	if r.Code != 0 {
		t.Errorf("tsc --noEmit --strict: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// tsDriver exercises the compiled TypeScript SDK under Node.
const tsDriver = `
import { writeFileSync } from "node:fs";
import { GithubClient, AnvilError, DEFAULT_CONNECTOR } from "./out/index.js";

const out = {};
const c = new GithubClient();
out.connector = c.transport.connector;
out.defaultConnector = DEFAULT_CONNECTOR;
out.issues = await c.listIssue({ owner: "octo", repo: "hello" });
out.effect = c.lastEffect;
try {
  await c.createIssue({ owner: "octo", repo: "hello", title: "x" });
} catch (e) {
  out.gate = { isAnvil: e instanceof AnvilError, code: e.code, requiredArguments: e.requiredArguments };
}
out.plan = await c.createIssue({ owner: "octo", repo: "hello", title: "x" }, { confirm: true, dryRun: true });
try {
  await c.createIssue({ owner: "octo", repo: "hello", title: "x" }, { confirm: true });
} catch (e) {
  out.refused = { code: e.code, traceId: e.traceId, details: e.details };
}
out.comment = await c.createComment({ owner: "octo", repo: "hello", issue_number: 2, body: "Looks good." });
const viaProvider = new GithubClient({ tokenProvider: () => "tok-provided" });
out.pulls = await viaProvider.listPull({ owner: "octo", repo: "hello" });
try {
  await new GithubClient({ tokenFile: process.argv[2] + "/missing" }).listPull({ owner: "o", repo: "r" });
} catch (e) {
  out.missing = e.code;
}
console.log(JSON.stringify(out));
`

func TestTypeScriptSDKUnderNode(t *testing.T) {
	t.Parallel()
	pkg := packageDir(t)
	node, tsc := tool(t, "node"), tscPath(t)
	work := t.TempDir()
	r := run(t, []string{"PATH=" + filepath.Dir(node)}, "", tsc, "-p", filepath.Join(pkg, "typescript", "tsconfig.json"),
		"--outDir", filepath.Join(work, "out"), "--declaration", "false", "--noCheck", "--typeRoots", typeRoots())
	if r.Code != 0 {
		t.Fatalf("tsc: %s%s", r.Stdout, r.Stderr)
	}
	writeFile(t, filepath.Join(work, "package.json"), `{"type":"module"}`)
	writeFile(t, filepath.Join(work, "driver.mjs"), tsDriver)
	token := filepath.Join(work, "turn.token")
	writeFile(t, token, "tok-ts\n")

	g := startGateway(t, githubMini(t), "github", false)
	r = run(t, []string{"ANVIL_GATEWAY_URL=" + g.URL, "ANVIL_GATEWAY_TOKEN_FILE=" + token, "GITHUB_TOKEN=wrong"}, "",
		node, filepath.Join(work, "driver.mjs"), work)
	if r.Code != 0 {
		t.Fatalf("node: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	out := decodeJSON(t, r.Stdout)
	if out["connector"] != "github" || out["defaultConnector"] != "github" || jsonOf(out["issues"]) != jsonOf(mockIssues) {
		t.Errorf("list: %s", r.Stdout)
	}
	if effect, _ := out["effect"].(map[string]any); effect["class"] != "read" {
		t.Errorf("lastEffect = %s", jsonOf(out["effect"]))
	}
	if jsonOf(out["gate"]) != `{"code":"confirmation_required","isAnvil":true,"requiredArguments":["confirm"]}` {
		t.Errorf("gate = %s", jsonOf(out["gate"]))
	}
	if jsonOf(out["plan"]) != `{"method":"GET","operation":"github_create_issue","would_send":true}` {
		t.Errorf("plan = %s", jsonOf(out["plan"]))
	}
	refused, _ := out["refused"].(map[string]any)
	details, _ := refused["details"].(map[string]any)
	if refused["code"] != "policy_denied" || refused["traceId"] != "trace_test_1" || details["code"] != "policy/grant_denied" {
		t.Errorf("refused = %s", jsonOf(out["refused"]))
	}
	if jsonOf(out["pulls"]) != jsonOf(mockPulls) || out["missing"] != "auth_required" {
		t.Errorf("provider/missing: %s", r.Stdout)
	}
	calls := g.Calls()
	if len(calls) != 5 {
		t.Fatalf("calls = %+v", calls)
	}
	if calls[0].Name != "github__github_list_issue" || jsonOf(calls[0].Args) != `{"owner":"octo","repo":"hello"}` || calls[0].Bearer != "Bearer tok-ts" {
		t.Errorf("list call = %+v", calls[0])
	}
	if jsonOf(calls[1].Args) != `{"anvil_dry_run":true,"confirm":true,"owner":"octo","repo":"hello","title":"x"}` {
		t.Errorf("dry run call = %s", jsonOf(calls[1].Args))
	}
	// The TypeScript SDK derives the same key as the Python SDK.
	if k, _ := calls[3].Args["idempotency_key"].(string); k != "anvil-"+derivedCommentKey() {
		t.Errorf("derived key = %q", k)
	}
	if calls[4].Bearer != "Bearer tok-provided" {
		t.Errorf("tokenProvider bearer = %q", calls[4].Bearer)
	}
	wantSession(t, g.Hits()[:4], "tok-ts", "anvil-sdk (typescript)")
	_ = os.Remove(token)
}

// pyLint checks generated Python files with the lint the templates' own
// Python passes (templates/test/python/test_lint.py): Python 3.9 grammar, no
// unused imports, no undefined names.
func pyLint(t *testing.T, files []string) {
	t.Helper()
	script := `
import sys
sys.path.insert(0, sys.argv[1])
import test_lint
found = [p for path in sys.argv[2:] for p in test_lint.problems(path)]
print("\n".join(found))
sys.exit(1 if found else 0)
`
	r := run(t, []string{"PYTHONDONTWRITEBYTECODE=1"}, "", tool(t, "python3"),
		append([]string{"-c", script, filepath.Join(repoRoot(), "templates", "test", "python")}, files...)...)
	if r.Code != 0 {
		t.Errorf("lint of the generated Python:\n%s%s", r.Stdout, r.Stderr)
	}
}
