package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDiffExitCodes: 1 for a change at the --fail-on level, 0 otherwise.
// The usage and input errors (exit 2) and the unchanged spec are
// internal/endtoend's diff-* cases.
func TestDiffExitCodes(t *testing.T) {
	dir := t.TempDir()
	bOld, bNew, man := writeCase(t, dir, "input_type_changed", func(m string) string { return m })
	nOld, nNew, nMan := writeCase(t, t.TempDir(), "input_added", func(m string) string { return m })
	bundle := filepath.Join(dir, "bundle")
	if code, _, stderr := runCLI(t, "", "compile", bOld, "--manifest", man, "--out", bundle); code != 0 {
		t.Fatal(stderr)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"breaking, default fail-on", []string{bOld, bNew, "--manifest", man}, 1},
		{"breaking, fail-on none", []string{bOld, bNew, "--manifest", man, "--fail-on", "none"}, 0},
		{"non-breaking, default fail-on", []string{nOld, nNew, "--manifest", nMan}, 0},
		{"non-breaking, fail-on any", []string{nOld, nNew, "--manifest", nMan, "--fail-on", "any"}, 1},
		{"bundle against spec", []string{bundle, bNew, "--manifest", man}, 1},
	} {
		code, stdout, stderr := runCLI(t, "", append([]string{"diff"}, c.args...)...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", c.name, code, c.code, stdout, stderr)
		}
	}
}

// TestDiffJSONShape: the documented keys, in the documented order.
func TestDiffJSONShape(t *testing.T) {
	oldSpec, newSpec, man := writeCase(t, t.TempDir(), "output_property_removed", func(m string) string { return m })
	code, stdout, stderr := runCLI(t, "", "diff", oldSpec, newSpec, "--manifest", man, "--format", "json", "--fail-on", "none")
	if code != 0 {
		t.Fatal(stderr)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &top); err != nil {
		t.Fatal(err)
	}
	if keys := sortedKeys(top); !slices.Equal(keys, []string{"changes", "semver", "summary"}) {
		t.Errorf("top-level keys %v", keys)
	}
	var r struct {
		Summary map[string]int
		Changes []map[string]any
	}
	json.Unmarshal([]byte(stdout), &r)
	if r.Summary["breaking"] != 4 || r.Summary["unknown"] != 0 || len(r.Summary) != 3 {
		t.Errorf("summary %v", r.Summary)
	}
	want := []string{"breaking", "detail", "kind", "method", "new_location", "old_location", "operation_id", "path", "tool"}
	for _, c := range r.Changes {
		if keys := sortedKeys(c); !slices.Equal(keys, want) {
			t.Errorf("change keys %v", keys)
		}
	}
	if i := strings.Index(stdout, `"operation_id"`); i < 0 || !strings.Contains(stdout[i:], `"tool"`) ||
		strings.Index(stdout, `"new_location"`) < strings.Index(stdout, `"old_location"`) {
		t.Errorf("keys out of the documented order:\n%s", stdout)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	slices.Sort(k)
	return k
}

// TestDiffGitHubReleases runs anvil diff on two published releases of
// GitHub's description (@octokit/openapi 22.0.0 and 23.0.2, fetched by
// scripts/fetch-specs.sh) and checks changes verified by hand in the two
// JSON files.
func TestDiffGitHubReleases(t *testing.T) {
	if testing.Short() {
		t.Skip("large spec pair")
	}
	oldSpec, newSpec := cachedSpec(t, "github-old.json"), cachedSpec(t, "github.json")
	// Its speed is BenchmarkDiffGitHubReleases's to measure.
	code, stdout, stderr := runCLI(t, "", "diff", oldSpec, newSpec, "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d (want 1: there are breaking changes): %s", code, stderr)
	}
	var r struct {
		Semver  string
		Summary struct {
			Breaking    int
			NonBreaking int `json:"non_breaking"`
		}
		Changes []struct {
			Method, Path, Kind, Detail string
			Breaking                   bool
			OldLocation                string `json:"old_location"`
			NewLocation                string `json:"new_location"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Semver != "major" || r.Summary.Breaking < 100 || r.Summary.NonBreaking < 100 {
		t.Errorf("semver %s, summary %+v", r.Semver, r.Summary)
	}
	for _, want := range []struct{ method, path, kind, detail string }{
		// 204 only → 200 (with a body) and 204.
		{"POST", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches", "output_status_changed", "success status 204 → 200"},
		// The request body's required list gained selected_repository_ids.
		{"DELETE", "/orgs/{org}/code-security/configurations/detach", "input_required_added", "input `selected_repository_ids`: now required"},
		// app-permissions lost team_discussions, in requests and answers.
		{"POST", "/app/installations/{installation_id}/access_tokens", "input_removed", "input `permissions.team_discussions`: removed"},
		{"GET", "/app/installations/{installation_id}", "output_property_removed", "response `permissions.team_discussions`: removed"},
		// The body's oneOf went from two alternatives to one.
		{"POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels", "input_type_changed", "input `body`: oneOf has 1 alternatives instead of 2 (narrowed)"},
	} {
		found := false
		for _, c := range r.Changes {
			if c.Method == want.method && c.Path == want.path && c.Kind == want.kind && c.Detail == want.detail {
				found = true
				if !c.Breaking || !strings.Contains(c.OldLocation, "github-old.json:") || !strings.Contains(c.NewLocation, "github.json:") {
					t.Errorf("%+v", c)
				}
			}
		}
		if !found {
			t.Errorf("no %s change of %s %s: %s", want.kind, want.method, want.path, want.detail)
		}
	}
	// A width format on an integer path parameter narrows nothing.
	for _, c := range r.Changes {
		if c.Path == "/repos/{owner}/{repo}/actions/jobs/{job_id}" && c.Kind == "input_format_changed" && c.Breaking {
			t.Errorf("format int64 on an integer marked breaking: %+v", c)
		}
	}
}

// TestDiffKeepsCompileErrors: a spec compiled with error diagnostics is
// still compared, and its errors are printed on stderr (they used to be
// dropped, so a broken manifest passed unseen).
func TestDiffKeepsCompileErrors(t *testing.T) {
	oldSpec, newSpec, man := writeCase(t, t.TempDir(), "auth_changed", func(m string) string {
		return strings.Replace(m, "class: compensable", "class: irreversible", 1)
	})
	code, stdout, stderr := runCLI(t, "", "diff", oldSpec, newSpec, "--manifest", man, "--fail-on", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "auth_changed") {
		t.Errorf("the report is missing:\n%s", stdout)
	}
	// Once per side, positioned in the manifest.
	if n := strings.Count(stderr, "anvil.yaml:"); n != 2 || !strings.Contains(stderr, "error") {
		t.Errorf("stderr holds %d manifest diagnostics, want the error once per side:\n%s", n, stderr)
	}
}
