package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/examples/github-mini/mockupstream"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/serve"
)

// liveUpstreamToken is the mock upstream's bearer; only the gateway's vault holds it.
const liveUpstreamToken = "mock-upstream-token"

// live is a real fleet gateway (auth mode none, the upstream credential in
// its vault) serving one connector in front of the github-mini mock upstream.
type live struct {
	URL       string // the gateway's /mcp URL
	TokenFile string
	Mock      *mockupstream.Server
}

// startLive serves doc as connector cid in front of the github-mini mock upstream.
func startLive(t *testing.T, cid string, doc *air.Document) *live {
	t.Helper()
	mock, err := mockupstream.Start(mockupstream.Options{Token: liveUpstreamToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	gw := startLiveAt(t, cid, doc, mock.URL)
	gw.Mock = mock
	return gw
}

// startLiveAt serves doc as connector cid in front of the upstream at
// upstreamURL, which the gateway's vault holds liveUpstreamToken for.
func startLiveAt(t *testing.T, cid string, doc *air.Document, upstreamURL string) *live {
	t.Helper()
	base := t.TempDir()
	served := *doc
	served.Service.Servers = []air.Server{{URL: upstreamURL}}
	bundle, err := air.Files(&served)
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "workspace")
	if err := files.FromBytes(bundle).WriteTo(filepath.Join(ws, cid)); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(base, "vault.key")
	writeFile(t, keyFile, strings.Repeat("ab", 32))
	fl, err := fleet.Load(ws)
	if err != nil {
		t.Fatalf("fleet: %v", err)
	}
	g, err := serve.NewGateway(serve.Config{Host: "127.0.0.1", AllowedHosts: "127.0.0.1",
		VaultKeyFile: keyFile, VaultDir: filepath.Join(base, "vault")}, fl, nil)
	if err != nil {
		t.Fatalf("gateway: %v", err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/connect/api-key", "application/json",
		strings.NewReader(fmt.Sprintf(`{"connector":%q,"api_key":%q}`, cid, liveUpstreamToken)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("connect %s: %d %s", cid, resp.StatusCode, b)
	}
	tokenFile := filepath.Join(base, "turn.token")
	writeFile(t, tokenFile, "local-turn-token\n")
	return &live{URL: srv.URL + "/mcp", TokenFile: tokenFile}
}

// codeBlock returns the body of the first fenced block of lang in md.
func codeBlock(t *testing.T, md, lang string) string {
	t.Helper()
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(md)
	if m == nil {
		t.Fatalf("no ```%s block in:\n%s", lang, md)
	}
	return m[1]
}

// typedDocument is github-mini whose first read takes required inputs that
// are not strings: an integer and an array of enum values.
func typedDocument(t *testing.T) *air.Document {
	doc := githubMini(t)
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if op.ID != "github.issues.list" {
			continue
		}
		states := &air.Schema{Type: air.Types{"array"}, Items: &air.Schema{Type: air.Types{"string"},
			Enum: []json.RawMessage{json.RawMessage(`"open"`), json.RawMessage(`"closed"`)}}}
		op.Input.Params = append(op.Input.Params,
			air.Param{Name: "per_page", Key: "per_page", In: "query", Required: true, Schema: intS()},
			air.Param{Name: "states", Key: "states", In: "query", Required: true, Schema: states})
		op.Input.Schema.Properties["per_page"] = intS()
		op.Input.Schema.Properties["states"] = states
		op.Input.Schema.Required = append(op.Input.Schema.Required, "per_page", "states")
	}
	return doc
}

// largeDocument is github-mini with each operation served five times (the
// copies under resources issues2, comments2, ...: same upstream calls, new
// ids, tool names and commands), so it has more operations than
// skillSearchThreshold and its SKILL.md points at search.
func largeDocument(t *testing.T) *air.Document { return copiedDocument(t, 5) }

// copiedDocument is github-mini with each operation served copies times.
func copiedDocument(t *testing.T, copies int) *air.Document {
	doc := githubMini(t)
	n := len(doc.Operations)
	for k := 2; k <= copies; k++ {
		for i := 0; i < n; i++ {
			op := doc.Operations[i]
			sfx := fmt.Sprint(k)
			op.ID += "_" + sfx
			op.CanonicalName += "_" + sfx
			op.MCP.ToolName += "_" + sfx
			if f := strings.Fields(op.CLI.Command); len(f) > 1 {
				f[1] += sfx
				op.CLI.Command = strings.Join(f, " ")
			}
			doc.Operations = append(doc.Operations, op)
		}
	}
	return doc
}

// exampleValues fills the placeholders of the examples: one value per
// required input of the operations the documents use as examples, as a CLI
// flag takes it and as a Python literal. A new placeholder fails the test
// until it gets a value here.
var exampleValues = map[string]struct{ CLI, Py string }{
	"owner":    {"octo", `"octo"`},
	"repo":     {"hello", `"hello"`},
	"per_page": {"5", "5"},
	"states":   {"open", `["open"]`},
}

// fill replaces every placeholder of an example: <key> in CLI lines (a bare
// word), key=... in Python, "<key>" in TypeScript (a string literal, which
// keeps its quotes).
func fill(t *testing.T, s string) string {
	t.Helper()
	value := func(key string) struct{ CLI, Py string } {
		v, ok := exampleValues[key]
		if !ok {
			t.Fatalf("the example needs a value for %q:\n%s", key, s)
		}
		return v
	}
	s = regexp.MustCompile(`"<([a-z_]+)>"`).ReplaceAllStringFunc(s, func(m string) string {
		return `"` + value(m[2:len(m)-2]).CLI + `"`
	})
	s = regexp.MustCompile(`\b([a-z_]+)=\.\.\.`).ReplaceAllStringFunc(s, func(m string) string {
		k := strings.TrimSuffix(m, "=...")
		return k + "=" + value(k).Py
	})
	return regexp.MustCompile(`<([a-z_]+)>`).ReplaceAllStringFunc(s, func(m string) string {
		return value(m[1 : len(m)-1]).CLI
	})
}

// section is the text of the "## name" section of md.
func section(t *testing.T, md, name string) string {
	t.Helper()
	i := strings.Index(md, "\n## "+name+"\n")
	if i < 0 {
		t.Fatalf("no section %q", name)
	}
	rest := md[i+len(name)+5:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// TestDocExamplesRunAgainstALiveGateway runs every example the package shows
// a reader — each code span of SKILL.md's "Call it" section, the Python
// README's and the TypeScript README's code blocks — against the real fleet
// gateway in front of the mock upstream, with the placeholders filled in. A
// span it does not know how to run fails the test, so a new example cannot
// go unexecuted. It also makes the undo call an effect report names, the
// way SKILL.md says to.
//
// It runs for github-mini and for a document whose first read also takes an
// integer and an array of enum values, so SKILL.md's CLI example passes a
// plain value to an array flag (--states open).
func TestDocExamplesRunAgainstALiveGateway(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]*air.Document{"github-mini": githubMini(t), "typed": typedDocument(t), "large": largeDocument(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runDocExamples(t, doc)
		})
	}
}

// livePackage starts a live gateway serving doc as connector github and
// writes the harness package rendered from doc (tree) to pkg; env is the
// environment its Python, TypeScript and CLI code runs with against that
// gateway.
func livePackage(t *testing.T, doc *air.Document, node string) (gw *live, tree files.Tree, pkg string, env []string) {
	t.Helper()
	gw = startLive(t, "github", doc)
	tree, err := Render(emit.Connector{ID: "github", Doc: doc})
	if err != nil {
		t.Fatal(err)
	}
	pkg = filepath.Join(t.TempDir(), "github")
	if err := tree.WriteTo(pkg); err != nil {
		t.Fatal(err)
	}
	env = []string{"PATH=" + filepath.Dir(node) + string(os.PathListSeparator) + "/usr/bin:/bin", "HOME=" + t.TempDir(),
		"ANVIL_GATEWAY_URL=" + gw.URL, "ANVIL_GATEWAY_TOKEN_FILE=" + gw.TokenFile,
		"PYTHONPATH=" + filepath.Join(pkg, "python"), "PYTHONDONTWRITEBYTECODE=1"}
	return gw, tree, pkg, env
}

func runDocExamples(t *testing.T, doc *air.Document) {
	python, node, tsc := tool(t, "python3"), tool(t, "node"), tscPath(t)
	gw, tree, pkg, env := livePackage(t, doc, node)
	// shInPkg runs a shell command line in the package directory.
	shInPkg := func(line string) runResult {
		t.Helper()
		return run(t, append(env, "PKG="+pkg), "", "/bin/sh", "-c", `cd "$PKG" && `+line)
	}
	requests := func() int { return len(gw.Mock.Requests()) }

	// SKILL.md, "Call it" and (for a large connector) "Find an operation":
	// every code span.
	md := string(tree["SKILL.md"].Data)
	skill := section(t, md, "Call it")
	if strings.Contains(md, "\n## Find an operation\n") {
		skill += section(t, md, "Find an operation")
	}
	var pyImport string
	var pyCalls []string
	tsSkill := false
	ran := 0
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(skill, -1) {
		span := m[1]
		switch {
		case span == "bin/github <resource> <verb> --flag value":
			// The command pattern; its instances below are run.
		case span == "PYTHONPATH=<this folder>/python":
			// How the Python examples are run (env above).
		case strings.HasPrefix(span, "bin/github"), strings.HasPrefix(span, "<command> "):
			line := strings.Replace(span, "<command>", "bin/github issues list", 1)
			before := requests()
			r := shInPkg(fill(t, line))
			if r.Code != 0 || strings.TrimSpace(r.Stdout) == "" {
				t.Errorf("SKILL.md `%s`: exit %d\n%s%s", span, r.Code, r.Stdout, r.Stderr)
			}
			if strings.HasPrefix(span, "bin/github search ") && !strings.Contains(r.Stdout, "github issues list: List issues\n") {
				t.Errorf("SKILL.md `%s` did not find issues list:\n%s", span, r.Stdout)
			}
			if strings.Contains(span, "--owner") {
				reqs := gw.Mock.Requests()
				if len(reqs) == before {
					t.Errorf("SKILL.md `%s` did not reach the upstream", span)
				} else if last := reqs[len(reqs)-1].Path; strings.Contains(span, "--states") && !strings.Contains(last, "states=open") {
					t.Errorf("SKILL.md `%s` sent %s upstream, without states=open", span, last)
				}
			}
			ran++
		case strings.HasPrefix(span, "from anvil_github import "):
			pyImport = span
		case strings.HasPrefix(span, "GithubClient()."):
			pyCalls = append(pyCalls, span)
		case strings.HasPrefix(span, "import {") && strings.Contains(span, `"./typescript/src/index.ts"`):
			// Compiled with the README's example below.
			writeFile(t, filepath.Join(pkg, "skill_example.ts"), span+"\nconsole.log(typeof GithubClient);\n")
			tsSkill = true
		case strings.HasPrefix(span, "schemas/"), strings.HasPrefix(span, "examples/"), strings.HasPrefix(span, "reference/"):
			p := strings.Replace(span, "<method>", "list_issue", 1)
			if _, err := os.Stat(filepath.Join(pkg, filepath.FromSlash(p))); err != nil {
				t.Errorf("SKILL.md names %s, which the package lacks", span)
			}
		default:
			t.Errorf("SKILL.md shows `%s`, which this test does not know how to run", span)
		}
	}
	if pyImport == "" || len(pyCalls) == 0 {
		t.Fatalf("SKILL.md shows no Python import and call (%q, %q)", pyImport, pyCalls)
	}
	for _, pyCall := range pyCalls {
		script := pyImport + "\nimport json\nprint(json.dumps(" + fill(t, pyCall) + "))\n"
		if r := run(t, env, "", python, "-c", script); r.Code != 0 || !strings.Contains(r.Stdout, `"title"`) {
			t.Errorf("SKILL.md Python example: exit %d\n%s\n%s%s", r.Code, script, r.Stdout, r.Stderr)
		}
	}
	if ran < 3 {
		t.Errorf("ran %d CLI examples of SKILL.md, want at least 3", ran)
	}

	// python/README.md's code block.
	pyReadme := fill(t, codeBlock(t, string(tree["python/README.md"].Data), "python"))
	before := requests()
	if r := run(t, env, "", python, "-c", pyReadme); r.Code != 0 || !strings.Contains(r.Stdout, "'title'") || requests() == before {
		t.Errorf("python/README.md example: exit %d\n%s\n%s%s", r.Code, pyReadme, r.Stdout, r.Stderr)
	}

	// typescript/README.md's code block and SKILL.md's TypeScript import,
	// compiled with tsc (the package's own strict tsconfig) and run by node.
	if !tsSkill {
		t.Errorf("SKILL.md shows no TypeScript import")
		writeFile(t, filepath.Join(pkg, "skill_example.ts"), "export {};\n")
	}
	// The README imports the installed package by name (npm_test.go runs it
	// so); here it is compiled against the package's source.
	readme := fill(t, codeBlock(t, string(tree["typescript/README.md"].Data), "ts"))
	if !strings.Contains(readme, `from "anvil-github";`) {
		t.Errorf("typescript/README.md does not import the package by name:\n%s", readme)
	}
	writeFile(t, filepath.Join(pkg, "typescript", "readme_example.ts"), strings.Replace(readme, `from "anvil-github";`, `from "./src/index.ts";`, 1))
	writeFile(t, filepath.Join(pkg, "package.json"), `{"type":"module"}`)
	writeFile(t, filepath.Join(pkg, "tsconfig.docs.json"), `{"extends": "./typescript/tsconfig.json",
  "compilerOptions": {"rootDir": ".", "outDir": "docs-out"},
  "include": ["skill_example.ts", "typescript/readme_example.ts", "typescript/src"]}`)
	if r := run(t, env, "", tsc, "-p", filepath.Join(pkg, "tsconfig.docs.json"), "--typeRoots", typeRoots()); r.Code != 0 {
		t.Fatalf("the TypeScript examples do not compile:\n%s%s", r.Stdout, r.Stderr)
	}
	if r := run(t, env, "", node, filepath.Join(pkg, "docs-out", "skill_example.js")); tsSkill &&
		(r.Code != 0 || strings.TrimSpace(r.Stdout) != "function") {
		t.Errorf("SKILL.md's TypeScript import: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	before = requests()
	if r := run(t, env, "", node, filepath.Join(pkg, "docs-out", "typescript", "readme_example.js")); r.Code != 0 ||
		!strings.Contains(r.Stdout, "class: 'read'") || requests() == before {
		t.Errorf("typescript/README.md example: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	// SKILL.md, "Safety": a write's effect report names its undo call, made
	// with the tool name it gives.
	undo := `
from anvil_github import GithubClient
import json
c = GithubClient()
c.create_comment(owner="octo", repo="hello", issue_number=1, body="undo me")
undo = c.last_effect["undo"]
c.call(undo["tool"], undo["arguments"], confirm=True)
print(json.dumps(undo))
`
	if r := run(t, env, "", python, "-c", undo); r.Code != 0 {
		t.Errorf("undo by the effect report's tool: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, c := range gw.Mock.State().Comments {
		if c.Body == "undo me" {
			t.Errorf("the comment the undo call deleted is still there: %+v", c)
		}
	}
}
