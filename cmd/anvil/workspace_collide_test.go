package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	gatewayemit "github.com/anvil-dev/anvil/compiler/emit/gateway"
	"github.com/anvil-dev/anvil/compiler/lower"
)

// TestWorkspaceConnectorCollisions is issue 30's regression test: connector
// ids the generated gateway names alike ("x-y" beside "x_y", "Evil" beside
// "evil") or one named like its own files ("workspace") reported success
// from anvil compile --workspace, and the tree did not build. Each is now
// gateway/connector_id_collision, positioned at the bundles and naming
// both, and nothing is written.
func TestWorkspaceConnectorCollisions(t *testing.T) {
	bundle := compileExample(t)
	for _, ids := range [][]string{{"x-y", "x_y"}, {"Evil", "evil"}, {"workspace"}, {"vendor"}} {
		t.Run(strings.Join(ids, ","), func(t *testing.T) {
			ws := t.TempDir()
			for _, id := range ids {
				tree, err := files.Read(bundle)
				if err != nil {
					t.Fatal(err)
				}
				if err := tree.WriteTo(filepath.Join(ws, id)); err != nil {
					t.Fatal(err)
				}
			}
			gen := t.TempDir()
			code, _, stderr := runCLI(t, "", "compile", "--workspace", ws, "--yard", "y", "--gen", gen, "--import-path", "x.example/gen")
			if code != 1 || !strings.Contains(stderr, "error "+gatewayemit.CodeConnectorCollision) || !strings.Contains(stderr, "nothing was written") {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			for _, id := range ids {
				if !strings.Contains(stderr, filepath.Join(ws, id, "air.json")+": error") || !strings.Contains(stderr, `"`+id+`"`) {
					t.Errorf("the diagnostics do not name and place %s:\n%s", id, stderr)
				}
			}
			if entries, _ := os.ReadDir(gen); len(entries) != 0 {
				t.Errorf("something was written to %s", gen)
			}
		})
	}
}

// TestServerURLAndHeaderNames is issue 30's regression test: a javascript:
// server URL and a header parameter whose name is no HTTP token compiled
// with no diagnostic. Each is now a coded error with a position.
func TestServerURLAndHeaderNames(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "api.yaml")
	text := `openapi: 3.0.3
info: { title: Wire, version: "1" }
servers: [{ url: "javascript:alert(1)//" }]
paths:
  /a:
    get:
      operationId: getA
      parameters: [{ name: "X Bad:Header", in: header, schema: { type: string } }]
      responses: { "200": { description: ok } }
components:
  securitySchemes:
    key: { type: apiKey, in: header, name: "bad key" }
security: [{ key: [] }]
`
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "", "compile", spec, "--out", filepath.Join(t.TempDir(), "b"))
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		spec + ": error " + lower.CodeInvalidServerURL + `: server URL "javascript:alert(1)//" has the scheme "javascript"`,
		spec + ":6:5: error " + lower.CodeInvalidHeaderName + `: GET /a: header parameter "X Bad:Header"`,
		spec + ": error " + lower.CodeInvalidHeaderName + `: security scheme "key" sends its key in the header "bad key"`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
