package lock

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diff"
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

// TestV1LockLoadsAndApplies: a v1 lock (testdata/v1.lock, written by the
// v1 writer) still loads and approves, and is written as v2 with the same
// fingerprint; ANVIL_UPDATE_GOLDEN=1 writes the fixture again from the
// reference writer.
func TestV1LockLoadsAndApplies(t *testing.T) {
	p := filepath.Join("testdata", "v1.lock")
	doc := compile(t, spec)
	if os.Getenv("ANVIL_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(p, reference(t, doc, []string{doc.Operations[0].ID}), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Schema != SchemaV1 || len(l.Approvals) != 1 {
		t.Fatalf("loaded %s with %d approvals", l.Schema, len(l.Approvals))
	}
	if ds := l.Apply(doc, p); len(ds) != 0 || doc.Operations[0].State != air.StateApproved {
		t.Errorf("apply: %v, state %s", ds, doc.Operations[0].State)
	}
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"schema": "anvil.lock/v3"`) || !strings.Contains(string(b), `"schemas": {`) || strings.Contains(string(b), `"names"`) {
		t.Errorf("a v1 lock is not written as v3 (its entries without names):\n%s", b)
	}
	back := loadBytes(t, b)
	if back.Approvals[0].Fingerprint != l.Approvals[0].Fingerprint {
		t.Errorf("the fingerprint changed from v1 to v2")
	}
}

// loadBytes loads a lock from b.
func loadBytes(t *testing.T, b []byte) *Lock {
	t.Helper()
	p := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Load(p)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return l
}

// twoOps has two operations that reach Thing.
const twoOps = `openapi: 3.0.3
info: {title: Mini, version: "1"}
paths:
  /things:
    get:
      operationId: listThings
      responses: {"200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Thing"}}}}}
    post:
      operationId: createThing
      requestBody: {content: {application/json: {schema: {$ref: "#/components/schemas/Thing"}}}}
      responses: {"200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Thing"}}}}}
components:
  schemas:
    Thing: {type: object, properties: {id: {type: string, maxLength: 10}}}
`

// TestV2KeepsAnOlderSchemaWhole: an approval recorded against an older
// Thing stays whole in the lock beside one that shares the newer Thing,
// loads back to the same bytes and still approves against the older spec.
func TestV2KeepsAnOlderSchemaWhole(t *testing.T) {
	older := compile(t, twoOps)
	l := &Lock{}
	if err := l.Record(context.Background(), older, []string{older.Operations[0].ID, older.Operations[1].ID}); err != nil {
		t.Fatal(err)
	}
	newer := compile(t, strings.Replace(twoOps, "maxLength: 10", "maxLength: 5", 1))
	var post string
	for _, op := range newer.Operations {
		if op.SourceRef.Method == "POST" {
			post = op.ID
		}
	}
	if err := l.Record(context.Background(), newer, []string{post}); err != nil {
		t.Fatal(err)
	}
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"defs": {`); n != 1 {
		t.Errorf("%d entries written whole, want the older one:\n%s", n, b)
	}
	if !strings.Contains(string(b), `"schemas": {`) || !strings.Contains(string(b), `"maxLength": 5`) || !strings.Contains(string(b), `"maxLength": 10`) {
		t.Errorf("both Things are not kept:\n%s", b)
	}
	back := loadBytes(t, b)
	if again, _ := back.Marshal(); !bytes.Equal(again, b) {
		t.Errorf("bytes changed on a round trip:\n%s", again)
	}
	fresh := compile(t, twoOps)
	ds := back.Apply(fresh, FileName)
	states := map[string]air.OperationState{}
	for _, op := range fresh.Operations {
		states[op.SourceRef.Method] = op.State
	}
	if len(ds) != 1 || ds[0].Code != CodeChanged || states["GET"] != air.StateApproved || states["POST"] == air.StateApproved {
		t.Errorf("apply to the older spec: %v %v", ds, states)
	}
}

