package lower

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

// TestGitHubNamesAcrossVersions compiles the two GitHub descriptions
// scripts/fetch-specs.sh pins (@octokit/openapi 22.0.0 and 23.0.2) as
// service "github" and checks, on real names:
//
//   - every served name github__<tool> matches ^[A-Za-z0-9_-]{1,64}$ as it
//     is (no gateway fitting needed);
//   - fresh, with no lock: no operation that kept its method, path and
//     operationId changes its tool name, and its id or CLI command changes
//     only when the operations sharing its derived name changed (an
//     operation joined or left its collision group);
//   - with the old version's names pinned (every operation approved in
//     anvil.lock): no such operation changes any name.
func TestGitHubNamesAcrossVersions(t *testing.T) {
	oldSpec, newSpec := loadRealSpec(t, "github-old.json"), loadRealSpec(t, "github.json")
	opts := &Options{ServiceID: "github"}
	oldDoc, _ := Lower(oldSpec, nil, opts)
	newDoc, _ := Lower(newSpec, nil, opts)
	for _, doc := range []*air.Document{oldDoc, newDoc} {
		for i := range doc.Operations {
			op := &doc.Operations[i]
			if w := air.WireToolName("github", op); w != "github__"+op.MCP.ToolName || !servedName.MatchString(w) {
				t.Errorf("%s %s: served as %q (tool %q)", op.SourceRef.Method, op.SourceRef.Path, w, op.MCP.ToolName)
			}
		}
	}

	olds := map[string]*air.Operation{}
	for i := range oldDoc.Operations {
		o := &oldDoc.Operations[i]
		olds[routeKey(o.SourceRef.Method, o.SourceRef.Path)] = o
	}
	renames := func(newDoc *air.Document) (same, changed []string) {
		for i := range newDoc.Operations {
			n := &newDoc.Operations[i]
			o := olds[routeKey(n.SourceRef.Method, n.SourceRef.Path)]
			if o == nil || (o.ID == n.ID && o.MCP.ToolName == n.MCP.ToolName && o.CLI.Command == n.CLI.Command) {
				continue
			}
			line := fmt.Sprintf("%s %s: id %s → %s, tool %s → %s, CLI %q → %q", n.SourceRef.Method, n.SourceRef.Path, o.ID, n.ID, o.MCP.ToolName, n.MCP.ToolName, o.CLI.Command, n.CLI.Command)
			if o.SourceRef.OperationID == n.SourceRef.OperationID {
				same = append(same, line)
			} else {
				changed = append(changed, line)
			}
		}
		return same, changed
	}

	// Fresh: a tool name never changes for an unchanged operation, and an
	// id or CLI command only with its collision group.
	groups := func(spec *openapi.Spec) (map[string]string, map[string]string) {
		ids, clis := map[string][]string{}, map[string][]string{}
		route := map[string][2]string{}
		for _, op := range spec.Operations {
			b := deriveNames("github", op.Path, op.Method, op.OperationID, "")
			k := routeKey(op.Method, op.Path)
			ids[b.ID] = append(ids[b.ID], k)
			clis[b.CLI] = append(clis[b.CLI], k)
			route[k] = [2]string{b.ID, b.CLI}
		}
		idGroup, cliGroup := map[string]string{}, map[string]string{}
		for k, names := range route {
			idGroup[k] = strings.Join(slices.Sorted(slices.Values(ids[names[0]])), ";")
			cliGroup[k] = strings.Join(slices.Sorted(slices.Values(clis[names[1]])), ";")
		}
		return idGroup, cliGroup
	}
	oldIDs, oldCLIs := groups(oldSpec)
	newIDs, newCLIs := groups(newSpec)
	same, changed := renames(newDoc)
	for i := range newDoc.Operations {
		n := &newDoc.Operations[i]
		k := routeKey(n.SourceRef.Method, n.SourceRef.Path)
		o := olds[k]
		if o == nil || o.SourceRef.OperationID != n.SourceRef.OperationID {
			continue
		}
		if o.MCP.ToolName != n.MCP.ToolName {
			t.Errorf("%s: tool %s → %s, though its operationId is unchanged", k, o.MCP.ToolName, n.MCP.ToolName)
		}
		if o.ID != n.ID && oldIDs[k] == newIDs[k] {
			t.Errorf("%s: id %s → %s, though no operation joined or left its group", k, o.ID, n.ID)
		}
		if o.CLI.Command != n.CLI.Command && oldCLIs[k] == newCLIs[k] {
			t.Errorf("%s: CLI %q → %q, though no operation joined or left its group", k, o.CLI.Command, n.CLI.Command)
		}
	}
	t.Logf("fresh: %d renamed operations kept method, path and operationId (their collision group changed), %d changed their operationId", len(same), len(changed))
	for _, l := range same {
		t.Logf("  group changed: %s", l)
	}

	// Pinned: every operation of the old version approved.
	var pins []Pin
	for i := range oldDoc.Operations {
		o := &oldDoc.Operations[i]
		pins = append(pins, Pin{Method: o.SourceRef.Method, Path: o.SourceRef.Path, OperationID: o.SourceRef.OperationID,
			ID: o.ID, CanonicalName: o.CanonicalName, Tool: o.MCP.ToolName, CLI: o.CLI.Command})
	}
	pinnedDoc, ds := Lower(newSpec, nil, &Options{ServiceID: "github", Pins: pins})
	same, changed = renames(pinnedDoc)
	for _, l := range same {
		t.Errorf("pinned, yet renamed: %s", l)
	}
	for _, d := range ds {
		if d.Code == CodePinIgnored {
			t.Errorf("%s", d)
		}
	}
	seen := map[string]bool{}
	for i := range pinnedDoc.Operations {
		op := &pinnedDoc.Operations[i]
		for _, n := range []string{"id " + op.ID, "tool " + op.MCP.ToolName, "cli " + op.CLI.Command} {
			if seen[n] {
				t.Errorf("pinned: %s is not unique", n)
			}
			seen[n] = true
		}
	}
	t.Logf("pinned: %d renamed operations kept method, path and operationId; %d changed their operationId:", len(same), len(changed))
	for _, l := range changed {
		t.Logf("  %s", l)
	}
}
