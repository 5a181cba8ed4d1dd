// Package files holds an in-memory tree of generated files and writes it
// atomically: the tree is written into a temporary sibling directory and
// renamed into place, so a failure never leaves partial output.
package files

import (
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
