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

// ManifestOf returns the manifest path a bundle records, or "" when it
// records none.
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
	return filepath.Join(bundleDir, filepath.FromSlash(o.Manifest)), nil
}
