package air

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// linkedDoc is a document as lowering leaves it: input schemas carry their
// $defs, sharing the document's named schemas; the second operation's
// schema replaces Team by its stand-in.
func linkedDoc() *Document {
	team := &Schema{Type: Types{"object"}, Properties: map[string]*Schema{"lead": {Ref: "#/$defs/User"}}}
	user := &Schema{Type: Types{"object"}, Properties: map[string]*Schema{"team": {Ref: "#/$defs/Team"}, "name": {Type: Types{"string"}}}}
	label := &Schema{Type: Types{"string"}, Enum: nil, Description: "a/b"}
	stand := &Schema{Description: "Schema omitted.", Type: Types{"object"}}
	in := func(prop string, defs map[string]*Schema) *Schema {
		return &Schema{Type: Types{"object"}, Properties: map[string]*Schema{prop: {Ref: "#/$defs/" + prop}}, Defs: defs}
	}
	return &Document{Schema: SchemaVersion, AnvilVersion: AnvilVersion, Service: Service{ID: "x"},
		Schemas:        map[string]*Schema{"User": user, "Team": team, "a/b": label},
		SchemaStandIns: map[string]*Schema{"Team": stand},
		Operations: []Operation{
			{ID: "x.users.get", Input: Input{Schema: in("User", map[string]*Schema{"User": user, "Team": team})}},
			{ID: "x.users.put", Input: Input{Schema: in("User", map[string]*Schema{"User": user, "Team": stand}), StandIns: []string{"Team"}}},
			{ID: "x.users.list", Input: Input{Schema: in("User", map[string]*Schema{"User": user, "Team": team})}},
			{ID: "x.labels.get", Input: Input{Schema: &Schema{Type: Types{"object"}, Properties: map[string]*Schema{"l": {Ref: "#/$defs/a~1b"}}, Defs: map[string]*Schema{"a/b": label}}}},
			{ID: "x.plain.get", Input: Input{Schema: &Schema{Type: Types{"object"}}}},
			projected(user, team),
			{ID: "x.blobs.put", Input: Input{
				Body:   &Body{Projection: ProjectionWhole, Schema: label},
				Schema: &Schema{Type: Types{"object"}, Properties: map[string]*Schema{WholeBodyKey: label}, Defs: nil}}},
		}}
}

// projected is an operation whose input schema projects a described
// parameter (copied with the description, as lowering does), an
// undescribed one (the parameter's own schema) and the fields of a body
// that refers to a named schema.
func projected(user, team *Schema) Operation {
	id := &Schema{Type: Types{"string"}}
	page := &Schema{Type: Types{"integer"}}
	idProp := *id
	idProp.Description = "The user's id."
	return Operation{ID: "x.users.update", Input: Input{
		Params: []Param{{Name: "id", Key: "id", In: "path", Required: true, Schema: id, Description: "The user's id."},
			{Name: "page", Key: "page", In: "query", Schema: page}},
		Body: &Body{Projection: ProjectionFields, Schema: &Schema{Ref: "#/$defs/User"},
			Fields: []BodyField{{Name: "name", Key: "name"}, {Name: "team", Key: "team"}}},
		Schema: &Schema{Type: Types{"object"}, Required: []string{"id"}, Properties: map[string]*Schema{
			"id": &idProp, "page": page, "name": user.Properties["name"], "team": user.Properties["team"],
			"anvil_dry_run": {Type: Types{"boolean"}}},
			Defs: map[string]*Schema{"Team": team, "User": user}},
	}}
}

