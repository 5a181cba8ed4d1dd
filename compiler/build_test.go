package compiler

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/compiler/lock"
	"github.com/anvil-dev/anvil/compiler/sources"
	"github.com/anvil-dev/anvil/runtime/air"
)

const exampleManifest = "../examples/github-mini/anvil.yaml"

// buildExample copies github-mini's manifest beside a temporary root (its
// lock is written there, never in the repository) and builds the bundle.
func buildExample(t *testing.T) (BuildOptions, *Result) {
	t.Helper()
	dir := t.TempDir()
	man := filepath.Join(dir, "anvil.yaml")
	b, err := os.ReadFile(exampleManifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(man, b, 0o644); err != nil {
		t.Fatal(err)
	}
	o := BuildOptions{Inputs: Inputs{Spec: exampleSpec, Manifest: man}, Out: filepath.Join(dir, "bundle"), Root: dir}
	res, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return o, res
}

// TestBuildWritesWhatItCounts: the bundle, its origin record and the
// source snapshot are written, and Files counts the files in Out.
func TestBuildWritesWhatItCounts(t *testing.T) {
	o, res := buildExample(t)
	if res.Doc == nil || res.Diagnostics.HasErrors() {
		t.Fatalf("doc %v, diagnostics %v", res.Doc, res.Diagnostics)
	}
	tree, err := files.Read(res.Out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != len(tree) || tree[lock.OriginFile].Data == nil || tree[air.DocumentFile].Data == nil {
		t.Errorf("Files = %d, the bundle holds %v", res.Files, tree.Names())
	}
	snap, fsys, err := sources.Open(o.Root, res.Snapshot.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Building the snapshot again stores nothing new and gives the same AIR.
	unused := filepath.Join(t.TempDir(), "unused")
	again, err := Build(context.Background(), BuildOptions{Inputs: Inputs{Spec: snap.Entrypoint, FS: fsys, Manifest: o.Manifest},
		Out: filepath.Join(t.TempDir(), "again"), Root: unused, Snapshot: snap})
	if err != nil {
		t.Fatal(err)
	}
	if again.Snapshot != snap {
		t.Error("a snapshot build does not report the snapshot it compiled")
	}
	if _, err := os.Stat(unused); !errors.Is(err, os.ErrNotExist) {
		t.Error("a snapshot build stored a snapshot")
	}
	first, _ := air.Marshal(res.Doc)
	second, _ := air.Marshal(again.Doc)
	if string(first) != string(second) {
		t.Error("the snapshot compiles to other AIR")
	}
}

// TestBuildRefusesNothingWritten: a description that cannot be read gives
// no document, its diagnostics and no bundle.
func TestBuildRefusesNothingWritten(t *testing.T) {
	dir := t.TempDir()
	res, err := Build(context.Background(), BuildOptions{Inputs: Inputs{Spec: filepath.Join(dir, "missing.yaml")}, Out: filepath.Join(dir, "out"), Root: dir})
	if err != nil || res.Doc != nil || !res.Diagnostics.HasErrors() {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused build wrote its bundle: %v", err)
	}
}

// TestBuildStepErrors: each failing stage names itself and writes nothing
// after it.
func TestBuildStepErrors(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var se *StepError
	_, err := Build(context.Background(), BuildOptions{Inputs: Inputs{Spec: exampleSpec}, Out: filepath.Join(dir, "out"), Root: blocker})
	if !errors.As(err, &se) || se.Step != StepSnapshot {
		t.Errorf("a root that is a file: %v, want a snapshot StepError", err)
	}
	_, err = Build(context.Background(), BuildOptions{Inputs: Inputs{Spec: exampleSpec}, Out: filepath.Join(blocker, "out"), Root: dir})
	if !errors.As(err, &se) || se.Step != StepWrite {
		t.Errorf("an out below a file: %v, want a write StepError", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(dir, "cancelled")
	if _, err := Build(ctx, BuildOptions{Inputs: Inputs{Spec: exampleSpec}, Out: out, Root: dir}); !errors.Is(err, context.Canceled) {
		t.Errorf("an ended context: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an ended context wrote the bundle: %v", err)
	}
}

// TestRebundleKeepsOrigin: approve's rewrite keeps the origin record and
// counts it.
func TestRebundleKeepsOrigin(t *testing.T) {
	_, res := buildExample(t)
	origin, err := os.ReadFile(filepath.Join(res.Out, lock.OriginFile))
	if err != nil {
		t.Fatal(err)
	}
	n, err := Rebundle(res.Doc, res.Out)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := files.Read(res.Out)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(tree) || string(tree[lock.OriginFile].Data) != string(origin) {
		t.Errorf("wrote %d, the bundle holds %v", n, tree.Names())
	}
}

// TestBuildGateway generates a one-bundle workspace's gateway and counts
// what it wrote; colliding connector ids are refused with diagnostics at
// both bundles and nothing written.
func TestBuildGateway(t *testing.T) {
	_, res := buildExample(t)
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	tree, err := files.Read(res.Out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gh", "GH"} { // fold to the same Go name
		if err := tree.WriteTo(filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	gen := t.TempDir()
	o := GatewayOptions{Workspace: ws, Yard: "mini", Gen: gen, ImportPath: "example.com/m/gen"}
	got, err := BuildGateway(context.Background(), o)
	var refused *RefusedError
	if !errors.As(err, &refused) || got == nil || len(got.Diagnostics) != 2 {
		t.Fatalf("colliding ids: %v, %+v", err, got)
	}
	if _, err := os.Stat(filepath.Join(gen, "mini")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused workspace wrote its gateway: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(ws, "GH")); err != nil {
		t.Fatal(err)
	}
	if got, err = BuildGateway(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	written, err := files.Read(got.Out)
	if err != nil {
		t.Fatal(err)
	}
	if got.Files != len(written) || got.Operations != len(res.Doc.Operations) || got.Specialised > got.Operations || len(got.Diagnostics) != 0 {
		t.Errorf("result %+v for %d files", got, len(written))
	}
}

func TestImportPathOf(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("// a module\nmodule  \"example.com/m\"\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := ImportPathOf(filepath.Join(dir, "gen", "x")); err != nil || p != "example.com/m/gen/x" {
		t.Errorf("ImportPathOf = %q, %v", p, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("go 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportPathOf(dir); err == nil {
		t.Error("a go.mod without a module line gives an import path")
	}
}
