package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

// listed is the module's package list, read once per test binary (every
// test here walks the same list; go list costs seconds on a busy machine).
var listed struct {
	once sync.Once
	pkgs []pkg
	err  string
}

// listPackages returns the module's packages; callers must not modify them.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	listed.once.Do(func() { listed.pkgs, listed.err = goList() })
	if listed.err != "" {
		t.Fatal(listed.err)
	}
	return listed.pkgs
}

func goList() ([]pkg, string) {
	cmd := exec.Command("go", "list", "-json", module+"/...")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Sprintf("go list: %v\n%s", err, errb.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, err.Error()
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, "go list found no packages"
	}
	return pkgs, ""
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

// TestEmbeddingLayerStaysOptional: runtime/discover/embed (the sentence
// encoder) is a leaf of the standard library and golang.org/x/text's
// Unicode normalisation only, and nothing shipped links it: it is measured
// by internal/discovereval (docs/discovery.md, "Sentence embeddings"), not
// served, until a measured margin makes it an option.
func TestEmbeddingLayerStaysOptional(t *testing.T) {
	embed := module + "/runtime/discover/embed"
	for _, p := range listPackages(t) {
		if p.ImportPath == embed {
			for _, imp := range p.Imports {
				first, _, _ := strings.Cut(imp, "/")
				if strings.Contains(first, ".") && imp != "golang.org/x/text/unicode/norm" {
					t.Errorf("%s imports %s; it may import only the standard library and golang.org/x/text/unicode/norm", embed, imp)
				}
			}
			continue
		}
		if under(p.ImportPath, module+"/internal") {
			continue
		}
		if slices.Contains(p.Deps, embed) {
			t.Errorf("%s links %s; the embedding layer is not served (docs/discovery.md, \"Sentence embeddings\")", p.ImportPath, embed)
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
	module + "/internal/oauthtest", "github.com/go-oauth2/oauth2", module + "/internal/benchrig"}

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

// shippedPackages lists the module's packages under a shipped tree.
func shippedPackages(t *testing.T) []pkg {
	var out []pkg
	for _, p := range listPackages(t) {
		for _, s := range shipped {
			if under(p.ImportPath, s) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func TestTestInfrastructureStaysOutOfShippedCode(t *testing.T) {
	for _, p := range shippedPackages(t) {
		for _, d := range p.Deps {
			for _, f := range testOnly {
				if under(d, f) {
					t.Errorf("%s links %s, which is test infrastructure: only tests may import it", p.ImportPath, d)
				}
			}
		}
	}
}

// flagParsers are the packages that may import urfave/cli, Anvil's one
// flag parser: anvil's commands, serve mcp's command (shared by anvil and
// every generated gateway) and the argument ordering both run through.
var flagParsers = []string{module + "/cmd/anvil", module + "/runtime/serve", module + "/runtime/cmdline"}

// TestOneFlagParser: shipped code parses its command line with urfave/cli
// only, in the packages that own a command line; the standard flag package
// stays in development tools (benchmarks, mocks, examples).
func TestOneFlagParser(t *testing.T) {
	for _, p := range listPackages(t) {
		ships := false
		for _, s := range shipped {
			ships = ships || under(p.ImportPath, s)
		}
		for _, imp := range p.Imports {
			if imp == "flag" && ships {
				t.Errorf("%s imports the standard flag package; Anvil's command lines parse with urfave/cli (runtime/serve's serve.Command, cmd/anvil)", p.ImportPath)
			}
			if under(imp, "github.com/urfave/cli") && !slices.Contains(flagParsers, p.ImportPath) {
				t.Errorf("%s imports %s; only %v parse command lines", p.ImportPath, imp, flagParsers)
			}
		}
	}
}

// sideEffectsOnLoad lists packages that change the user's machine when they
// are merely linked: golang.org/x/tools/imports (through its module index)
// creates ~/.cache/goimports at start-up, so every anvil command would.
var sideEffectsOnLoad = []string{"golang.org/x/tools/imports", "golang.org/x/tools/internal/modindex"}

func TestShippedCodeLinksNothingThatWritesOnLoad(t *testing.T) {
	for _, p := range shippedPackages(t) {
		for _, d := range p.Deps {
			if slices.Contains(sideEffectsOnLoad, d) {
				t.Errorf("%s links %s, which writes to the user's cache directory when the program starts", p.ImportPath, d)
			}
		}
	}
}
