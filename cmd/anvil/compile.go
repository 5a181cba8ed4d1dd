package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler"
	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/sources"
	"github.com/anvil-dev/anvil/runtime/air"
)

func compileCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "compile",
		Usage:     "compile an OpenAPI description and a manifest into an AIR bundle",
		ArgsUsage: "<spec>",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "manifest", Usage: "the anvil.yaml manifest (optional)"},
			&cli.StringFlag{Name: "service", Usage: "service id when the manifest names none"},
			&cli.StringFlag{Name: "out", Usage: "bundle directory (default generated/<service id>)"},
			&cli.StringFlag{Name: "human-approval", Value: "none", Usage: "force confirmation: none, unsafe or all"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "diagnostics format: text or json"},
			&cli.BoolFlag{Name: "verbose", Usage: "also print info diagnostics"},
			&cli.StringFlag{Name: "endpoint", Usage: "upstream base URL for the bundle, replacing the description's servers"},
			&cli.StringFlag{Name: "source", Usage: "compile a stored source snapshot (its id) instead of a spec file"},
			&cli.StringFlag{Name: "entrypoint", Usage: "the entry document inside a spec directory or a --source snapshot"},
			&cli.StringFlag{Name: "root", Value: ".", Usage: "the workspace root whose .anvil/sources holds source snapshots"},
			&cli.StringFlag{Name: "spec-base", Usage: "the directory $refs may read files from (default: the spec directory, or the entry document's directory)"},
		},
		Action: func(c *cli.Context) error { return runCompile(e, c) },
	}
}

// compileResult summarises one compile for printing.
type compileResult struct {
	Spec           string    `json:"spec"`
	Kind           string    `json:"kind"`
	Source         string    `json:"source,omitempty"` // the source snapshot's id
	Out            string    `json:"out"`
	Files          int       `json:"files"`
	Operations     int       `json:"operations"`
	Approved       int       `json:"approved"`
	ReviewRequired int       `json:"review_required"`
	Errors         int       `json:"errors"`
	Warnings       int       `json:"warnings"`
	Diagnostics    diag.List `json:"diagnostics"`
}

func runCompile(e *env, c *cli.Context) error {
	switch {
	case c.IsSet("source") && c.NArg() != 0:
		return fail(1, "compile --source takes no spec argument (usage: anvil compile --source <snapshot-id> [--manifest anvil.yaml] [--out dir])")
	case !c.IsSet("source") && c.NArg() != 1:
		return fail(1, "compile takes one spec file (usage: anvil compile <spec> [--manifest anvil.yaml] [--out dir])")
	}
	endpoint := c.String("endpoint")
	if c.IsSet("endpoint") {
		if err := compiler.CheckEndpoint(endpoint); err != nil {
			return fail(1, "--endpoint %v", err)
		}
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return fail(1, "--format must be text or json, not %q", format)
	}
	approval := c.String("human-approval")
	switch approval {
	case "none", "unsafe", "all":
	default:
		return fail(1, "--human-approval must be none, unsafe or all, not %q", approval)
	}
	in, err := compileInput(c)
	if err != nil {
		return err
	}
	if in.cleanup != nil { // fetch.go: a spec given by URL
		defer in.cleanup()
	}
	specPath := in.spec
	shownSpec := specPath // what the JSON result names
	if in.cleanup != nil {
		shownSpec = in.shown
	}

	opts := compiler.Options{ServiceID: c.String("service"), HumanApproval: approval, Endpoint: endpoint}
	if in.fs == nil { // a --source snapshot is already stored
		opts.Base = in.base // $refs stay inside it (issue 15)
	}
	built, err := compiler.Build(c.Context, compiler.BuildOptions{
		Inputs:  compiler.Inputs{Spec: specPath, FS: in.fs, Manifest: c.String("manifest")},
		Options: opts, Out: c.String("out"), Root: in.root, Snapshot: in.snapshot,
	})
	var step *compiler.StepError
	switch {
	case errors.As(err, &step) && step.Step == compiler.StepSnapshot:
		return fail(1, "%v (choose another place with --root)", err)
	case err != nil:
		return fail(1, "%v", err)
	}
	doc, all, out := built.Doc, built.Diagnostics, built.Out
	if in.cleanup != nil {
		nameURL(all, specPath, in.shown) // the fetched file is temporary: name the URL
	}
	if doc == nil {
		// Nothing to write: the description or the manifest cannot be used.
		if format == "json" {
			res := compileResult{Spec: shownSpec, Diagnostics: all, Errors: all.Count(diag.Error), Warnings: all.Count(diag.Warning)}
			b, _ := json.MarshalIndent(res, "", "  ")
			fmt.Fprintln(e.stdout, string(b))
		} else {
			printDiagnostics(e, all, c.Bool("verbose"))
		}
		return silentExit(1)
	}

	res := compileResult{Spec: shownSpec, Kind: string(doc.Service.Source.Kind), Source: built.Snapshot.ID, Out: out, Files: built.Files, Operations: len(doc.Operations),
		Errors: all.Count(diag.Error), Warnings: all.Count(diag.Warning), Diagnostics: all}
	for i := range doc.Operations {
		switch doc.Operations[i].State {
		case air.StateApproved:
			res.Approved++
		case air.StateReviewRequired:
			res.ReviewRequired++
		}
	}
	code := 0
	if res.Errors > 0 {
		code = 1
	}
	if format == "json" {
		if res.Diagnostics == nil {
			res.Diagnostics = diag.List{}
		}
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return silentExit(code)
	}
	printDiagnostics(e, all, c.Bool("verbose"))
	fmt.Fprintf(e.stdout, "Compiled %d operations from %s (%s) → %s (%d files).\n", res.Operations, in.shown, res.Kind, out, res.Files)
	fmt.Fprintf(e.stdout, "  approved: %d  review_required: %d\n", res.Approved, res.ReviewRequired)
	fmt.Fprintf(e.stdout, "  diagnostics: %d error(s), %d warning(s)\n", res.Errors, res.Warnings)
	if res.ReviewRequired > 0 {
		fmt.Fprintf(e.stdout, "  %d operation(s) need review: approve them with `anvil approve %s <operation-id...>`.\n", res.ReviewRequired, out)
	}
	fmt.Fprintf(e.stdout, "  source snapshot: %s (compile it again with --source %s)\n", res.Source, res.Source)
	return silentExit(code)
}

