package lower

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const budgetNodes = 30

// budgetSpec is a description whose entity schemas form a dense graph (each
// node refers to the next one and to a peer, Graph-style), with large leaf
// schemas of every kind of type, so that a small budget must leave some out.
func budgetSpec() *openapi.Spec {
	pad := strings.Repeat("Lorem ipsum dolor sit amet. ", 8)
	node := func(i int) *air.Schema {
		return &air.Schema{Type: air.Types{"object"}, Description: fmt.Sprintf("Node %d. %s", i, pad),
			Properties: map[string]*air.Schema{
				"id":       str(),
				"next":     ref(fmt.Sprintf("Node%02d", (i+1)%budgetNodes)),
				"peer":     ref(fmt.Sprintf("Node%02d", (i*7+3)%budgetNodes)),
				"kind":     ref("BigEnum"),
				"count":    ref("BigNumber"),
				"flag":     ref("BigNullableFlag"),
				"anything": ref("BigUntyped"),
				"tag":      ref("Tag"),
				"odd":      ref("A<b&c>"),
			}}
	}
	enum := make([]json.RawMessage, 2000)
	for i := range enum {
		enum[i] = json.RawMessage(fmt.Sprintf(`"value_%04d"`, i))
	}
	schemas := map[string]*air.Schema{
		"BigEnum":         {Type: air.Types{"string"}, Enum: enum},
		"BigNumber":       {Type: air.Types{"integer"}, Description: strings.Repeat("A count. ", 700)},
		"BigNullableFlag": {Type: air.Types{"boolean", "null"}, Description: strings.Repeat("A flag. ", 800)},
		"BigUntyped":      {Description: strings.Repeat("Anything. ", 700), OneOf: []*air.Schema{str(), {}}},
		"Tag":             {Type: air.Types{"string"}, MaxLength: new(int)},
		"A<b&c>":          {Type: air.Types{"string"}, Description: "Escaped <name> & co."},
		"Unused":          str(),
	}
	*schemas["Tag"].MaxLength = 8
	for i := 0; i < budgetNodes; i++ {
		schemas[fmt.Sprintf("Node%02d", i)] = node(i)
	}
	return &openapi.Spec{
		Kind: openapi.KindOpenAPI31, File: "graph.yaml", Title: "Graphy", Version: "1",
		Schemas: schemas,
		Operations: []*openapi.Operation{
			{Path: "/nodes", Method: "POST", OperationID: "createNode", Pos: diag.Pos{File: "graph.yaml", Line: 10, Col: 5},
				RequestBody: &openapi.RequestBody{Required: true, ContentType: "application/json", Schema: ref("Node00")},
				Responses:   []*openapi.Response{{Status: "201", ContentType: "application/json", Schema: ref("Node00")}}},
			{Path: "/tags/{tag}", Method: "GET", OperationID: "getTag", Pos: diag.Pos{File: "graph.yaml", Line: 20, Col: 5},
				Params:    []*openapi.Param{{Name: "tag", In: "path", Required: true, Schema: ref("Tag")}},
				Responses: []*openapi.Response{{Status: "200", ContentType: "application/json", Schema: ref("Node01")}}},
			{Path: "/nodes/{id}", Method: "PUT", OperationID: "replaceNode", Pos: diag.Pos{File: "graph.yaml", Line: 30, Col: 5},
				Params:      []*openapi.Param{{Name: "id", In: "path", Required: true, Schema: str()}},
				RequestBody: &openapi.RequestBody{ContentType: "application/json", Schema: &air.Schema{Type: air.Types{"array"}, Items: ref("Node05")}}},
		},
	}
}

func lowerBudget(t *testing.T, budget int) (*air.Document, diag.List) {
	t.Helper()
	return lowerBudgetSpec(t, budgetSpec(), budget)
}

func lowerBudgetSpec(t *testing.T, spec *openapi.Spec, budget int) (*air.Document, diag.List) {
	t.Helper()
	doc, ds := Lower(spec, nil, &Options{schemaBudget: budget})
	if ds.HasErrors() {
		t.Fatalf("errors: %v", ds)
	}
	return doc, ds
}

func truncations(ds diag.List) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, d := range ds {
		if d.Code == CodeSchemaTruncated {
			out = append(out, d)
		}
	}
	return out
}

