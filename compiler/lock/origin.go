package lock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// OriginFile is the bundle file that says which manifest the bundle was
// compiled from, so `anvil approve` finds the lock beside it. It is local
// state of one checkout, not part of the bundle's contract: generation.json
// does not list it and the bundle hash does not cover it.
const OriginFile = "anvil.origin.json"

// origin is OriginFile's content.
type origin struct {
	// Manifest is the manifest's path relative to the bundle directory.
	Manifest string `json:"manifest"`
}

// OriginBytes is the OriginFile content for a bundle written to bundleDir
// from manifest; nil when there was no manifest or no relative path exists.
func OriginBytes(bundleDir, manifest string) []byte {
	if manifest == "" {
		return nil
	}
	ab, err1 := filepath.Abs(bundleDir)
	am, err2 := filepath.Abs(manifest)
	if err1 != nil || err2 != nil {
		return nil
	}
	rel, err := filepath.Rel(ab, am)
	if err != nil {
		return nil
	}
	b, _ := json.MarshalIndent(origin{Manifest: filepath.ToSlash(rel)}, "", "  ")
	return append(b, '\n')
}

// CodeOriginRefused is the code of an OriginError.
const CodeOriginRefused = "lock/origin_refused"

// OriginError refuses a bundle's origin record: it does not name, by a
// relative path, a regular file beside which the lock may be written.
type OriginError struct {
	Bundle string
	Reason string
}

func (e *OriginError) Error() string {
	return fmt.Sprintf("%s: %s in %s %s; compile the bundle again with --manifest, or give approve --manifest", CodeOriginRefused, OriginFile, e.Bundle, e.Reason)
}

// ManifestOf returns the manifest path a bundle records, or "" when it
// records none. The record is local state anyone with write access to the
// bundle can edit, and approve writes the lock where it points, so it is
// confined: the path must be relative (compile writes it so), name an
// existing regular file (not a symlink or a directory), and the lock beside
// it, when present, must be a regular file too. Anything else is an
// *OriginError; the caller checks that the file is a manifest of the
// bundle's service before writing the lock beside it.
func ManifestOf(bundleDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(bundleDir, OriginFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var o origin
	if err := json.Unmarshal(b, &o); err != nil || o.Manifest == "" {
		return "", fmt.Errorf("%s in %s is not valid", OriginFile, bundleDir)
	}
	refuse := func(format string, args ...any) (string, error) {
		return "", &OriginError{Bundle: bundleDir, Reason: fmt.Sprintf(format, args...)}
	}
	rel := filepath.FromSlash(o.Manifest)
	if filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" || filepath.IsAbs(o.Manifest) {
		return refuse("names %q, an absolute path (compile records the manifest relative to the bundle)", o.Manifest)
	}
	m := filepath.Join(bundleDir, rel)
	st, err := os.Lstat(m)
	switch {
	case err != nil:
		return refuse("names %q, which is not there (%v)", o.Manifest, errors.Unwrap(err))
	case !st.Mode().IsRegular():
		return refuse("names %q, which is not a regular file (%s)", o.Manifest, st.Mode().Type())
	}
	if st, err := os.Lstat(PathFor(m)); err == nil && !st.Mode().IsRegular() {
		return refuse("puts the lock at %s, which is not a regular file (%s)", PathFor(m), st.Mode().Type())
	}
	return m, nil
}
