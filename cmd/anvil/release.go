package main

import (
	"errors"
	"fmt"

	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/compiler/diff/release"
	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/runtime/air"
)

// refuseErrors stops packaging a bundle whose compile reported errors,
// unless allowed; allowed, it says so loudly on stderr.
func refuseErrors(e *env, doc *air.Document, bundle string, allow bool) error {
	var first []string
	n := 0
	for _, d := range doc.Diagnostics {
		if d.Level == air.LevelError {
			if n < 3 {
				first = append(first, fmt.Sprintf("%s: %s: %s", d.Path, d.Code, d.Message))
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if !allow {
		return fail(1, "%s was compiled with %d error diagnostic(s) (first: %s); fix them and compile again, or package anyway with --allow-errors",
			bundle, n, first[0])
	}
	fmt.Fprintf(e.stderr, "anvil: WARNING: packaging %s despite %d error diagnostic(s) (--allow-errors):\n", bundle, n)
	for _, f := range first {
		fmt.Fprintf(e.stderr, "anvil:   %s\n", f)
	}
	return nil
}

// releaseStep is what --previous decides for a packaging.
type releaseStep struct {
	prev    *release.Previous
	report  *diff.Report
	version string
}

// planRelease diffs the bundle against the previous package or bundle and
// sets doc's service version (the package version) by the verdict.
func planRelease(doc *air.Document, previous string) (*releaseStep, error) {
	prev, err := release.LoadPrevious(previous)
	if err != nil {
		return nil, fail(1, "--previous: %v", err)
	}
	r := release.Changes(prev, doc)
	v, err := release.Bump(prev.Version, r.Semver)
	if errors.Is(err, release.ErrNotSemver) {
		return nil, fail(1, "--previous: the previous package's %v, so the new version cannot be derived from it", err)
	}
	if err != nil {
		return nil, fail(1, "--previous: %v", err)
	}
	doc.Service.Version = v
	return &releaseStep{prev: prev, report: r, version: v}, nil
}

// addReleaseFiles adds the contract file (always), and with a release step
// CHANGELOG.md and SKILL.md's note on breaking changes, to a rendered package.
func addReleaseFiles(tree files.Tree, doc *air.Document, step *releaseStep) error {
	b, err := release.ContractBytes(doc)
	if err != nil {
		return err
	}
	tree.Add(release.ContractFile, b)
	if step == nil {
		return nil
	}
	if len(step.report.Changes) == 0 { // same contract: the version and its changelog stand
		if len(step.prev.Changelog) > 0 {
			tree.Add(release.ChangelogFile, step.prev.Changelog)
		}
		return nil
	}
	log, err := release.Changelog(step.version, step.prev.Version, step.report, step.prev.Changelog)
	if err != nil {
		return err
	}
	tree.Add(release.ChangelogFile, log)
	if note := release.SkillNote(step.version, step.report); note != nil {
		if f, ok := tree[release.SkillFile]; ok {
			tree.AddMode(release.SkillFile, append(append([]byte{}, f.Data...), note...), f.Mode)
		}
	}
	return nil
}
