package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestComposeBundleLayout: --layout bundle is refused with a coded error
// naming the command that fixes it while a bundle has no sdk/, and once
// `anvil package harness <bundle> --out <bundle>/sdk` wrote one, the
// catalog points at it.
func TestComposeBundleLayout(t *testing.T) {
	bundle := compileExample(t)
	out := filepath.Join(t.TempDir(), "_compose")
	code, _, stderr := runCLI(t, "", "connectors", "compose", bundle, "--out", out, "--layout", "bundle")
	if code != 1 || !strings.Contains(stderr, "compose/bundle_sdk_missing") || !strings.Contains(stderr, "anvil package harness "+bundle+" --out "+filepath.Join(bundle, "sdk")) {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused compose wrote its directory")
	}
	if code, _, stderr := runCLI(t, "", "package", "harness", bundle, "--out", filepath.Join(bundle, "sdk")); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := runCLI(t, "", "connectors", "compose", bundle, "--out", out, "--layout", "bundle"); code != 0 {
		t.Fatal(stderr)
	}
	cat, err := os.ReadFile(filepath.Join(out, "compose.json"))
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(out, filepath.Join(bundle, "sdk", "python"))
	if !strings.Contains(string(cat), `"path": "`+filepath.ToSlash(rel)+`"`) {
		t.Errorf("compose.json does not point at the bundle's sdk/python (%s):\n%s", rel, cat)
	}
	if _, err := os.Stat(filepath.Join(bundle, "sdk", "python", "anvil_github", "client.py")); err != nil {
		t.Error(err)
	}
}
