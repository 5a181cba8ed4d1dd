package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/schemas"
)

const petstoreSpec = "../../examples/petstore/openapi.yaml"

// initAndCompile runs anvil init on spec, checks the manifest against the
// schema and compiles it, returning the manifest text and the bundle.
func initAndCompile(t *testing.T, spec string, extra ...string) (string, *air.Document) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "anvil.yaml")
	code, stdout, stderr := runCLI(t, "", append([]string{"init", spec, "--out", out}, extra...)...)
	if code != 0 {
		t.Fatalf("init exit %d\n%s%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "# yaml-language-server: $schema=") {
		t.Errorf("the first line is not the editor's schema line: %q", strings.SplitN(string(data), "\n", 2)[0])
	}
	checkManifestSchema(t, out, data)
	bundle := filepath.Join(dir, "bundle")
	code, stdout, stderr = runCLI(t, "", "compile", spec, "--manifest", out, "--out", bundle)
	if code != 0 || !strings.Contains(stdout, "0 error(s), 0 warning(s)") {
		t.Fatalf("the starting manifest does not compile cleanly: exit %d\n%s%s", code, stdout, stderr)
	}
	doc, err := air.Load(bundle)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), doc
}

func checkManifestSchema(t *testing.T, name string, data []byte) {
	t.Helper()
	js, d := manifest.ToJSON(name, data)
	if d.HasErrors() {
		t.Fatal(d[0].String())
	}
	sch, err := schemas.CompileManifest()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s fails the manifest schema: %v", name, err)
	}
}

// TestInitPetstore: the starting manifest lists every operation by its
// operationId with state review_required and the inferred effect as
// comments, replaces the implicit OAuth2 scheme (which would not compile)
// with the description's API key, and compiles with no diagnostic.
func TestInitPetstore(t *testing.T) {
	text, doc := initAndCompile(t, petstoreSpec, "--service", "petstore")
	for _, want := range []string{
		"service:\n  name: petstore\n",
		"auth:\n  type: api_key\n  carrier:\n    in: header\n    name: X-API-Key\n",
		"  # POST /pets — Add a new pet to the store\n  #   inferred: mutation, risk low, reversible, idempotency none, confirmation required",
		"  addPet:\n    state: review_required\n",
		`offers only the OAuth2 implicit flow`,
		"  # --- pets ---\n", "  # --- inventory ---\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the manifest lacks %q:\n%s", want, text)
		}
	}
	if doc.Service.ID != "petstore" || len(doc.Operations) != 4 {
		t.Fatalf("service %s with %d operations", doc.Service.ID, len(doc.Operations))
	}
	for _, op := range doc.Operations {
		if !strings.Contains(text, "\n  "+op.SourceRef.OperationID+":\n    state: review_required\n") {
			t.Errorf("%s is not listed", op.SourceRef.OperationID)
		}
		if op.State != air.StateReviewRequired {
			t.Errorf("%s is %s", op.ID, op.State)
		}
		if a := op.Auth; a != nil && a.Type != air.AuthAPIKey {
			t.Errorf("%s runs %s auth", op.ID, a.Type)
		}
	}
	if doc.Service.Auth.Type != air.AuthAPIKey {
		t.Errorf("service auth %+v", doc.Service.Auth)
	}

	// Without the manifest, the implicit scheme is a coded warning and the
	// operations that need it are blocked.
	code, _, stderr := runCLI(t, "", "compile", petstoreSpec, "--out", filepath.Join(t.TempDir(), "b"))
	if code != 0 || !strings.Contains(stderr, "warning auth/unsupported_oauth_flow") {
		t.Errorf("compile without a manifest: exit %d\n%s", code, stderr)
	}
}

// TestInitGithubMini: operationIds are the keys, and the manifest compiles.
func TestInitGithubMini(t *testing.T) {
	text, doc := initAndCompile(t, exampleSpec)
	if n := strings.Count(text, "state: review_required"); n != len(doc.Operations) || n != 12 {
		t.Errorf("%d entries for %d operations", n, len(doc.Operations))
	}
}

// TestInitRealSpecs: on the real-world descriptions (when fetched), every
// operation is listed once and the manifest compiles with no diagnostic.
func TestInitRealSpecs(t *testing.T) {
	for _, name := range []string{"github.json", "stripe.json"} {
		spec := cachedSpec(t, name)
		t.Run(name, func(t *testing.T) {
			text, doc := initAndCompile(t, spec)
			if n := strings.Count(text, "\n    state: review_required\n"); n != len(doc.Operations) {
				t.Errorf("%d entries for %d operations", n, len(doc.Operations))
			}
		})
	}
}

const mixedSpec = `openapi: 3.0.3
info: {title: Mixed, version: "1"}
servers: [{url: https://mixed.example}]
security: [{key: []}]
paths:
  /things:
    get:
      operationId: listThings
      responses: {"200": {description: ok}}
  /admin:
    get:
      operationId: adminReport
      security: [{basic: []}]
      responses: {"200": {description: ok}}
  /health:
    get:
      operationId: health
      security: []
      responses: {"200": {description: ok}}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
    basic: {type: http, scheme: basic}
`

// TestInitKeepsEachOperationsScheme: the top-level auth: block init writes
// would cover every operation, so an operation whose description names
// another scheme restates its own; compiling the starting manifest gives
// every operation the auth it has without a manifest.
func TestInitKeepsEachOperationsScheme(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "openapi.yaml")
	if err := os.WriteFile(spec, []byte(mixedSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	text, doc := initAndCompile(t, spec)
	if !strings.Contains(text, "  adminReport:\n    state: review_required\n    # the description's own scheme \"basic\" for this operation\n    auth:\n      type: basic\n") {
		t.Errorf("adminReport does not restate its scheme:\n%s", text)
	}
	if strings.Count(text, "    auth:") != 1 {
		t.Errorf("expected one operation auth block:\n%s", text)
	}
	bare := filepath.Join(dir, "bare")
	if code, _, stderr := runCLI(t, "", "compile", spec, "--out", bare); code != 0 {
		t.Fatal(stderr)
	}
	want, err := air.Load(bare)
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc.Operations {
		got, exp := doc.Operations[i].Auth, want.Operations[i].Auth
		if (got == nil) != (exp == nil) || (got != nil && (got.Type != exp.Type || got.Scheme != exp.Scheme)) {
			t.Errorf("%s: auth %+v with the starting manifest, %+v without", doc.Operations[i].ID, got, exp)
		}
	}
	if doc.Service.Auth.Type != want.Service.Auth.Type {
		t.Errorf("service auth %s, want %s", doc.Service.Auth.Type, want.Service.Auth.Type)
	}
}
