package compiler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/compiler/diff/release"
	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/compiler/emit/harness"
	"github.com/anvil-dev/anvil/runtime/air"
)

// PackageOptions is one `anvil package harness`.
type PackageOptions struct {
	// Bundle is the compiled bundle's directory; Out the package directory.
	Bundle, Out string
	// Workspace and Connector name the connector (LoadConnector).
	Workspace, Connector string
	// Previous, when set, is the previous package (or bundle): the version
	// follows the semver verdict of the change, CHANGELOG.md its report.
	Previous string
	// AllowErrors packages a bundle compiled with error diagnostics.
	AllowErrors bool
}

// PackageResult is what Package did.
type PackageResult struct {
	// Connector is the connector id packaged, Operations its served
	// operations.
	Connector  string
	Operations int
	// Errors counts the bundle's error diagnostics (packaged only with
	// AllowErrors), and FirstErrors names up to three of them.
	Errors      int
	FirstErrors []string
	// Release is set with Previous.
	Release *Release
}

// Release is what Previous decided.
type Release struct {
	Version, PreviousVersion string
	Report                   *diff.Report
}

// StepPrevious is Package's reading of the previous package.
const StepPrevious Step = "previous"

// Package writes the connector's harness package (harness.Render, the
// release contract, and with Previous the changelog) into Out. A
// regeneration replaces and removes only what the previous packaging wrote
// (its manifest) and leaves node_modules, dist and the person's own files
// alone. A bundle with error diagnostics is refused unless AllowErrors;
// the result then still counts them, so the caller can warn.
func Package(ctx context.Context, o PackageOptions) (*PackageResult, error) {
	doc, hash, err := loadBundle(o.Bundle)
	if err != nil {
		return nil, err
	}
	res := &PackageResult{}
	for _, d := range doc.Diagnostics {
		if d.Level == air.LevelError {
			if res.Errors < 3 {
				res.FirstErrors = append(res.FirstErrors, fmt.Sprintf("%s: %s: %s", d.Path(), d.Code, d.Message))
			}
			res.Errors++
		}
	}
	if res.Errors > 0 && !o.AllowErrors {
		return res, fmt.Errorf("%s was compiled with %d error diagnostic(s) (first: %s); fix them and compile again, or package anyway with --allow-errors",
			o.Bundle, res.Errors, res.FirstErrors[0])
	}
	var prev *release.Previous
	if o.Previous != "" {
		if prev, res.Release, err = planRelease(doc, o.Previous); err != nil {
			return res, &StepError{Step: StepPrevious, Path: o.Previous, Err: err}
		}
	}
	if res.Connector, err = connectorID(o.Bundle, o.Workspace, o.Connector); err != nil {
		return res, err
	}
	if err := checkReplaceable(o.Out, "harness.json", "a harness package"); err != nil {
		return res, err
	}
	tree, err := harness.Render(emit.Connector{ID: res.Connector, Doc: doc, BundleHash: hash, Dir: o.Bundle})
	if errors.Is(err, harness.ErrNothingApproved) {
		return res, fmt.Errorf("%s has no approved operations to package (approve some with anvil approve)", o.Bundle)
	}
	if err != nil {
		return res, err
	}
	if err := addReleaseFiles(tree, doc, prev, res.Release); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := tree.Sync(o.Out, harness.ManifestFile); err != nil {
		return res, &StepError{Step: StepWrite, Path: o.Out, Err: err}
	}
	for i := range doc.Operations {
		if air.IsServed(&doc.Operations[i]) {
			res.Operations++
		}
	}
	return res, nil
}

// planRelease diffs the bundle against the previous package or bundle and
// sets doc's service version (the package version) by the verdict.
func planRelease(doc *air.Document, previous string) (*release.Previous, *Release, error) {
	prev, err := release.LoadPrevious(previous)
	if err != nil {
		return nil, nil, err
	}
	r := release.Changes(prev, doc)
	v, err := release.Bump(prev.Version, r.Semver)
	if errors.Is(err, release.ErrNotSemver) {
		return nil, nil, fmt.Errorf("the previous package's %w, so the new version cannot be derived from it", err)
	}
	if err != nil {
		return nil, nil, err
	}
	doc.Service.Version = v
	return prev, &Release{Version: v, PreviousVersion: prev.Version, Report: r}, nil
}

// addReleaseFiles adds the contract file (always), and with a release
// CHANGELOG.md and SKILL.md's note on breaking changes, to a rendered package.
func addReleaseFiles(tree files.Tree, doc *air.Document, prev *release.Previous, rel *Release) error {
	b, err := release.ContractBytes(doc)
	if err != nil {
		return err
	}
	tree.Add(release.ContractFile, b)
	if rel == nil {
		return nil
	}
	if len(rel.Report.Changes) == 0 { // same contract: the version and its changelog stand
		if len(prev.Changelog) > 0 {
			tree.Add(release.ChangelogFile, prev.Changelog)
		}
		return nil
	}
	log, err := release.Changelog(rel.Version, rel.PreviousVersion, rel.Report, prev.Changelog)
	if err != nil {
		return err
	}
	tree.Add(release.ChangelogFile, log)
	if note := release.SkillNote(rel.Version, rel.Report); note != nil {
		if f, ok := tree[release.SkillFile]; ok {
			tree.AddMode(release.SkillFile, append(append([]byte{}, f.Data...), note...), f.Mode)
		}
	}
	return nil
}

// checkReplaceable refuses an out that exists, is not empty and is not the
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
