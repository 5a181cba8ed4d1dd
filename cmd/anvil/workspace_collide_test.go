package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	gatewayemit "github.com/anvil-dev/anvil/compiler/emit/gateway"
)

// TestWorkspaceConnectorCollisions is issue 30's regression test: connector
// ids the generated gateway names alike reported success from anvil compile
// --workspace, and the tree did not build. Each is now
// gateway/connector_id_collision, positioned at the bundles and naming both,
// and nothing is written. The other ids of the issue ("x-y" beside "x_y",
// "workspace", "vendor") are case folders of internal/endtoend; "Evil"
// beside "evil" stays here, because a case folder would commit two paths
// that differ only in case, which a case-insensitive checkout cannot hold.
func TestWorkspaceConnectorCollisions(t *testing.T) {
	bundle := compileExample(t)
	for _, ids := range [][]string{{"Evil", "evil"}} {
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
