package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/anvil-dev/anvil/schemas"
)

// anvil policy check's summaries, token checks and refusals are case folders
// of internal/endtoend (policy-check-*).

// TestSchemaPolicyPrintsRepositoryFile: anvil schema policy prints the
// repository's file.
func TestSchemaPolicyPrintsRepositoryFile(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "schema", "policy")
	want, err := os.ReadFile("../../" + schemas.PolicyFile)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || !bytes.Equal([]byte(stdout), want) {
		t.Fatalf("exit %d %s", code, stderr)
	}
}
