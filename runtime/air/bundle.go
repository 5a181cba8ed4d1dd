package air

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Bundle file names.
const (
	DocumentFile   = "air.json"
	GenerationFile = "generation.json"
	// BundleSchema is the schema string of generation.json.
	BundleSchema = "anvil.bundle/v1"
)

// ErrNotBundle is returned when a directory holds no AIR document.
var ErrNotBundle = errors.New("not a compiled bundle")

// Generation is the bundle's manifest of files and its hash.
type Generation struct {
	Schema       string   `json:"schema"`
	AnvilVersion string   `json:"anvilVersion"`
	ServiceID    string   `json:"serviceId"`
	BundleHash   string   `json:"bundleHash"`
	Files        []string `json:"files"`
}

// Marshal returns the canonical JSON of v: two-space indented, HTML characters
// not escaped, with a trailing newline — the bytes of a json.Encoder with
// SetEscapeHTML(false) and SetIndent("", "  "). A *Schema is written by its
// own encoder without a pass through encoding/json, and the indentation is
// done in one pass over the compact form (the bundles of the largest
// descriptions run to hundreds of megabytes).
func Marshal(v any) ([]byte, error) {
	var compact []byte
	var err error
	if s, ok := v.(*Schema); ok && s != nil {
		compact, err = appendSchemaJSON(nil, s)
	} else {
		compact, err = MarshalCompact(v)
	}
	if err != nil {
		return nil, err
	}
	out := appendIndented(nil, compact, IndentAll)
	return append(out, '\n'), nil
}

// documentDepth is how deep air.json is broken into lines: the document's
// members, and each operation, named schema and diagnostic on a line of
// its own, written compactly. A change to one operation is a one-line diff,
// and the file is a fraction of its fully indented size (a large API's
// schemas nest deeply).
const documentDepth = 2

// IndentAll is the Indenter depth that indents every level, as Marshal
// does.
const IndentAll = int(^uint(0) >> 1)

// EncodeDocument returns the bytes of air.json for doc: doc as Stored
// (each named schema once), broken into lines to documentDepth, with a
// trailing newline. Every writer of an AIR document uses it.
func EncodeDocument(doc *Document) ([]byte, error) {
	compact, err := MarshalCompact(Stored(doc))
	if err != nil {
		return nil, err
	}
	out := appendIndented(nil, compact, documentDepth)
	return append(out, '\n'), nil
}

// appendIndented appends the compact, valid JSON src indented to
// maxDepth (Indenter). The buffer grows once for the common case: a
// document broken into lines to a small depth is barely longer than its
// compact form.
func appendIndented(dst, src []byte, maxDepth int) []byte {
	dst = slices.Grow(dst, len(src)+len(src)/8+64)
	ind := Indenter{MaxDepth: maxDepth}
	return ind.Append(dst, src)
}

// MarshalCompact returns compact JSON of v without HTML escaping and without a trailing newline.
func MarshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Files renders the whole bundle for doc: air.json (EncodeDocument) and
// generation.json with the bundle hash. Keys are
// slash paths relative to the bundle directory.
func Files(doc *Document) (map[string][]byte, error) {
	b, err := EncodeDocument(doc)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{DocumentFile: b}
	gen := Generation{Schema: BundleSchema, AnvilVersion: doc.AnvilVersion, ServiceID: doc.Service.ID,
		BundleHash: HashFiles(files), Files: []string{DocumentFile}}
	g, err := Marshal(gen)
	if err != nil {
		return nil, err
	}
	files[GenerationFile] = g
	return files, nil
}

