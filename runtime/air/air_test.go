package air

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestMappingKeepsOrder(t *testing.T) {
	in := `{"owner":"request.owner","repo":"request.repo","state":{"const":"closed"},"n":{"const":{"b":1,"a":[true,null]}}}`
	var m Mapping
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range m {
		names = append(names, e.Name)
	}
	if !reflect.DeepEqual(names, []string{"owner", "repo", "state", "n"}) {
		t.Fatalf("order %v", names)
	}
	if s, _ := m.Get("state"); !s.IsConst() || string(s.Const) != `"closed"` {
		t.Errorf("state = %+v", s)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip\n got %s\nwant %s", out, in)
	}
	for _, bad := range []string{`[1]`, `{"a":1}`, `{"a":{"const":1,"x":2}}`, `{"a":{"nope":1}}`} {
		var m Mapping
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestParsePath(t *testing.T) {
	good := map[string]string{
		"request.owner":          "request.owner",
		"response.items[0].id":   "response.items[0].id",
		"request.name?":          "request.name?",
		"idempotency_key":        "idempotency_key",
		"response.$ref-x[12]._y": "response.$ref-x[12]._y",
	}
	for in, want := range good {
		p, err := ParsePath(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if p.String() != want {
			t.Errorf("%s: String() = %s", in, p.String())
		}
	}
	for _, bad := range []string{"", "request", "response.", "body.x", "idempotency_key.x", "request.1a", "request.a[", "request.a[x]", "request..a", "request.a?b", "response[99999999999999999999]"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestPathLookup(t *testing.T) {
	var v any
	json.Unmarshal([]byte(`{"items":[{"id":7},{"id":null}],"n":0}`), &v)
	cases := map[string]any{"response.items[0].id": 7.0, "response.n": 0.0}
	for in, want := range cases {
		p, _ := ParsePath(in)
		got, ok := p.Lookup(v)
		if !ok || got != want {
			t.Errorf("%s = %v, %v", in, got, ok)
		}
	}
	for _, miss := range []string{"response.items[1].id", "response.items[2].id", "response.items.id", "response.x", "response.n.x"} {
		p, _ := ParsePath(miss)
		if _, ok := p.Lookup(v); ok {
			t.Errorf("%s resolved", miss)
		}
	}
}

func TestFoldConnectorID(t *testing.T) {
	for in, want := range map[string]string{
		"github": "github", "team/github": "team_github", "shipping/v2": "shipping_v2",
		"a b//c": "a_b_c", "__x__": "x", "": "bundle", "...": "bundle", "Team-1/x_y": "Team-1_x_y",
	} {
		if got := FoldConnectorID(in); got != want {
			t.Errorf("FoldConnectorID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string) {
		d := filepath.Join(root, rel)
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, DocumentFile), []byte("{}"), 0o644)
	}
	mk("github")
	mk("team/jira")
	mk("team/jira/nested") // not descended into
	mk(".hidden/x")
	mk("node_modules/y")
	mk("a/b/c/d/e")                                                      // depth 5: too deep
	os.WriteFile(filepath.Join(root, DocumentFile), []byte("{}"), 0o644) // the root is never a bundle
	got, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "github"), filepath.Join(root, "team/jira")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Discover = %v, want %v", got, want)
	}
}

func TestFilesAndHash(t *testing.T) {
	doc := &Document{Schema: SchemaVersion, AnvilVersion: AnvilVersion, Service: Service{ID: "x"},
		Operations: []Operation{{ID: "x.things.list", Input: Input{Schema: &Schema{Type: Types{"object"}}}}}}
	a, err := Files(doc)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Files(doc)
	if !reflect.DeepEqual(a, b) {
		t.Error("Files is not deterministic")
	}
	if len(a) != 2 || a[DocumentFile] == nil {
		t.Errorf("a bundle is air.json and generation.json, got %d files", len(a))
	}
	var g Generation
	json.Unmarshal(a[GenerationFile], &g)
	if len(g.BundleHash) != 64 || g.BundleHash != HashFiles(a) {
		t.Errorf("bundle hash %q", g.BundleHash)
	}
	parsed, err := Parse(a[DocumentFile])
	if err != nil || parsed.Operations[0].ID != "x.things.list" {
		t.Errorf("Parse: %v", err)
	}
	if _, err := Parse([]byte(`{"schema":"anvil.air/v0"}`)); err == nil {
		t.Error("wrong schema version accepted")
	}
}

func TestBoolSchemaAndTypes(t *testing.T) {
	var s Schema
	json.Unmarshal([]byte(`{"type":["string","null"],"items":false,"additionalProperties":true}`), &s)
	if !s.Type.Has("null") || s.Items.Bool == nil || *s.Items.Bool || !*s.AdditionalProperties.Bool {
		t.Errorf("decoded %+v", s)
	}
	b, _ := json.Marshal(&s)
	if string(b) != `{"type":["string","null"],"additionalProperties":true,"items":false}` {
		t.Errorf("encoded %s", b)
	}
}
