// Package scripts holds the tests of the shell scripts beside it.
package scripts

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFuzzScript runs fuzz.sh on a module of two fuzzed packages: a target
// that never fails must fuzz with coverage guidance (it finds new interesting
// inputs), and a target that fails only on inputs starting with "FUZZ" (one in
// 2^32 at random, reached within seconds only by coverage guidance) must fail
// the run, print the failure and leave the minimised input in the package's
// testdata/fuzz. Each package is built once. Both ways of instrumenting
// (FUZZ_INSTRUMENT) are checked.
func TestFuzzScript(t *testing.T) {
	for _, instrument := range []string{"imports", "module"} {
		t.Run(instrument, func(t *testing.T) { testFuzzScript(t, instrument) })
	}
}

func testFuzzScript(t *testing.T, instrument string) {
	if testing.Short() {
		t.Skip("builds instrumented test binaries and fuzzes for a few seconds")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	script, err := filepath.Abs("fuzz.sh")
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	if err := os.CopyFS(mod, os.DirFS("testdata/fuzzme")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module fuzzme\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script, "5s")
	cmd.Dir = mod
	// A corpus of its own: one left by an earlier run would hold the needle
	// and the clean target's interesting inputs already.
	cmd.Env = append(os.Environ(), "FUZZ_CACHEDIR="+t.TempDir(), "FUZZ_INSTRUMENT="+instrument)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	log := out.String()
	if err == nil {
		t.Fatalf("fuzz.sh succeeded although FuzzNeedle has a crasher:\n%s", log)
	}
	for _, want := range []string{
		"fuzz: 2 targets in 2 packages, 5s each (instrumented: " + instrument + ")",
		"fuzz: [1/2] built fuzzme/clean",
		"fuzz: [2/2] built fuzzme/needle",
		`found the needle "FUZZ`,
		"Failing input written to testdata/fuzz/FuzzNeedle/",
		"fuzz: fuzzme/needle FuzzNeedle FAILED",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("output lacks %q:\n%s", want, log)
		}
	}
	if strings.Count(log, "built fuzzme/") != 2 {
		t.Errorf("want each package built once:\n%s", log)
	}
	if m := regexp.MustCompile(`FuzzClean ok in \d+s \(new interesting: ([0-9]+)\)`).FindStringSubmatch(log); m == nil || m[1] == "0" {
		t.Errorf("FuzzClean found no new interesting input: no coverage guidance?\n%s", log)
	}
	crashers, _ := filepath.Glob(filepath.Join(mod, "needle", "testdata", "fuzz", "FuzzNeedle", "*"))
	if len(crashers) != 1 {
		t.Fatalf("want one crasher in needle/testdata/fuzz/FuzzNeedle, got %v", crashers)
	}
	if b, _ := os.ReadFile(crashers[0]); !bytes.Contains(b, []byte("FUZZ")) {
		t.Errorf("crasher %s does not hold the needle:\n%s", crashers[0], b)
	}
}
