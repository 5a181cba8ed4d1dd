package air

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// defsPrefix begins every reference to a named schema.
const defsPrefix = "#/$defs/"

// OlderSchemaVersions are the AIR versions this Anvil recognises and no
// longer reads, each with what changed since, for the refusal's message.
var OlderSchemaVersions = map[string]string{
	"anvil.air/v1": "it repeated in every operation the named schemas it reaches; v2 stores each once",
}

// CheckSchemaVersion refuses an AIR document whose schema string is not
// SchemaVersion, saying how to get one this Anvil reads when it is an
// older version.
func CheckSchemaVersion(schema string) error {
	if schema == SchemaVersion {
		return nil
	}
	if why, ok := OlderSchemaVersions[schema]; ok {
		return fmt.Errorf("air: the bundle holds AIR %s, which this Anvil no longer reads (%s): recompile it with `anvil compile` to get %s", schema, why, SchemaVersion)
	}
	return fmt.Errorf("air: unsupported schema %q (want %q)", schema, SchemaVersion)
}

// leadingSchema returns the value of b's "schema" member when it is the
// document's first member, as Marshal writes it, so a refusal does not
// wait for a large document to decode.
func leadingSchema(b []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b[:min(len(b), 4096)]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	if t, err := dec.Token(); err != nil || t != "schema" {
		return "", false
	}
	t, err := dec.Token()
	s, ok := t.(string)
	return s, err == nil && ok
}

// RefName returns the name of the named schema a "#/$defs/<name>"
// reference points at, as written (ok is false for any other reference).
func RefName(ref string) (string, bool) {
	name, ok := strings.CutPrefix(ref, defsPrefix)
	return name, ok && name != ""
}

