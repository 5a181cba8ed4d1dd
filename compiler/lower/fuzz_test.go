package lower

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/golden"
	"github.com/anvil-dev/anvil/runtime/air"
	"golang.org/x/tools/txtar"
)

// FuzzNames: name derivation never panics and always yields a three-part id.
func FuzzNames(f *testing.F) {
	for _, s := range [][3]string{
		{"/repos/{owner}/{repo}/issues", "GET", "listIssues"},
		{"/api/chat.postMessage", "POST", ""},
		{"/v1/{name}:cancel", "POST", "x"},
		{"/Customers('A')/orders.json", "GET", "İstanbulIES"},
		{"", "TRACE", "---"},
		{"/{a}/{b}", "DELETE", "ſſ"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, path, method, opID string) {
		b := deriveNames("svc", path, method, opID, "")
		if parts := strings.Split(b.ID, "."); len(parts) < 3 || parts[0] != "svc" || parts[1] == "" || parts[len(parts)-1] == "" {
			t.Errorf("id %q", b.ID)
		}
		if b.Canonical == "" {
			t.Error("empty canonical name")
		}
		for _, tok := range pathTokens(path) {
			if !pinnedCanonical.MatchString(tok) {
				t.Errorf("path token %q of %q is not snake_case ASCII", tok, path)
			}
		}
		if n := shortenName(b.Canonical, minCanonical); len(n) > max(minCanonical, 1+hashLen+1) {
			t.Errorf("shortenName(%q) = %q, longer than %d", b.Canonical, n, minCanonical)
		}
		if w := air.FitWireName("svc", "svc_"+b.Canonical); len(w) > air.MaxWireName {
			t.Errorf("served name %q is longer than %d", w, air.MaxWireName)
		}
		for _, s := range []string{path, method, opID} {
			if k := InputKey(s); !validKey.MatchString(k) && utf8.ValidString(s) && strings.IndexFunc(k, func(r rune) bool { return r > 127 }) < 0 {
				t.Errorf("InputKey(%q) = %q", s, k)
			}
			_ = Singularize(s)
		}
	})
}

// FuzzLowerManifest: any manifest the decoder accepts lowers against
// github-mini without panicking, and keeps every name unique.
func FuzzLowerManifest(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(golden.Path(effectsGoldenDir), "*.txtar"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(section(txtar.Parse(b), "anvil.yaml"))
	}
	example, err := os.ReadFile(miniManifestPath)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte("operations:\n  createIssue:\n    name: { resource: pulls, verb: list }\n  listPulls:\n    name: { resource: pulls, verb: list }\n"))
	spec := loadMiniSpec(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		man, ds := manifest.Decode("anvil.yaml", data)
		if ds.HasErrors() {
			return
		}
		doc, _ := Lower(spec, man, nil)
		ids, tools, clis := map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, op := range doc.Operations {
			if ids[op.ID] || tools[op.MCP.ToolName] || clis[op.CLI.Command] {
				t.Fatalf("duplicate name in %s / %s / %s", op.ID, op.MCP.ToolName, op.CLI.Command)
			}
			ids[op.ID], tools[op.MCP.ToolName], clis[op.CLI.Command] = true, true, true
			if op.Input.Schema == nil || op.Input.Safety.DryRun != "anvil_dry_run" {
				t.Fatalf("%s: no published schema", op.ID)
			}
		}
	})
}
