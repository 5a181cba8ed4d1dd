package lock

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/lower"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

const spec = `openapi: 3.0.3
info: {title: Mini, version: "1"}
paths:
  /things:
    get:
      operationId: listThings
      parameters: [{name: limit, in: query, schema: {type: integer, maximum: 10}}]
      responses: {"200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Thing"}}}}}
components:
  schemas:
    Thing: {type: object, properties: {id: {type: string}, next: {$ref: "#/components/schemas/Thing"}}}
`

func compile(t *testing.T, text string) *air.Document {
	t.Helper()
	s, err := openapi.LoadBytes("openapi.yaml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, l := lower.Lower(s, nil, &lower.Options{ServiceID: "mini"})
	if l.HasErrors() {
		t.Fatal(l)
	}
	return doc
}

// TestRoundTrip: a recorded lock loads back, its bytes are stable, its
// contract is self-contained (the recursive $def travels with it), and
// applying it approves the operation it recorded.
func TestRoundTrip(t *testing.T) {
	doc := compile(t, spec)
	id := doc.Operations[0].ID
	l := &Lock{}
	if err := l.Record(context.Background(), doc, []string{id}); err != nil {
		t.Fatal(err)
	}
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"Thing"`) {
		t.Errorf("the contract lacks the $def it references:\n%s", b)
	}
	p := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := back.Marshal()
	if string(b) != string(b2) {
		t.Errorf("bytes changed on a round trip")
	}
	fresh := compile(t, spec)
	if ds := back.Apply(fresh, p); len(ds) != 0 || fresh.Operations[0].State != air.StateApproved {
		t.Errorf("apply: %v, state %s", ds, fresh.Operations[0].State)
	}
	reworded := compile(t, strings.Replace(spec, "{id: {type: string}", "{id: {type: string, description: The thing's id.}", 1))
	if ds := back.Apply(reworded, p); len(ds) != 0 || reworded.Operations[0].State != air.StateApproved {
		t.Errorf("a reworded description revoked the approval: %v", ds)
	}
	changed := compile(t, strings.Replace(spec, "maximum: 10", "maximum: 5", 1))
	ds := back.Apply(changed, p)
	if len(ds) != 1 || ds[0].Code != CodeChanged || !strings.Contains(ds[0].Message, "input_constraint_tightened: input `limit`: maximum 10 → 5") {
		t.Errorf("a tightened input: %v", ds)
	}
	if changed.Operations[0].State == air.StateApproved {
		t.Error("a changed operation was approved")
	}
	gone := compile(t, strings.Replace(spec, "/things:\n    get:", "/things:\n    put:", 1))
	if ds := back.Apply(gone, p); len(ds) != 1 || ds[0].Code != CodeMissing {
		t.Errorf("a vanished operation: %v", ds)
	}
}

func TestLoadRefusesBadLocks(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"not json":        "{",
		"wrong schema":    `{"schema": "anvil.lock/v9", "approvals": []}`,
		"unknown field":   `{"schema": "anvil.lock/v1", "approvals": [], "extra": 1}`,
		"no contract":     `{"schema": "anvil.lock/v1", "approvals": [{"operation": "a", "fingerprint": "x"}]}`,
		"bad fingerprint": `{"schema": "anvil.lock/v1", "approvals": [{"operation": "a", "method": "GET", "path": "/", "fingerprint": "sha256:00", "contract": {"method": "GET", "path": "/", "effectClass": "read", "undo": false, "confirmation": false}}]}`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		os.WriteFile(p, []byte(text), 0o644)
		if _, err := Load(p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if l, err := Load(filepath.Join(dir, "missing")); err != nil || len(l.Approvals) != 0 {
		t.Errorf("a missing lock is an empty lock: %v %v", l, err)
	}
}
