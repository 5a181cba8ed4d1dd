// Package scripts holds the repository's shell scripts; its tests run them
// so `make test` (go test ./...) keeps them working.
package scripts

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestOwnAPI runs scripts/own-api.sh, which runs README's "Your own API in
// five commands" blocks verbatim from a clean home directory (init,
// compile, approve with a glob, package, serve on loopback, connect with no
// restart, a read and a confirmed write through the CLI) against a mock
// upstream, checks the starting manifest with Python's jsonschema and
// makes a read and a confirmed write through the Python SDK.
func TestOwnAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gateway and a mock upstream")
	}
	for _, tool := range []string{"bash", "python3", "curl", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("own-api.sh needs %s: %v", tool, err)
		}
	}
	if out, err := exec.Command("python3", "-c", "import jsonschema, yaml").CombinedOutput(); err != nil {
		t.Fatalf("own-api.sh validates with Python's jsonschema and yaml modules (Debian: python3-jsonschema python3-yaml): %s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "own-api.sh", t.TempDir())
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "own-api: ok") {
		t.Fatalf("own-api.sh: %v\n%s", err, out)
	}
	for _, want := range []string{"   | anvil init openapi.yaml --service petstore", "valid: 4 operations", "Approved 3 new operation(s)",
		"Connected petstore (account default).", "read 1 pet(s); created pet 4"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
