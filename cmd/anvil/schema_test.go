package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/anvil-dev/anvil/schemas"
)

// TestSchemaManifestPrintsRepositoryFile: the binary prints the schema
// byte for byte as the repository holds it.
func TestSchemaManifestPrintsRepositoryFile(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "schema", "manifest")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, err := os.ReadFile("../../" + schemas.ManifestFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal([]byte(stdout), want) {
		t.Fatalf("anvil schema manifest differs from %s", schemas.ManifestFile)
	}
}
