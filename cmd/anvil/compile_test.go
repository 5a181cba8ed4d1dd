package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/compiler/lock"
	"github.com/anvil-dev/anvil/golden"
	"github.com/anvil-dev/anvil/runtime/air"
)

const (
	exampleSpec     = "../../examples/github-mini/openapi.yaml"
	exampleManifest = "../../examples/github-mini/anvil.yaml"
)

// runCLI runs the anvil command in-process.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if len(args) > 0 && args[0] == "compile" && !slices.Contains(args, "--root") {
		// Source snapshots go to the test's directory, not the package's
		// (TestCompileSnapshotsInWorkingDirectory covers the default).
		args = append(slices.Clone(args), "--root", t.TempDir())
	}
	code = runEnv(context.Background(), e, append([]string{"anvil"}, args...))
	return code, out.String(), errb.String()
}

func compileExample(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "workspace", "github")
	code, stdout, stderr := runCLI(t, "", "compile", exampleSpec, "--manifest", exampleManifest, "--out", out)
	if code != 0 {
		t.Fatalf("compile exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	// The bundle's record of where this checkout keeps its manifest is
	// local state, not contract: the tree comparisons leave it out.
	if err := os.Remove(filepath.Join(out, lock.OriginFile)); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompileGithubMiniGolden(t *testing.T) {
	out := compileExample(t)
	tree, err := files.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	golden.CheckTree(t, "compile/github-mini", tree.Bytes())
}

func TestCompileSummary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "github")
	code, stdout, stderr := runCLI(t, "", "compile", exampleSpec, "--manifest", exampleManifest, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The count is what was written: air.json, generation.json and the
	// bundle's record of its manifest (it said "(2 files)" for these 3).
	written, err := files.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 3 {
		t.Errorf("the bundle holds %d files, want 3: %v", len(written), written.Names())
	}
	for _, want := range []string{"Compiled 12 operations from " + exampleSpec + " (openapi-3.0) → " + out + fmt.Sprintf(" (%d files).", len(written)),
		"  approved: 12  review_required: 0", "  diagnostics: 0 error(s), 0 warning(s)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

func TestCompileIsDeterministic(t *testing.T) {
	a, err := files.Read(compileExample(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := files.Read(compileExample(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range a {
		if !bytes.Equal(f.Data, b[name].Data) {
			t.Errorf("%s differs between two compiles", name)
		}
	}
	if len(a) != len(b) {
		t.Errorf("file counts differ: %d vs %d", len(a), len(b))
	}
}

func TestEmittedAIRValidatesAgainstItsSchema(t *testing.T) {
	out := compileExample(t)
	b, err := os.ReadFile(filepath.Join(out, air.DocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	validateAIR(t, b)
}

// validateAIR checks an air.json against runtime/air's JSON Schema.
func validateAIR(t *testing.T, doc []byte) {
	t.Helper()
	sch, err := jsonschema.UnmarshalJSON(bytes.NewReader(air.JSONSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("air.schema.json", sch); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("air.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("air.json does not validate against the AIR schema: %v", err)
	}
}

func TestCompileWithoutManifest(t *testing.T) {
	out := filepath.Join(t.TempDir(), "gh")
	code, stdout, stderr := runCLI(t, "", "compile", exampleSpec, "--service", "github", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "approved: 0  review_required: 12") {
		t.Errorf("want every operation review_required:\n%s", stdout)
	}
	doc, err := air.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Service.ID != "github" {
		t.Errorf("service id %q", doc.Service.ID)
	}
}

// TestCompileSnapshotsInWorkingDirectory: without --root, compile locks its
// input under ./.anvil/sources (the reference's edge case: compile has side
// effects in the current directory).
func TestCompileSnapshotsInWorkingDirectory(t *testing.T) {
	spec, err := filepath.Abs(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if code := runEnv(context.Background(), e, []string{"anvil", "compile", spec, "--service", "github", "--out", "bundle"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	ents, err := os.ReadDir(filepath.Join(dir, ".anvil", "sources"))
	if err != nil || len(ents) != 1 {
		t.Fatalf("./.anvil/sources: %v, %v", ents, err)
	}
	if !strings.Contains(out.String(), "source snapshot: "+ents[0].Name()) {
		t.Errorf("summary does not name the snapshot %s:\n%s", ents[0].Name(), out.String())
	}
}

// TestCompileFromSource: --source compiles the snapshot's bytes, not the
// file's current ones. (The refusals, a tampered snapshot among them, are
// internal/endtoend's compile-source-* cases.)
func TestCompileFromSource(t *testing.T) {
	work := t.TempDir()
	spec := filepath.Join(work, "openapi.yaml")
	orig, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	first := filepath.Join(t.TempDir(), "github")
	code, stdout, stderr := runCLI(t, "", "compile", spec, "--manifest", exampleManifest, "--out", first, "--root", root, "--format", "json")
	if code != 0 {
		t.Fatalf("compile: %d %s", code, stderr)
	}
	var res compileResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || !strings.HasPrefix(res.Source, "src_") {
		t.Fatalf("json summary without a source id: %v\n%s", err, stdout)
	}
	// The original changes; the snapshot does not.
	if err := os.WriteFile(spec, []byte("openapi: 3.0.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "github")
	code, stdout, stderr = runCLI(t, "", "compile", "--source", res.Source, "--manifest", exampleManifest, "--out", again, "--root", root)
	if code != 0 || !strings.Contains(stdout, "from source "+res.Source) {
		t.Fatalf("compile --source: %d\n%s\n%s", code, stdout, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(first, "air.json"))
	b, _ := os.ReadFile(filepath.Join(again, "air.json"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the bundle compiled from the snapshot differs from the first")
	}
}

// TestCompileEndpointAndEntrypoint: --endpoint replaces the servers;
// --entrypoint names the entry document of a spec directory.
func TestCompileEndpointAndEntrypoint(t *testing.T) {
	out := filepath.Join(t.TempDir(), "github")
	code, _, stderr := runCLI(t, "", "compile", filepath.Dir(exampleSpec), "--entrypoint", filepath.Base(exampleSpec),
		"--manifest", exampleManifest, "--out", out, "--endpoint", "http://127.0.0.1:4010/api")
	if code != 0 {
		t.Fatalf("compile: %d %s", code, stderr)
	}
	doc, err := air.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Service.Servers) != 1 || doc.Service.Servers[0].URL != "http://127.0.0.1:4010/api" {
		t.Errorf("servers = %+v", doc.Service.Servers)
	}
}
