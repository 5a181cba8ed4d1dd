package compose

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit"

	"github.com/anvil-dev/anvil/golden"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/templates"
)

// stubPackage writes a harness.json, all the composite looks for in a package.
func stubPackage(t *testing.T, root, cid string) {
	t.Helper()
	dir := filepath.Join(root, cid)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hj := `{"schemaVersion":1,"connector":"` + cid + `","entrypoints":{"skill":"SKILL.md","cli":"bin/` + cid +
		`","python":"python/anvil_github","typescript":"typescript/src/index.ts"}}`
	if err := os.WriteFile(filepath.Join(dir, "harness.json"), []byte(hj), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGoldenGitHubMini(t *testing.T) {
	root := t.TempDir()
	stubPackage(t, root, "github")
	conns := []emit.Connector{{ID: "github", Doc: miniDoc(t)}}
	tree, err := Render(conns, Options{OutDir: filepath.Join(root, "_compose")})
	if err != nil {
		t.Fatal(err)
	}
	verbatim, err := templates.Verbatim()
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckTree(t, "compose/github-mini", tree.Bytes(), verbatim)

	// Deterministic: the same input renders the same bytes, wherever it lives.
	other := t.TempDir()
	stubPackage(t, other, "github")
	again, err := Render([]emit.Connector{{ID: "github", Doc: miniDoc(t)}}, Options{OutDir: filepath.Join(other, "_compose")})
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(tree) {
		t.Fatalf("second render has %d files, first %d", len(again), len(tree))
	}
	for name, f := range tree {
		if !bytes.Equal(again[name].Data, f.Data) {
			t.Errorf("%s differs between renders", name)
		}
	}
	if !bytes.Equal(tree["compose.json"].Data, tree["python/anvil_compose/catalog.json"].Data) {
		t.Error("python/anvil_compose/catalog.json is not compose.json")
	}
	for _, want := range []string{`"path": "../github/python"`, `"import": "../../../github/typescript/src/index.js"`,
		`"schema": "anvil.compose-catalog/v1"`} {
		if !bytes.Contains(tree["compose.json"].Data, []byte(want)) {
			t.Errorf("compose.json lacks %s", want)
		}
	}
	skill := string(tree["SKILL.md"].Data)
	if !strings.HasPrefix(skill, "---\nname: compose\n") || strings.Count(skill, "\n") >= 80 {
		t.Errorf("SKILL.md must start with name: compose and stay under 80 lines")
	}
	for _, want := range []string{"confirm", "compensate", "never performed"} {
		if !strings.Contains(skill, want) {
			t.Errorf("SKILL.md does not mention %q", want)
		}
	}
}

func TestCatalogEntries(t *testing.T) {
	ops := catalogOps(miniDoc(t))
	if len(ops) != 12 {
		t.Fatalf("%d operations, want 12", len(ops))
	}
	by := map[string]CatalogOp{}
	for _, op := range ops {
		by[op.ID] = op
	}
	c := by["github.comments.create"]
	if c.Method.Python != "create_comment" || c.Method.TypeScript != "createComment" || c.Effect != "mutation" ||
		c.EffectClass != "reversible" || c.Confirm || c.Undo == nil || c.Undo.Kind != "inverse" ||
		c.Undo.Operation != "github.comments.delete" {
		t.Errorf("comments.create: %+v", c)
	}
	args, _ := c.Undo.Arguments.MarshalJSON()
	if string(args) != `{"owner":"request.owner","repo":"request.repo","comment_id":"response.id"}` {
		t.Errorf("undo arguments %s (manifest order)", args)
	}
	for _, in := range c.Inputs {
		if in.Key == "idempotency_key" {
			t.Error("the idempotency carrier is the SDK's idempotency_key control, not an input")
		}
	}
	i := by["github.issues.create"]
	ia, _ := i.Undo.Arguments.MarshalJSON()
	if !i.Confirm || i.Undo.Kind != "compensate" || string(ia) != `{"owner":"request.owner","repo":"request.repo","issue_number":"response.number","state":{"const":"closed"}}` {
		t.Errorf("issues.create: %+v %s", i, ia)
	}
	if r := by["github.releases.create"]; r.EffectClass != "irreversible" || r.Undo != nil {
		t.Errorf("releases.create: %+v", r)
	}
	if g := by["github.tags.get"]; g.Method.Python != "get_release" || g.Effect != "read" || g.Undo != nil {
		t.Errorf("tags.get: %+v", g)
	}

	// An operation the gateway does not serve is left out, and an undo
	// pointing at it is not offered.
	doc := miniDoc(t)
	doc.Operation("github.comments.delete").State = air.StateReviewRequired
	ops = catalogOps(doc)
	for _, op := range ops {
		if op.ID == "github.comments.delete" {
			t.Error("an unserved operation is in the catalog")
		}
		if op.ID == "github.comments.create" && op.Undo != nil {
			t.Error("an undo names an unserved operation")
		}
	}
}

func TestRefusals(t *testing.T) {
	doc := miniDoc(t)
	cases := []struct {
		name    string
		setup   func(root string) ([]emit.Connector, Options)
		err     error
		message string
	}{
		{"reserved id", func(root string) ([]emit.Connector, Options) {
			stubPackage(t, root, "_compose")
			return []emit.Connector{{ID: "_compose", Doc: doc}}, Options{OutDir: filepath.Join(root, "out")}
		}, ErrReservedID, "_compose is reserved"},
		{"composed twice", func(root string) ([]emit.Connector, Options) {
			stubPackage(t, root, "github")
			return []emit.Connector{{ID: "github", Doc: doc}, {ID: "github", Doc: doc}}, Options{OutDir: filepath.Join(root, "_compose")}
		}, ErrDuplicateConnector, "github"},
		{"missing package", func(root string) ([]emit.Connector, Options) {
			return []emit.Connector{{ID: "github", Doc: doc}}, Options{OutDir: filepath.Join(root, "_compose")}
		}, ErrNotHarnessPackage, "is not a harness package"},
		{"folder without harness.json", func(root string) ([]emit.Connector, Options) {
			_ = os.MkdirAll(filepath.Join(root, "github", "python"), 0o755)
			return []emit.Connector{{ID: "github", Doc: doc}}, Options{OutDir: filepath.Join(root, "_compose")}
		}, ErrNotHarnessPackage, "is not a harness package"},
		{"out holds something else", func(root string) ([]emit.Connector, Options) {
			stubPackage(t, root, "github")
			out := filepath.Join(root, "_compose")
			_ = os.MkdirAll(out, 0o755)
			_ = os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
			return []emit.Connector{{ID: "github", Doc: doc}}, Options{OutDir: out}
		}, ErrRefuseReplace, "refusing to replace"},
		{"out holds another compose.json", func(root string) ([]emit.Connector, Options) {
			stubPackage(t, root, "github")
			out := filepath.Join(root, "_compose")
			_ = os.MkdirAll(out, 0o755)
			_ = os.WriteFile(filepath.Join(out, "compose.json"), []byte(`{"schema":"other"}`), 0o644)
			return []emit.Connector{{ID: "github", Doc: doc}}, Options{OutDir: out}
		}, ErrRefuseReplace, "refusing to replace"},
		{"out is a file", func(root string) ([]emit.Connector, Options) {
			stubPackage(t, root, "github")
			out := filepath.Join(root, "_compose")
			_ = os.WriteFile(out, []byte("x"), 0o644)
			return []emit.Connector{{ID: "github", Doc: doc}}, Options{OutDir: out}
		}, ErrRefuseReplace, "refusing to replace"},
		{"invalid id", func(root string) ([]emit.Connector, Options) {
			return []emit.Connector{{ID: "team/github", Doc: doc}}, Options{OutDir: filepath.Join(root, "_compose")}
		}, ErrInvalidConnector, "team/github"},
		{"no document", func(root string) ([]emit.Connector, Options) {
			return []emit.Connector{{ID: "github"}}, Options{OutDir: filepath.Join(root, "_compose")}
		}, ErrInvalidConnector, "no AIR document"},
		{"nothing to compose", func(root string) ([]emit.Connector, Options) {
			return nil, Options{OutDir: filepath.Join(root, "_compose")}
		}, ErrNoConnectors, "no connectors"},
		{"bad layout", func(root string) ([]emit.Connector, Options) {
			return []emit.Connector{{ID: "github", Doc: doc}}, Options{OutDir: filepath.Join(root, "_compose"), Layout: "flat"}
		}, ErrInvalidOptions, "harness or bundle"},
		{"no out", func(root string) ([]emit.Connector, Options) {
			return []emit.Connector{{ID: "github", Doc: doc}}, Options{}
		}, ErrInvalidOptions, "output directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conns, opts := c.setup(t.TempDir())
			_, err := Render(conns, opts)
			if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.message) {
				t.Errorf("error %v, want %v containing %q", err, c.err, c.message)
			}
		})
	}
}

