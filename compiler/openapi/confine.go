package openapi

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// CodeRefOutsideBase is the error for a $ref (or an entry document) that
// leaves the base directory: lexically ("../../etc/passwd") or through a
// symbolic link whose target lies outside it.
const CodeRefOutsideBase = "spec/ref_outside_base"

// confinement keeps every file a description references inside one base
// directory, so that a hostile description cannot make the compiler read
// (and the source snapshot copy) any other file of the compiling machine.
//
// The base is Options.Base when set, otherwise the entry document's
// directory (reading the operating system's files) or the root of
// Options.FS. The check is made before a file is opened, so nothing outside
// is read; for the operating system's files the reads then go through an
// os.Root on the base, which refuses symbolic links that leave it even if
// they change after the check.
type confinement struct {
	fsMode bool
	base   string   // FS mode: a clean slash path in the FS ("." is its root); OS mode: an absolute OS path
	real   string   // OS mode: base with symbolic links resolved
	root   *os.Root // OS mode: reads of referenced files
	shown  string   // base as the messages name it
	seen   map[string]string
}

// newConfinement sets up the base for the entry document entry (a slash
// path). It fails when the base cannot be opened or does not hold entry.
func newConfinement(opts *Options, osFiles bool, entry string) (*confinement, error) {
	c := &confinement{fsMode: opts.FS != nil, seen: map[string]string{}}
	if c.fsMode {
		c.base = "."
		if opts.Base != "" {
			c.base = path.Clean(filepath.ToSlash(opts.Base))
		}
		c.shown = c.base
		if c.base == "." {
			c.shown = "(the root of the file system read)"
		}
		if !fs.ValidPath(c.base) {
			return nil, fmt.Errorf("the base %s is not a valid path in the file system", quote(c.base))
		}
		if !withinSlash(c.base, path.Clean(entry)) {
			return nil, fmt.Errorf("the entry document %s is outside the base %s", entry, c.shown)
		}
		return c, nil
	}
	if !osFiles {
		return nil, nil // same-document references only
	}
	base := opts.Base
	if base == "" {
		base = filepath.Dir(filepath.FromSlash(entry))
	}
	c.shown = filepath.ToSlash(base)
	abs, err := filepath.Abs(base)
	if err != nil {
		return nil, err
	}
	c.base = abs
	if c.real, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("the base %s: %w", c.shown, describeFSError(err))
	}
	absEntry, err := filepath.Abs(filepath.FromSlash(entry))
	if err != nil {
		return nil, err
	}
	if !withinOS(c.base, absEntry) {
		return nil, fmt.Errorf("the entry document %s is outside the base %s", entry, c.shown)
	}
	if c.root, err = os.OpenRoot(abs); err != nil {
		return nil, fmt.Errorf("the base %s: %w", c.shown, describeFSError(err))
	}
	return c, nil
}

func (c *confinement) close() {
	if c != nil && c.root != nil {
		c.root.Close()
	}
}

// check returns why the file name (a slash path as used in positions) may
// not be read, or "" when it lies inside the base. Results are cached.
func (c *confinement) check(fsys fs.FS, name string) string {
	if c == nil {
		return ""
	}
	name = path.Clean(name)
	if r, ok := c.seen[name]; ok {
		return r
	}
	r := c.reason(fsys, name)
	c.seen[name] = r
	return r
}

func (c *confinement) reason(fsys fs.FS, name string) string {
	outside := fmt.Sprintf("%s is outside the base directory %s (name a wider base with --spec-base)", name, c.shown)
	if c.fsMode {
		if !withinSlash(c.base, name) {
			return outside
		}
		// A snapshot never holds symbolic links: refuse any on the way.
		for p := name; p != "." && p != c.base; p = path.Dir(p) {
			if fi, err := fs.Lstat(fsys, p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return fmt.Sprintf("%s is a symbolic link, which is not followed in a source snapshot", p)
			}
		}
		return ""
	}
	abs, err := filepath.Abs(filepath.FromSlash(name))
	if err != nil || !withinOS(c.base, abs) {
		return outside
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil && !withinOS(c.real, real) {
		return fmt.Sprintf("%s is a symbolic link (or lies under one) that leads outside the base directory %s", name, c.shown)
	}
	return ""
}

// open opens a referenced file name (already checked) inside the base.
func (c *confinement) open(name string) (fs.FileInfo, *os.File, error) {
	abs, err := filepath.Abs(filepath.FromSlash(name))
	if err != nil {
		return nil, nil, err
	}
	rel, err := filepath.Rel(c.base, abs)
	if err != nil {
		return nil, nil, err
	}
	fi, err := c.root.Stat(rel)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return fi, nil, nil
	}
	f, err := c.root.Open(rel)
	return fi, f, err
}

// withinSlash reports whether the clean slash path name lies in dir (".":
// any relative path that does not start with "..").
func withinSlash(dir, name string) bool {
	if name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name) {
		return false
	}
	return dir == "." || name == dir || strings.HasPrefix(name, dir+"/")
}

// withinOS reports whether the absolute OS path name lies in dir.
func withinOS(dir, name string) bool {
	rel, err := filepath.Rel(dir, name)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
