package index

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/golden"
	"github.com/anvil-dev/anvil/runtime/air"
)

func githubMini(t *testing.T) *air.Document {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..", "examples", "github-mini")
	spec, err := openapi.Load(filepath.Join(root, "openapi.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	man, ds := manifest.Load(filepath.Join(root, "anvil.yaml"))
	if ds.HasErrors() {
		t.Fatal("manifest has errors")
	}
	doc, ds := lower.Lower(spec, man, nil)
	if ds.HasErrors() {
		t.Fatal("github-mini has errors")
	}
	return doc
}

// render renders INDEX.md and returns its bytes.
func render(t *testing.T, conns []emit.Connector, opts Options) []byte {
	t.Helper()
	tree, err := Render(conns, opts)
	if err != nil {
		t.Fatal(err)
	}
	name := FileName
	if opts.Out != "" {
		name = filepath.Base(opts.Out)
	}
	if len(tree) != 1 || tree[name].Data == nil {
		t.Fatalf("tree %v, want the one file %s", tree.Names(), name)
	}
	return tree[name].Data
}

// grants names the connector id in each grant.
func grants(id string, gs ...Grant) []Grant {
	for i := range gs {
		gs[i].Connector = id
	}
	return gs
}

func TestDescribe(t *testing.T) {
	c := Describe(githubMini(t))
	if c.Title != "GitHub Mini" ||
		c.For != "A small GitHub-shaped API (issues, issue comments, releases, pulls) used by Anvil's bundled example." ||
		c.UseWhen != "a task needs to read or change issues, comments, releases and pulls in GitHub Mini." {
		t.Errorf("Describe = %+v", c)
	}
	doc := githubMini(t)
	doc.Service.Description = ""
	for i := range doc.Operations {
		if doc.Operations[i].Effect.Kind != air.KindRead {
			doc.Operations[i].State = air.StateReviewRequired
		}
	}
	c = Describe(doc)
	if c.For != "GitHub Mini: 5 read and 0 write operation(s) over issues, comments, releases and pulls." ||
		c.UseWhen != "a task needs to read issues, comments, releases and pulls in GitHub Mini." {
		t.Errorf("read-only Describe = %+v", c)
	}

	// A large API names its first eight resources and counts the rest.
	doc = githubMini(t)
	doc.Service.Description = ""
	base := doc.Operations[0]
	doc.Operations = nil
	for i := 0; i < 12; i++ {
		op := base
		op.CLI.Command = fmt.Sprintf("github res%02d list", i)
		doc.Operations = append(doc.Operations, op)
	}
	c = Describe(doc)
	if c.For != "GitHub Mini: 12 read and 0 write operation(s) over res00, res01, res02, res03, res04, res05, res06, res07 and 4 more." {
		t.Errorf("large Describe = %+v", c)
	}
}

func TestIndexGolden(t *testing.T) {
	out := render(t, []emit.Connector{{ID: "github", Doc: githubMini(t)}},
		Options{Out: filepath.Join("home", "connectors", "INDEX.md"),
			Grants: grants("github", Grant{Mode: "read", Operations: []string{"*"}})})
	golden.Check(t, "index/github-read.md", out)
}

func TestIndexCases(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home", "connectors")
	out := filepath.Join(home, "INDEX.md")
	gh := []emit.Connector{{ID: "github", Doc: githubMini(t)}}
	jiraDoc := githubMini(t)
	jiraDoc.Service.DisplayName = "Jira"
	both := append(gh, emit.Connector{ID: "jira", Doc: jiraDoc})
	cases := []struct {
		name    string
		entries []emit.Connector
		opts    Options
		want    []string
		not     []string
	}{
		{
			name:    "globs and account",
			entries: gh,
			opts:    Options{Out: out, Grants: grants("github", Grant{Mode: "read", Operations: []string{"issues.*"}, Account: "work"})},
			want: []string{"# Connectors\n", "## github — GitHub Mini\n", "- **Granted:** read (issues.*), account work\n",
				"- **Skill:** `github/SKILL.md` (CLI: `github/bin/github`)\n", "never look for, ask for or use upstream"},
			not: []string{"No connectors are granted", "Spanning connectors"},
		},
		{
			name:    "star only shows no globs",
			entries: gh,
			opts:    Options{Out: out, Grants: grants("github", Grant{Mode: "write", Operations: []string{"*"}})},
			want:    []string{"- **Granted:** write\n"},
		},
		{
			name:    "several entries",
			entries: gh,
			opts: Options{Out: out, Grants: grants("github", Grant{Mode: "read", Operations: []string{"*"}},
				Grant{Mode: "write", Operations: []string{"comments.create", "issues.*"}, Account: "bot"})},
			want: []string{"- **Granted:** read; write (comments.create, issues.*), account bot\n"},
		},
		{
			name:    "nothing granted",
			entries: both,
			opts:    Options{Out: out, Grants: grants("gitlab", Grant{Mode: "read", Operations: []string{"*"}})},
			want:    []string{"# Connectors\n", "_No connectors are granted to this branch._\n"},
			not:     []string{"## "},
		},
		{
			name:    "composite",
			entries: append(both, emit.Connector{ID: "github", Doc: jiraDoc}),
			opts: Options{Out: out, Composite: true, Grants: append(grants("github", Grant{Mode: "read", Operations: []string{"*"}}),
				grants("jira", Grant{Mode: "read", Operations: []string{"*"}})...)},
			not: []string{"## github — Jira"},
			want: []string{"## github — GitHub Mini\n", "## jira — Jira\n", "## Spanning connectors\n", "- **Skill:** `_compose/SKILL.md`\n",
				"tasks that span `github` and `jira`"},
		},
		{
			name:    "skills root elsewhere",
			entries: gh,
			opts:    Options{Out: out, SkillsRoot: filepath.Join(home, "..", "pkgs"), Grants: grants("github", Grant{Mode: "read", Operations: []string{"*"}})},
			want:    []string{"- **Skill:** `../pkgs/github/SKILL.md` (CLI: `../pkgs/github/bin/github`)\n"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := string(render(t, tc.entries, tc.opts))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("unexpected %q in:\n%s", n, got)
				}
			}
			if !strings.HasPrefix(got, "# Connectors\n") {
				t.Errorf("INDEX.md does not start with # Connectors")
			}
			if strings.Contains(got, home) || !strings.HasSuffix(got, "\n") || strings.HasSuffix(got, "\n\n") {
				t.Errorf("absolute path or bad ending:\n%q", got)
			}
			if string(render(t, tc.entries, tc.opts)) != got {
				t.Errorf("not deterministic")
			}
		})
	}
}
