package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
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
		},
		Action: func(c *cli.Context) error { return runCompile(e, c) },
	}
}

// compileResult summarises one compile for printing.
type compileResult struct {
	Spec           string    `json:"spec"`
	Kind           string    `json:"kind"`
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
	if c.NArg() != 1 {
		return fail(1, "compile takes one spec file (usage: anvil compile <spec> [--manifest anvil.yaml] [--out dir])")
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
	specPath := c.Args().First()
	var all diag.List
	report := func(code int, l diag.List) error {
		l.Sort()
		if format == "json" {
			res := compileResult{Spec: specPath, Diagnostics: l, Errors: l.Count(diag.Error), Warnings: l.Count(diag.Warning)}
			b, _ := json.MarshalIndent(res, "", "  ")
			fmt.Fprintln(e.stdout, string(b))
		} else {
			printDiagnostics(e, l, c.Bool("verbose"))
		}
		return silentExit(code)
	}

	spec, err := openapi.Load(specPath, nil)
	if err != nil {
		var f *diag.Failure
		if errors.As(err, &f) {
			return report(1, f.Diagnostics)
		}
		return fail(1, "%v", err)
	}
	all = append(all, spec.Diagnostics...)

	var man *manifest.Manifest
	if p := c.String("manifest"); p != "" {
		m, l := manifest.Load(p)
		if l.HasErrors() {
			return report(1, append(all, l...))
		}
		all = append(all, l...)
		man = m
	}

	doc, l := lower.Lower(spec, man, &lower.Options{ServiceID: c.String("service"), HumanApproval: approval})
	all = append(all, l...)
	all.Sort()
	portableSources(doc, specPath)

	out := c.String("out")
	if out == "" {
		out = filepath.Join("generated", doc.Service.ID)
	}
	rendered, err := air.Files(doc)
	if err != nil {
		return fail(1, "rendering the bundle: %v", err)
	}
	if err := files.FromBytes(rendered).WriteTo(out); err != nil {
		return fail(1, "writing %s: %v", out, err)
	}

	res := compileResult{Spec: specPath, Kind: spec.Kind, Out: out, Files: len(rendered), Operations: len(doc.Operations),
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
	fmt.Fprintf(e.stdout, "Compiled %d operations from %s (%s) → %s (%d files).\n", res.Operations, specPath, res.Kind, out, res.Files)
	fmt.Fprintf(e.stdout, "  approved: %d  review_required: %d\n", res.Approved, res.ReviewRequired)
	fmt.Fprintf(e.stdout, "  diagnostics: %d error(s), %d warning(s)\n", res.Errors, res.Warnings)
	if res.ReviewRequired > 0 {
		fmt.Fprintf(e.stdout, "  %d operation(s) need review: approve them with `anvil approve %s <operation-id...>`.\n", res.ReviewRequired, out)
	}
	return silentExit(code)
}

// portableSources rewrites the file paths AIR records (the source URI, each
// operation's source file, diagnostic paths) relative to the spec's directory,
// so a bundle holds no absolute or working-directory-dependent path. A file
// outside that directory is recorded by its base name.
func portableSources(doc *air.Document, specPath string) {
	base := filepath.Dir(specPath)
	portable := func(p string) string {
		if p == "" {
			return p
		}
		rel, err := filepath.Rel(base, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.Base(p)
		}
		return filepath.ToSlash(rel)
	}
	doc.Service.Source.URI = portable(doc.Service.Source.URI)
	for i := range doc.Operations {
		doc.Operations[i].SourceRef.File = portable(doc.Operations[i].SourceRef.File)
	}
	for i := range doc.Diagnostics {
		d := &doc.Diagnostics[i]
		// "file:line:col": the file part ends at the last two colons.
		parts := strings.Split(d.Path, ":")
		if len(parts) >= 3 {
			file := strings.Join(parts[:len(parts)-2], ":")
			d.Path = portable(file) + ":" + strings.Join(parts[len(parts)-2:], ":")
		} else if d.Path != "" {
			d.Path = portable(d.Path)
		}
	}
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
