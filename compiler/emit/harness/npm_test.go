package harness

import (
	"os"

	"github.com/anvil-dev/anvil/compiler/emit"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tsConsumer is a TypeScript program in a fresh project that installed the
// package: it imports it by name and uses its typed errors and options.
const tsConsumer = `import { GithubClient, AnvilError, PolicyDenied, ERROR_CODES } from "anvil-github";
import type { CallOptions, ListIssueInput } from "anvil-github";

const input: ListIssueInput = { owner: "octo", repo: "hello" };
const options: CallOptions = { dryRun: true, stage: false, timeoutMs: 1000 };
const client = new GithubClient({ gatewayUrl: "http://127.0.0.1:1/mcp" });
const check = (e: unknown): string => (e instanceof PolicyDenied ? e.details["code"] as string : e instanceof AnvilError ? e.code : "other");
void [input, options, client.listIssue, check, ERROR_CODES.length];
`

// TestTypeScriptPackageInstallsAndImports: the package as npm ships it.
// npm pack runs its prepare script (tsc builds dist/), the tarball holds
// dist/ (ESM JavaScript and .d.ts) and src/ but no node_modules; installed
// into a fresh project it imports by name in plain node (no loader, no type
// stripping), and a consumer type-checks against its .d.ts with tsc --strict.
func TestTypeScriptPackageInstallsAndImports(t *testing.T) {
	t.Parallel()
	node, npm := tool(t, "node"), tool(t, "npm")
	tree, err := Render(emit.Connector{ID: "github", Doc: githubMini(t)})
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(t.TempDir(), "github")
	if err := tree.WriteTo(pkg); err != nil {
		t.Fatal(err)
	}
	ts := filepath.Join(pkg, "typescript")
	// The package's devDependencies (typescript, @types/node) as tools/ts pins them.
	if err := os.Symlink(filepath.Join(repoRoot(), "tools", "ts", "node_modules"), filepath.Join(ts, "node_modules")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{"PATH=" + filepath.Dir(node) + string(os.PathListSeparator) + filepath.Dir(npm) + ":/usr/bin:/bin",
		"HOME=" + home, "npm_config_cache=" + filepath.Join(home, "npm-cache"), "npm_config_update_notifier=false",
		"npm_config_audit=false", "npm_config_fund=false"}
	dest := t.TempDir()
	// npm pack builds dist/ with tsc (prepare): seconds, minutes on a loaded machine.
	r := runFor(t, 5*time.Minute, env, "", "/bin/sh", "-c", `cd "$0" && npm pack --silent --pack-destination "$1"`, ts, dest)
	if r.Code != 0 {
		t.Fatalf("npm pack: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	tarball := filepath.Join(dest, strings.TrimSpace(lastLine(r.Stdout)))
	list := run(t, env, "", "tar", "-tzf", tarball)
	for _, want := range []string{"package/package.json", "package/dist/index.js", "package/dist/index.d.ts",
		"package/dist/client.js", "package/dist/errors.d.ts", "package/src/index.ts"} {
		if !strings.Contains(list.Stdout, want+"\n") {
			t.Errorf("the tarball lacks %s:\n%s", want, list.Stdout)
		}
	}
	if strings.Contains(list.Stdout, "node_modules") {
		t.Errorf("the tarball holds node_modules")
	}

	app := t.TempDir()
	writeFile(t, filepath.Join(app, "package.json"), `{"name":"app","private":true,"type":"module"}`)
	if r := runFor(t, 3*time.Minute, env, "", "/bin/sh", "-c", `cd "$0" && npm install --offline --silent "$1"`, app, tarball); r.Code != 0 {
		t.Fatalf("npm install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	script := `import { GithubClient, AnvilError, PolicyDenied } from "anvil-github";
const e = new AnvilError("policy_denied", "no");
console.log(typeof GithubClient, e instanceof PolicyDenied, typeof new GithubClient({ gatewayUrl: "http://127.0.0.1:1/mcp" }).listIssue);`
	writeFile(t, filepath.Join(app, "main.mjs"), script)
	if r := run(t, env, "", node, filepath.Join(app, "main.mjs")); r.Code != 0 || strings.TrimSpace(r.Stdout) != "function true function" {
		t.Errorf("plain node importing the installed package: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// typescript/README.md's example, as written, in plain node against a live gateway.
	gw := startLive(t, "github", githubMini(t))
	writeFile(t, filepath.Join(app, "readme.mjs"), fill(t, codeBlock(t, string(tree["typescript/README.md"].Data), "ts")))
	liveEnv := append(append([]string(nil), env...), "ANVIL_GATEWAY_URL="+gw.URL, "ANVIL_GATEWAY_TOKEN_FILE="+gw.TokenFile)
	before := len(gw.Mock.Requests())
	if r := run(t, liveEnv, "", node, filepath.Join(app, "readme.mjs")); r.Code != 0 || !strings.Contains(r.Stdout, "class: 'read'") ||
		len(gw.Mock.Requests()) == before {
		t.Errorf("typescript/README.md's example in plain node: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	writeFile(t, filepath.Join(app, "consumer.ts"), tsConsumer)
	if r := runFor(t, 5*time.Minute, env, "", tscPath(t), "--strict", "--noEmit", "--module", "nodenext", "--moduleResolution", "nodenext",
		"--target", "es2022", "--types", "node", "--typeRoots", typeRoots(), filepath.Join(app, "consumer.ts")); r.Code != 0 {
		t.Errorf("tsc --strict against the installed package's types: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
