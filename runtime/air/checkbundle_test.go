package air

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBundle writes doc's bundle (air.json and generation.json, as anvil
// compile does) into a workspace directory and returns the bundle's dir.
func writeBundle(t *testing.T, ws string, doc *Document) string {
	t.Helper()
	files, err := Files(doc)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(ws, doc.Service.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func testDoc() *Document {
	return &Document{Schema: SchemaVersion, Service: Service{ID: "svc"}, Operations: []Operation{
		{ID: "svc.things.get", State: StateReviewRequired, MCP: MCP{ToolName: "things_get"}},
	}}
}

// TestCheckBundleRefusesHandEdits: a bundle is loaded only as anvil
// compile or anvil approve wrote it. An operation approved by editing
// air.json, a missing generation.json, or a generation.json that does not
// cover air.json or names a file outside the bundle is refused, and the
// refusal names the file.
func TestCheckBundleRefusesHandEdits(t *testing.T) {
	ws := t.TempDir()
	dir := writeBundle(t, ws, testDoc())
	bs, err := LoadWorkspace(ws)
	if err != nil || len(bs) != 1 || len(bs[0].BundleHash) != 64 {
		t.Fatalf("the bundle as written: %v %+v", err, bs)
	}
	doc := filepath.Join(dir, DocumentFile)
	orig, _ := os.ReadFile(doc)
	edited := bytes.Replace(orig, []byte(StateReviewRequired), []byte(StateApproved), 1)
	if bytes.Equal(edited, orig) {
		t.Fatal("the fixture has no state to edit")
	}
	if err := os.WriteFile(doc, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadWorkspace(ws)
	if !errors.Is(err, ErrBundleMismatch) || !strings.Contains(err.Error(), doc) || !strings.Contains(err.Error(), "anvil approve") {
		t.Fatalf("hand-approved air.json: %v", err)
	}
	if err := os.WriteFile(doc, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	gen := filepath.Join(dir, GenerationFile)
	genBytes, _ := os.ReadFile(gen)
	for name, g := range map[string]string{
		"does not cover air.json": strings.Replace(string(genBytes), `"air.json"`, `"other.json"`, 1),
		"names a file outside":    strings.Replace(string(genBytes), `"air.json"`, `"air.json", "../escape"`, 1),
		"is not JSON":             "{",
	} {
		if err := os.WriteFile(gen, []byte(g), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadWorkspace(ws); !errors.Is(err, ErrBundleMismatch) || !strings.Contains(err.Error(), gen) {
			t.Errorf("generation.json that %s: %v", name, err)
		}
	}
	if err := os.Remove(gen); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadWorkspace(ws); !errors.Is(err, ErrBundleMismatch) || !strings.Contains(err.Error(), gen) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("no generation.json: %v", err)
	}
}

// BenchmarkCheckBundle measures what the bundle check adds to loading a
// large bundle: reading its air.json (the baseline, which every load does)
// against reading it and checking it against generation.json (hashing the
// bytes already read). 64 MiB is about the size of Microsoft Graph beta's
// air.json (docs/scale.md).
func BenchmarkCheckBundle(b *testing.B) {
	dir := b.TempDir()
	doc := bytes.Repeat([]byte(`{"id":"svc.things.get","state":"approved"},`+"\n"), (64<<20)/44)
	files := map[string][]byte{DocumentFile: doc}
	gen, _ := Marshal(Generation{Schema: BundleSchema, ServiceID: "svc", BundleHash: HashFiles(files), Files: []string{DocumentFile}})
	if err := os.WriteFile(filepath.Join(dir, DocumentFile), doc, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, GenerationFile), gen, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := os.ReadFile(filepath.Join(dir, DocumentFile)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read+check", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			raw, err := os.ReadFile(filepath.Join(dir, DocumentFile))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := CheckBundle(dir, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
