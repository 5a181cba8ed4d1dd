package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/txtar"
)

// DiffCase is one case of golden/diff: a spec pair and a manifest pair, the
// expected report, and the archive it was read from (so that an update can
// rewrite the report section).
//
// A case holds each spec once. golden/diff/base.yaml and base.anvil.yaml
// are the old spec and manifest of every case that has no "old.yaml" (or
// "old.anvil.yaml"; a lone "anvil.yaml" is both sides' manifest) of its
// own, and a case gives its new side as a unified diff against its old
// side ("new.yaml.diff", "new.anvil.yaml.diff", as `diff -u` writes) or,
// when the change is the whole file, in full ("new.yaml"). A side that is
// given neither way is the old side unchanged.
type DiffCase struct {
	OldSpec, NewSpec         []byte
	OldManifest, NewManifest []byte
	Report                   []byte
	Archive                  *txtar.Archive
	File                     string
}

// ReadDiffCase reads golden/diff/<kind>.txtar and resolves its sides.
func ReadDiffCase(kind string) (*DiffCase, error) {
	file := Path("diff/" + kind + ".txtar")
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	ar := txtar.Parse(raw)
	section := func(name string) []byte {
		for _, f := range ar.Files {
			if f.Name == name {
				return f.Data
			}
		}
		return nil
	}
	base := func(name string) ([]byte, error) { return os.ReadFile(Path("diff/" + name)) }
	c := &DiffCase{Archive: ar, File: file, Report: section("report")}
	if c.OldSpec = section("old.yaml"); c.OldSpec == nil {
		if c.OldSpec, err = base("base.yaml"); err != nil {
			return nil, err
		}
	}
	c.OldManifest = section("old.anvil.yaml")
	if c.OldManifest == nil {
		c.OldManifest = section("anvil.yaml")
	}
	if c.OldManifest == nil {
		if c.OldManifest, err = base("base.anvil.yaml"); err != nil {
			return nil, err
		}
	}
	newSide := func(name string, old []byte) ([]byte, error) {
		if b := section(name); b != nil {
			return b, nil
		}
		if d := section(name + ".diff"); d != nil {
			b, err := ApplyUnifiedDiff(old, d)
			if err != nil {
				return nil, fmt.Errorf("%s: %s.diff: %w", file, name, err)
			}
			return b, nil
		}
		return old, nil
	}
	if c.NewSpec, err = newSide("new.yaml", c.OldSpec); err != nil {
		return nil, err
	}
	if c.NewManifest, err = newSide("new.anvil.yaml", c.OldManifest); err != nil {
		return nil, err
	}
	return c, nil
}

// ApplyUnifiedDiff applies a unified diff (hunks as `diff -u` writes them;
// header lines before the first hunk are ignored) to old. Every context and
// removed line must match old exactly, in order: a diff that does not fit
// is an error, never a guess.
func ApplyUnifiedDiff(old, diff []byte) ([]byte, error) {
	src := splitLines(old)
	var out []string
	next := 0 // the first line of src not yet copied
	lines := splitLines(diff)
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "@@ ") {
			// Only the header (---, +++ and the like) comes before the
			// first hunk; each hunk's loop below runs to the next "@@".
			if strings.HasPrefix(lines[i], " ") || strings.HasPrefix(lines[i], "+") && !strings.HasPrefix(lines[i], "+++") {
				return nil, fmt.Errorf("line %d: %q is outside a hunk", i+1, lines[i])
			}
			i++
			continue
		}
		start, err := hunkStart(lines[i])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if start < next {
			return nil, fmt.Errorf("line %d: hunks overlap or are out of order", i+1)
		}
		if start > len(src) {
			return nil, fmt.Errorf("line %d: the hunk starts past the end of the file", i+1)
		}
		out = append(out, src[next:start]...)
		next = start
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "@@ "); i++ {
			l := lines[i]
			if l == `\ No newline at end of file` {
				return nil, fmt.Errorf("line %d: files without a final newline are not supported", i+1)
			}
			if l == "" {
				return nil, fmt.Errorf("line %d: an empty line in a hunk (a context line starts with a space)", i+1)
			}
			switch l[0] {
			case ' ', '-':
				if next >= len(src) || src[next] != l[1:] {
					return nil, fmt.Errorf("line %d: %q does not match line %d of the file", i+1, l, next+1)
				}
				if l[0] == ' ' {
					out = append(out, src[next])
				}
				next++
			case '+':
				out = append(out, l[1:])
			default:
				return nil, fmt.Errorf("line %d: %q is not a hunk line", i+1, l)
			}
		}
	}
	out = append(out, src[next:]...)
	if len(out) == 0 {
		return []byte{}, nil
	}
	return []byte(strings.Join(out, "\n") + "\n"), nil
}

// hunkStart reads "@@ -a[,b] +c[,d] @@" and returns a as a zero-based line
// index (a is 1-based, or 0 with b = 0 for an insertion at the top).
func hunkStart(header string) (int, error) {
	fields := strings.Fields(header)
	if len(fields) < 4 || fields[3] != "@@" || !strings.HasPrefix(fields[1], "-") {
		return 0, fmt.Errorf("%q is not a hunk header", header)
	}
	oldRange := strings.TrimPrefix(fields[1], "-")
	first, count, hasCount := strings.Cut(oldRange, ",")
	a, err := strconv.Atoi(first)
	if err != nil || a < 0 {
		return 0, fmt.Errorf("%q: bad start line", header)
	}
	if hasCount && count == "0" {
		return a, nil // an insertion after line a
	}
	if a == 0 {
		return 0, fmt.Errorf("%q: line 0 with lines to remove", header)
	}
	return a - 1, nil
}

// splitLines splits text into lines without their newlines.
func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// DiffKinds lists the cases of golden/diff by kind, sorted.
func DiffKinds() ([]string, error) {
	files, err := filepath.Glob(Path("diff/*.txtar"))
	if err != nil {
		return nil, err
	}
	kinds := make([]string, len(files))
	for i, f := range files {
		kinds[i] = strings.TrimSuffix(filepath.Base(f), ".txtar")
	}
	sort.Strings(kinds)
	return kinds, nil
}
