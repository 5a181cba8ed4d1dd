package archtest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/anvil-dev/anvil"

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string // every package it links, transitively (tests excluded)
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errb.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// forbidden lists, for each part of the tree, imports it must never have.
var rules = []struct {
	part      string
	forbidden []string
	// onlyRuntime, when set, allows only these runtime packages.
	onlyRuntime []string
}{
	{part: module + "/runtime", forbidden: []string{module + "/compiler", module + "/templates", module + "/cmd",
		"github.com/dave/jennifer", "github.com/getkin/kin-openapi", "github.com/pb33f/libopenapi"}},
	{part: module + "/gen", forbidden: []string{module + "/compiler", module + "/templates", module + "/cmd",
		"github.com/dave/jennifer", "github.com/getkin/kin-openapi", "github.com/pb33f/libopenapi"}},
	{part: module + "/compiler", forbidden: []string{module + "/cmd"},
		onlyRuntime: []string{module + "/runtime/air", module + "/runtime/envelope", module + "/runtime/canon"}},
	{part: module + "/templates", forbidden: []string{module + "/compiler", module + "/runtime", module + "/cmd"}},
	// AIR is the data both sides read: the compiler imports it, so it
	// brings no runtime package along but the stdlib-only canon.
	{part: module + "/runtime/air", onlyRuntime: []string{module + "/runtime/canon"}},
}

func TestDependencyDirection(t *testing.T) {
	pkgs := listPackages(t)
	for _, p := range pkgs {
		for _, r := range rules {
			if !under(p.ImportPath, r.part) {
				continue
			}
			for _, imp := range p.Imports {
				for _, f := range r.forbidden {
					if under(imp, f) {
						t.Errorf("%s imports %s, against the dependency direction of docs/ARCHITECTURE.md", p.ImportPath, imp)
					}
				}
				if r.onlyRuntime != nil && under(imp, module+"/runtime") {
					ok := false
					for _, a := range r.onlyRuntime {
						if under(imp, a) {
							ok = true
						}
					}
					if !ok {
						t.Errorf("%s imports %s; %s may import only %v from the runtime", p.ImportPath, imp, r.part, r.onlyRuntime)
					}
				}
			}
		}
	}
}

func TestOnlyOpenAPIPackageImportsParsers(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, imp := range p.Imports {
			// kin-openapi is a test-only oracle (compiler/openapi's tests);
			// libopenapi drives only the spec-level half of anvil diff, and
			// is the baseline internal/compilebench measures the compile
			// against (a benchmark command, linked into no anvil binary).
			if under(imp, "github.com/getkin/kin-openapi") {
				t.Errorf("%s imports %s; kin-openapi is for tests only", p.ImportPath, imp)
			}
			if under(imp, "github.com/pb33f/libopenapi") && !under(p.ImportPath, module+"/compiler/diff/specdiff") && p.ImportPath != module+"/internal/compilebench" {
				t.Errorf("%s imports %s; only compiler/diff/specdiff (and the benchmark internal/compilebench) may link libopenapi", p.ImportPath, imp)
			}
			if under(imp, "github.com/dave/jennifer") && !under(p.ImportPath, module+"/compiler/emit/gateway") && !under(p.ImportPath, module+"/compiler/emit/gosdk") {
				t.Errorf("%s imports %s; only compiler/emit/gateway and compiler/emit/gosdk may import jennifer", p.ImportPath, imp)
			}
		}
	}
}

// compilerStages orders the compiler's packages (docs/ARCHITECTURE.md: front end →
// lower → emit, with the entry point on top). A package may import
// compiler packages of a lower stage only, except that emitters may share
// emit helpers (emit/files). A compiler package missing here
// fails the test: give it a stage.
var compilerStages = map[string]int{
	"compiler/diag":          0, // shared leaves
	"compiler/naming":        0,
	"compiler/openapi":       1, // front end
	"compiler/manifest":      1,
	"compiler/sources":       1,
	"compiler/lower":         2,
	"compiler/emit":          3, // every emitter and emit helper
	"compiler/diff":          3, // AIR-level change report (a back end: reads AIR)
	"compiler/diff/release":  4, // package versions and changelogs from a diff
	"compiler/diff/specdiff": 4, // libopenapi's spec-level changes beside the AIR report
	"compiler/lock":          4, // anvil.lock: approvals fingerprinted by contract
	"compiler":               5, // compiler.Compile
}

func compilerStage(path string) (int, bool) {
	rel := strings.TrimPrefix(path, module+"/")
	if under(rel, "compiler/emit") {
		return compilerStages["compiler/emit"], true
	}
	s, ok := compilerStages[rel]
	return s, ok
}

func TestCompilerStageDirection(t *testing.T) {
	for _, p := range listPackages(t) {
		if !under(p.ImportPath, module+"/compiler") {
			continue
		}
		from, ok := compilerStage(p.ImportPath)
		if !ok {
			t.Errorf("%s has no stage in compilerStages", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if !under(imp, module+"/compiler") {
				continue
			}
			to, _ := compilerStage(imp)
			if to < from || (to == from && from == compilerStages["compiler/emit"]) {
				continue
			}
			t.Errorf("%s (stage %d) imports %s (stage %d): the compiler's direction is front end → lower → emit", p.ImportPath, from, imp, to)
		}
	}
}

// testOnly lists packages that are test infrastructure: a real OpenID
// provider (internal/idptest, built on zitadel/oidc) issues tokens with
// test passwords and must never be linked into anything Anvil ships;
// internal/testinput decides how a test treats a missing input;
// internal/endtoend runs the built binary on its case folders and holds test
// files only (TestEndToEndIsTestFilesOnly); a loopback OAuth authorization
// server (internal/oauthtest, built on go-oauth2) approves every
// authorization.
var testOnly = []string{module + "/internal/idptest", "github.com/zitadel/oidc", module + "/internal/testinput", module + "/internal/endtoend",
	module + "/internal/oauthtest", "github.com/go-oauth2/oauth2"}

// TestEndToEndIsTestFilesOnly: internal/endtoend is a test, never a library:
// a non-test Go file there would be a package others could import.
func TestEndToEndIsTestFilesOnly(t *testing.T) {
	dir := filepath.Join(repoRoot, "internal", "endtoend")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := 0
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasSuffix(name, "_test.go"):
			tests++
		case strings.HasSuffix(name, ".go"):
			t.Errorf("internal/endtoend/%s is not a test file: the package holds tests and case folders only", name)
		}
	}
	if tests == 0 {
		t.Error("internal/endtoend holds no test file")
	}
}

// shipped lists the trees whose packages end up in Anvil's binaries and
// generated gateways; their tests may use test infrastructure, their code
// may not, directly or through another package.
var shipped = []string{module + "/cmd", module + "/runtime", module + "/compiler", module + "/gen", module + "/templates"}

func TestTestInfrastructureStaysOutOfShippedCode(t *testing.T) {
	for _, p := range listPackages(t) {
		ships := false
		for _, s := range shipped {
			ships = ships || under(p.ImportPath, s)
		}
		if !ships {
			continue
		}
		for _, d := range p.Deps {
			for _, f := range testOnly {
				if under(d, f) {
					t.Errorf("%s links %s, which is test infrastructure: only tests may import it", p.ImportPath, d)
				}
			}
		}
	}
}
