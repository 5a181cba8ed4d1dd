package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/internal/specsweep"
)

// TestCLIAndSweepAgree: `anvil compile` and the spec sweep compile a
// description into the same bundle, byte for byte (both call
// compiler.Compile; they used to assemble the pipeline twice, and the
// sweep's AIR named source files differently). The bundled example always;
// a real-world description when ANVIL_SPECS_DIR holds jira.json.
func TestCLIAndSweepAgree(t *testing.T) {
	specs := []string{exampleSpec}
	if dir := os.Getenv("ANVIL_SPECS_DIR"); dir != "" {
		if p := filepath.Join(dir, "jira.json"); fileExists(p) {
			specs = append(specs, p)
		}
	} else {
		t.Log("ANVIL_SPECS_DIR not set: comparing the bundled example only")
	}
	for _, spec := range specs {
		t.Run(filepath.Base(spec), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "bundle")
			code, _, stderr := runCLI(t, "", "compile", spec, "--service", "svc", "--out", out)
			tree, err := files.Read(out)
			if err != nil {
				t.Fatalf("compile exit %d, no bundle: %v\n%s", code, err, stderr)
			}
			cliFiles := tree.Bytes()
			sweepFiles, diags, err := specsweep.Bundle(spec, "svc")
			if err != nil || sweepFiles == nil {
				t.Fatalf("sweep: %v %v", err, diags)
			}
			if want := map[bool]int{false: 0, true: 1}[diags.HasErrors()]; code != want {
				t.Errorf("CLI exit %d, want %d (the sweep's error diagnostics: %d)", code, want, diags.Count("error"))
			}
			names := func(m map[string][]byte) []string {
				var out []string
				for n := range m {
					out = append(out, n)
				}
				slices.Sort(out)
				return out
			}
			if d := cmp.Diff(names(cliFiles), names(sweepFiles)); d != "" {
				t.Fatalf("file lists differ (-cli +sweep):\n%s", d)
			}
			for n, b := range cliFiles {
				if string(b) != string(sweepFiles[n]) {
					t.Errorf("%s differs (-cli +sweep):\n%s", n, clipDiff(cmp.Diff(string(b), string(sweepFiles[n]))))
				}
			}
		})
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func clipDiff(d string) string {
	if len(d) > 2000 {
		return d[:2000] + "…"
	}
	return d
}