// WriteBundle writes doc's bundle (Files: air.json and its generation.json)
// into dir, creating it: a bundle made outside anvil compile (a tool, a
// test, a benchmark) that LoadWorkspace then accepts. anvil compile and
// anvil approve write theirs atomically, with the emitters.
func WriteBundle(dir string, doc *Document) error {
	files, err := Files(doc)
	if err != nil {
		return err
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// HashFiles is the bundle hash: sha256 over every file sorted by path, each as
// the path bytes, a zero byte, the length as a little-endian uint64 and the
// contents. generation.json itself is left out.
func HashFiles(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		if n != GenerationFile {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	h := sha256.New()
	var n8 [8]byte
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
		binary.LittleEndian.PutUint64(n8[:], uint64(len(files[n])))
		h.Write(n8[:])
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Load reads the AIR document of the bundle in dir.
func Load(dir string) (*Document, error) {
	b, err := os.ReadFile(filepath.Join(dir, DocumentFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", dir, ErrNotBundle)
		}
		return nil, err
	}
	return Parse(b)
}

// Parse decodes an AIR document, checks its schema string (before decoding
// the rest when it leads, as Marshal writes it) and makes its input
// schemas whole (Link).
func Parse(b []byte) (*Document, error) {
	if s, ok := leadingSchema(b); ok {
		if err := CheckSchemaVersion(s); err != nil {
			return nil, err
		}
	}
	var doc Document
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("air: %w", err)
	}
	if err := CheckSchemaVersion(doc.Schema); err != nil {
		return nil, err
	}
	if err := doc.Link(); err != nil {
		return nil, err
	}
	return &doc, nil
}

// LoadGeneration reads generation.json of the bundle in dir.
func LoadGeneration(dir string) (*Generation, error) {
	b, err := os.ReadFile(filepath.Join(dir, GenerationFile))
	if err != nil {
		return nil, err
	}
	var g Generation
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("air: %s: %w", GenerationFile, err)
	}
	return &g, nil
}

// IsBundleDir reports whether dir holds an AIR document (air.json or air.yaml),
// the rule Branchyard uses to discover bundles.
func IsBundleDir(dir string) bool {
	for _, n := range []string{DocumentFile, "air.yaml"} {
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// Discover lists the bundle directories under root, sorted: a directory (not
// root itself) holding an AIR document is a bundle and is not descended into;
// hidden directories, node_modules, target and dist are skipped; the depth is
// at most four.
func Discover(root string) ([]string, error) {
	var out []string
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		if depth > 4 {
			return nil
		}
		if depth > 0 && IsBundleDir(dir) {
			out = append(out, dir)
			return nil
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			if depth == 0 {
				return err
			}
			return nil
		}
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() || strings.HasPrefix(name, ".") || name == "node_modules" || name == "target" || name == "dist" {
				continue
			}
			if err := walk(filepath.Join(dir, name), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

var foldRun = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// FoldConnectorID folds a bundle's path (relative to the workspace, slash or
// OS separated) into a connector id: every run of characters outside
// [A-Za-z0-9_-] becomes one "_", leading and trailing "_" are trimmed, and an
// empty result becomes "bundle".
func FoldConnectorID(rel string) string {
	s := foldRun.ReplaceAllString(filepath.ToSlash(rel), "_")
	s = strings.Trim(s, "_")
	if s == "" {
		return "bundle"
	}
	return s
}

// ValidConnectorID matches a connector id.
var ValidConnectorID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// EffectClassOf is the operation's effect class: the declared class, else
// read for a read and irreversible otherwise.
func EffectClassOf(op *Operation) EffectClass {
	if op.Effect.Class != "" {
		return op.Effect.Class
	}
	if op.Effect.Kind == KindRead {
		return ClassRead
	}
	return ClassIrreversible
}

// IsServed reports whether an operation is directly callable: approved and not a webhook receiver.
func IsServed(op *Operation) bool {
	return op.State == StateApproved && op.Archetype != ArchetypeWebhookReceiver
}

// HasEffectContract reports whether the operation declares an effect contract (a class or any follow-up).
func HasEffectContract(op *Operation) bool {
	e := op.Effect
	return e.Class != "" || e.Inverse != nil || e.Compensate != nil || e.Lookup != nil || e.Draft != nil
}

// Operation returns the operation with the AIR id, or nil.
func (d *Document) Operation(id string) *Operation {
	for i := range d.Operations {
		if d.Operations[i].ID == id {
			return &d.Operations[i]
		}
	}
	return nil
}
