package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler"
	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/compiler/diff/specdiff"
	"github.com/anvil-dev/anvil/compiler/lock"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

func diffCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "report what changed for agents and SDK users between two specs or bundles, with a semver verdict",
		ArgsUsage: "<old spec | bundle> <new spec | bundle>",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "manifest", Usage: "the anvil.yaml both specs are compiled with"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json or markdown"},
			&cli.StringFlag{Name: "fail-on", Value: "breaking", Usage: "exit 1 on a change at this level: breaking, any or none"},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return fail(2, "%v", err) },
		Action:       func(c *cli.Context) error { return runDiff(e, c) },
	}
}

// runDiff exits 1 when a change at the --fail-on level exists, 2 on a usage
// or input error, 0 otherwise.
func runDiff(e *env, c *cli.Context) error {
	if c.NArg() != 2 {
		return fail(2, "diff takes an old and a new spec or bundle (usage: anvil diff <old> <new> [--manifest m] [--format text|json|markdown] [--fail-on breaking|any|none])")
	}
	format, failOn := c.String("format"), c.String("fail-on")
	switch format {
	case "text", "json", "markdown":
	default:
		return fail(2, "--format must be text, json or markdown, not %q", format)
	}
	switch failOn {
	case "breaking", "any", "none":
	default:
		return fail(2, "--fail-on must be breaking, any or none, not %q", failOn)
	}
	man := c.String("manifest")
	var opts compiler.Options
	if man != "" { // refused before any spec is read
		if _, l := manifest.Load(man); l.HasErrors() {
			printDiagnostics(e, l, false)
			return fail(2, "the manifest %s has errors", man)
		}
		// Both specs compile as anvil compile would: with the names
		// anvil.lock pins, so the report shows only the renames that
		// recompiling could not avoid.
		lk, err := lock.Load(lock.PathFor(man))
		if err != nil {
			return fail(2, "%v", err)
		}
		opts.Pins = lk.Pins()
	}
	oldPath, newPath := c.Args().Get(0), c.Args().Get(1)
	report, warn, compiled, err := diffPaths(oldPath, newPath, man, opts, c.IsSet("manifest"))
	if err != nil {
		return err
	}
	printDiagnostics(e, compiled, false)
	for _, w := range warn {
		fmt.Fprintf(e.stderr, "anvil: %s\n", w)
	}
	switch format {
	case "json":
		err = report.WriteJSON(e.stdout)
	case "markdown":
		err = report.WriteMarkdown(e.stdout)
	default:
		err = report.WriteText(e.stdout)
	}
	if err != nil {
		return fail(2, "writing the report: %v", err)
	}
	if report.HasLevel(failOn) {
		return silentExit(1)
	}
	return nil
}

// Bounds of `anvil diff` (docs/diff.md, "Memory and input bounds").
const (
	// maxDiffSpecBytes bounds each spec file a diff reads: a larger one is
	// refused with CodeDiffInputTooLarge before anything is parsed.
	// Microsoft Graph beta's description, the largest measured, is 47 MB.
	maxDiffSpecBytes = 64 << 20
	// diffMemoryFactor is the soft memory limit of a diff, in multiples of
	// the larger input; the garbage collector works harder near it rather
	// than letting the heap double.
	diffMemoryFactor = 16
	// minDiffMemory is the limit's floor: the runtime and the binary
	// itself take about 20 MB before any input is read.
	minDiffMemory = 48 << 20
)

// CodeDiffInputTooLarge refuses a spec past maxDiffSpecBytes.
const CodeDiffInputTooLarge = "diff/input_too_large"