// UnescapePointer undoes JSON Pointer escaping (~1 is "/", ~0 is "~"): a
// "#/$defs/<name>" reference may escape the name.
func UnescapePointer(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func (d *Document) newLinker() *linker {
	return &linker{doc: d, refs: map[*Schema][]string{}, shared: map[string]map[string]*Schema{}}
}

// linkDefs makes each of ops' input schema self-contained, as clients
// receive it: its $defs get each named schema it reaches, the document's
// own (Schemas) or, for a name in Input.StandIns, its stand-in
// (SchemaStandIns), whose references are not followed; a $defs entry the
// stored schema carries itself is kept and followed. The named schemas are
// shared, not copied, and operations that reach the same names share one
// $defs map, so the document holds each named schema once in memory as on
// disk; a schema a loaded document hands out is read-only.
func (l *linker) linkDefs(ops []Operation) {
	for i := range ops {
		in := &ops[i].Input
		if in.Schema == nil || in.Schema.Bool != nil {
			continue
		}
		linked := *in.Schema
		linked.Defs = l.defs(in.Schema, in.StandIns)
		in.Schema = &linked
	}
}

// eachPart calls f with the operations split into one contiguous part per
// core, in parallel, and returns when every call has: linking reads only
// the document's named schemas and writes only each part's operations.
// Each part has its own linker, so a $defs map may exist once per part;
// the bytes are the same.
func (d *Document) eachPart(f func(ops []Operation)) {
	n := max(1, min(runtime.GOMAXPROCS(0), len(d.Operations)/512))
	size := (len(d.Operations) + n - 1) / n
	var wg sync.WaitGroup
	for start := 0; start < len(d.Operations); start += size {
		part := d.Operations[start:min(start+size, len(d.Operations))]
		wg.Go(func() { f(part) })
	}
	wg.Wait()
}

// linker computes $defs closures over a document's named schemas.
type linker struct {
	doc *Document
	// refs caches each named schema's direct references.
	refs map[*Schema][]string
	// shared maps a closure's key (the root's references and stand-ins)
	// to its $defs.
	shared map[string]map[string]*Schema
}

// defs returns root's $defs: its own entries plus every name reached from
// root through them, the document's named schemas and the stand-ins.
func (l *linker) defs(root *Schema, standIns []string) map[string]*Schema {
	start := l.direct(root, false)
	key := ""
	if len(root.Defs) == 0 {
		key = strings.Join(start, "\x00") + "\x01" + strings.Join(standIns, "\x00")
		if m, ok := l.shared[key]; ok {
			return m
		}
	}
	stand := make(map[string]bool, len(standIns))
	for _, n := range standIns {
		stand[n] = true
	}
	out := l.closure(root, start, stand)
	if key != "" {
		l.shared[key] = out
	}
	return out
}

// DefsClosure returns the $defs Link gives root in a document whose named
// schemas are named and that has no stand-ins: root's own entries and
// every name reached from root through them and named (names as written,
// then JSON Pointer unescaped), nil when there are none. anvil.lock
// rebuilds its entries' input $defs with it.
// cache, when not nil, keeps each schema's references from one call to
// the next (schemas are read-only once loaded), so closures over many
// roots reaching the same schemas walk each of them once.
func DefsClosure(root *Schema, named map[string]*Schema, cache *RefCache) map[string]*Schema {
	l := (&Document{Schemas: named}).newLinker()
	if cache != nil {
		l.refs = cache.refs
	}
	return l.closure(root, l.direct(root, false), nil)
}

// RefCache keeps the "#/$defs/" references of the schemas DefsClosure
// has walked.
type RefCache struct{ refs map[*Schema][]string }

// NewRefCache returns an empty RefCache.
func NewRefCache() *RefCache { return &RefCache{refs: map[*Schema][]string{}} }

// closure returns root's $defs: start (the names root refers to), root's
// own entries, and the names they reach through l.resolve.
func (l *linker) closure(root *Schema, start []string, stand map[string]bool) map[string]*Schema {
	out := map[string]*Schema{}
	queue := slices.Clone(start)
	for _, own := range slices.Sorted(maps.Keys(root.Defs)) {
		queue = append(queue, own)
	}
	for len(queue) > 0 {
		ref := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		name, s, follow := l.resolve(ref, root.Defs, stand)
		if s == nil {
			continue
		}
		if _, done := out[name]; done {
			continue
		}
		out[name] = s
		if follow {
			queue = append(queue, l.direct(s, true)...)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out
}

// resolve finds the schema a $defs name stands for: root's own entry, the
// stand-in, or the document's named schema, trying the name as written and
// then JSON Pointer unescaped. follow is false for a stand-in.
func (l *linker) resolve(name string, own map[string]*Schema, stand map[string]bool) (string, *Schema, bool) {
	for _, n := range []string{name, UnescapePointer(name)} {
		if s, ok := own[n]; ok {
			return n, s, true
		}
		if stand[n] {
			if s := l.doc.SchemaStandIns[n]; s != nil {
				return n, s, false
			}
		}
		if s, ok := l.doc.Schemas[n]; ok && s != nil {
			return n, s, true
		}
	}
	return name, nil, false
}

// direct lists, sorted and without repeats, the names s refers to through
// "#/$defs/" references, not looking inside its own $defs; cache keeps the
// answer for a named schema.
func (l *linker) direct(s *Schema, cache bool) []string {
	if cache {
		if r, ok := l.refs[s]; ok {
			return r
		}
	}
	var names []string
	var walk func(x *Schema)
	walk = func(x *Schema) {
		if x == nil || x.Bool != nil {
			return
		}
		if n, ok := RefName(x.Ref); ok {
			names = append(names, n)
		}
		x.EachChild(walk)
	}
	walk(s)
	slices.Sort(names)
	names = slices.Compact(names)
	if cache {
		l.refs[s] = names
	}
	return names
}

// Stored returns d as a bundle stores it, without what Link gives back:
// every operation's input schema without the $defs entries that are the
// document's own named schema (or the stand-in of a name in
// Input.StandIns), and without the properties that project a parameter
// (its schema, given the parameter's description when it has none) or a
// body field (the body object's own property, or the body's schema when
// it is projected whole); any other entry or property stays. d is not changed; unchanged parts are shared with it.
func Stored(d *Document) *Document {
	out := *d
	out.Operations = slices.Clone(d.Operations)
	for i := range out.Operations {
		in := &out.Operations[i].Input
		if in.Schema == nil || in.Schema.Bool != nil {
			continue
		}
		stored := *in.Schema
		changed := false
		if len(stored.Defs) > 0 {
			kept := map[string]*Schema{}
			for name, s := range stored.Defs {
				if s == d.Schemas[name] || (slices.Contains(in.StandIns, name) && s == d.SchemaStandIns[name]) {
					continue
				}
				kept[name] = s
			}
			if len(kept) != len(stored.Defs) {
				changed = true
				stored.Defs = kept
				if len(kept) == 0 {
					stored.Defs = nil
				}
			}
		}
		if props := d.unprojected(in, stored.Properties); len(props) != len(stored.Properties) {
			changed = true
			stored.Properties = props
		}
		if changed {
			in.Schema = &stored
		}
	}
	out.Parameters, out.Operations = shareParams(out.Operations)
	out.StructuredSchemas, out.Operations = shareStructured(out.Operations)
	return &out
}

// shareStructured moves each structured output schema that several of
// ops hold alike into a table, under "s" and the first 12 hex digits of
// the SHA-256 of its compact JSON (so an entry's name does not depend on
// which operations share it), and leaves those operations a reference
// (Output.StructuredRef). ops is not changed: the operations that change
// are copies. A large API returns the same few types from many
// operations: GitHub's 926 JSON operations have 435 distinct structured
// schemas, Microsoft Graph beta's 22,000 have about 2,000.
func shareStructured(ops []Operation) (map[string]*Schema, []Operation) {
	keys := make([]string, len(ops))
	count := map[string]int{}
	for i := range ops {
		s := ops[i].Output.StructuredSchema
		if s == nil || ops[i].Output.StructuredRef != "" {
			continue
		}
		b, err := appendSchemaJSON(nil, s)
		if err != nil {
			continue
		}
		keys[i] = string(b)
		count[keys[i]]++
	}
	var table map[string]*Schema
	out := ops
	cloned := false
	for i := range ops {
		if count[keys[i]] < 2 {
			continue
		}
		sum := sha256.Sum256([]byte(keys[i]))
		name := "s" + hex.EncodeToString(sum[:])[:12]
		if table == nil {
			table = map[string]*Schema{}
		}
		if _, ok := table[name]; !ok {
			table[name] = ops[i].Output.StructuredSchema
		}
		if !cloned {
			out, cloned = slices.Clone(ops), true
		}
		out[i].Output.StructuredSchema, out[i].Output.StructuredRef = nil, name
	}
	return table, out
}

// ResolveStructured gives op back the shared structured output schema it
// refers to (Output.StructuredRef), as Link does; a reference the
// document does not hold is an error.
func (d *Document) ResolveStructured(op *Operation) error {
	name := op.Output.StructuredRef
	if name == "" {
		return nil
	}
	s := d.StructuredSchemas[name]
	if s == nil {
		return fmt.Errorf("air: operation %s refers to the structured schema %q, which the document does not hold", op.ID, name)
	}
	op.Output.StructuredSchema, op.Output.StructuredRef = s, ""
	return nil
}

// unprojected returns props without the properties Link restores (the
// parameters' and the body fields'), or props itself when there are none.
func (d *Document) unprojected(in *Input, props map[string]*Schema) map[string]*Schema {
	drop := map[string]bool{}
	for i := range in.Params {
		p := &in.Params[i]
		if s, ok := props[p.Key]; ok && s != nil && p.Schema != nil && (s == p.Schema || sameSchema(s, ParamProperty(p))) {
			drop[p.Key] = true
		}
	}
	fields := d.bodyFields(in)
	for key, f := range fields {
		if s, ok := props[key]; ok && s != nil && s == f {
			drop[key] = true
		}
	}
	if len(drop) == 0 {
		return props
	}
	out := make(map[string]*Schema, len(props)-len(drop))
	for k, s := range props {
		if !drop[k] {
			out[k] = s
		}
	}
	return out
}

// Link makes a loaded document whole again, as Stored found it: each
// operation gets back its shared parameters (ResolveParams) and structured
// output schema (ResolveStructured; an unknown reference is an error), its input schema the properties projecting its
// parameters and body fields (LinkParams, linkBodyFields), and then its
// $defs (linkDefs). Loaders call it.
func (d *Document) Link() error {
	for i := range d.Operations {
		if err := d.ResolveParams(&d.Operations[i]); err != nil {
			return err
		}
		if err := d.ResolveStructured(&d.Operations[i]); err != nil {
			return err
		}
	}
	d.Parameters, d.StructuredSchemas = nil, nil
	d.eachPart(func(ops []Operation) {
		for i := range ops {
			LinkParams(&ops[i])
			d.linkBodyFields(&ops[i])
		}
		d.newLinker().linkDefs(ops)
	})
	return nil
}

// LinkParams gives op's input schema back the property of each parameter
// it lacks: the parameter's schema, with the parameter's description when
// the schema has none (as lowering publishes it). It needs nothing of the
// document, so a loader may call it as each operation is decoded.
func LinkParams(op *Operation) {
	in := &op.Input
	if in.Schema == nil || in.Schema.Bool != nil {
		return
	}
	for i := range in.Params {
		p := &in.Params[i]
		if _, ok := in.Schema.Properties[p.Key]; ok || p.Schema == nil {
			continue
		}
		setProperty(in, p.Key, ParamProperty(p))
	}
}

// linkBodyFields gives op's input schema back the property of each body
// field it lacks: the body object's property of that name.
func (d *Document) linkBodyFields(op *Operation) {
	in := &op.Input
	if in.Schema == nil || in.Schema.Bool != nil {
		return
	}
	for key, s := range d.bodyFields(in) {
		if _, ok := in.Schema.Properties[key]; !ok {
			setProperty(in, key, s)
		}
	}
}

// setProperty sets a property of in's schema on a copy of the schema and
// its properties, so a schema or map shared with other operations (a
// gateway interns them) is never changed.
func setProperty(in *Input, key string, s *Schema) {
	c := *in.Schema
	c.Properties = make(map[string]*Schema, len(in.Schema.Properties)+1)
	for k, v := range in.Schema.Properties {
		c.Properties[k] = v
	}
	c.Properties[key] = s
	in.Schema = &c
}

// ParamProperty is a parameter's property in the published input schema:
// its schema, carrying the parameter's description when the schema has
// none. Lowering publishes it and Link restores it.
func ParamProperty(p *Param) *Schema { return WithDescription(p.Schema, p.Description) }

// WithDescription returns s, or a shallow copy of s carrying desc when s
// has none (a missing schema is the empty one; a boolean schema is left
// as it is).
func WithDescription(s *Schema, desc string) *Schema {
	if s == nil {
		s = &Schema{}
	}
	if desc == "" || s.Description != "" || s.Bool != nil {
		return s
	}
	c := *s
	c.Description = desc
	return &c
}

// BodyFieldProperties maps the input key of each of b's fields to the body
// object's property of that name, b's schema followed through the named
// schemas (names as written, then JSON Pointer unescaped), for the fields
// the object has. Lowering publishes these properties and Link restores
// them.
func BodyFieldProperties(b *Body, schemas map[string]*Schema) map[string]*Schema {
	if b == nil || b.Projection != ProjectionFields || len(b.Fields) == 0 {
		return nil
	}
	obj := b.Schema
	for hops := 0; obj != nil && obj.Ref != "" && hops < 32; hops++ {
		name, ok := RefName(obj.Ref)
		if !ok {
			return nil
		}
		next, ok := schemas[name]
		if !ok {
			next = schemas[UnescapePointer(name)]
		}
		obj = next
	}
	if obj == nil {
		return nil
	}
	out := map[string]*Schema{}
	for _, f := range b.Fields {
		if s := obj.Properties[f.Name]; s != nil {
			out[f.Key] = s
		}
	}
	return out
}

// bodyFields is BodyFieldProperties over the document's named schemas; a
// body projected whole is the input WholeBodyKey, its schema the body's.
func (d *Document) bodyFields(in *Input) map[string]*Schema {
	if b := in.Body; b != nil && b.Projection == ProjectionWhole && b.Schema != nil {
		return map[string]*Schema{WholeBodyKey: b.Schema}
	}
	return BodyFieldProperties(in.Body, d.Schemas)
}

// sameSchema reports whether a and b encode alike.
func sameSchema(a, b *Schema) bool {
	x, err1 := a.MarshalJSON()
	y, err2 := b.MarshalJSON()
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// paramJSON is Param without its MarshalJSON.
type paramJSON Param

// MarshalJSON writes a reference to a shared parameter as {"ref": name}
// alone, and any other parameter as its fields.
func (p Param) MarshalJSON() ([]byte, error) {
	if p.Ref != "" {
		return MarshalCompact(struct {
			Ref string `json:"ref"`
		}{p.Ref})
	}
	return MarshalCompact(paramJSON(p))
}

// minSharedParam is the size of a parameter's JSON from which Stored
// shares it, when several operations declare it alike: a reference
// ({"ref":"query.page"}) is about twenty bytes.
const minSharedParam = 48

// shareParams returns the table of the parameters declared alike by more
// than one of ops (each at least minSharedParam bytes of JSON) under
// names "<in>.<name>", "<in>.<name>~2", … in the order ops first declare
// them, and ops with those parameters replaced by references. ops is not
// changed.
func shareParams(ops []Operation) (map[string]*Param, []Operation) {
	type seen struct {
		n    int
		name string
	}
	count := map[string]*seen{}
	keys := make([][]string, len(ops))
	for i := range ops {
		for _, p := range ops[i].Input.Params {
			b, err := MarshalCompact(paramJSON(p))
			k := string(b)
			if err != nil || len(b) < minSharedParam || p.Ref != "" {
				k = ""
			}
			keys[i] = append(keys[i], k)
			if k != "" {
				if c := count[k]; c != nil {
					c.n++
				} else {
					count[k] = &seen{n: 1}
				}
			}
		}
	}
	table := map[string]*Param{}
	variants := map[string]int{}
	out := slices.Clone(ops)
	for i := range out {
		var params []Param
		for j, p := range out[i].Input.Params {
			c := count[keys[i][j]]
			if keys[i][j] == "" || c.n < 2 {
				continue
			}
			if c.name == "" {
				base := string(p.In) + "." + p.Name
				variants[base]++
				c.name = base
				if v := variants[base]; v > 1 {
					c.name = base + "~" + strconv.Itoa(v)
				}
				shared := p
				table[c.name] = &shared
			}
			if params == nil {
				params = slices.Clone(out[i].Input.Params)
			}
			params[j] = Param{Ref: c.name}
		}
		if params != nil {
			out[i].Input.Params = params
		}
	}
	if len(table) == 0 {
		table = nil
	}
	return table, out
}

// ResolveParams replaces op's references to shared parameters with the
// document's parameters (copies sharing their schema), as Link does first;
// a reference the document does not hold is an error.
func (d *Document) ResolveParams(op *Operation) error {
	for j, p := range op.Input.Params {
		if p.Ref == "" {
			continue
		}
		shared := d.Parameters[p.Ref]
		if shared == nil || shared.Ref != "" {
			return fmt.Errorf("air: operation %s refers to the parameter %q, which the document does not hold", op.ID, p.Ref)
		}
		op.Input.Params[j] = *shared
	}
	return nil
}
