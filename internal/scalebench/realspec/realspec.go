// Package realspec names the real-world OpenAPI descriptions the benchmarks
// measure (make scale, make compilebench): the files scripts/fetch-specs.sh
// caches in $ANVIL_SPECS_DIR, or any description file given by path. It also
// sizes what a compile wrote, the way both benchmarks report it.
package realspec

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Dir is where fetch-specs.sh keeps the descriptions: $ANVIL_SPECS_DIR, or
// .cache/specs (relative to the working directory, as in the Makefile).
func Dir() string {
	if d := os.Getenv("ANVIL_SPECS_DIR"); d != "" {
		return d
	}
	return ".cache/specs"
}

// Spec is one description to measure.
type Spec struct {
	Name    string // as given: a cached name ("msgraph-beta") or a path
	Path    string // the file
	Service string // a service id derived from the name (ServiceID)
}

// Label is the name a table row shows for a description's full workspace:
// "msgraph-beta" → "msgraph beta (full)"; a path is shown as it is.
func (s Spec) Label() string {
	if isPath(s.Name) {
		return s.Name + " (full)"
	}
	return strings.ReplaceAll(s.Name, "-", " ") + " (full)"
}

// Resolve reads a comma-separated list of descriptions. An item that holds a
// path separator or ends in .json, .yaml or .yml is a file path; any other
// item is the name of a cached description, the file <dir>/<name>.json.
// Empty items are ignored. A file that does not exist is not an error: its
// path is returned in missing, for the caller to skip (a benchmark measures
// what has been fetched).
func Resolve(dir, list string) (specs []Spec, missing []string) {
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		path := item
		if !isPath(item) {
			path = filepath.Join(dir, item+".json")
		}
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			missing = append(missing, path)
			continue
		}
		specs = append(specs, Spec{Name: item, Path: path, Service: ServiceID(item)})
	}
	return specs, missing
}

func isPath(item string) bool {
	if strings.ContainsRune(item, '/') || strings.ContainsRune(item, filepath.Separator) {
		return true
	}
	switch strings.ToLower(filepath.Ext(item)) {
	case ".json", ".yaml", ".yml":
		return true
	}
	return false
}

// ServiceID derives a valid service id (letters and digits, starting with a
// letter) from a description's name or path: the file's base name up to its
// first '-' or '.', lower-cased, without other characters ("msgraph-beta" →
// "msgraph", "examples/github-mini/openapi.yaml" → "openapi"), or "api" when
// nothing is left.
func ServiceID(name string) string {
	base := filepath.Base(name)
	if i := strings.IndexAny(base, "-."); i >= 0 {
		base = base[:i]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9' && b.Len() > 0:
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "api"
	}
	return b.String()
}

// Size returns the bytes and the number of the regular files under dir.
func Size(dir string) (bytes int64, files int, err error) {
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		bytes += fi.Size()
		files++
		return nil
	})
	return bytes, files, err
}
