package lower

import (
	"testing"

	"github.com/anvil-dev/anvil/compiler/manifest"
)

// TestManifestDescriptions: service.description and an operation's
// description replace the spec's text in AIR, which SKILL.md, INDEX.md and
// tool descriptions are rendered from.
func TestManifestDescriptions(t *testing.T) {
	spec := loadMiniSpec(t)
	spec.Description = "Use the api key special-key to test."
	man, md := manifest.Decode("anvil.yaml", []byte(`
service: {name: github, description: Issues and releases of one repository.}
operations:
  listIssues: {description: Lists the open issues.}
`))
	if md.HasErrors() {
		t.Fatal(text(md))
	}
	doc, _ := Lower(spec, man, nil)
	if doc.Service.Description != "Issues and releases of one repository." {
		t.Errorf("service description %q", doc.Service.Description)
	}
	op := doc.Operation("github.issues.list")
	if op == nil || op.Description != "Lists the open issues." {
		t.Fatalf("operation %+v", op)
	}
	doc, _ = Lower(spec, nil, nil)
	if doc.Service.Description != "Use the api key special-key to test." {
		t.Errorf("without a manifest: %q", doc.Service.Description)
	}
}
