package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/internal/discovereval"
)

// TestRunSmall runs what `make scale` runs (docs/scale.md), with the same
// binary as before and after, on a synthetic description of 60 operations
// and on a 20-operation one served as a named real description
// ($ANVIL_SPECS_DIR/tiny-api.json; github and msgraph-beta are absent and
// skipped): init, approve in the manifest, compile, start the gateway in
// both surfaces, first call, peak RSS. Any failed measurement fails the
// run.
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
	specs := t.TempDir()
	tiny, err := discovereval.SyntheticSpec(20)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(specs, "tiny-api.json"), tiny, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ANVIL_SPECS_DIR", specs)
	if err := run(bin, bin, "", "github,msgraph-beta,tiny-api", "60", filepath.Join(dir, "cache"), time.Minute); err != nil {
		t.Fatal(err)
	}
}
