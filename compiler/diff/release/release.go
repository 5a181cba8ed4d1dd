// Package release turns a diff between two packagings of one connector into
// what a harness package says about itself: its version (the previous
// version stepped by the semver verdict), CHANGELOG.md, a note on breaking
// changes for SKILL.md, and the contract file a later packaging diffs
// against. The harness emitter knows nothing of it: the packaging step adds
// these files to the rendered tree.
package release

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/runtime/air"
)

// File names in a harness package.
const (
	// ContractFile is the AIR of the package's served operations (and the
	// schemas they reference), so the next packaging can diff against it.
	ContractFile  = "anvil.contract.json"
	ChangelogFile = "CHANGELOG.md"
	SkillFile     = "SKILL.md"
	harnessFile   = "harness.json"
)

// Served returns a copy of doc that keeps only its served operations and
// the schemas they reach: what a harness package exposes.
func Served(doc *air.Document) *air.Document {
	out := *doc
	out.Operations = nil
	out.Schemas = map[string]*air.Schema{}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		if !air.IsServed(op) {
			continue
		}
		out.Operations = append(out.Operations, *op)
		for name, s := range diff.ContractOf(doc, op).Closure().Defs {
			out.Schemas[name] = s
		}
	}
	if out.Operations == nil {
		out.Operations = []air.Operation{}
	}
	out.Capabilities, out.Workflows, out.Diagnostics = []air.Capability{}, []air.Workflow{}, []air.Diagnostic{}
	return &out
}

// ContractBytes is ContractFile's content for doc.
func ContractBytes(doc *air.Document) ([]byte, error) { return air.Marshal(Served(doc)) }

// Previous is what an earlier packaging left: its served operations and
// its version, and the changelog to continue.
type Previous struct {
	Doc       *air.Document
	Version   string
	Changelog []byte
}

// LoadPrevious reads a previous harness package (ContractFile and
// harness.json) or a compiled bundle (air.json) from dir.
func LoadPrevious(dir string) (*Previous, error) {
	if b, err := os.ReadFile(filepath.Join(dir, ContractFile)); err == nil {
		doc, err := air.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s in %s is not valid: %v", ContractFile, dir, err)
		}
		p := &Previous{Doc: doc, Version: doc.Service.Version}
		p.Changelog, _ = os.ReadFile(filepath.Join(dir, ChangelogFile))
		return p, nil
	}
	if _, err := os.Stat(filepath.Join(dir, harnessFile)); err == nil {
		return nil, fmt.Errorf("%s is a harness package without %s (packaged by an older anvil): give its bundle instead", dir, ContractFile)
	}
	doc, err := air.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("%s is neither a harness package nor a compiled bundle: %v", dir, err)
	}
	return &Previous{Doc: Served(doc), Version: doc.Service.Version}, nil
}

// Changes compares what the previous package served with the new
// document, leaving out operations that neither side serves.
func Changes(prev *Previous, doc *air.Document) *diff.Report {
	var keep []diff.Change
	for _, c := range diff.Compare(prev.Doc, doc) {
		if c.Kind == diff.OperationAdded {
			if op := doc.Operation(c.OperationID); op == nil || !air.IsServed(op) {
				continue
			}
		}
		keep = append(keep, c)
	}
	return diff.NewReport(keep)
}

var semver = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)`)

// ErrNotSemver: the previous version has no major.minor.patch to step.
var ErrNotSemver = errors.New("not a semantic version")

// Bump steps version by a verdict: major (and unknown) → X+1.0.0, minor → X.Y+1.0,
// patch → X.Y.Z+1, none → unchanged (pre-release and build parts dropped).
func Bump(version, verdict string) (string, error) {
	m := semver.FindStringSubmatch(version)
	if m == nil {
		return "", fmt.Errorf("version %q: %w", version, ErrNotSemver)
	}
	var n [3]int
	for i := range n {
		v, err := strconv.Atoi(m[i+1])
		if err != nil {
			return "", fmt.Errorf("version %q: %w", version, ErrNotSemver)
		}
		n[i] = v
	}
	switch verdict {
	case diff.Major, diff.Unknown: // what was not compared may have broken
		n = [3]int{n[0] + 1, 0, 0}
	case diff.Minor:
		n = [3]int{n[0], n[1] + 1, 0}
	case diff.Patch:
		n[2]++
	}
	return fmt.Sprintf("%d.%d.%d", n[0], n[1], n[2]), nil
}

// Changelog is CHANGELOG.md: a heading, this version's entry from the
// report, then the previous changelog's entries.
func Changelog(version, prevVersion string, r *diff.Report, previous []byte) ([]byte, error) {
	const title = "# Changelog\n"
	var b bytes.Buffer
	b.WriteString(title)
	fmt.Fprintf(&b, "\n## %s\n\nChanges since %s, as `anvil diff` reports them for agents and SDK users.\n\n", version, prevVersion)
	if err := r.WriteMarkdown(&b); err != nil {
		return nil, err
	}
	if rest := bytes.TrimPrefix(previous, []byte(title)); len(bytes.TrimSpace(rest)) > 0 {
		b.WriteString("\n")
		b.Write(bytes.TrimLeft(rest, "\n"))
	}
	return b.Bytes(), nil
}

// SkillNote is the section appended to SKILL.md when this version has
// breaking changes: one line per change, so an agent that learned the old
// tools knows what no longer holds. Empty when nothing breaks.
func SkillNote(version string, r *diff.Report) []byte {
	if r.Summary.Breaking == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Breaking changes in %s\n\nWhat a caller of the previous version must change (CHANGELOG.md has every change):\n\n", version)
	for _, c := range r.Changes {
		if c.Breaking {
			fmt.Fprintf(&b, "- `%s` (%s): %s\n", c.Tool, c.Kind, c.Detail)
		}
	}
	return []byte(b.String())
}
