// Package files holds an in-memory tree of generated files and writes it
// atomically: the tree is written into a temporary sibling directory and
// renamed into place, so a failure never leaves partial output.
package files

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// File is one generated file.
type File struct {
	Data []byte
	Mode fs.FileMode // 0 means 0644
}

// perm is the file's mode, 0644 when none is set.
func (f File) perm() fs.FileMode {
	if f.Mode == 0 {
		return 0o644
	}
	return f.Mode
}

// Tree maps slash-separated relative paths to files.
type Tree map[string]File

// Add puts data at name with mode 0644.
func (t Tree) Add(name string, data []byte) { t[name] = File{Data: data} }

// AddMode puts data at name with the given mode.
func (t Tree) AddMode(name string, data []byte, mode fs.FileMode) {
	t[name] = File{Data: data, Mode: mode}
}

// Names returns the file names, sorted.
func (t Tree) Names() []string {
	out := make([]string, 0, len(t))
	for n := range t {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Bytes returns the tree as a map of contents (for golden comparisons).
func (t Tree) Bytes() map[string][]byte {
	out := make(map[string][]byte, len(t))
	for n, f := range t {
		out[n] = f.Data
	}
	return out
}

// FromBytes builds a tree from contents with mode 0644.
func FromBytes(m map[string][]byte) Tree {
	t := Tree{}
	for n, b := range m {
		t.Add(n, b)
	}
	return t
}

func checkName(name string) error {
	if name == "" || path.IsAbs(name) || strings.Contains(name, "\\") {
		return fmt.Errorf("files: invalid path %q", name)
	}
	clean := path.Clean(name)
	if clean != name || clean == "." || strings.HasPrefix(clean, "../") || clean == ".." {
		return fmt.Errorf("files: invalid path %q", name)
	}
	return nil
}

// WriteTo writes the tree into a new temporary directory next to dir, then
// replaces dir with it. On any error dir is left as it was.
func (t Tree) WriteTo(dir string) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for _, name := range t.Names() {
		if err := checkName(name); err != nil {
			return err
		}
		f := t[name]
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		mode := f.perm()
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			return err
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
	}
	if err := replaceDir(tmp, dir); err != nil {
		return err
	}
	ok = true
	return nil
}

// WriteFiles writes each file of the tree into the existing directory dir
// (created when missing), leaving every other file there alone: each file is
// written to a temporary sibling and renamed into place, so a reader sees the
// old file or the new one, never a partial one. Every path is checked before
// anything is written.
func (t Tree) WriteFiles(dir string) error {
	names := t.Names()
	for _, name := range names {
		if err := checkName(name); err != nil {
			return err
		}
	}
	for _, name := range names {
		f := t[name]
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		mode := f.perm()
		if err := writeFileAtomic(p, f.Data, mode); err != nil {
			return err
		}
	}
	return nil
}

// writeFileAtomic writes data to p through a temporary file in its
// directory and a rename.
func writeFileAtomic(p string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// replaceDir moves tmp to dir, moving an existing dir aside first and
// removing it only after the rename succeeded.
func replaceDir(tmp, dir string) error {
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return os.Rename(tmp, dir)
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.Rename(old, dir)
		return err
	}
	return os.RemoveAll(old)
}

// Read loads a directory into a tree (regular files only, modes kept).
func Read(dir string) (Tree, error) {
	t := Tree{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(dir, p)
		t.AddMode(filepath.ToSlash(r), b, info.Mode().Perm())
		return nil
	})
	return t, err
}

// ManifestSchema is the schema string of a Sync manifest.
const ManifestSchema = "anvil.generated/v1"

// Manifest lists the files a Sync wrote, so that the next Sync into the same
// directory knows which files are its own: those it replaces or removes, and
// every other file (node_modules, dist, a person's own files) it leaves alone.
type Manifest struct {
	Schema string          `json:"schema"`
	Files  []ManifestEntry `json:"files"`
}

// ManifestEntry is one generated file: its slash-separated path, the SHA-256
// of its bytes (hex) and its mode (octal).
type ManifestEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Mode   string `json:"mode"`
}

// manifestOf is the manifest of t, sorted by path.
func (t Tree) manifestOf() Manifest {
	m := Manifest{Schema: ManifestSchema, Files: []ManifestEntry{}}
	for _, name := range t.Names() {
		f := t[name]
		sum := sha256.Sum256(f.Data)
		m.Files = append(m.Files, ManifestEntry{Path: name, SHA256: hex.EncodeToString(sum[:]), Mode: fmt.Sprintf("%04o", f.perm())})
	}
	return m
}

