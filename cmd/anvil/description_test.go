package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManifestDescriptionReachesSkillAndIndex: service.description and an
// operation's description replace the description's text in SKILL.md,
// INDEX.md and the tool descriptions (Petstore's "use the api key
// special-key" landed next to "never use credentials").
func TestManifestDescriptionReachesSkillAndIndex(t *testing.T) {
	dir := t.TempDir()
	man := filepath.Join(dir, "anvil.yaml")
	if err := os.WriteFile(man, []byte(`service:
  name: petstore
  description: The shop's pets, their status and the inventory.
auth: {type: api_key, carrier: {in: header, name: X-API-Key}}
operations:
  listPets: {state: approved, description: Lists the shop's pets by status.}
  getPetById: {state: approved}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	bundle := filepath.Join(ws, "petstore")
	if code, stdout, stderr := runCLI(t, "", "compile", petstoreSpec, "--manifest", man, "--out", bundle); code != 0 {
		t.Fatalf("%s%s", stdout, stderr)
	}
	home := filepath.Join(dir, "home")
	if code, _, stderr := runCLI(t, "", "package", "harness", bundle, "--out", filepath.Join(home, "petstore"), "--workspace", ws); code != 0 {
		t.Fatal(stderr)
	}
	grants := filepath.Join(dir, "grants.json")
	if err := os.WriteFile(grants, []byte(`[{"connector":"petstore","operations":["*"],"mode":"read"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "", "connectors", "index", "--grants", grants, "--out", filepath.Join(home, "INDEX.md"), "--workspace", ws, bundle); code != 0 {
		t.Fatal(stderr)
	}
	for _, f := range []string{filepath.Join(home, "petstore", "SKILL.md"), filepath.Join(home, "INDEX.md")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "special-key") {
			t.Errorf("%s still shows the description's text", f)
		}
		if !strings.Contains(string(b), "The shop's pets, their status and the inventory.") {
			t.Errorf("%s lacks the manifest's description:\n%s", f, b)
		}
	}
	var all strings.Builder
	filepath.WalkDir(filepath.Join(home, "petstore"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			all.Write(b)
		}
		return nil
	})
	if !strings.Contains(all.String(), "Lists the shop's pets by status.") {
		t.Error("the operation's manifest description is in no file of the harness")
	}
}
