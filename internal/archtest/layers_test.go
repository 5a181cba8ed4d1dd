package archtest

import (
	"slices"
	"strings"
	"testing"
)

// callPath lists the rooms one tools/call passes through, outermost first:
// the composition root and command line (serve), the front hall (frontdoor:
// routing, guards, inbound identity), the doors (MCP, REST, connect), the
// executor, what the doors and the executor read the served table through
// (the grant-filtered catalogue, the credential resolver), the served table
// (fleet) and the operation's handler. A package may import only packages
// of later levels, so a call enters each room once, in order, never
// returns into an outer one from a helper, and no room imports another of
// its own level (a door never imports another door). Nothing else in the
// runtime imports a call-path package.
var callPath = [][]string{
	{module + "/runtime/serve"},
	{module + "/runtime/frontdoor"},
	{module + "/runtime/door/connectdoor", module + "/runtime/door/mcpdoor", module + "/runtime/door/restdoor"},
	{module + "/runtime/executor"},
	{module + "/runtime/catalog", module + "/runtime/credential"},
	{module + "/runtime/fleet"},
	{module + "/runtime/handler"},
}

// doorRoot holds the doors: every package under it must be on the doors'
// level of callPath.
const doorRoot = module + "/runtime/door"

// callLevel is the level of path on the call path, or -1.
func callLevel(path string) int {
	for i, level := range callPath {
		if slices.Contains(level, path) {
			return i
		}
	}
	return -1
}

// skipsTo lists call-path imports that are refused although the order
// allows them: the front hall only routes to the doors; the doors reach a
// handler, and a credential, only through the executor.
var skipsTo = map[string][]string{
	module + "/runtime/frontdoor": {module + "/runtime/executor", module + "/runtime/catalog", module + "/runtime/credential",
		module + "/runtime/fleet", module + "/runtime/handler"},
	module + "/runtime/door/connectdoor": {module + "/runtime/credential", module + "/runtime/handler"},
	module + "/runtime/door/mcpdoor":     {module + "/runtime/credential", module + "/runtime/handler"},
	module + "/runtime/door/restdoor":    {module + "/runtime/credential", module + "/runtime/handler"},
}

// generatedAPI is what generated gateway trees (gen/, and the test tree
// under runtime/serve/internal/testgen) may import from the runtime:
// the handler API, the command line, and the data packages whose types and
// constants they name (air's vocabularies, effect's report). Hashing,
// encoding and request building are the handler API's (handler.Controls,
// handler.Builder), written once instead of in every tree.
var generatedAPI = []string{
	module + "/runtime/air",
	module + "/runtime/effect",
	module + "/runtime/handler",
	module + "/runtime/serve",
}

func isGenerated(path string) bool {
	return under(path, module+"/gen") || strings.Contains(path, "/internal/testgen/") || strings.HasSuffix(path, "/internal/testgen")
}

func TestCallPathOrder(t *testing.T) {
	pkgs := listPackages(t)
	seen := 0
	for _, p := range pkgs {
		at := callLevel(p.ImportPath)
		if at >= 0 {
			seen++
		}
		if under(p.ImportPath, doorRoot) && at != callLevel(module+"/runtime/door/mcpdoor") {
			t.Errorf("%s is under runtime/door but not on the doors' level of callPath: place it", p.ImportPath)
		}
		if isGenerated(p.ImportPath) || !under(p.ImportPath, module+"/runtime") {
			continue
		}
		for _, imp := range p.Imports {
			j := callLevel(imp)
			if j < 0 {
				continue
			}
			switch {
			case at < 0:
				t.Errorf("%s imports %s: only the call path's outer packages may import it", p.ImportPath, imp)
			case j == at:
				t.Errorf("%s imports %s, a room of its own level of the call path (a door never imports another door)", p.ImportPath, imp)
			case j < at:
				t.Errorf("%s imports %s, which comes before it on the call path %v", p.ImportPath, imp, callPath)
			case slices.Contains(skipsTo[p.ImportPath], imp):
				t.Errorf("%s imports %s: it reaches that package only through a room between them", p.ImportPath, imp)
			}
		}
	}
	n := 0
	for _, level := range callPath {
		n += len(level)
	}
	if seen != n {
		t.Errorf("found %d of the %d call-path packages %v", seen, n, callPath)
	}
}

func TestGeneratedTreesImportOnlyTheHandlerAPI(t *testing.T) {
	n := 0
	for _, p := range listPackages(t) {
		if !isGenerated(p.ImportPath) {
			continue
		}
		n++
		for _, imp := range p.Imports {
			if under(imp, module+"/runtime") && !slices.Contains(generatedAPI, imp) && !isGenerated(imp) {
				t.Errorf("%s imports %s; generated code may import only %v from the runtime", p.ImportPath, imp, generatedAPI)
			}
		}
	}
	if n == 0 {
		t.Error("no generated tree found")
	}
}
