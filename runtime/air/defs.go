package air

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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

// unescapePointer undoes JSON Pointer escaping (~1 is "/", ~0 is "~").
func unescapePointer(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// LinkDefs makes every operation's input schema self-contained, as
// clients receive it: its $defs get each named schema it reaches, the
// document's own (Schemas) or, for a name in Input.StandIns, its stand-in
// (SchemaStandIns), whose references are not followed; a $defs entry the
// stored schema carries itself is kept and followed. The named schemas are
// shared, not copied, and operations that reach the same names share one
// $defs map, so the document holds each named schema once in memory as on
// disk. Loaders call it; a schema a loaded document hands out is read-only.
func (d *Document) LinkDefs() {
	l := linker{doc: d, refs: map[*Schema][]string{}, shared: map[string]map[string]*Schema{}}
	for i := range d.Operations {
		in := &d.Operations[i].Input
		if in.Schema == nil || in.Schema.Bool != nil {
			continue
		}
		linked := *in.Schema
		linked.Defs = l.defs(in.Schema, in.StandIns)
		in.Schema = &linked
	}
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
	out := map[string]*Schema{}
	queue := start
	for _, own := range sortedKeys(root.Defs) {
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
	if key != "" {
		l.shared[key] = out
	}
	return out
}

// resolve finds the schema a $defs name stands for: root's own entry, the
// stand-in, or the document's named schema, trying the name as written and
// then JSON Pointer unescaped. follow is false for a stand-in.
func (l *linker) resolve(name string, own map[string]*Schema, stand map[string]bool) (string, *Schema, bool) {
	for _, n := range []string{name, unescapePointer(name)} {
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

// Stored returns d as a bundle stores it: every operation's input schema
// without the $defs entries LinkDefs gives back (the document's own named
// schema, or the stand-in of a name in Input.StandIns); any other entry
// stays. d is not changed; unchanged parts are shared with it.
func Stored(d *Document) *Document {
	out := *d
	out.Operations = slices.Clone(d.Operations)
	for i := range out.Operations {
		in := &out.Operations[i].Input
		if in.Schema == nil || len(in.Schema.Defs) == 0 {
			continue
		}
		kept := map[string]*Schema{}
		for name, s := range in.Schema.Defs {
			if s == d.Schemas[name] || (slices.Contains(in.StandIns, name) && s == d.SchemaStandIns[name]) {
				continue
			}
			kept[name] = s
		}
		if len(kept) == len(in.Schema.Defs) {
			continue
		}
		stored := *in.Schema
		stored.Defs = kept
		if len(kept) == 0 {
			stored.Defs = nil
		}
		in.Schema = &stored
	}
	return &out
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]*Schema) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
