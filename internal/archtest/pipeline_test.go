package archtest

import (
	"path/filepath"
	"testing"
)

// The commands parse flags, make one library call and print: compiling,
// applying the lock, saving the snapshot and running an emitter are the
// compiler's (compiler.Build, Rebundle, BuildGateway, Package, Compose,
// Index), so every caller gets the same pipeline. A command therefore
// imports no emitter and not lowering (compiler/emit/files, the atomic
// writer, is a helper, not an emitter), and calls none of the steps the
// pipeline owns.
var (
	commandForbidden = []string{module + "/compiler/lower", module + "/compiler/emit"}
	commandAllowed   = module + "/compiler/emit/files"
	pipelineSteps    = map[string][]string{
		module + "/runtime/air":      {"Files"},
		module + "/compiler/openapi": {"Load", "LoadBytes"},
		module + "/compiler/lock":    {"OriginBytes"},
	}
)

// TestCommandsCallThePipeline fails when a package under cmd/ imports an
// emitter or lowering, or calls a step of the compile pipeline itself.
func TestCommandsCallThePipeline(t *testing.T) {
	checked := 0
	for _, p := range listPackages(t) {
		if !under(p.ImportPath, module+"/cmd") {
			continue
		}
		for _, imp := range p.Imports {
			if under(imp, commandAllowed) {
				continue
			}
			for _, f := range commandForbidden {
				if under(imp, f) {
					t.Errorf("%s imports %s: commands go through the compiler's pipeline (package compiler)", p.ImportPath, imp)
				}
			}
		}
		for _, name := range p.GoFiles { // tests excluded: they may check a step alone
			checked++
			for _, call := range callsOf(t, filepath.Join(p.Dir, name), pipelineSteps) {
				t.Errorf("%s: %s calls %s: the compiler's pipeline does that step (package compiler)", p.ImportPath, name, call)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no command source file was checked")
	}
}
