package openapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFrame: the frame keeps the document-level parts, on their own lines,
// and nothing of the operations or schemas.
func TestFrame(t *testing.T) {
	src := `openapi: 3.0.3
info: { title: T, version: "1" }
servers:
  - url: https://api.example
security: [{ key: [] }]
paths:
  /a:
    get:
      responses: { "200": { description: ok } }
components:
  schemas:
    A: { type: string }
  securitySchemes:
    key: { type: apiKey, in: header, name: X-Key }
x-internal: true
`
	b, err := Frame("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if _, ok := v["x-internal"]; ok || len(v["paths"].(map[string]any)) != 0 {
		t.Errorf("frame keeps more than the document level: %s", b)
	}
	comps := v["components"].(map[string]any)
	if _, ok := comps["schemas"]; ok || comps["securitySchemes"] == nil {
		t.Errorf("components: %v", comps)
	}
	lines := strings.Split(string(b), "\n")
	if !strings.Contains(lines[13], `"key"`) || !strings.Contains(lines[3], "https://api.example") {
		t.Errorf("members moved off their lines:\n%s", b)
	}
	if _, err := Frame("bad.json", []byte("{")); err == nil {
		t.Error("invalid JSON framed")
	}
}
