package harness

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchAgainstALiveGateway runs the CLI's search command and the Python
// and TypeScript SDKs' search methods against the real fleet gateway
// (GET /tools?search=...), and checks that each finds the operation a plain
// task names, names the command or method that runs it, and that the
// operation found can then be called by the name the search gave.
func TestSearchAgainstALiveGateway(t *testing.T) {
	t.Parallel()
	python, node, tsc := tool(t, "python3"), tool(t, "node"), tscPath(t)
	gw, _, pkg, env := livePackage(t, githubMini(t), node)
	cli := filepath.Join(pkg, "bin", "github")

	// The CLI: readable, then --json, then a refusal the gateway makes.
	r := run(t, env, "", node, cli, "search", "delete", "a", "comment", "on", "an", "issue", "--limit", "3")
	if r.Code != 0 {
		t.Fatalf("bin/github search: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	first := strings.SplitN(r.Stdout, "\n", 3)
	if len(first) < 3 || first[0] != "github comments delete: Delete an issue comment" ||
		!strings.HasPrefix(first[1], "    write, ") || !strings.Contains(first[1], "Tool github__github_delete_comment (github.comments.delete).") {
		t.Errorf("bin/github search printed:\n%s", r.Stdout)
	}
	r = run(t, env, "", node, cli, "search", "list the open pull requests", "--json")
	var found struct {
		Tools []struct {
			Name            string `json:"name"`
			OperationID     string `json:"operation_id"`
			Effect          string `json:"effect"`
			ConfirmRequired bool   `json:"confirm_required"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &found); r.Code != 0 || err != nil || len(found.Tools) == 0 {
		t.Fatalf("bin/github search --json: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	if top := found.Tools[0]; top.Name != "github__github_list_pull" || top.OperationID != "github.pulls.list" || top.Effect != "read" {
		t.Errorf("bin/github search --json: first result %+v", top)
	}
	if r := run(t, env, "", node, cli, "search", "issues", "--limit", "51"); r.Code != 2 || !strings.Contains(r.Stderr, `"validation_error"`) {
		t.Errorf("bin/github search --limit 51: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	before := len(gw.Mock.Requests())

	// Python: the result names the method, and the name it gives is callable.
	script := `
from anvil_github import GithubClient
import json
c = GithubClient()
found = c.search("get a release by its tag", limit=2)
assert len(found) <= 2, found
top = found[0]
print(json.dumps([top["name"], top["operation_id"], top["method"], top["confirm_required"]]))
print(json.dumps(c.call(c.search("list issues")[0]["name"], {"owner": "octo", "repo": "hello"})[0]["title"]))
`
	if r := run(t, env, "", python, "-c", script); r.Code != 0 ||
		!strings.HasPrefix(r.Stdout, `["github__github_get_release", "github.tags.get", "get_release", false]`+"\n") ||
		!strings.Contains(r.Stdout, `"Second issue"`) {
		t.Errorf("Python search: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if after := len(gw.Mock.Requests()); after != before+1 {
		t.Errorf("the Python script reached the upstream %d times, want once (searches never do)", after-before)
	}

	// TypeScript, compiled with the package's strict tsconfig.
	writeFile(t, filepath.Join(pkg, "typescript", "search_example.ts"), `import { GithubClient } from "./src/index.ts";
import type { SearchResult } from "./src/index.ts";
const c = new GithubClient();
const found = await c.search("create a release", 1);
const top: SearchResult & { method: string | null } = found[0];
console.log(JSON.stringify([found.length, top.name, top.method, top.effect]));
`)
	writeFile(t, filepath.Join(pkg, "typescript", "package.json"), `{"type":"module"}`)
	writeFile(t, filepath.Join(pkg, "typescript", "tsconfig.search.json"), `{"extends": "./tsconfig.json",
  "compilerOptions": {"rootDir": ".", "outDir": "search-out"}, "include": ["search_example.ts", "src"]}`)
	if r := run(t, env, "", tsc, "-p", filepath.Join(pkg, "typescript", "tsconfig.search.json"), "--typeRoots", typeRoots()); r.Code != 0 {
		t.Fatalf("the TypeScript search example does not compile:\n%s%s", r.Stdout, r.Stderr)
	}
	if r := run(t, env, "", node, filepath.Join(pkg, "typescript", "search-out", "search_example.js")); r.Code != 0 ||
		strings.TrimSpace(r.Stdout) != `[1,"github__github_create_release","createRelease","irreversible"]` {
		t.Errorf("TypeScript search: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