// TestV2RefusesEditedLocks: a v2 lock edited by hand is refused with an
// error that says what is wrong.
func TestV2RefusesEditedLocks(t *testing.T) {
	doc := compile(t, spec)
	l := &Lock{}
	if err := l.Record(context.Background(), doc, []string{doc.Operations[0].ID}); err != nil {
		t.Fatal(err)
	}
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	loadBytes(t, b)
	for name, c := range map[string]struct{ old, new, want string }{
		"schema edited": {`"maximum": 10`, `"maximum": 11`, "fingerprint does not match"},
		"shared edited": {`"schemas": {
    "Thing": {
      "type": "object",`, `"schemas": {
    "Thing": {
      "type": "array",`, "fingerprint does not match"},
		"schema renamed": {`"schemas": {
    "Thing"`, `"schemas": {
    "Other"`, `refers to the schema "Thing", which the lock's schemas lack`},
		"schemas dropped": {`,
  "schemas"`, `,
  "other"`, "unknown field"},
		"unknown field":   {`"fingerprint":`, `"extra": 1, "fingerprint":`, "unknown field"},
		"extra schema":    {`"schemas": {`, `"schemas": {"Spare": {"type": "string"},`, `schemas["Spare"] is reached by no approval`},
		"null schema":     {`"schemas": {`, `"schemas": {"Spare": null,`, `schemas["Spare"] is null`},
		"v1 with schemas": {`anvil.lock/v3`, `anvil.lock/v1`, `anvil.lock/v1 has no "schemas"`},
		"v2 with names":   {`anvil.lock/v3`, `anvil.lock/v2`, `anvil.lock/v2 entries have no "names"`},
	} {
		if !strings.Contains(good, c.old) {
			t.Fatalf("%s: the lock lacks %q:\n%s", name, c.old, good)
		}
		p := filepath.Join(t.TempDir(), FileName)
		os.WriteFile(p, []byte(strings.Replace(good, c.old, c.new, 1)), 0o644)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// TestV2GrowsWithOperationsNotSchemas: n operations that each reach the
// same k named schemas make a lock that grows by about one contract's
// shell per operation, not by the k schemas (v1 grew by all of them).
func TestV2GrowsWithOperationsNotSchemas(t *testing.T) {
	const k = 20
	size := func(n int) (lock, schemas int) {
		var b strings.Builder
		b.WriteString("openapi: 3.0.3\ninfo: {title: Many, version: \"1\"}\npaths:\n")
		for i := range n {
			fmt.Fprintf(&b, "  /r%d:\n    get:\n      operationId: get%d\n      responses: {\"200\": {description: ok, content: {application/json: {schema: {$ref: \"#/components/schemas/S0\"}}}}}\n", i, i)
		}
		b.WriteString("components:\n  schemas:\n")
		for j := range k {
			fmt.Fprintf(&b, "    S%d:\n      type: object\n      properties:\n", j)
			for f := range 8 {
				fmt.Fprintf(&b, "        field%d: {type: string, maxLength: %d}\n", f, f+1)
			}
			if j+1 < k {
				fmt.Fprintf(&b, "        next: {$ref: \"#/components/schemas/S%d\"}\n", j+1)
			}
		}
		doc := compile(t, b.String())
		var ids []string
		for _, op := range doc.Operations {
			ids = append(ids, op.ID)
		}
		l := &Lock{}
		if err := l.Record(context.Background(), doc, ids); err != nil {
			t.Fatal(err)
		}
		out, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back := loadBytes(t, out)
		if len(back.Approvals) != n || len(back.Schemas) != k {
			t.Fatalf("%d operations: %d approvals, %d schemas", n, len(back.Approvals), len(back.Schemas))
		}
		at := strings.Index(string(out), "\n  \"schemas\": {")
		return len(out), len(out) - at
	}
	small, schemas := size(20)
	large, schemas2 := size(40)
	perOp := (large - small) / 20
	if schemas != schemas2 || perOp > schemas/8 {
		t.Errorf("each operation adds %d bytes; the %d shared schemas take %d (then %d)", perOp, k, schemas, schemas2)
	}
	t.Logf("%d bytes per operation; %d shared schemas take %d bytes", perOp, k, schemas)
}

// TestV2DanglingReferenceStaysDangling: an entry (here a v1 one) whose
// contract refers to a name it does not define must not read back
// another entry's schema of that name: it is written whole, marked by an
// empty "defs", and reads back with its fingerprint.
func TestV2DanglingReferenceStaysDangling(t *testing.T) {
	doc := compile(t, spec)
	l := &Lock{}
	if err := l.Record(context.Background(), doc, []string{doc.Operations[0].ID}); err != nil {
		t.Fatal(err)
	}
	c := &diff.Contract{Method: "GET", Path: "/other", Output: &air.Schema{Ref: "#/$defs/Thing"}, EffectClass: "read"}
	l.Approvals = append(l.Approvals, Entry{Operation: "mini.other", Method: "GET", Path: "/other", Fingerprint: Fingerprint(c), Contract: c})
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), `"defs": {}`) != 1 || !strings.Contains(string(b), `"schemas": {`) {
		t.Errorf("the dangling entry is not written whole beside the shared one:\n%s", b)
	}
	back := loadBytes(t, b)
	if again, _ := back.Marshal(); !bytes.Equal(again, b) {
		t.Errorf("bytes changed on a round trip:\n%s", again)
	}
	if got := back.Approvals[1]; got.Operation != "mini.other" || Fingerprint(got.contract()) != Fingerprint(c) {
		t.Errorf("the dangling entry read back as %+v", got.contract())
	}
}

// TestPinsFromEntries: a v3 entry pins the names its operation was
// approved under, and lowering with those pins gives them back; an entry
// read from v2 pins the AIR id alone.
func TestPinsFromEntries(t *testing.T) {
	doc := compile(t, spec)
	op := &doc.Operations[0]
	l := &Lock{}
	if err := l.Record(context.Background(), doc, []string{op.ID}); err != nil {
		t.Fatal(err)
	}
	back := loadBytes(t, marshal(t, l))
	want := lower.Pin{Method: op.SourceRef.Method, Path: op.SourceRef.Path, OperationID: op.SourceRef.OperationID,
		ID: op.ID, CanonicalName: op.CanonicalName, Tool: op.MCP.ToolName, CLI: op.CLI.Command}
	if got := back.Pins(); len(got) != 1 || got[0] != want {
		t.Errorf("v3 pins %+v, want %+v", got, want)
	}
	v2 := strings.Replace(string(marshal(t, l)), Schema, SchemaV2, 1)
	i, j := strings.Index(v2, `"names": {`), strings.Index(v2, `"fingerprint"`)
	v2 = v2[:i] + v2[j:]
	if got := loadBytes(t, []byte(v2)).Pins(); len(got) != 1 || got[0] != (lower.Pin{Method: want.Method, Path: want.Path, ID: want.ID}) {
		t.Errorf("v2 pins %+v", got)
	}
}
