package fleet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Load reads the bundles under root and builds their fleet (New): the same
// bundles, ids, documents and bundle hashes as air.LoadWorkspace, but each
// air.json is decoded as a stream, one operation at a time, and every
// schema in it is interned as it is read (internSchemas), so a gateway
// holds each distinct schema once however many operations repeat it (the
// same parameter, body or inline object in many operations) and never
// holds the file's bytes whole; the input schemas' $defs are then linked
// to the document's named schemas (air.Document.LinkDefs) (docs/scale.md).
func Load(root string) (*Fleet, error) {
	bs, err := air.LoadWorkspaceWith(root, loadDocument)
	if err != nil {
		return nil, err
	}
	conns := make([]*Connector, len(bs))
	for i, b := range bs {
		conns[i] = &Connector{ID: b.ID, Dir: b.Dir, Doc: b.Doc, BundleHash: b.BundleHash}
	}
	return New(conns)
}

// loadDocument reads dir's air.json as air.Load does, streaming it
// (decodeDocument).
func loadDocument(dir string) (*air.Document, error) {
	f, err := os.Open(filepath.Join(dir, air.DocumentFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", dir, air.ErrNotBundle)
		}
		return nil, err
	}
	defer f.Close()
	doc, err := decodeDocument(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		var old versionError
		if errors.As(err, &old) {
			return nil, old.err
		}
		return nil, fmt.Errorf("air: %w", err)
	}
	if err := air.CheckSchemaVersion(doc.Schema); err != nil {
		return nil, err
	}
	doc.LinkDefs()
	return doc, nil
}

// versionError is decodeDocument's refusal of a document's AIR version.
type versionError struct{ err error }

func (e versionError) Error() string { return e.err.Error() }

// decodeDocument decodes one AIR document from r: the operations one by
// one, each interned as soon as it is read, and every other member as
// encoding/json would (member names matched as json.Unmarshal matches
// them, case-insensitively). Anything after the document is refused, as
// json.Unmarshal refuses it.
func decodeDocument(r io.Reader) (*air.Document, error) {
	dec := json.NewDecoder(r)
	in := newInterner()
	if t, err := dec.Token(); err != nil {
		return nil, err
	} else if t != json.Delim('{') {
		return nil, errors.New("an AIR document is a JSON object")
	}
	var rest bytes.Buffer // the members other than operations, as one object
	rest.WriteByte('{')
	var ops []air.Operation
	sawOps := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		if !strings.EqualFold(key, "operations") {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			if key == "schema" {
				// A version this Anvil does not read is refused before
				// the operations are decoded.
				var v string
				if json.Unmarshal(raw, &v) == nil {
					if err := air.CheckSchemaVersion(v); err != nil {
						return nil, versionError{err}
					}
				}
			}
			if rest.Len() > 1 {
				rest.WriteByte(',')
			}
			k, _ := json.Marshal(key)
			rest.Write(k)
			rest.WriteByte(':')
			rest.Write(raw)
			continue
		}
		if sawOps {
			return nil, errors.New("the document has two operations members")
		}
		sawOps = true
		t, err = dec.Token()
		if err != nil {
			return nil, err
		}
		if t == nil { // "operations": null
			continue
		}
		if t != json.Delim('[') {
			return nil, errors.New("operations is not a list")
		}
		for dec.More() {
			ops = append(ops, air.Operation{})
			op := &ops[len(ops)-1]
			if err := dec.Decode(op); err != nil {
				return nil, err
			}
			in.operation(op)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after the top-level value")
	}
	rest.WriteByte('}')
	var doc air.Document
	if err := json.Unmarshal(rest.Bytes(), &doc); err != nil {
		return nil, err
	}
	doc.Operations = ops
	for name, s := range doc.Schemas {
		doc.Schemas[name] = in.schema(s)
	}
	return &doc, nil
}

// interner keeps one copy of each distinct schema: schemas are read-only
// once loaded, so operations that hold equal schemas can hold the same
// one. A schema is interned after its subschemas, under the JSON of the
// schema with each subschema replaced by its interned identity, so every
// schema node is encoded once.
type interner struct {
	byKey map[string]*air.Schema
	ids   map[*air.Schema]int
	marks []*air.Schema // marks[i] stands for the interned schema i in keys
}

func newInterner() *interner {
	return &interner{byKey: map[string]*air.Schema{}, ids: map[*air.Schema]int{}}
}

// operation interns every schema of op.
func (in *interner) operation(op *air.Operation) {
	op.Input.Schema = in.schema(op.Input.Schema)
	for i := range op.Input.Params {
		op.Input.Params[i].Schema = in.schema(op.Input.Params[i].Schema)
	}
	if b := op.Input.Body; b != nil {
		b.Schema = in.schema(b.Schema)
	}
	op.Output.Schema = in.schema(op.Output.Schema)
}

// schema returns the interned copy of s (s itself when it is the first of
// its kind), interning its subschemas in place first.
func (in *interner) schema(s *air.Schema) *air.Schema {
	if s == nil {
		return nil
	}
	if _, ok := in.ids[s]; ok {
		return s
	}
	shallow := *s
	shallow.Defs = in.schemaMap(s.Defs)
	shallow.Properties = in.schemaMap(s.Properties)
	s.AdditionalProperties, shallow.AdditionalProperties = in.child(s.AdditionalProperties)
	s.Items, shallow.Items = in.child(s.Items)
	s.Not, shallow.Not = in.child(s.Not)
	shallow.PrefixItems = in.schemaList(s.PrefixItems)
	shallow.OneOf = in.schemaList(s.OneOf)
	shallow.AnyOf = in.schemaList(s.AnyOf)
	shallow.AllOf = in.schemaList(s.AllOf)
	// Not json.Marshal: its check of the output doubles the cost. An
	// error is not expected of a decoded schema; it stays unshared.
	key, err := shallow.MarshalJSON()
	if err != nil {
		return s
	}
	if c, ok := in.byKey[string(key)]; ok {
		return c
	}
	in.byKey[string(key)] = s
	in.ids[s] = len(in.marks)
	in.marks = append(in.marks, &air.Schema{Ref: fmt.Sprintf("\x00anvil-interned:%d", len(in.marks))})
	return s
}

// child interns a subschema and returns it with its mark.
func (in *interner) child(s *air.Schema) (interned, mark *air.Schema) {
	if s == nil {
		return nil, nil
	}
	c := in.schema(s)
	return c, in.marks[in.ids[c]]
}

// schemaMap interns m's values in place and returns the same map of marks.
func (in *interner) schemaMap(m map[string]*air.Schema) map[string]*air.Schema {
	if m == nil {
		return nil
	}
	marks := make(map[string]*air.Schema, len(m))
	for k, v := range m {
		c, mark := in.child(v)
		m[k] = c
		marks[k] = mark
	}
	return marks
}

// schemaList interns l's elements in place and returns their marks.
func (in *interner) schemaList(l []*air.Schema) []*air.Schema {
	if l == nil {
		return nil
	}
	marks := make([]*air.Schema, len(l))
	for i, v := range l {
		l[i], marks[i] = in.child(v)
	}
	return marks
}
