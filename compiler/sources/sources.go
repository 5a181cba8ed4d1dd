// Package sources keeps what a compile read as a locked source snapshot
// under <root>/.anvil/sources/<id>: the exact bytes of the entry document
// and of every file its references reached, with their hashes, so that
// `anvil compile --source <id>` compiles the same input again even after the
// original files changed.
//
// Layout of one snapshot:
//
//	<root>/.anvil/sources/<id>/snapshot.json   {id, kind, entrypoint, sourceHash, files: [{path, sha256, size}]}
//	<root>/.anvil/sources/<id>/files/<path>    each file, at its path relative to the files' common directory
//
// Every stored path is relative: the files' deepest common directory lies
// inside the base the loader confined the references to (Recorder.Base), and
// Save refuses a file outside that base, so a snapshot never holds a file
// from elsewhere on the compiling machine nor any part of its absolute paths.
//
// The id is derived from the content (paths, bytes and entry point), so the
// same input always gives the same snapshot and saving it again is a no-op.
// A snapshot is written into a temporary directory and renamed into place:
// a reader never sees half of one.
package sources

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Dir is where snapshots live, relative to the root (--root).
const Dir = ".anvil/sources"

// Snapshot describes one stored snapshot (snapshot.json).
type Snapshot struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	Entrypoint string `json:"entrypoint"` // slash path of the entry document under files/
	SourceHash string `json:"sourceHash"` // sha256:<hex> of the entry document
	Files      []File `json:"files"`      // sorted by path
}

// File is one stored file.
type File struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"` // sha256:<hex>
	Size   int    `json:"size"`
}

// Recorder collects the files a load reads; its Record method is the
// loader's OnRead hook.
type Recorder struct {
	// Base is the directory every recorded file must lie in: the loader's
	// Options.Base (the --spec-base flag). Empty means the entry document's
	// directory, the loader's default.
	Base  string
	files map[string][]byte // by absolute, cleaned OS path
}

// Record keeps a copy of one file read under name (an OS path, relative to
// the working directory or absolute).
func (r *Recorder) Record(name string, data []byte) {
	if r.files == nil {
		r.files = map[string][]byte{}
	}
	abs, err := filepath.Abs(filepath.FromSlash(name))
	if err != nil {
		abs = filepath.Clean(filepath.FromSlash(name))
	}
	r.files[abs] = bytes.Clone(data)
}

// Save stores the recorded files as a snapshot under root and returns it.
// entry names the entry document as it was recorded and kind is its
// description kind (openapi-3.0...).
func (r *Recorder) Save(root, entry, kind string) (*Snapshot, error) {
	absEntry, err := filepath.Abs(filepath.FromSlash(entry))
	if err != nil {
		return nil, err
	}
	if _, ok := r.files[absEntry]; !ok {
		return nil, fmt.Errorf("the entry document %s was not read", entry)
	}
	base := r.Base
	if base == "" {
		base = filepath.Dir(absEntry)
	}
	if base, err = filepath.Abs(base); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(r.files))
	for n := range r.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !within(base, n) {
			return nil, fmt.Errorf("%s was read but lies outside the base directory %s: it is not stored", n, base)
		}
	}
	common := commonDir(names)
	snap := &Snapshot{Kind: kind}
	content := map[string][]byte{}
	for _, n := range names {
		rel, err := filepath.Rel(common, n)
		if err != nil {
			return nil, err
		}
		p := filepath.ToSlash(rel)
		data := r.files[n]
		snap.Files = append(snap.Files, File{Path: p, SHA256: hashOf(data), Size: len(data)})
		content[p] = data
		if n == absEntry {
			snap.Entrypoint = p
			snap.SourceHash = hashOf(data)
		}
	}
	sort.Slice(snap.Files, func(i, j int) bool { return snap.Files[i].Path < snap.Files[j].Path })
	snap.ID = idOf(snap)
	if err := write(root, snap, content); err != nil {
		return nil, err
	}
	return snap, nil
}

// Open reads snapshot id under root, checks every file against its recorded
// hash, and returns it with a file system of its files (paths as in
// Snapshot.Files).
func Open(root, id string) (*Snapshot, fs.FS, error) {
	if !validID(id) {
		return nil, nil, fmt.Errorf("%q is not a source snapshot id", id)
	}
	dir := filepath.Join(root, filepath.FromSlash(Dir), id)
	raw, err := os.ReadFile(filepath.Join(dir, "snapshot.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("no source snapshot %s under %s", id, filepath.Join(root, filepath.FromSlash(Dir)))
	}
	if err != nil {
		return nil, nil, err
	}
	var snap Snapshot
	if err := json.Unmarshal(raw, &snap); err != nil || snap.ID != id {
		return nil, nil, fmt.Errorf("source snapshot %s: snapshot.json is unreadable", id)
	}
	files := os.DirFS(filepath.Join(dir, "files"))
	entryFound := false
	for _, f := range snap.Files {
		if !fs.ValidPath(f.Path) {
			return nil, nil, fmt.Errorf("source snapshot %s: bad file path %q", id, f.Path)
		}
		data, err := fs.ReadFile(files, f.Path)
		if err != nil || hashOf(data) != f.SHA256 {
			return nil, nil, fmt.Errorf("source snapshot %s is corrupt: %s does not match its recorded hash", id, f.Path)
		}
		entryFound = entryFound || f.Path == snap.Entrypoint
	}
	if !entryFound || idOf(&snap) != id {
		return nil, nil, fmt.Errorf("source snapshot %s is corrupt: its files do not match its id", id)
	}
	return &snap, files, nil
}

// write stores a snapshot atomically (temporary directory, then rename).
// An existing snapshot with the same id holds the same content.
func write(root string, snap *Snapshot, content map[string][]byte) error {
	parent := filepath.Join(root, filepath.FromSlash(Dir))
	final := filepath.Join(parent, snap.ID)
	if _, err := os.Stat(filepath.Join(final, "snapshot.json")); err == nil {
		return nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	var nonce [6]byte
	_, _ = rand.Read(nonce[:])
	tmp := filepath.Join(parent, ".tmp-"+snap.ID+"-"+hex.EncodeToString(nonce[:]))
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	for p, data := range content {
		dst := filepath.Join(tmp, "files", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	meta, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "snapshot.json"), append(meta, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(filepath.Join(final, "snapshot.json")); serr == nil {
			return nil // saved meanwhile by another compile: same content
		}
		return err
	}
	ok = true
	return nil
}

// idOf derives a snapshot's id from its entry point and files.
func idOf(s *Snapshot) string {
	h := sha256.New()
	fmt.Fprintf(h, "entry\x00%s\x00", s.Entrypoint)
	for _, f := range s.Files {
		fmt.Fprintf(h, "file\x00%s\x00%s\x00", f.Path, f.SHA256)
	}
	return "src_" + hex.EncodeToString(h.Sum(nil))[:24]
}

// validID accepts what idOf produces (and nothing that could leave Dir).
func validID(id string) bool {
	if !strings.HasPrefix(id, "src_") || len(id) != len("src_")+24 {
		return false
	}
	_, err := hex.DecodeString(id[len("src_"):])
	return err == nil
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// commonDir is the deepest directory holding every one of the absolute
// file paths.
func commonDir(files []string) string {
	dir := filepath.Dir(files[0])
	for _, f := range files[1:] {
		for !within(dir, f) {
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return dir
}

func within(dir, file string) bool {
	rel, err := filepath.Rel(dir, file)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
