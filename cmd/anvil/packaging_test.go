package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRepackagingKeepsTheUsersFiles: anvil package harness into a package it
// wrote before replaces and removes only its own files (anvil-generated.json)
// and leaves node_modules, dist and a person's own files alone, even when
// the new package is another service's.
func TestRepackagingKeepsTheUsersFiles(t *testing.T) {
	dir := t.TempDir()
	gh, hostile, pkg := filepath.Join(dir, "ws", "github"), filepath.Join(dir, "ws", "hostile"), filepath.Join(dir, "pkg")
	if code, _, stderr := runCLI(t, "", "compile", exampleSpec, "--manifest", exampleManifest, "--out", gh); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := runCLI(t, "", "compile", "../../examples/hostile/openapi.yaml", "--manifest", "../../examples/hostile/anvil.yaml", "--out", hostile); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := runCLI(t, "", "package", "harness", gh, "--out", pkg, "--connector", "work"); code != 0 {
		t.Fatal(stderr)
	}
	user := map[string]string{
		"typescript/node_modules/typescript/package.json": `{"name":"typescript"}`,
		"typescript/dist/index.js":                        "export {};\n",
		"typescript/test/my.test.mjs":                     "// mine\n",
		"python/anvil_github/my_helpers.py":               "# mine\n",
		"run-tests.sh":                                    "#!/bin/sh\n",
	}
	for name, data := range user {
		p := filepath.Join(pkg, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, bundle := range []string{gh, hostile} {
		if code, _, stderr := runCLI(t, "", "package", "harness", bundle, "--out", pkg, "--connector", "work"); code != 0 {
			t.Fatalf("repackaging %s: %s", bundle, stderr)
		}
		for name, data := range user {
			if b, err := os.ReadFile(filepath.Join(pkg, filepath.FromSlash(name))); err != nil || string(b) != data {
				t.Errorf("after repackaging %s, %s is %q (%v)", filepath.Base(bundle), name, b, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(pkg, "python", "anvil_github", "client.py")); !os.IsNotExist(err) {
		t.Errorf("the previous package's client.py is still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(pkg, "python", "anvil_hostile", "client.py")); err != nil {
		t.Errorf("the new package is not there: %v", err)
	}
}
