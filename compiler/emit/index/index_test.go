package index

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

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

func githubEntry(t *testing.T, grants ...Grant) Connector {
	c := Describe(githubMini(t))
	c.ID = "github"
	c.Grants = grants
	return c
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
}

func TestIndexGolden(t *testing.T) {
	out := Render([]Connector{githubEntry(t, Grant{Mode: "read", Operations: []string{"*"}})},
		Options{Out: filepath.Join("home", "connectors", "INDEX.md")})
	golden.Check(t, "index/github-read.md", out)
}

func TestIndexCases(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home", "connectors")
	out := filepath.Join(home, "INDEX.md")
	cases := []struct {
		name    string
		entries []Connector
		opts    Options
		want    []string
		not     []string
	}{
		{
			name:    "globs and account",
			entries: []Connector{githubEntry(t, Grant{Mode: "read", Operations: []string{"issues.*"}, Account: "work"})},
			opts:    Options{Out: out},
			want: []string{"# Connectors\n", "## github — GitHub Mini\n", "- **Granted:** read (issues.*), account work\n",
				"- **Skill:** `github/SKILL.md` (CLI: `github/bin/github`)\n", "never look for, ask for or use upstream"},
			not: []string{"No connectors are granted", "Spanning connectors"},
		},
		{
			name:    "star only shows no globs",
			entries: []Connector{githubEntry(t, Grant{Mode: "write", Operations: []string{"*"}})},
			opts:    Options{Out: out},
			want:    []string{"- **Granted:** write\n"},
		},
		{
			name: "several entries",
			entries: []Connector{githubEntry(t, Grant{Mode: "read", Operations: []string{"*"}},
				Grant{Mode: "write", Operations: []string{"comments.create", "issues.*"}, Account: "bot"})},
			opts: Options{Out: out},
			want: []string{"- **Granted:** read; write (comments.create, issues.*), account bot\n"},
		},
		{
			name: "nothing granted",
			opts: Options{Out: out},
			want: []string{"# Connectors\n", "_No connectors are granted to this branch._\n"},
			not:  []string{"## "},
		},
		{
			name: "composite",
			entries: []Connector{githubEntry(t, Grant{Mode: "read", Operations: []string{"*"}}),
				{ID: "jira", Title: "Jira", Grants: []Grant{{Mode: "read", Operations: []string{"*"}}}}},
			opts: Options{Out: out, Composite: true},
			want: []string{"## jira — Jira\n", "## Spanning connectors\n", "- **Skill:** `_compose/SKILL.md`\n",
				"tasks that span `github` and `jira`"},
		},
		{
			name:    "skills root elsewhere",
			entries: []Connector{githubEntry(t, Grant{Mode: "read", Operations: []string{"*"}})},
			opts:    Options{Out: out, SkillsRoot: filepath.Join(home, "..", "pkgs")},
			want:    []string{"- **Skill:** `../pkgs/github/SKILL.md` (CLI: `../pkgs/github/bin/github`)\n"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := string(Render(tc.entries, tc.opts))
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
			if string(Render(tc.entries, tc.opts)) != got {
				t.Errorf("not deterministic")
			}
		})
	}
}
