package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/internal/testinput"
)

// githubSpec returns the cached GitHub REST description, or skips (fails
// under CI) when scripts/fetch-specs.sh has not run.
func githubSpec(tb testing.TB) string { return cachedSpec(tb, "github.json") }

// cachedSpec returns a description scripts/fetch-specs.sh caches (in
// $ANVIL_SPECS_DIR, default .cache/specs), or skips (fails under CI).
func cachedSpec(tb testing.TB, name string) string {
	tb.Helper()
	dir := os.Getenv("ANVIL_SPECS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", ".cache", "specs")
	}
	return testinput.File(tb, filepath.Join(dir, name), "run scripts/fetch-specs.sh")
}

func benchCompile(b *testing.B, args ...string) {
	out := filepath.Join(b.TempDir(), "bundle")
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		code := runEnv(context.Background(), e, append(append([]string{"anvil", "compile"}, args...), "--out", out))
		if code != 0 {
			b.Fatalf("compile exit %d: %s", code, e.stderr)
		}
	}
}

// BenchmarkCompileGithubMini is the whole anvil compile of the bundled example.
func BenchmarkCompileGithubMini(b *testing.B) {
	benchCompile(b, exampleSpec, "--manifest", exampleManifest)
}

// BenchmarkCompileGitHub is the whole anvil compile (load, lower, render,
// atomic write) of GitHub's REST description with no manifest. Compare with
// compiler/openapi's BenchmarkLibopenapiGitHub (libopenapi alone building
// its model of the same file).
func BenchmarkCompileGitHub(b *testing.B) {
	benchCompile(b, githubSpec(b), "--service", "github")
}

// BenchmarkDiffGitHubReleases is the whole anvil diff of two published
// releases of GitHub's description (TestDiffGitHubReleases checks its
// answer). Compare with BenchmarkCompileGitHub: a diff loads and lowers two
// descriptions of that size.
func BenchmarkDiffGitHubReleases(b *testing.B) {
	oldSpec, newSpec := cachedSpec(b, "github-old.json"), cachedSpec(b, "github.json")
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.stdout.(*bytes.Buffer).Reset()
		if code := runEnv(context.Background(), e, []string{"anvil", "diff", oldSpec, newSpec, "--format", "json"}); code != 1 {
			b.Fatalf("diff exit %d (want 1: breaking changes): %s", code, e.stderr)
		}
	}
}

// TestCompileGitHubPeakMemory compiles GitHub's description in a fresh
// process and checks its peak resident memory stays under 500 MB.
func TestCompileGitHubPeakMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	spec := githubSpec(t)
	bin := filepath.Join(t.TempDir(), "anvil")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// /usr/bin/time is not everywhere; read VmHWM from a wrapper shell instead.
	out := filepath.Join(t.TempDir(), "github")
	script := `"$@" & pid=$!; peak=0; while kill -0 $pid 2>/dev/null; do v=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null); [ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v; sleep 0.02; done; wait $pid; rc=$?; echo "peak_kb=$peak"; exit $rc`
	cmd := exec.Command("sh", "-c", script, "sh", bin, "compile", spec, "--service", "github", "--out", out, "--root", t.TempDir())
	res, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, res)
	}
	i := strings.LastIndex(string(res), "peak_kb=")
	kb, _ := strconv.Atoi(strings.TrimSpace(string(res)[i+len("peak_kb="):]))
	t.Logf("anvil compile of github.json: peak RSS %d MB", kb/1024)
	if kb > 500*1024 {
		t.Errorf("peak RSS %d MB, want under 500 MB", kb/1024)
	}
	if !strings.Contains(string(res), "diagnostics: 0 error(s)") {
		t.Errorf("GitHub's description compiles with errors:\n%s", res)
	}
}