func compactSize(t *testing.T, s *air.Schema) int {
	t.Helper()
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// refsIn lists every "$ref" value in a JSON document.
func refsIn(t *testing.T, s *air.Schema) []string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if r, ok := e.(string); ok && k == "$ref" {
					out = append(out, r)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	sort.Strings(out)
	return out
}

func bundleBytes(t *testing.T, doc *air.Document) []byte {
	t.Helper()
	files, err := air.Files(doc)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, n := range slices.Sorted(maps.Keys(files)) {
		buf.WriteString(n + "\n")
		buf.Write(files[n])
	}
	return buf.Bytes()
}

// TestSchemaBudgetUntouched: under the default budget (and any budget the
// schemas fit) nothing changes: the bundle is byte-identical to one lowered
// with no limit, every $defs is the full reachable set, and no warning.
func TestSchemaBudgetUntouched(t *testing.T) {
	unlimited, _ := lowerBudget(t, math.MaxInt)
	want := bundleBytes(t, unlimited)
	largest := 0
	for i := range unlimited.Operations {
		op := &unlimited.Operations[i]
		largest = max(largest, compactSize(t, op.Input.Schema))
		if got, want := slices.Sorted(maps.Keys(op.Input.Schema.Defs)), (&lowerer{spec: budgetSpec()}).reachable(op.Input.Schema); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: $defs %v, want %v", op.ID, got, want)
		}
	}
	for _, budget := range []int{0, DefaultInputSchemaBudget, largest} {
		doc, ds := lowerBudget(t, budget)
		if tr := truncations(ds); len(tr) > 0 {
			t.Errorf("budget %d: %v", budget, tr)
		}
		if !bytes.Equal(bundleBytes(t, doc), want) {
			t.Errorf("budget %d: the bundle differs from the unlimited one", budget)
		}
	}
}