// diffPaths compares two specs or bundles: AIR-level always and, when both
// are specs, each operation's surface (every security alternative, every
// request and success response media type) and the spec-level comparison
// of the document's frame. To hold memory near the inputs' size, the
// phases run one after the other and each leaves only its result behind:
// libopenapi's comparison of the two frames, then the old side's compile
// (its AIR and surfaces), then the new side's. libopenapi runs only after
// Anvil's loader has read both specs' frames, and file references are not
// followed in a frame. A spec-level comparison libopenapi cannot do is a
// warning, not an error: the rest of the report stands on its own. The
// compiles' error diagnostics are returned: a side that compiled with errors
// is compared as compiled, and the person sees why its AIR may be off.
// opts carries the lock's pinned names to both compiles.
func diffPaths(oldPath, newPath, man string, opts compiler.Options, manifestSet bool) (*diff.Report, []string, diag.List, error) {
	oldBundle, newBundle := isBundle(oldPath), isBundle(newPath)
	if manifestSet && oldBundle && newBundle {
		return nil, nil, nil, fail(2, "--manifest applies to specs, and %s and %s are both bundles", oldPath, newPath)
	}
	largest := int64(0)
	for _, side := range []struct {
		path   string
		bundle bool
	}{{oldPath, oldBundle}, {newPath, newBundle}} {
		if side.bundle {
			continue
		}
		st, err := os.Stat(side.path)
		if err != nil {
			continue // the compile below reports it as compile does (spec/unreadable)
		}
		if st.Size() > maxDiffSpecBytes {
			return nil, nil, nil, fail(2, "%s: %s is %d bytes, more than anvil diff reads (%d)", CodeDiffInputTooLarge, side.path, st.Size(), maxDiffSpecBytes)
		}
		largest = max(largest, st.Size())
	}
	if largest > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(max(diffMemoryFactor*largest, minDiffMemory)))
	}
	var warnings []string
	var spec []diff.Change
	if oldBundle || newBundle {
		warnings = append(warnings, "a bundle side has no spec text: only the AIR-level comparison runs")
	} else {
		var err error
		if spec, err = specLevel(oldPath, newPath); err != nil {
			warnings = append(warnings, "spec-level comparison skipped: "+err.Error())
		}
		releaseMemory()
	}
	oldSide, oldDiags, err := diffSide(oldPath, oldBundle, man, opts)
	if err != nil {
		return nil, nil, nil, fail(2, "%v", err)
	}
	releaseMemory()
	newSide, newDiags, err := diffSide(newPath, newBundle, man, opts)
	if err != nil {
		return nil, nil, nil, fail(2, "%v", err)
	}
	if oldBundle != newBundle {
		oldSide.Surfaces, newSide.Surfaces = nil, nil
	}
	changes := diff.WithSpecChanges(diff.CompareSides(oldSide, newSide), spec, oldSide.Doc, newSide.Doc)
	return diff.NewReport(changes), warnings, append(oldDiags, newDiags...), nil
}

// releaseMemory collects what a finished phase left and returns it to the
// operating system, so the next phase's peak does not stack on it.
func releaseMemory() { debug.FreeOSMemory() }

// specLevel runs libopenapi's comparison over the two specs' frames
// (openapi.Frame): document-level parts only.
func specLevel(oldPath, newPath string) ([]diff.Change, error) {
	side := func(p string) (specdiff.Side, error) {
		b, err := os.ReadFile(p)
		if err != nil {
			return specdiff.Side{}, err
		}
		frame, err := openapi.Frame(filepath.ToSlash(p), b)
		return specdiff.Side{Name: filepath.ToSlash(p), Bytes: frame}, err
	}
	o, err := side(oldPath)
	if err != nil {
		return nil, err
	}
	n, err := side(newPath)
	if err != nil {
		return nil, err
	}
	return specdiff.Compare(o, n)
}

// isBundle reports whether p is a bundle directory or its air.json.
func isBundle(p string) bool {
	st, err := os.Stat(p)
	if err != nil {
		return false
	}
	if st.IsDir() {
		return true
	}
	return filepath.Base(p) == air.DocumentFile
}

// diffSide loads a bundle's AIR, or compiles a spec (with the manifest) in
// memory (with opts, the lock's pinned names), nothing written, with the
// surfaces of its operations. AIR names
// the spec's files as they were given, so locations read as the person
// named the specs. Of the compile's diagnostics only the errors are kept
// (returned); the document's own copy is dropped at once, since a
// comparison does not read it. A spec that cannot be compiled is an error
// naming its first error diagnostic.
func diffSide(p string, bundle bool, man string, opts compiler.Options) (diff.Side, diag.List, error) {
	if bundle {
		dir := p
		if filepath.Base(p) == air.DocumentFile {
			dir = filepath.Dir(p)
		}
		doc, err := air.Load(dir)
		if err != nil {
			return diff.Side{}, nil, fmt.Errorf("%s is not a compiled bundle: %v", p, err)
		}
		doc.Diagnostics = nil
		return diff.Side{Doc: doc}, nil, nil
	}
	var spec *openapi.Spec
	opts.AllMediaTypes, opts.MaxFileSize, opts.NamesAsRead = true, maxDiffSpecBytes, true
	opts.OnLoaded = func(s *openapi.Spec) { spec = s }
	doc, all := compiler.Compile(compiler.Inputs{Spec: p, Manifest: man}, opts)
	errs := all.Errors()
	if doc == nil {
		if len(errs) > 0 {
			return diff.Side{}, nil, fmt.Errorf("%s", errs[0].String())
		}
		return diff.Side{}, nil, fmt.Errorf("%s cannot be compiled", p)
	}
	doc.Diagnostics = nil
	return diff.Side{Doc: doc, Surfaces: specdiff.Surfaces(spec)}, errs, nil
}
