package main

import (
	"context"
	"fmt"

	"github.com/anvil-dev/anvil/compiler/lock"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/runtime/air"
)

// recordApprovals records the approved ids of doc in the lock beside the
// manifest (approve's call site): --manifest, else the one the bundle
// records. It returns the lock's path, or "" when the bundle names no
// manifest and none was given.
// The lock is streamed to a temporary file and renamed over the old one
// only when complete; ctx ending stops it with ctx's error and no change.
func recordApprovals(ctx context.Context, doc *air.Document, bundleDir, manifest string, ids []string) (string, error) {
	if manifest == "" {
		m, err := lock.ManifestOf(bundleDir)
		if err != nil {
			return "", err
		}
		if m == "" {
			return "", nil
		}
		if err := originIsManifestOf(bundleDir, m, doc); err != nil {
			return "", err
		}
		manifest = m
	}
	path := lock.PathFor(manifest)
	l, err := lock.Load(path)
	if err != nil {
		return "", err
	}
	if err := l.Record(ctx, doc, ids); err != nil {
		return "", err
	}
	if err := l.WriteFile(ctx, path); err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		return "", fmt.Errorf("writing %s: %v", path, err)
	}
	return path, nil
}

// originIsManifestOf checks that m, the manifest a bundle's origin record
// names (already confined by lock.ManifestOf), is an anvil manifest the
// bundle could have been compiled from: it decodes without errors and
// names the bundle's service, or none. Otherwise the lock would be written
// beside a file that has nothing to do with the bundle.
func originIsManifestOf(bundleDir, m string, doc *air.Document) error {
	man, l := manifest.Load(m)
	if l.HasErrors() || man == nil {
		return &lock.OriginError{Bundle: bundleDir, Reason: fmt.Sprintf("names %s, which is not a valid anvil manifest", m)}
	}
	if man.Service != nil && man.Service.Name != "" && man.Service.Name != doc.Service.ID {
		return &lock.OriginError{Bundle: bundleDir, Reason: fmt.Sprintf("names %s, the manifest of service %q, not of this bundle's %q", m, man.Service.Name, doc.Service.ID)}
	}
	return nil
}