// TestSchemaBudgetTruncates checks a bounded schema: within the budget, the
// operation's own schema unchanged, kept definitions intact and reached
// breadth-first, stand-ins (with their types) for the rest, no dangling
// $ref, a valid schema, one warning at the operation, and the small
// operation untouched.
func TestSchemaBudgetTruncates(t *testing.T) {
	full, _ := lowerBudget(t, math.MaxInt)
	spec := budgetSpec()
	for _, budget := range []int{6 << 10, 8 << 10, 12 << 10, 20 << 10, 9999} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			doc, ds := lowerBudgetSpec(t, spec, budget)
			tr := truncations(ds)
			if len(tr) != 2 {
				t.Fatalf("%d truncation warnings, want 2 (createNode, replaceNode): %v", len(tr), tr)
			}
			for _, d := range tr {
				if d.Level != diag.Warning {
					t.Errorf("level %s", d.Level)
				}
			}
			for _, c := range []struct {
				id   string
				pos  diag.Pos
				head string
			}{
				{"graphy.nodes.create", diag.Pos{File: "graph.yaml", Line: 10, Col: 5}, "POST /nodes: "},
				{"graphy.nodes.replace", diag.Pos{File: "graph.yaml", Line: 30, Col: 5}, "PUT /nodes/{id}: "},
			} {
				var w *diag.Diagnostic
				for i := range tr {
					if tr[i].OperationID == c.id {
						w = &tr[i]
					}
				}
				if w == nil {
					t.Fatalf("no warning for %s: %v", c.id, tr)
				}
				if w.Pos != c.pos || !strings.HasPrefix(w.Message, c.head) || !strings.Contains(w.Message, "over the "+budgetText(budget)+" budget") {
					t.Errorf("warning %s", w)
				}
				op, fop := doc.Operation(c.id), full.Operation(c.id)
				s := op.Input.Schema
				if n := compactSize(t, s); n > budget {
					t.Errorf("%s: %d bytes, budget %d", c.id, n, budget)
				}
				// The operation's own schema is unchanged.
				a, b := *s, *fop.Input.Schema
				a.Defs, b.Defs = nil, nil
				if schemaJSON(t, &a) != schemaJSON(t, &b) {
					t.Errorf("%s: the schema besides $defs changed", c.id)
				}
				// Every $ref resolves in $defs.
				for _, r := range refsIn(t, s) {
					name := strings.TrimPrefix(r, defsPrefix)
					if s.Defs[name] == nil {
						t.Errorf("%s: dangling %s", c.id, r)
					}
				}
				// Kept definitions are intact; the others are stand-ins
				// keeping their types; kept ones are reached from the
				// schema through kept ones.
				kept, stands := 0, 0
				for name, d := range s.Defs {
					if d == spec.Schemas[name] || schemaJSON(t, d) == schemaJSON(t, spec.Schemas[name]) {
						kept++
						continue
					}
					stands++
					if !strings.HasPrefix(d.Description, "Schema omitted: ") || d.Ref != "" || len(d.Properties) > 0 || len(d.Enum) > 0 {
						t.Errorf("%s: $defs/%s is neither the schema nor a stand-in: %s", c.id, name, schemaJSON(t, d))
					}
					want := map[string]string{"BigEnum": `["string"]`, "BigNumber": `["integer"]`, "BigNullableFlag": `["boolean","null"]`,
						"BigUntyped": `null`}[name]
					if strings.HasPrefix(name, "Node") {
						want = `["object"]`
					}
					if got, _ := json.Marshal([]string(d.Type)); want != "" && string(got) != want {
						t.Errorf("%s: stand-in for %s has type %s, want %s", c.id, name, got, want)
					}
				}
				if kept == 0 || stands == 0 {
					t.Errorf("%s: %d kept, %d stand-ins; want some of each", c.id, kept, stands)
				}
				if want := fmt.Sprintf("%d are kept whole, %d are replaced by permissive stand-ins", kept, stands); !strings.Contains(w.Message, want) {
					t.Errorf("%s: message %q lacks %q", c.id, w.Message, want)
				}
				reached := map[string]bool{}
				l := &lowerer{spec: spec}
				queue := l.namedRefs(&a)
				for len(queue) > 0 {
					n := queue[0]
					queue = queue[1:]
					if reached[n] {
						continue
					}
					reached[n] = true
					if d := s.Defs[n]; d == spec.Schemas[n] {
						queue = append(queue, l.namedRefs(d)...)
					}
				}
				if got, want := slices.Sorted(maps.Keys(reached)), slices.Sorted(maps.Keys(s.Defs)); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: $defs %v, but the schema reaches %v", c.id, want, got)
				}
				sch := compileSchema(t, op)
				for _, arg := range []struct {
					args string
					ok   bool
				}{
					{`{"id":"x","body":[{"id":"n","tag":"short","kind":"value_0001"}]}`, true},
					{`{"id":"x","body":[{"id":"n","tag":"far too long a tag"}]}`, false},
					{`{"id":"x","body":[{"id":1}]}`, false},
				} {
					if c.id != "graphy.nodes.replace" {
						break
					}
					v, err := jsonschema.UnmarshalJSON(strings.NewReader(arg.args))
					if err != nil {
						t.Fatal(err)
					}
					if err := sch.Validate(v); (err == nil) != arg.ok {
						t.Errorf("%s: valid = %v, want %v (%v)", arg.args, err == nil, arg.ok, err)
					}
				}
			}
			// The small operation and the document's named schemas are untouched.
			if a, b := schemaJSON(t, doc.Operation("graphy.tags.get").Input.Schema), schemaJSON(t, full.Operation("graphy.tags.get").Input.Schema); a != b {
				t.Errorf("the small operation changed:\n%s\n%s", a, b)
			}
			if a, b := fmt.Sprint(slices.Sorted(maps.Keys(doc.Schemas))), fmt.Sprint(slices.Sorted(maps.Keys(full.Schemas))); a != b {
				t.Errorf("document schemas %s, want %s", a, b)
			}
			// Deterministic.
			again, _ := lowerBudget(t, budget)
			if !bytes.Equal(bundleBytes(t, doc), bundleBytes(t, again)) {
				t.Error("two lowerings differ")
			}
		})
	}
}