// TestBundleStoresNamedSchemasOnce: air.json holds each named schema once
// (no operation carries $defs), and loading it gives every operation the
// self-contained input schema it had, byte for byte, with the stand-in
// where the operation had one.
func TestBundleStoresNamedSchemasOnce(t *testing.T) {
	doc := linkedDoc()
	files, err := Files(doc)
	if err != nil {
		t.Fatal(err)
	}
	stored := files[DocumentFile]
	if n := bytes.Count(stored, []byte(`"$defs"`)); n != 0 {
		t.Errorf("air.json carries %d $defs: %s", n, stored)
	}
	if bytes.Contains(stored, []byte(`"The user's id."`)) && bytes.Count(stored, []byte(`"The user's id."`)) != 1 {
		t.Error("a parameter's description is stored twice")
	}
	for _, l := range bytes.Split(stored, []byte("\n")) {
		if bytes.Contains(l, []byte(`"x.users.update"`)) && (bytes.Contains(l, []byte(`"page":{`)) || bytes.Contains(l, []byte(`"name":{`))) ||
			bytes.Contains(l, []byte(`"x.blobs.put"`)) && bytes.Count(l, []byte(`"description":"a/b"`)) != 1 {
			t.Errorf("projected properties are stored: %s", l)
		}
	}
	if n := bytes.Count(stored, []byte(`"lead"`)); n != 1 {
		t.Errorf("Team is written %d times, want once", n)
	}
	// One line per operation, each written compactly.
	lines := bytes.Split(stored, []byte("\n"))
	n := 0
	for _, l := range lines {
		if bytes.HasPrefix(l, []byte(`    {"id":"x.`)) {
			n++
			if !json.Valid(bytes.TrimSuffix(l, []byte(","))) {
				t.Errorf("an operation's line is not one JSON value: %s", l)
			}
		}
	}
	if n != len(doc.Operations) {
		t.Errorf("%d operation lines, want %d:\n%s", n, len(doc.Operations), stored)
	}
	got, err := Parse(stored)
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc.Operations {
		want, _ := Marshal(doc.Operations[i].Input.Schema)
		have, _ := Marshal(got.Operations[i].Input.Schema)
		if !bytes.Equal(want, have) {
			t.Errorf("%s: loaded input schema\n%s\nwant\n%s", doc.Operations[i].ID, have, want)
		}
	}
	if again, _ := Files(got); !bytes.Equal(again[DocumentFile], stored) {
		t.Error("writing a loaded document again changes air.json")
	}
}

// TestLinkDefsShares: operations reaching the same names share one $defs
// map and the document's schemas, so memory holds each once.
func TestLinkDefsShares(t *testing.T) {
	files, _ := Files(linkedDoc())
	doc, err := Parse(files[DocumentFile])
	if err != nil {
		t.Fatal(err)
	}
	get, list, put := doc.Operations[0].Input.Schema, doc.Operations[2].Input.Schema, doc.Operations[1].Input.Schema
	if get.Defs["User"] != doc.Schemas["User"] {
		t.Error("a $defs entry is a copy of the document's named schema")
	}
	if len(get.Defs) != 2 {
		t.Fatalf("defs %v", get.Defs)
	}
	get.Defs["probe"] = nil
	_, shared := list.Defs["probe"]
	delete(get.Defs, "probe")
	if !shared {
		t.Error("two operations reaching the same names hold two $defs maps")
	}
	if put.Defs["Team"] != doc.SchemaStandIns["Team"] {
		t.Error("the stand-in is not the document's")
	}
	if doc.Operations[4].Input.Schema.Defs != nil {
		t.Error("a schema without references got $defs")
	}
}

// TestOlderAIRRefused: a v1 document is refused with a message that says
// to recompile, before the rest of it is decoded.
func TestOlderAIRRefused(t *testing.T) {
	for _, b := range []string{`{"schema":"anvil.air/v1","operations":[{"id":`, `{"anvilVersion":"0.1.0","schema":"anvil.air/v1"}`} {
		_, err := Parse([]byte(b))
		if err == nil || !strings.Contains(err.Error(), "anvil.air/v1") || !strings.Contains(err.Error(), "recompile it with `anvil compile`") {
			t.Errorf("%s: %v", b, err)
		}
	}
	if _, err := Parse([]byte(`{"schema":"anvil.air/v9"}`)); err == nil || !strings.Contains(err.Error(), "unsupported schema") {
		t.Errorf("unknown version: %v", err)
	}
}