func TestReplacesAPreviousComposite(t *testing.T) {
	root := t.TempDir()
	stubPackage(t, root, "github")
	out := filepath.Join(root, "_compose")
	conns := []emit.Connector{{ID: "github", Doc: miniDoc(t)}}
	for i := 0; i < 2; i++ {
		tree, err := Render(conns, Options{OutDir: out})
		if err != nil {
			t.Fatalf("render %d: %v", i, err)
		}
		if err := tree.WriteTo(out); err != nil {
			t.Fatal(err)
		}
	}
	// An empty directory is fine too.
	empty := filepath.Join(root, "empty")
	_ = os.MkdirAll(empty, 0o755)
	if _, err := Render(conns, Options{OutDir: empty, SkillsRoot: root}); err != nil {
		t.Errorf("empty out: %v", err)
	}
}

func TestLayouts(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home", "connectors")
	stubPackage(t, home, "team_github")
	doc := miniDoc(t)

	// Harness layout with a skills root that is not out's parent.
	tree, err := Render([]emit.Connector{{ID: "team_github", Doc: doc}},
		Options{OutDir: filepath.Join(base, "out", "_compose"), SkillsRoot: home})
	if err != nil {
		t.Fatal(err)
	}
	cat := string(tree["compose.json"].Data)
	for _, want := range []string{`"path": "../../home/connectors/team_github/python"`,
		`"import": "../../../../home/connectors/team_github/typescript/src/index.js"`} {
		if !strings.Contains(cat, want) {
			t.Errorf("harness layout: compose.json lacks %s", want)
		}
	}

	// Bundle layout: each bundle's own sdk/, a harness package. A bundle
	// without one is refused at compose time (before, the catalog pointed
	// at a directory nothing creates and loading failed later with
	// connector_missing).
	bundle := filepath.Join(base, "workspace", "github")
	_, err = Render([]emit.Connector{{ID: "github", Doc: doc, Dir: bundle}},
		Options{OutDir: filepath.Join(base, "out2"), Layout: LayoutBundle})
	if !errors.Is(err, ErrNotHarnessPackage) || !strings.Contains(err.Error(), "compose/bundle_sdk_missing") ||
		!strings.Contains(err.Error(), "anvil package harness "+bundle+" --out "+filepath.Join(bundle, "sdk")) {
		t.Errorf("bundle layout without sdk/: %v", err)
	}
	stubPackage(t, bundle, "sdk")
	tree, err = Render([]emit.Connector{{ID: "github", Doc: doc, Dir: bundle}},
		Options{OutDir: filepath.Join(base, "out2"), Layout: LayoutBundle})
	if err != nil {
		t.Fatal(err)
	}
	cat = string(tree["compose.json"].Data)
	for _, want := range []string{`"path": "../workspace/github/sdk/python"`, `"package": "anvil_github"`,
		`"import": "../../../workspace/github/sdk/typescript/src/index.js"`, `"client": "GithubClient"`} {
		if !strings.Contains(cat, want) {
			t.Errorf("bundle layout: compose.json lacks %s", want)
		}
	}
	if _, err := Render([]emit.Connector{{ID: "github", Doc: doc}}, Options{OutDir: filepath.Join(base, "out3"), Layout: LayoutBundle}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("bundle layout without a bundle directory: %v", err)
	}
}
