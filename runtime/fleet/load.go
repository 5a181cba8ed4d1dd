package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/jsonscan"
)

// Load reads the bundles under root and builds their fleet (New): the same
// bundles, ids, documents and bundle hashes as air.LoadWorkspace, but each
// air.json's operations are decoded on every core (decodeDocument) and
// every schema in it is interned as it is read, so a gateway holds each
// distinct schema once however many operations repeat it (the same
// parameter, body or inline object in many operations); the input schemas
// are then made whole with the document's named schemas shared
// (air.Document.Link) (docs/scale.md).
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

// loadDocument decodes air.json's bytes b as air.Parse does, with
// decodeDocument.
func loadDocument(b []byte) (*air.Document, error) {
	doc, err := decodeDocument(b)
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
	if err := doc.Link(); err != nil {
		return nil, err
	}
	return doc, nil
}

// versionError is decodeDocument's refusal of a document's AIR version.
type versionError struct{ err error }

func (e versionError) Error() string { return e.err.Error() }

// decodeDocument decodes the AIR document b as json.Unmarshal would
// (member names matched case-insensitively, anything after the document
// refused), with every schema interned, except the diagnostics: they are
// the compiler's report, which a gateway does not read, so they are only
// checked to be JSON. The document's members and the operations are cut
// from b by their structure (jsonscan.SkipValue), and the operations are
// decoded by workers on every core (decodeOperations); encoding/json
// checks each piece it decodes, and json.Valid the diagnostics.
func decodeDocument(b []byte) (*air.Document, error) {
	c := cutter{b: b}
	if !c.expect('{') {
		return nil, errors.New("an AIR document is a JSON object")
	}
	in := newInterner()
	var rest bytes.Buffer // the members other than operations, as one object
	rest.WriteByte('{')
	var list []byte // the operations, decoded once the other members are
	sawOps := false
	for first := true; !c.expect('}'); first = false {
		if !first && !c.expect(',') {
			return nil, c.syntax()
		}
		key, ok := c.key()
		if !ok {
			return nil, c.syntax()
		}
		if strings.EqualFold(key, "operations") {
			if sawOps {
				return nil, errors.New("the document has two operations members")
			}
			sawOps = true
			var ok bool
			if list, ok = c.value(); !ok {
				return nil, c.syntax()
			}
			continue
		}
		raw, ok := c.value()
		if !ok {
			return nil, c.syntax()
		}
		if key == "schema" {
			// A version this Anvil does not read is refused before the
			// operations are decoded.
			var v string
			if json.Unmarshal(raw, &v) == nil {
				if err := air.CheckSchemaVersion(v); err != nil {
					return nil, versionError{err}
				}
			}
		}
		if strings.EqualFold(key, "diagnostics") {
			if !json.Valid(raw) {
				return nil, errors.New("the diagnostics are not JSON")
			}
			continue
		}
		if rest.Len() > 1 {
			rest.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		rest.Write(k)
		rest.WriteByte(':')
		rest.Write(raw)
	}
	if c.space(); c.i != len(b) {
		return nil, errors.New("invalid character after the top-level value")
	}
	rest.WriteByte('}')
	var doc air.Document
	if err := json.Unmarshal(rest.Bytes(), &doc); err != nil {
		return nil, err
	}
	if list != nil {
		ops, err := decodeOperations(list, &doc, in)
		if err != nil {
			return nil, err
		}
		doc.Operations = ops
	}
	for name, s := range doc.Schemas {
		doc.Schemas[name] = in.schema(s)
	}
	return &doc, nil
}

// cutter walks a JSON document's structure without decoding its values.
type cutter struct {
	b []byte
	i int
}

func (c *cutter) space() { c.i = canon.SkipSpace(c.b, c.i) }

// expect consumes ch after white space.
func (c *cutter) expect(ch byte) bool {
	c.space()
	if c.i < len(c.b) && c.b[c.i] == ch {
		c.i++
		return true
	}
	return false
}

// value returns the next value's bytes.
func (c *cutter) value() ([]byte, bool) {
	c.space()
	end, ok := jsonscan.SkipValue(c.b, c.i)
	if !ok {
		return nil, false
	}
	v := c.b[c.i:end]
	c.i = end
	return v, true
}

// key reads a member's name and its colon.
func (c *cutter) key() (string, bool) {
	c.space()
	if c.i >= len(c.b) || c.b[c.i] != '"' {
		return "", false
	}
	raw, ok := c.value()
	if !ok {
		return "", false
	}
	k, ok := jsonscan.String(raw)
	return k, ok && c.expect(':')
}

func (c *cutter) syntax() error {
	return fmt.Errorf("invalid JSON at byte %d", c.i)
}

// decodeOperations decodes the operations list (its JSON bytes, null
// included) of doc, in order: this goroutine cuts each element and
// GOMAXPROCS workers decode it, give it its shared parameters
// (doc.ResolveParams) and intern it (the interner under a lock), at most a
// few hundred elements ahead. The first error in list order is returned,
// as a sequential decoding would.
func decodeOperations(list []byte, doc *air.Document, in *interner) ([]air.Operation, error) {
	if bytes.Equal(list, []byte("null")) {
		return nil, nil
	}
	c := cutter{b: list}
	if !c.expect('[') {
		return nil, errors.New("operations is not a list")
	}
	type job struct {
		raw []byte
		op  *air.Operation
		err *error
	}
	jobs := make(chan job, 256)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for j := range jobs {
				if err := json.Unmarshal(j.raw, j.op); err != nil {
					*j.err = err
					continue
				}
				if err := doc.ResolveParams(j.op); err != nil {
					*j.err = err
					continue
				}
				if err := doc.ResolveStructured(j.op); err != nil {
					*j.err = err
					continue
				}
				// Under the interner's lock: operations sharing a parameter
				// share its schema, which interning rewrites in place, and
				// LinkParams reads it (its properties are then interned too).
				mu.Lock()
				air.LinkParams(j.op)
				in.operation(j.op)
				mu.Unlock()
			}
		})
	}
	var ops []*air.Operation // each its own, so the workers' targets never move
	var errs []*error
	var cut error
	for first := true; !c.expect(']'); first = false {
		if !first && !c.expect(',') {
			cut = c.syntax()
			break
		}
		raw, ok := c.value()
		if !ok {
			cut = c.syntax()
			break
		}
		ops = append(ops, &air.Operation{})
		errs = append(errs, new(error))
		jobs <- job{raw: raw, op: ops[len(ops)-1], err: errs[len(errs)-1]}
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if *err != nil {
			return nil, *err
		}
	}
	if cut != nil {
		return nil, cut
	}
	out := make([]air.Operation, len(ops))
	for i, op := range ops {
		out[i] = *op
	}
	return out, nil
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
	op.Output.StructuredSchema = in.schema(op.Output.StructuredSchema)
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