// TestParametersSharedOnce: a parameter several operations declare alike
// is stored once and referred to; loading gives each operation its own
// copy back, and an unknown reference is refused.
func TestParametersSharedOnce(t *testing.T) {
	page := Param{Name: "per_page", Key: "per_page", In: "query", Schema: &Schema{Type: Types{"integer"}, Maximum: nil},
		Description: "How many results to return on one page, at most one hundred."}
	op := func(id string) Operation {
		return Operation{ID: id, Input: Input{Params: []Param{page, {Name: "q", Key: "q", In: "query", Schema: &Schema{Type: Types{"string"}}}},
			Schema: &Schema{Type: Types{"object"}}}}
	}
	doc := &Document{Schema: SchemaVersion, Service: Service{ID: "x"}, Operations: []Operation{op("x.a.list"), op("x.b.list")}}
	files, err := Files(doc)
	if err != nil {
		t.Fatal(err)
	}
	stored := files[DocumentFile]
	if n := bytes.Count(stored, []byte("How many results")); n != 1 {
		t.Errorf("the shared parameter is written %d times:\n%s", n, stored)
	}
	if n := bytes.Count(stored, []byte(`{"ref":"query.per_page"}`)); n != 2 {
		t.Errorf("%d references:\n%s", n, stored)
	}
	got, err := Parse(stored)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Operations {
		want, _ := Marshal(doc.Operations[i].Input.Params)
		have, _ := Marshal(got.Operations[i].Input.Params)
		if !bytes.Equal(want, have) {
			t.Errorf("%s: parameters %s, want %s", got.Operations[i].ID, have, want)
		}
	}
	if got.Parameters != nil {
		t.Error("a loaded document keeps the shared table")
	}
	bad := bytes.Replace(stored, []byte(`{"ref":"query.per_page"}`), []byte(`{"ref":"query.nope"}`), 1)
	if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), `"query.nope"`) {
		t.Errorf("an unknown reference: %v", err)
	}
}

// TestStructuredSchemasSharedOnce: a structured output schema several
// operations hold alike is stored once, under a name its content decides,
// and referred to; one held once stays in its operation; loading gives
// each operation its schema back, and an unknown reference is refused.
func TestStructuredSchemasSharedOnce(t *testing.T) {
	user := &Schema{Type: Types{"object"}, Properties: map[string]*Schema{"login": {Type: Types{"string"}}}}
	op := func(id string, s *Schema) Operation {
		return Operation{ID: id, Input: Input{Schema: &Schema{Type: Types{"object"}}}, Output: Output{StructuredSchema: s}}
	}
	other := &Schema{Type: Types{"object"}, Properties: map[string]*Schema{"result": {Type: Types{"array"}}}}
	doc := &Document{Schema: SchemaVersion, Service: Service{ID: "x"},
		Operations: []Operation{op("x.a.get", user), op("x.b.get", user), op("x.c.list", other), op("x.d.delete", nil)}}
	files, err := Files(doc)
	if err != nil {
		t.Fatal(err)
	}
	stored := files[DocumentFile]
	if n := bytes.Count(stored, []byte(`"login"`)); n != 1 {
		t.Errorf("the shared schema is written %d times:\n%s", n, stored)
	}
	b, _ := MarshalCompact(user)
	sum := sha256.Sum256(b)
	ref := `"structuredRef":"s` + hex.EncodeToString(sum[:])[:12] + `"`
	if n := bytes.Count(stored, []byte(ref)); n != 2 || !bytes.Contains(stored, []byte(`"structuredSchema":{"type":"object","properties":{"result"`)) {
		t.Errorf("%d references %s, or the unshared schema moved:\n%s", n, ref, stored)
	}
	if doc.Operations[0].Output.StructuredSchema != user || doc.Operations[0].Output.StructuredRef != "" {
		t.Error("storing changed the document")
	}
	got, err := Parse(stored)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Operations {
		want, _ := Marshal(doc.Operations[i].Output)
		have, _ := Marshal(got.Operations[i].Output)
		if !bytes.Equal(want, have) {
			t.Errorf("%s: output %s, want %s", got.Operations[i].ID, have, want)
		}
	}
	if got.StructuredSchemas != nil {
		t.Error("a loaded document keeps the shared table")
	}
	bad := bytes.Replace(stored, []byte(ref), []byte(`"structuredRef":"s000000000000"`), 1)
	if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), `"s000000000000"`) {
		t.Errorf("an unknown reference: %v", err)
	}
}
