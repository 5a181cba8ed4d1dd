package archtest

import (
	"slices"
	"strings"
	"testing"
)

// callPath lists the packages one tools/call passes through, outermost
// first: the command line (serve), the HTTP front doors (frontdoor), the
// executor, the served table (fleet) and the operation's handler. Each may
// import only packages after it, so a call enters each once, in order, and
// never returns into an outer one from a helper.
var callPath = []string{
	module + "/runtime/serve",
	module + "/runtime/frontdoor",
	module + "/runtime/executor",
	module + "/runtime/fleet",
	module + "/runtime/handler",
}

// skipsTo lists call-path imports that are refused although the order
// allows them: the front doors only frame the executor's outcome and never
// reach a handler themselves.
var skipsTo = map[string][]string{
	module + "/runtime/frontdoor": {module + "/runtime/handler"},
}

// generatedAPI is what generated gateway trees (gen/, and the test tree
// under runtime/frontdoor/internal/testgen) may import from the runtime:
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
		at := slices.Index(callPath, p.ImportPath)
		if at >= 0 {
			seen++
		}
		if isGenerated(p.ImportPath) || !under(p.ImportPath, module+"/runtime") {
			continue
		}
		for _, imp := range p.Imports {
			j := slices.Index(callPath, imp)
			if j < 0 {
				continue
			}
			switch {
			case at < 0:
				t.Errorf("%s imports %s: only the call path's outer packages may import it", p.ImportPath, imp)
			case j <= at:
				t.Errorf("%s imports %s, which comes before it on the call path %v", p.ImportPath, imp, callPath)
			case slices.Contains(skipsTo[p.ImportPath], imp):
				t.Errorf("%s imports %s: it reaches that package only through the executor", p.ImportPath, imp)
			}
		}
	}
	if seen != len(callPath) {
		t.Errorf("found %d of the %d call-path packages %v", seen, len(callPath), callPath)
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