// ReadManifest reads the manifest file of a directory a Sync wrote. A
// missing file is (nil, nil); an unreadable or malformed one is an error.
func ReadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if len(b) > maxManifest {
		return nil, fmt.Errorf("files: %s is larger than %d bytes", path, maxManifest)
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Schema != ManifestSchema {
		return nil, fmt.Errorf("files: %s is not an %s manifest (delete it to treat every file as the user's)", path, ManifestSchema)
	}
	for _, e := range m.Files {
		if err := checkName(e.Path); err != nil {
			return nil, fmt.Errorf("files: %s: %w", path, err)
		}
	}
	return &m, nil
}

// maxManifest bounds the manifest file a Sync reads (GitHub's full package
// lists about 3,700 files in well under 1 MiB).
const maxManifest = 16 << 20

// Sync writes the tree into dir (created when missing) as a regeneration:
// every file of the tree is written atomically (a temporary sibling renamed
// into place; a file whose bytes and mode are unchanged is left untouched),
// the files the previous Sync's manifest lists that the tree no longer has
// are removed (and directories that leaves empty), and the manifest file
// manifest (a path in dir) is written last, listing the tree. Every other
// file in dir is left alone. Before anything is written, every path is
// checked: no path may pass through a symbolic link or a file, and no file of
// the tree may land on a directory, so a refused Sync changes nothing. A
// directory written before manifests existed has none: its files are then all
// treated as the user's, and only the tree's own paths are overwritten.
func (t Tree) Sync(dir, manifest string) error {
	if err := checkName(manifest); err != nil {
		return err
	}
	if _, ok := t[manifest]; ok {
		return fmt.Errorf("files: the tree has a file at the manifest's path %s", manifest)
	}
	names := t.Names()
	for _, name := range names {
		if err := checkName(name); err != nil {
			return err
		}
	}
	old, err := ReadManifest(filepath.Join(dir, filepath.FromSlash(manifest)))
	if err != nil {
		return err
	}
	for _, name := range append(names, manifest) {
		if err := checkTarget(dir, name); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		f := t[name]
		p := filepath.Join(dir, filepath.FromSlash(name))
		if same(p, f) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := writeFileAtomic(p, f.Data, f.perm()); err != nil {
			return err
		}
	}
	if old != nil {
		for _, e := range old.Files {
			if _, keep := t[e.Path]; keep || e.Path == manifest {
				continue
			}
			if err := removeGenerated(dir, e.Path); err != nil {
				return err
			}
		}
	}
	b, err := json.MarshalIndent(t.manifestOf(), "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, filepath.FromSlash(manifest)), append(b, '\n'), 0o644)
}

// checkTarget refuses a path whose parents in dir are not all directories
// (a symbolic link could send the write outside dir) or which names a
// directory or a non-regular file.
func checkTarget(dir, name string) error {
	parts := strings.Split(name, "/")
	p := dir
	for i, part := range parts {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		last := i == len(parts)-1
		switch {
		case st.Mode()&fs.ModeSymlink != 0 && !last:
			return fmt.Errorf("files: %s is a symbolic link; refusing to write %s through it", p, name)
		case !last && !st.IsDir():
			return fmt.Errorf("files: %s is not a directory; refusing to write %s", p, name)
		case last && st.IsDir():
			return fmt.Errorf("files: %s is a directory where the generated file %s goes; refusing to replace it", p, name)
		}
	}
	return nil
}

// same reports whether p already holds f's bytes with f's mode.
func same(p string, f File) bool {
	st, err := os.Lstat(p)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != f.perm() || st.Size() != int64(len(f.Data)) {
		return false
	}
	b, err := os.ReadFile(p)
	return err == nil && bytes.Equal(b, f.Data)
}

// removeGenerated removes a file a previous Sync wrote (when it is still a
// regular file or a link: a directory there now is not ours) and then every
// parent directory up to dir that this leaves empty.
func removeGenerated(dir, name string) error {
	if checkTarget(dir, name) != nil {
		return nil // something else lives there now: not ours to remove
	}
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for d := filepath.Dir(p); d != filepath.Clean(dir) && strings.HasPrefix(d, filepath.Clean(dir)+string(filepath.Separator)); d = filepath.Dir(d) {
		if os.Remove(d) != nil { // not empty (or gone): stop
			break
		}
	}
	return nil
}
