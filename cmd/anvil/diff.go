package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/compiler/diff/specdiff"
	"github.com/anvil-dev/anvil/compiler/lock"
	"github.com/anvil-dev/anvil/compiler/lower"
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
	var man *manifest.Manifest
	var pins []lower.Pin
	if p := c.String("manifest"); p != "" {
		m, l := manifest.Load(p)
		if l.HasErrors() {
			printDiagnostics(e, l, false)
			return fail(2, "the manifest %s has errors", p)
		}
		man = m
		// Both specs compile as anvil compile would: with the names
		// anvil.lock pins, so the report shows only the renames that
		// recompiling could not avoid.
		lk, err := lock.Load(lock.PathFor(p))
		if err != nil {
			return fail(2, "%v", err)
		}
		pins = lk.Pins()
	}
	oldPath, newPath := c.Args().Get(0), c.Args().Get(1)
	report, warn, err := diffPaths(oldPath, newPath, man, pins, c.IsSet("manifest"))
	if err != nil {
		return err
	}
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

// diffPaths compares two specs or bundles: AIR-level always, and, when both
// are specs, the spec-level comparison. The two sides compile in parallel;
// libopenapi runs only after Anvil's loader has read both specs, so every
// file reference it follows has been confined to its spec's directory. A
// spec-level comparison libopenapi cannot do is a warning, not an error:
// the AIR-level report stands on its own.
func diffPaths(oldPath, newPath string, man *manifest.Manifest, pins []lower.Pin, manifestSet bool) (*diff.Report, []string, error) {
	oldBundle, newBundle := isBundle(oldPath), isBundle(newPath)
	if manifestSet && oldBundle && newBundle {
		return nil, nil, fail(2, "--manifest applies to specs, and %s and %s are both bundles", oldPath, newPath)
	}
	var (
		wg             sync.WaitGroup
		oldDoc, newDoc *air.Document
		oerr, nerr     error
		warnings       []string
	)
	wg.Add(2)
	go func() { defer wg.Done(); oldDoc, oerr = diffSide(oldPath, oldBundle, man, pins) }()
	go func() { defer wg.Done(); newDoc, nerr = diffSide(newPath, newBundle, man, pins) }()
	wg.Wait()
	if err := errors.Join(oerr, nerr); err != nil {
		return nil, nil, fail(2, "%v", err)
	}
	var spec []diff.Change
	if oldBundle || newBundle {
		warnings = append(warnings, "a bundle side has no spec text: only the AIR-level comparison runs")
	} else {
		var err error
		if spec, err = specLevel(oldPath, newPath); err != nil {
			warnings = append(warnings, "spec-level comparison skipped: "+err.Error())
		}
	}
	changes := diff.WithSpecChanges(diff.Compare(oldDoc, newDoc), spec, oldDoc, newDoc)
	return diff.NewReport(changes), warnings, nil
}

func specLevel(oldPath, newPath string) ([]diff.Change, error) {
	side := func(p string) (specdiff.Side, error) {
		b, err := os.ReadFile(p)
		return specdiff.Side{Name: filepath.ToSlash(p), Dir: filepath.Dir(p), Bytes: b}, err
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

// diffSide loads a bundle's AIR, or compiles a spec (with the manifest and
// the lock's pinned names) in memory: nothing is written.
func diffSide(p string, bundle bool, man *manifest.Manifest, pins []lower.Pin) (*air.Document, error) {
	if bundle {
		dir := p
		if filepath.Base(p) == air.DocumentFile {
			dir = filepath.Dir(p)
		}
		doc, err := air.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("%s is not a compiled bundle: %v", p, err)
		}
		return doc, nil
	}
	spec, err := openapi.Load(p, nil)
	if err != nil {
		var f *diag.Failure
		if errors.As(err, &f) && len(f.Diagnostics) > 0 {
			return nil, fmt.Errorf("%s", f.Diagnostics[0].String())
		}
		return nil, err
	}
	doc, _ := lower.Lower(spec, man, &lower.Options{Pins: pins})
	return doc, nil
}
