package harness

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingConfirmIsConfirmationRequiredOnEverySurface calls a
// confirmation-gated operation (github.comments.delete) without confirm
// through a live fleet gateway and checks that every surface says
// confirmation_required, as the seed's REST table and SKILL.md promise: the
// REST route answers 428 with that code; the Python SDK raises it (from the
// gateway's MCP tool error, and from the REST body through its HTTP error
// mapping); the compiled TypeScript SDK throws it; the CLI exits 3 with it.
// Nothing reaches the upstream.
func TestMissingConfirmIsConfirmationRequiredOnEverySurface(t *testing.T) {
	t.Parallel()
	python, node, tsc := tool(t, "python3"), tool(t, "node"), tscPath(t)
	gw, _, pkg, env := livePackage(t, githubMini(t), node)
	const tool = "github__github_delete_comment"
	args := `{"owner": "octo", "repo": "hello", "comment_id": 1}`
	before := len(gw.Mock.Requests())

	// REST: 428 confirmation_required.
	token, err := os.ReadFile(gw.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(gw.URL, "/mcp")+"/call/"+tool,
		strings.NewReader(`{"arguments": `+args+`}`))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	restBody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var refusal struct {
		Error struct{ Code string } `json:"error"`
	}
	if resp.StatusCode != http.StatusPreconditionRequired || json.Unmarshal(restBody, &refusal) != nil ||
		refusal.Error.Code != "confirmation_required" {
		t.Fatalf("REST without confirm: %d %s, want 428 confirmation_required", resp.StatusCode, restBody)
	}

	// Python: the gateway's MCP tool error, the REST body, and the SDK's own gate.
	script := `
import sys
from anvil_github import GithubClient
from anvil_github.errors import AnvilError
from anvil_github._transport import _http_error, decode_tool_result
c = GithubClient()
try:
    decode_tool_result(c._gateway.call_tool("` + tool + `", ` + args + `))
    print("mcp: no error")
except AnvilError as e:
    print("mcp:", e.code, e.required_arguments)
print("rest:", _http_error(428, sys.stdin.buffer.read(), None).code)
try:
    c.delete_comment(owner="octo", repo="hello", comment_id=1)
    print("sdk: no error")
except AnvilError as e:
    print("sdk:", e.code)
`
	r := run(t, env, string(restBody), python, "-c", script)
	want := "mcp: confirmation_required ['confirm']\nrest: confirmation_required\nsdk: confirmation_required\n"
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("Python: exit %d\n%s%s\nwant\n%s", r.Code, r.Stdout, r.Stderr, want)
	}

	// TypeScript, compiled with the package's strict tsconfig.
	writeFile(t, filepath.Join(pkg, "typescript", "confirm_example.ts"), `
import { AnvilError } from "./src/errors.ts";
import { GatewayTransport, decodeToolResult } from "./src/gateway.ts";

async function main(): Promise<void> {
  const t = new GatewayTransport(process.env.ANVIL_GATEWAY_URL ?? "");
  try {
    decodeToolResult(await t.callTool("`+tool+`", `+args+`));
    console.log("mcp: no error");
  } catch (e) {
    console.log("mcp:", e instanceof AnvilError ? e.code + " " + e.requiredArguments.join(",") : String(e));
  }
}
void main();
`)
	writeFile(t, filepath.Join(pkg, "package.json"), `{"type":"module"}`)
	writeFile(t, filepath.Join(pkg, "tsconfig.confirm.json"), `{"extends": "./typescript/tsconfig.json",
  "compilerOptions": {"rootDir": ".", "outDir": "confirm-out"},
  "include": ["typescript/confirm_example.ts", "typescript/src"]}`)
	if r := run(t, env, "", tsc, "-p", filepath.Join(pkg, "tsconfig.confirm.json"), "--typeRoots", typeRoots()); r.Code != 0 {
		t.Fatalf("the TypeScript example does not compile:\n%s%s", r.Stdout, r.Stderr)
	}
	if r := run(t, env, "", node, filepath.Join(pkg, "confirm-out", "typescript", "confirm_example.js")); r.Code != 0 ||
		r.Stdout != "mcp: confirmation_required confirm\n" {
		t.Errorf("TypeScript: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	// CLI: exit 3 with the envelope on stderr.
	r = run(t, append(env, "PKG="+pkg), "", "/bin/sh", "-c",
		`cd "$PKG" && bin/github comments delete --owner octo --repo hello --comment-id 1`)
	var cliErr struct {
		Error struct{ Code string } `json:"error"`
	}
	if r.Code != 3 || json.Unmarshal([]byte(strings.TrimSpace(r.Stderr)), &cliErr) != nil || cliErr.Error.Code != "confirmation_required" {
		t.Errorf("CLI without --confirm: exit %d, stderr %s; want exit 3 and confirmation_required", r.Code, r.Stderr)
	}

	if n := len(gw.Mock.Requests()); n != before {
		t.Errorf("%d requests reached the upstream without confirmation", n-before)
	}
}
