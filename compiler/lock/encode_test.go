package lock

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/internal/testinput"

	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

// reference is the v1 lock Record and Marshal wrote before v2 and the
// encoder: every contract built (canonical), fingerprinted and marshalled
// whole.
func reference(t testing.TB, doc *air.Document, ids []string) []byte {
	t.Helper()
	l := &Lock{Schema: SchemaV1, Approvals: []Entry{}}
	for _, id := range slices.Sorted(slices.Values(ids)) {
		op := doc.Operation(id)
		c := canonical(doc, op)
		l.Approvals = append(l.Approvals, Entry{Operation: id, Method: c.Method, Path: c.Path, Fingerprint: Fingerprint(c), Contract: c})
	}
	b, err := air.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkEncoder: every operation's encoded contract is the bytes of its
// canonical contract; a lock of them all loads back to the same bytes, with
// the fingerprints of the v1 reference lock, and the reference lock
// (v1, read as v1) is written as the same v2 bytes.
func checkEncoder(t *testing.T, doc *air.Document) {
	t.Helper()
	enc := newEncoder(doc)
	var ids []string
	for i := range doc.Operations {
		op := &doc.Operations[i]
		ids = append(ids, op.ID)
		pieces, err := enc.contract(op)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := air.MarshalCompact(canonical(doc, op))
		if got := compactOf(pieces); !bytes.Equal(got, want) {
			t.Fatalf("%s: encoded contract differs\n got %.400s\nwant %.400s", op.ID, got, want)
		}
	}
	l := &Lock{}
	if err := l.Record(context.Background(), doc, ids); err != nil {
		t.Fatal(err)
	}
	got, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := l.Marshal(); !bytes.Equal(again, got) {
		t.Fatal("a second Marshal (contracts encoded again) differs from the first")
	}
	old := loadBytes(t, reference(t, doc, ids))
	if old.Schema != SchemaV1 {
		t.Fatalf("the reference lock loaded as %s", old.Schema)
	}
	// An entry read from v1 has no names (v3 records them when an
	// operation is approved); otherwise the reference is written as v3.
	bare := &Lock{Approvals: slices.Clone(l.Approvals)}
	for i := range bare.Approvals {
		if bare.Approvals[i].Names == nil {
			t.Fatalf("%s: Record kept no names", bare.Approvals[i].Operation)
		}
		bare.Approvals[i].Names = nil
	}
	sameBytes(t, "the v1 reference lock written as v3", marshal(t, old), marshal(t, bare))
	back := loadBytes(t, got)
	sameBytes(t, "a v3 lock loaded and written again", marshal(t, back), got)
	for i, e := range back.Approvals {
		if want := old.Approvals[i]; e.Fingerprint != want.Fingerprint || e.Operation != want.Operation {
			t.Fatalf("%s: v2 fingerprint %s, v1 %s", e.Operation, e.Fingerprint, want.Fingerprint)
		}
		if got, want := Fingerprint(e.contract()), e.Fingerprint; got != want {
			t.Fatalf("%s: the v2 entry's rebuilt contract has fingerprint %s, want %s", e.Operation, got, want)
		}
	}
}

// marshal is l.Marshal, failing t on an error.
func marshal(t *testing.T, l *Lock) []byte {
	t.Helper()
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameBytes fails t, showing where, when got and want differ.
func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Fatalf("%s: bytes differ (%d vs %d bytes) at %d:\n got %q\nwant %q", what, len(got), len(want), i, got[max(0, i-200):min(len(got), i+100)], want[max(0, i-200):min(len(want), i+100)])
}

// loaded compiles text and returns the document as a bundle loads it
// (named schemas linked into each input's $defs).
func loaded(t *testing.T, doc *air.Document) *air.Document {
	t.Helper()
	files, err := air.Files(doc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := air.Parse(files[air.DocumentFile])
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func TestEncoderMatchesCanonical(t *testing.T) {
	doc := compile(t, spec)
	checkEncoder(t, doc)
	checkEncoder(t, loaded(t, doc))
	html := compile(t, strings.ReplaceAll(spec, "Thing", "Thing<&>"))
	checkEncoder(t, loaded(t, html))
}

// TestEncoderMatchesCanonicalGitHub checks the encoder on every operation
// of GitHub's REST description, compiled and loaded.
func TestEncoderMatchesCanonicalGitHub(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	p := testinput.File(t, filepath.Join(specsDir(), "github.json"), "run scripts/fetch-specs.sh")
	s, err := openapi.Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, l := lower.Lower(s, nil, &lower.Options{ServiceID: "github"})
	if l.HasErrors() {
		t.Fatal(l)
	}
	checkEncoder(t, doc)
	checkEncoder(t, loaded(t, doc))
}

func specsDir() string {
	if d := os.Getenv("ANVIL_SPECS_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", ".cache", "specs")
}

// TestWriteFileIsAtomic: a cancelled write leaves the old lock as it was
// and no temporary file behind.
func TestWriteFileIsAtomic(t *testing.T) {
	doc := compile(t, spec)
	dir := t.TempDir()
	p := filepath.Join(dir, FileName)
	os.WriteFile(p, []byte("old"), 0o644)
	l := &Lock{}
	if err := l.Record(context.Background(), doc, []string{doc.Operations[0].ID}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.WriteFile(ctx, p); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled write: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("a cancelled write changed the lock: %q", b)
	}
	if err := l.WriteFile(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	want, _ := l.Marshal()
	if b, _ := os.ReadFile(p); !bytes.Equal(b, want) {
		t.Error("WriteFile and Marshal differ")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestApplyRecordedLock: a lock Record has just filled (its contracts not
// built) names what changed as a loaded one does.
func TestApplyRecordedLock(t *testing.T) {
	doc := compile(t, spec)
	l := &Lock{}
	if err := l.Record(context.Background(), doc, []string{doc.Operations[0].ID}); err != nil {
		t.Fatal(err)
	}
	changed := compile(t, strings.Replace(spec, "maximum: 10", "maximum: 5", 1))
	ds := l.Apply(changed, FileName)
	if len(ds) != 1 || !strings.Contains(ds[0].Message, "input_constraint_tightened: input `limit`: maximum 10 → 5") {
		t.Errorf("a tightened input: %v", ds)
	}
	same := compile(t, spec)
	if ds := l.Apply(same, FileName); len(ds) != 0 || same.Operations[0].State != air.StateApproved {
		t.Errorf("an unchanged operation: %v, %s", ds, same.Operations[0].State)
	}
}
