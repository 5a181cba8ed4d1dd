package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler/diff/release"
	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/emit/harness"
	"github.com/anvil-dev/anvil/runtime/air"
)

func packageCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "package",
		Usage: "package compiled bundles",
		Subcommands: []*cli.Command{{
			Name:      "harness",
			Usage:     "write a connector's harness package (skill, SDKs, CLI) that calls only the gateway",
			ArgsUsage: "<bundle>",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "out", Usage: "the package directory"},
				&cli.StringFlag{Name: "workspace", Usage: "the workspace the gateway serves (names the connector by its path there)"},
				&cli.StringFlag{Name: "connector", Usage: "the connector id (overrides the folded path)"},
				&cli.StringFlag{Name: "previous", Usage: "the previous package (or bundle): version by the semver verdict, CHANGELOG.md from the diff"},
				&cli.BoolFlag{Name: "allow-errors", Usage: "package a bundle whose compile reported errors (warns loudly)"},
			},
			Action: func(c *cli.Context) error { return runPackageHarness(e, c) },
		}},
	}
}

// connectorID names a bundle as the fleet gateway serves it: its path in the
// workspace (or its directory name), folded; an explicit id wins.
func connectorID(bundle, workspace, explicit string) (string, error) {
	if explicit != "" {
		if !air.ValidConnectorID.MatchString(explicit) {
			return "", fmt.Errorf("--connector %q must match ^[A-Za-z0-9_-]{1,64}$", explicit)
		}
		return explicit, nil
	}
	if workspace == "" {
		abs, err := filepath.Abs(bundle)
		if err != nil {
			return "", err
		}
		return air.FoldConnectorID(filepath.Base(abs)), nil
	}
	rel, err := bundleInWorkspace(bundle, workspace)
	if err != nil {
		return "", err
	}
	return air.FoldConnectorID(rel), nil
}

// bundleInWorkspace returns the bundle's path relative to the workspace, or
// an error when it lies outside it.
func bundleInWorkspace(bundle, workspace string) (string, error) {
	ab, err1 := filepath.Abs(bundle)
	aw, err2 := filepath.Abs(workspace)
	if err1 != nil || err2 != nil {
		return "", fmt.Errorf("cannot resolve %s in %s", bundle, workspace)
	}
	ab, aw = evalSymlinks(ab), evalSymlinks(aw)
	rel, err := filepath.Rel(aw, ab)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not a bundle the workspace %s serves", bundle, workspace)
	}
	return rel, nil
}

func evalSymlinks(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// loadBundle loads a compiled bundle and its hash.
func loadBundle(dir string) (*air.Document, string, error) {
	doc, err := air.Load(dir)
	if err != nil {
		return nil, "", fmt.Errorf("%s is not a compiled bundle (no readable %s): %v", dir, air.DocumentFile, err)
	}
	hash := ""
	if g, err := air.LoadGeneration(dir); err == nil {
		hash = g.BundleHash
	}
	return doc, hash, nil
}

// checkReplaceable refuses an --out that exists, is not empty and is not the
// kind of directory marker names.
func checkReplaceable(out, marker, what string) error {
	entries, err := os.ReadDir(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		st, serr := os.Stat(out)
		if serr == nil && !st.IsDir() {
			return fmt.Errorf("%s exists and is not a directory; refusing to replace it", out)
		}
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, marker)); err == nil {
		return nil
	}
	return fmt.Errorf("%s is not empty and holds no %s (it is not %s); refusing to replace it", out, marker, what)
}

func runPackageHarness(e *env, c *cli.Context) error {
	if c.NArg() != 1 {
		return fail(1, "package harness takes one bundle (usage: anvil package harness <bundle> --out <dir>)")
	}
	bundle, out := c.Args().First(), c.String("out")
	if out == "" {
		return fail(1, "package harness needs --out <dir>")
	}
	doc, hash, err := loadBundle(bundle)
	if err != nil {
		return fail(1, "%v", err)
	}
	if err := refuseErrors(e, doc, bundle, c.Bool("allow-errors")); err != nil {
		return err
	}
	var step *releaseStep
	if p := c.String("previous"); p != "" {
		if step, err = planRelease(doc, p); err != nil {
			return err
		}
	}
	id, err := connectorID(bundle, c.String("workspace"), c.String("connector"))
	if err != nil {
		return fail(1, "%v", err)
	}
	if err := checkReplaceable(out, "harness.json", "a harness package"); err != nil {
		return fail(1, "%v", err)
	}
	tree, err := harness.Render(emit.Connector{ID: id, Doc: doc, BundleHash: hash, Dir: bundle})
	if errors.Is(err, harness.ErrNothingApproved) {
		return fail(1, "%s has no approved operations to package (approve some with anvil approve)", bundle)
	}
	if err != nil {
		return fail(1, "%v", err)
	}
	if err := addReleaseFiles(tree, doc, step); err != nil {
		return fail(1, "%v", err)
	}
	// A regeneration replaces and removes only what the previous packaging
	// wrote (its manifest) and leaves node_modules, dist and the person's
	// own files alone.
	if err := tree.Sync(out, harness.ManifestFile); err != nil {
		return fail(1, "writing %s: %v", out, err)
	}
	n := 0
	for i := range doc.Operations {
		if air.IsServed(&doc.Operations[i]) {
			n++
		}
	}
	fmt.Fprintf(e.stdout, "Packaged connector '%s' (%d operation(s), gateway mode) to %s.\n", id, n, out)
	if step != nil {
		fmt.Fprintf(e.stdout, "Version %s (%s from %s: %d breaking, %d non-breaking change(s)); see %s.\n", step.version,
			step.report.Semver, step.prev.Version, step.report.Summary.Breaking, step.report.Summary.NonBreaking, release.ChangelogFile)
	}
	return nil
}
