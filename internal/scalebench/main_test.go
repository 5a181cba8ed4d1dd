package main

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestRunSmall runs what `make scale` runs (docs/scale.md), on a synthetic
// description of 60 operations with the same binary as before and after:
// compile, approve, start the gateway in both surfaces, first call, peak
// RSS. Any failed measurement fails the run.
func TestRunSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds anvil and starts gateways")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "anvil")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/anvil")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Setenv("ANVIL_SPECS_DIR", t.TempDir()) // no github.json: its row is skipped
	if err := run(bin, bin, "", "60", filepath.Join(dir, "cache"), time.Minute); err != nil {
		t.Fatal(err)
	}
}