// TestSchemaBudgetStandInsLoosen: a value the left-out schema would reject
// but its stand-in's type allows is accepted; a value of another type is
// still rejected.
func TestSchemaBudgetStandInsLoosen(t *testing.T) {
	doc, _ := lowerBudget(t, 6<<10)
	op := doc.Operation("graphy.nodes.create")
	if d := op.Input.Schema.Defs["BigEnum"]; d == nil || len(d.Enum) > 0 {
		t.Fatalf("BigEnum is not a stand-in: %v", d)
	}
	sch := compileSchema(t, op)
	for _, c := range []struct {
		args string
		ok   bool
	}{
		{`{"confirm":true,"id":"a","kind":"value_0001"}`, true},
		{`{"confirm":true,"id":"a","kind":"not_in_the_enum"}`, true},
		{`{"confirm":true,"id":"a","kind":7}`, false},
		{`{"confirm":true,"id":"a","count":7}`, true},
		{`{"confirm":true,"id":"a","count":"seven"}`, false},
		{`{"confirm":true,"id":"a","flag":null}`, true},
		{`{"confirm":true,"id":"a","flag":"yes"}`, false},
		{`{"confirm":true,"id":"a","anything":{"x":[1]}}`, true},
		{`{"confirm":true,"id":"a","nope":1}`, false},
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(c.args))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); (err == nil) != c.ok {
			t.Errorf("%s: valid = %v, want %v (%v)", c.args, err == nil, c.ok, err)
		}
	}
}

// TestSchemaBudgetTooSmall: when even the operation's own schema with
// stand-ins for what it refers to exceeds the budget, every reference gets a
// stand-in, nothing dangles, and the warning says how large it still is.
func TestSchemaBudgetTooSmall(t *testing.T) {
	doc, ds := lowerBudget(t, 100)
	tr := truncations(ds)
	if len(tr) != 3 {
		t.Fatalf("%d warnings, want 3: %v", len(tr), tr)
	}
	for _, d := range tr {
		if !strings.Contains(d.Message, " 0 are kept whole") || !strings.Contains(d.Message, "(even so the schema takes ") {
			t.Errorf("message %q", d.Message)
		}
	}
	for i := range doc.Operations {
		op := &doc.Operations[i]
		for _, r := range refsIn(t, op.Input.Schema) {
			if op.Input.Schema.Defs[strings.TrimPrefix(r, defsPrefix)] == nil {
				t.Errorf("%s: dangling %s", op.ID, r)
			}
		}
		compileSchema(t, op)
	}
}

// TestDefsTally: the size bookkeeping matches the encoder exactly, escaped
// names included.
func TestDefsTally(t *testing.T) {
	spec := budgetSpec()
	l := &lowerer{spec: spec}
	for _, root := range []*air.Schema{obj([]string{"a"}, map[string]*air.Schema{"a": ref("A<b&c>"), "b": ref("Node03")}), {}} {
		for _, names := range [][]string{{}, {"A<b&c>"}, {"A<b&c>", "BigEnum", "Node03"}} {
			for _, standIns := range []bool{false, true} {
				tl := defsTally{root: compactSize(t, root)}
				s := *root
				s.Defs = map[string]*air.Schema{}
				for _, n := range names {
					if standIns {
						s.Defs[n] = l.standIn(n)
						tl.entries += l.standEntrySize(n)
					} else {
						s.Defs[n] = spec.Schemas[n]
						tl.entries += l.entrySize(n)
					}
					tl.n++
				}
				if got, want := tl.size(), compactSize(t, &s); got != want {
					t.Errorf("%s %v (stand-ins %v): tally %d, encoded %d", schemaJSON(t, root), names, standIns, got, want)
				}
			}
		}
	}
}

// TestStoredBundleRoundTrips: a bundle stores each named schema and each
// stand-in once, and loading it gives every operation the input schema
// lowering published, byte for byte, bounded or not.
func TestStoredBundleRoundTrips(t *testing.T) {
	spec := budgetSpec()
	for _, budget := range []int{math.MaxInt, 6 << 10, 12 << 10} {
		doc, _ := lowerBudgetSpec(t, spec, budget)
		if budget != math.MaxInt && len(doc.SchemaStandIns) == 0 {
			t.Fatalf("budget %d: no stand-ins recorded", budget)
		}
		assertRoundTrip(t, doc)
	}
}

// assertRoundTrip checks that air.Files then air.Parse gives back every
// operation's input schema as doc holds it.
func assertRoundTrip(t *testing.T, doc *air.Document) {
	t.Helper()
	files, err := air.Files(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := air.Parse(files[air.DocumentFile])
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc.Operations {
		want, _ := air.Marshal(doc.Operations[i].Input.Schema)
		have, _ := air.Marshal(got.Operations[i].Input.Schema)
		if !bytes.Equal(want, have) {
			t.Fatalf("%s: the loaded input schema differs from the lowered one (%d vs %d bytes)", doc.Operations[i].ID, len(have), len(want))
		}
	}
}
