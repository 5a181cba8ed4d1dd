package sources_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/compiler/sources"
)

const entryDoc = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /things:
    get:
      operationId: listThings
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "../common/defs.yaml#/Thing"}
`

const defsDoc = `Thing:
  type: object
  properties:
    id: {type: string}
`

// TestSnapshotRoundTrip: a description spread over two directories (under
// a widened base) is stored under their common directory, compiles from the snapshot to the
// same model, keeps its id when saved again, and is refused once tampered.
func TestSnapshotRoundTrip(t *testing.T) {
	src := t.TempDir()
	write := func(p, data string) {
		t.Helper()
		full := filepath.Join(src, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("spec/openapi.yaml", entryDoc)
	write("common/defs.yaml", defsDoc)
	entry := filepath.Join(src, "spec", "openapi.yaml")

	// The description reaches ../common: the base is widened to src (the
	// --spec-base flag), for the loader and the recorder alike.
	rec := sources.Recorder{Base: src}
	direct, err := openapi.Load(entry, &openapi.Options{OnRead: rec.Record, Base: src})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	snap, err := rec.Save(root, entry, direct.Kind)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Entrypoint != "spec/openapi.yaml" || len(snap.Files) != 2 || snap.Files[0].Path != "common/defs.yaml" {
		t.Fatalf("snapshot %+v", snap)
	}
	again, err := rec.Save(root, entry, direct.Kind)
	if err != nil || again.ID != snap.ID {
		t.Fatalf("second save: %v, id %s vs %s", err, again.ID, snap.ID)
	}

	opened, files, err := sources.Open(root, snap.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(snap, opened); diff != "" {
		t.Errorf("opened snapshot differs (-saved +opened):\n%s", diff)
	}
	fromSnap, err := openapi.Load(opened.Entrypoint, &openapi.Options{FS: files})
	if err != nil {
		t.Fatal(err)
	}
	if len(fromSnap.Operations) != 1 || fromSnap.SourceHash != direct.SourceHash {
		t.Fatalf("from the snapshot: %d operations, hash %s vs %s", len(fromSnap.Operations), fromSnap.SourceHash, direct.SourceHash)
	}
	if diff := cmp.Diff(direct.Schemas, fromSnap.Schemas); diff != "" {
		t.Errorf("schemas differ:\n%s", diff)
	}

	// No temporary directory is left behind.
	ents, _ := os.ReadDir(filepath.Join(root, filepath.FromSlash(sources.Dir)))
	if len(ents) != 1 {
		t.Errorf("%d entries under %s, want the snapshot only", len(ents), sources.Dir)
	}

	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(sources.Dir), snap.ID, "files", "common", "defs.yaml"), []byte(defsDoc+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sources.Open(root, snap.ID); err == nil {
		t.Fatal("a tampered snapshot opened")
	}
	for _, id := range []string{"", "..", "src_zz", "src_../../etc/passwd00000000"} {
		if _, _, err := sources.Open(root, id); err == nil {
			t.Errorf("Open(%q) succeeded", id)
		}
	}
}

// TestSnapshotRefusesFilesOutsideBase is the regression test for the
// snapshot half of finding 1 of issue 15: a file read outside the base (here
// recorded by hand, as a loader without confinement would) is not stored, and
// the files of a snapshot never carry the machine's absolute path.
func TestSnapshotRefusesFilesOutsideBase(t *testing.T) {
	src := t.TempDir()
	entry := filepath.Join(src, "spec", "openapi.yaml")
	var rec sources.Recorder
	rec.Record(entry, []byte(entryDoc))
	rec.Record(filepath.Join(src, "common", "defs.yaml"), []byte(defsDoc))
	root := t.TempDir()
	if snap, err := rec.Save(root, entry, "openapi-3.0"); err == nil {
		t.Fatalf("saved %+v", snap)
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(sources.Dir))); !os.IsNotExist(err) {
		t.Errorf("something was written under %s: %v", sources.Dir, err)
	}
	rec.Base = src
	snap, err := rec.Save(root, entry, "openapi-3.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range snap.Files {
		if filepath.IsAbs(f.Path) || strings.Contains(f.Path, filepath.ToSlash(src)[1:]) {
			t.Errorf("stored path %s embeds the machine's path", f.Path)
		}
	}
}
