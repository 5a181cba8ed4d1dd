package diff_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/compiler/diff/specdiff"
	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/compiler/openapi"
)

// compareSpecs compiles two descriptions as anvil diff does (no manifest)
// and returns the report.
func compareSpecs(t *testing.T, oldSpec, newSpec string) *diff.Report {
	t.Helper()
	side := func(name, text string) diff.Side {
		spec, err := openapi.LoadBytes(name, []byte(text), &openapi.Options{AllMediaTypes: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		doc, _ := lower.Lower(spec, nil, nil)
		return diff.Side{Doc: doc, Surfaces: specdiff.Surfaces(spec)}
	}
	return diff.NewReport(diff.CompareSides(side("old.yaml", oldSpec), side("new.yaml", newSpec)))
}

func breaking(r *diff.Report, kind, detail string) bool {
	for _, c := range r.Changes {
		if c.Breaking && c.Kind == kind && strings.Contains(c.Detail, detail) {
			return true
		}
	}
	return false
}

const scopedSpec = `openapi: 3.0.3
info: { title: Files, version: "1" }
servers: [{ url: https://api.files.example }]
paths:
  /v1/files/{key}:
    get:
      operationId: getFile
      security:
        - PersonalAccessToken: []
        - OAuth2: [%s]
      parameters: [{ name: key, in: path, required: true, schema: { type: string } }]
      responses:
        "200":
          description: The file.
          content:
            application/json: { schema: { type: object, properties: { name: { type: string } } } }
components:
  securitySchemes:
    PersonalAccessToken: { type: apiKey, in: header, name: X-Token }
    OAuth2:
      type: oauth2
      flows:
        authorizationCode:
          authorizationUrl: https://files.example/oauth
          tokenUrl: https://api.files.example/oauth/token
          scopes: { files:read: read, current_user:read: who }
`

// TestScopeAddedToALaterAlternative is issue 30's regression test for
// OAuth scopes: an operation whose first alternative (an API key, the one
// AIR keeps) is unchanged but whose OAuth alternative now needs another
// scope broke every caller connected by OAuth, and anvil diff said none.
func TestScopeAddedToALaterAlternative(t *testing.T) {
	r := compareSpecs(t, fmt.Sprintf(scopedSpec, "files:read"), fmt.Sprintf(scopedSpec, "current_user:read, files:read"))
	if !breaking(r, diff.AuthChanged, "callers authorised by OAuth2 (oauth2: files:read) are not any more") || r.Semver != diff.Major {
		t.Fatalf("the added scope is not breaking:\n%s", text(t, r))
	}
	// Dropping a scope, or adding an alternative, breaks nobody.
	r = compareSpecs(t, fmt.Sprintf(scopedSpec, "current_user:read, files:read"), fmt.Sprintf(scopedSpec, "files:read"))
	if r.Summary.Breaking != 0 || r.Semver == diff.None {
		t.Fatalf("a scope fewer:\n%s", text(t, r))
	}
}

// TestChangeBelowAnyDepth is issue 30's regression test for depth: a
// change nested deeper than 24 levels was invisible (semver none).
func TestChangeBelowAnyDepth(t *testing.T) {
	nested := func(leaf string) string {
		s := leaf
		for range 40 {
			s = "{ type: object, required: [n], properties: { n: " + s + " } }"
		}
		return fmt.Sprintf(`openapi: 3.0.3
info: { title: Deep, version: "1" }
servers: [{ url: https://api.deep.example }]
paths:
  /deep:
    get:
      operationId: getDeep
      responses:
        "200":
          description: Deep.
          content:
            application/json: { schema: %s }
`, s)
	}
	r := compareSpecs(t, nested("{ type: string }"), nested("{ type: [string, integer] }"))
	if !breaking(r, diff.OutputTypeChanged, "type string → integer|string") {
		t.Fatalf("a widened type 40 levels down is not reported:\n%s", text(t, r))
	}
}

const mediaSpec = `openapi: 3.0.3
info: { title: Reports, version: "1" }
servers: [{ url: https://api.reports.example }]
paths:
  /reports/{id}:
    get:
      operationId: getReport
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses:
        "200":
          description: The report.
          content:
            application/json:
              schema: { type: object, required: [id], properties: { id: { type: string } } }
            application/vnd.reports.v2+json:
              schema: { type: object, required: [%s], properties: { id: { type: string }, total: { type: integer } } }
`

// TestOtherMediaTypeCompared is issue 30's regression test for media
// types: a property that became optional in a response media type other
// than the main JSON one was missed.
func TestOtherMediaTypeCompared(t *testing.T) {
	r := compareSpecs(t, fmt.Sprintf(mediaSpec, "id, total"), fmt.Sprintf(mediaSpec, "id"))
	if !breaking(r, diff.OutputConstraintLooser, "response 200 (application/vnd.reports.v2+json) `total`: no longer always present") {
		t.Fatalf("the second media type is not compared:\n%s", text(t, r))
	}
}

func text(t *testing.T, r *diff.Report) string {
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
