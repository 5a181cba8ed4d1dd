package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = "../.."

// codeSpan matches a Markdown code span on one line.
var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// mdLink matches the target of an inline Markdown link or image.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// repoPathShape is what a code span must look like to be read as a path
// into the repository: slash-separated segments, no spaces or
// placeholders.
var repoPathShape = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/?$`)

// topLevel lists the repository's top-level entries, so that a code span
// such as `runtime/air` is recognised as a path while `bin/anvil` (built,
// not tracked) or `application/json` is not.
func topLevel(t *testing.T) map[string]bool {
	t.Helper()
	// What git tracks, not what the directory holds: build outputs (bin/,
	// a binary at the top) are not the repository, though a document may
	// name what a build writes there.
	out, err := exec.Command("git", "-C", repoRoot, "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (the documentation path checks need a git checkout)", err)
	}
	top := map[string]bool{}
	for _, f := range strings.Split(string(out), "\n") {
		first, _, _ := strings.Cut(f, "/")
		if first != "" && !strings.HasPrefix(first, ".") {
			top[first] = true
		}
	}
	return top
}

// spanPaths returns the code spans of text that name a path into the
// repository: those whose first segment is a top-level entry and that
// contain a slash (or name a top-level file such as README.md).
func spanPaths(text string, top map[string]bool) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		s := strings.TrimSuffix(m[1], "/...") // a package pattern names its root
		if !repoPathShape.MatchString(s) || notPaths[s] {
			continue
		}
		first, _, nested := strings.Cut(s, "/")
		if !top[first] || (!nested && !strings.Contains(first, ".")) {
			continue
		}
		out = append(out, strings.TrimSuffix(s, "/"))
	}
	return out
}

// notPaths are code spans shaped like paths that name something else:
// MCP methods, whose first segment happens to be a top-level directory.
var notPaths = map[string]bool{"tools/call": true, "tools/list": true}

func exists(rel string) bool {
	_, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(rel)))
	return err == nil
}

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docFiles lists README.md and every Markdown file under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, d := range docs {
		files = append(files, "docs/"+filepath.Base(d))
	}
	return files
}

// TestArchitectureDocNamesOnlyWhatExists fails when docs/ARCHITECTURE.md
// names, in a code span, a package or file the repository lacks (a package
// renamed or split without the page following), or when a runtime or
// compiler package is missing from it (a new package nobody placed).
func TestArchitectureDocNamesOnlyWhatExists(t *testing.T) {
	text := readDoc(t, "docs/ARCHITECTURE.md")
	top := topLevel(t)
	named := map[string]bool{}
	for _, p := range spanPaths(text, top) {
		named[p] = true
		if !exists(p) {
			t.Errorf("docs/ARCHITECTURE.md names `%s`, which the repository does not contain", p)
		}
	}
	if !named["runtime/executor"] || !named["compiler/lower"] {
		t.Fatalf("found none of the expected package names in docs/ARCHITECTURE.md (parsed %d)", len(named))
	}
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		if !under(rel, "runtime") && !under(rel, "compiler") {
			continue
		}
		if strings.Contains(rel, "/internal/") {
			continue // internal helpers are their parent's business
		}
		if !named[rel] {
			t.Errorf("docs/ARCHITECTURE.md does not mention package `%s`: say what it is for and where it sits", rel)
		}
	}
}

// TestDocsLinkOnlyWhatExists fails when README.md or a page under docs/
// links to a relative path, or names a repository path in a code span, that
// the repository does not contain.
func TestDocsLinkOnlyWhatExists(t *testing.T) {
	top := topLevel(t)
	checked := 0
	for _, doc := range docFiles(t) {
		text := readDoc(t, doc)
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			rel := filepath.ToSlash(filepath.Join(filepath.Dir(doc), target))
			checked++
			if !exists(rel) {
				t.Errorf("%s links %s, which the repository does not contain", doc, m[1])
			}
		}
		for _, p := range spanPaths(text, top) {
			checked++
			if !exists(p) {
				t.Errorf("%s names `%s`, which the repository does not contain", doc, p)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no links or paths found in README.md and docs/*.md")
	}
}

// TestNoCitationOfAbsentDocuments fails when a tracked source or
// documentation file cites a design document or ADR that is not in the
// repository: the rule belongs inline or in docs/ARCHITECTURE.md.
func TestNoCitationOfAbsentDocuments(t *testing.T) {
	cite := regexp.MustCompile(`\bDESIGN\.md\b|\bADR-\d+`)
	var bad []string
	for _, dir := range []string{"cmd", "compiler", "runtime", "internal", "examples", "docs", "templates", "scripts"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "node_modules" || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if path == filepath.Join(repoRoot, "internal", "archtest", "docs_test.go") {
				return nil // this test names what it looks for
			}
			switch filepath.Ext(path) {
			case ".go", ".md", ".ts", ".py", ".js", ".tmpl", ".sh":
			default:
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if loc := cite.FindIndex(b); loc != nil {
				rel, _ := filepath.Rel(repoRoot, path)
				bad = append(bad, filepath.ToSlash(rel)+": "+string(b[loc[0]:loc[1]]))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if loc := cite.FindIndex(b); loc != nil {
		bad = append(bad, "README.md: "+string(b[loc[0]:loc[1]]))
	}
	slices.Sort(bad)
	for _, b := range bad {
		t.Errorf("%s cites a document the repository does not contain", b)
	}
}
