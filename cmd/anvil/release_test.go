package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func harnessVersion(t *testing.T, pkg string) string {
	t.Helper()
	var h struct {
		Service struct {
			Version string `json:"version"`
		} `json:"service"`
	}
	readJSON(t, filepath.Join(pkg, "harness.json"), &h)
	return h.Service.Version
}

// TestSpecUpdateChain: a spec update through diff → compile → package gives
// the package a new major version, a changelog naming the breaking change,
// and a SKILL.md that warns of it; packaging the same contract again keeps
// the version.
func TestSpecUpdateChain(t *testing.T) {
	dir := t.TempDir()
	oldSpec, newSpec, man := writeCase(t, dir, "input_type_changed", func(m string) string { return m })
	oldBundle, newBundle, pkg := filepath.Join(dir, "old"), filepath.Join(dir, "new"), filepath.Join(dir, "pkg")
	if code, _, stderr := runCLI(t, "", "compile", oldSpec, "--manifest", man, "--out", oldBundle); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := runCLI(t, "", "package", "harness", oldBundle, "--out", pkg, "--connector", "tracker"); code != 0 {
		t.Fatal(stderr)
	}
	if v := harnessVersion(t, pkg); v != "1.0.0" {
		t.Fatalf("first package version %q", v)
	}
	if _, err := os.Stat(filepath.Join(pkg, "CHANGELOG.md")); err == nil {
		t.Error("a first packaging wrote a changelog")
	}

	code, stdout, stderr := runCLI(t, "", "diff", oldSpec, newSpec, "--manifest", man, "--format", "json")
	if code != 1 {
		t.Fatalf("diff exit %d (want 1: a breaking change): %s", code, stderr)
	}
	var rep struct {
		Semver string `json:"semver"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Semver != "major" {
		t.Fatalf("diff: %v %s", err, stdout)
	}

	if code, _, stderr := runCLI(t, "", "compile", newSpec, "--manifest", man, "--out", newBundle); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr = runCLI(t, "", "package", "harness", newBundle, "--out", pkg, "--connector", "tracker", "--previous", pkg)
	if code != 0 {
		t.Fatalf("package: %d %s", code, stderr)
	}
	if !strings.Contains(stdout, "Version 2.0.0 (major from 1.0.0: 1 breaking, 0 non-breaking change(s)); see CHANGELOG.md.") {
		t.Errorf("stdout: %s", stdout)
	}
	if v := harnessVersion(t, pkg); v != "2.0.0" {
		t.Errorf("package version %q, want 2.0.0", v)
	}
	if py, _ := os.ReadFile(filepath.Join(pkg, "python", "pyproject.toml")); !strings.Contains(string(py), `version = "2.0.0"`) {
		t.Errorf("pyproject.toml keeps the old version:\n%s", py)
	}
	log, _ := os.ReadFile(filepath.Join(pkg, "CHANGELOG.md"))
	for _, want := range []string{"# Changelog\n\n## 2.0.0\n", "Changes since 1.0.0", "**semver: major (1 breaking, 0 non-breaking)**",
		"| **breaking** | `input_type_changed` | tracker_get_issue GET /repos/{owner}/{repo}/issues/{issue_number} | input `issue_number`: type integer → string (narrowed) |"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("CHANGELOG.md lacks %q:\n%s", want, log)
		}
	}
	skill, _ := os.ReadFile(filepath.Join(pkg, "SKILL.md"))
	if !strings.Contains(string(skill), "## Breaking changes in 2.0.0") || !strings.Contains(string(skill), "- `tracker_get_issue` (input_type_changed): input `issue_number`: type integer → string (narrowed)") {
		t.Errorf("SKILL.md does not mention the breaking change:\n%s", skill)
	}

	// The same bundle again: no change, the version and changelog stand.
	code, stdout, stderr = runCLI(t, "", "package", "harness", newBundle, "--out", pkg, "--connector", "tracker", "--previous", pkg)
	if code != 0 || !strings.Contains(stdout, "Version 2.0.0 (none from 2.0.0") {
		t.Fatalf("repackage: %d %s %s", code, stdout, stderr)
	}
	if again, _ := os.ReadFile(filepath.Join(pkg, "CHANGELOG.md")); string(again) != string(log) {
		t.Errorf("an unchanged packaging rewrote the changelog:\n%s", again)
	}
	if skill2, _ := os.ReadFile(filepath.Join(pkg, "SKILL.md")); strings.Contains(string(skill2), "Breaking changes") {
		t.Error("SKILL.md still warns of breaking changes of an earlier version")
	}

	// A bundle works as --previous too; a missing one is an error.
	if code, stdout, stderr := runCLI(t, "", "package", "harness", newBundle, "--out", filepath.Join(dir, "pkg2"), "--connector", "tracker", "--previous", oldBundle); code != 0 || !strings.Contains(stdout, "Version 2.0.0 (major from 1.0.0") {
		t.Errorf("--previous <bundle>: %d %s %s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "", "package", "harness", newBundle, "--out", filepath.Join(dir, "pkg3"), "--previous", filepath.Join(dir, "nope")); code != 1 || !strings.Contains(stderr, "--previous") {
		t.Errorf("missing --previous: %d %s", code, stderr)
	}
}

// TestPackageRefusesErrors: a bundle compiled with errors is not packaged
// unless --allow-errors, which warns on stderr.
func TestPackageRefusesErrors(t *testing.T) {
	dir := t.TempDir()
	spec, _, man := writeCase(t, dir, "input_added", func(m string) string {
		return strings.Replace(m, "name: { resource: issues, verb: list }", "name: { resource: issues, verb: list }\n    effect: { class: irreversible }", 1)
	})
	bundle := filepath.Join(dir, "b")
	if code, _, stderr := runCLI(t, "", "compile", spec, "--manifest", man, "--out", bundle); code != 1 || !strings.Contains(stderr, "effect/class_on_read") {
		t.Fatalf("compile: %d %s", code, stderr)
	}
	pkg := filepath.Join(dir, "pkg")
	code, _, stderr := runCLI(t, "", "package", "harness", bundle, "--out", pkg)
	if code != 1 || !strings.Contains(stderr, "compiled with 1 error diagnostic(s)") || !strings.Contains(stderr, "effect/class_on_read") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(pkg); err == nil {
		t.Error("a refused packaging wrote the package")
	}
	code, _, stderr = runCLI(t, "", "package", "harness", bundle, "--out", pkg, "--allow-errors")
	if code != 0 || !strings.Contains(stderr, "WARNING: packaging") {
		t.Errorf("--allow-errors: %d %s", code, stderr)
	}
}
