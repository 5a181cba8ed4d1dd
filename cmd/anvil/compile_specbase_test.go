package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompileRefOutsideSpecDir is the CLI regression test for finding 1 of
// issue 15: a $ref that leaves the spec's directory fails the compile with
// spec/ref_outside_base at its position and writes nothing (no bundle, no
// source snapshot); --spec-base widens the base, and the snapshot then holds
// only paths relative to it.
func TestCompileRefOutsideSpecDir(t *testing.T) {
	work := t.TempDir()
	write := func(p, data string) {
		t.Helper()
		full := filepath.Join(work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("spec/openapi.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: getA\n      responses:\n        '200': {$ref: '../shared/ok.yaml'}\n")
	write("shared/ok.yaml", "description: ok\n")
	spec := filepath.Join(work, "spec", "openapi.yaml")
	root, out := t.TempDir(), filepath.Join(t.TempDir(), "bundle")

	code, stdout, stderr := runCLI(t, "", "compile", spec, "--out", out, "--root", root)
	if code != 1 || !strings.Contains(stdout+stderr, "openapi.yaml:8:23: error spec/ref_outside_base") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, p := range []string{out, filepath.Join(root, ".anvil")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written", p)
		}
	}

	code, stdout, stderr = runCLI(t, "", "compile", spec, "--spec-base", work, "--out", out, "--root", root, "--format", "json")
	if code != 0 {
		t.Fatalf("with --spec-base: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res compileResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(filepath.Join(root, ".anvil", "sources", res.Source, "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(meta), filepath.ToSlash(work)) || !strings.Contains(string(meta), `"entrypoint": "spec/openapi.yaml"`) {
		t.Errorf("snapshot.json:\n%s", meta)
	}
	// The snapshot compiles again without any --spec-base.
	if code, stdout, stderr := runCLI(t, "", "compile", "--source", res.Source, "--out", filepath.Join(t.TempDir(), "again"), "--root", root); code != 0 {
		t.Errorf("--source: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