// compiled is where a compile reads its description from.
type compiled struct {
	spec     string            // the entry document: an OS path, or a path in fs
	fs       fs.FS             // a --source snapshot's files; nil for the OS's
	snapshot *sources.Snapshot // set with --source
	root     string            // --root
	shown    string            // what the summary line names
	cleanup  func()            // removes a fetched spec (fetch.go); nil for files
	base     string            // --spec-base, else a spec directory; "" is the entry's directory
}

// compileInput resolves the spec argument (a file, or a directory with
// --entrypoint) or --source <id> (a snapshot under --root, optionally with
// another --entrypoint).
func compileInput(c *cli.Context) (*compiled, error) {
	in := &compiled{root: c.String("root")}
	entry := c.String("entrypoint")
	if id := c.String("source"); c.IsSet("source") {
		snap, files, err := sources.Open(in.root, id)
		if err != nil {
			return nil, fail(1, "%v", err)
		}
		in.spec, in.fs, in.snapshot, in.shown = snap.Entrypoint, files, snap, "source "+snap.ID
		if entry != "" {
			if in.spec = path.Clean(filepath.ToSlash(entry)); !fs.ValidPath(in.spec) {
				return nil, fail(1, "--entrypoint %q is not a path inside the snapshot", entry)
			}
		}
		return in, nil
	}
	in.spec, in.base = c.Args().First(), c.String("spec-base")
	if isSpecURL(in.spec) { // fetch.go
		if entry != "" {
			return nil, fail(1, "--entrypoint applies to a spec directory or a --source snapshot, not a URL")
		}
		p, cleanup, err := fetchSpec(c.Context, in.spec)
		if err != nil {
			return nil, fail(1, "%v", err)
		}
		in.shown, in.spec, in.cleanup = shownURL(in.spec), p, cleanup
		return in, nil
	}
	if fi, err := os.Stat(in.spec); err == nil && fi.IsDir() {
		if entry == "" {
			return nil, fail(1, "%s is a directory: name its entry document with --entrypoint", in.spec)
		}
		if in.base == "" {
			in.base = in.spec
		}
		in.spec = filepath.Join(in.spec, filepath.FromSlash(entry))
	} else if entry != "" {
		return nil, fail(1, "--entrypoint applies to a spec directory or a --source snapshot, and %s is a file", in.spec)
	}
	in.shown = in.spec
	return in, nil
}

// printDiagnostics writes errors and warnings (and info with verbose) to stderr.
func printDiagnostics(e *env, l diag.List, verbose bool) {
	for _, d := range l {
		if d.Level == diag.Info && !verbose {
			continue
		}
		fmt.Fprintln(e.stderr, d.String())
	}
}
