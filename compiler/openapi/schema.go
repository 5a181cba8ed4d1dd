package openapi

import (
	"encoding/json"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// reserveSchemas gives every schema of the entry document's schema container
// (components/schemas, or definitions for Swagger 2.0) its own name before
// anything else is named, so that those names never depend on the order of
// references.
func (l *loader) reserveSchemas(container *node) {
	if container == nil || container.kind != kObject {
		return
	}
	// Names that need no change first, so that they are kept exactly.
	for pass := 0; pass < 2; pass++ {
		for i := range container.kids {
			m := &container.kids[i]
			clean := sanitizeName(m.key)
			if (clean == m.key) != (pass == 0) || l.names[m.val] != nil {
				continue
			}
			l.names[m.val] = &named{name: l.uniqueName(clean, ""), doc: l.entry, node: m.val}
		}
	}
}

// uniqueName returns base, or a variant of it that no other schema has.
func (l *loader) uniqueName(base, alt string) string {
	if !l.taken[base] {
		l.taken[base] = true
		return base
	}
	if alt != "" && alt != base && !l.taken[alt] {
		l.taken[alt] = true
		return alt
	}
	if alt != "" {
		base = alt
	}
	if l.suffix == nil {
		l.suffix = map[string]int{}
	}
	for i := max(2, l.suffix[base]); ; i++ {
		c := base + "_" + strconv.Itoa(i)
		if !l.taken[c] {
			l.taken[c] = true
			l.suffix[base] = i + 1
			return c
		}
	}
}

// sanitizeName keeps a schema name to the characters [A-Za-z0-9._-].
func sanitizeName(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if !nameChar(s[i]) {
			ok = false
			break
		}
	}
	if ok && s != "" {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if nameChar(s[i]) {
			b = append(b, s[i])
		} else if len(b) == 0 || b[len(b)-1] != '_' {
			b = append(b, '_')
		}
	}
	out := strings.Trim(string(b), "_")
	if out == "" {
		return "Schema"
	}
	return out
}

func nameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// deriveName names a schema that is not one of the entry document's own
// schemas: the last pointer token when it sits in a schema container
// (schemas, definitions, $defs), the pointer's tokens joined by "_" otherwise,
// or the file's stem for a whole-file reference. A second candidate prefixes
// the file stem, for collisions.
func deriveName(doc *document, isEntry bool, ref string) (base, alt string) {
	_, frag, _ := strings.Cut(ref, "#")
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	var toks []string
	if strings.HasPrefix(frag, "/") {
		for _, t := range strings.Split(frag[1:], "/") {
			toks = append(toks, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
		}
	}
	stem := strings.TrimSuffix(path.Base(doc.name), path.Ext(doc.name))
	switch {
	case len(toks) == 0:
		base = stem
	case len(toks) >= 2 && (toks[len(toks)-2] == "schemas" || toks[len(toks)-2] == "definitions" || toks[len(toks)-2] == "$defs"):
		base = toks[len(toks)-1]
	default:
		if len(toks) > 2 && toks[0] == "components" && toks[1] == "schemas" {
			toks = toks[2:]
		} else if len(toks) > 1 && toks[0] == "definitions" {
			toks = toks[1:]
		}
		base = strings.Join(toks, "_")
	}
	base = sanitizeName(base)
	if !isEntry && len(toks) > 0 {
		alt = sanitizeName(stem + "_" + base)
	}
	return base, alt
}

// schemaRef turns a schema "$ref" (r, written in doc) into a reference to a
// named schema, naming and queueing the target on first use.
func (l *loader) schemaRef(doc *document, r *node) *air.Schema {
	tdoc, tn, ok := l.follow(doc, r)
	if !ok {
		return &air.Schema{}
	}
	nm := l.names[tn]
	if nm == nil {
		base, alt := deriveName(tdoc, tdoc == l.entry, r.str)
		nm = &named{name: l.uniqueName(base, alt), doc: tdoc, node: tn}
		l.names[tn] = nm
	}
	if !nm.queued {
		nm.queued = true
		l.queue = append(l.queue, nm)
	}
	return &air.Schema{Ref: schemaDefsPrefix + escapePointer(nm.name)}
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// drainSchemas converts every queued named schema (which may queue more).
func (l *loader) drainSchemas() {
	for len(l.queue) > 0 {
		nm := l.queue[0]
		l.queue = l.queue[1:]
		l.schemas[nm.name] = l.schemaBody(nm.doc, nm.node, 0)
	}
}

// schema converts an inline schema (which may be a $ref).
func (l *loader) schema(doc *document, n *node, depth int) *air.Schema {
	if n == nil {
		return nil
	}
	if r, ok := refOf(n); ok {
		s := l.schemaRef(doc, r)
		if l.kind == KindOpenAPI31 && len(n.kids) > 1 {
			// JSON Schema 2020-12 allows keywords beside $ref.
			sib := l.schemaBody(doc, n, depth)
			sib.Ref = s.Ref
			return sib
		}
		return s
	}
	return l.schemaBody(doc, n, depth)
}

// invalid warns about a schema keyword of the wrong shape.
func (l *loader) invalid(doc *document, m *member, want string) {
	l.warnf(l.keyPos(doc, m), CodeInvalidSchema, "schema keyword %s must be %s, not %s; ignored", quote(m.key), want, m.val.kind)
}

// schemaBody converts a schema object's keywords, ignoring any $ref.
func (l *loader) schemaBody(doc *document, n *node, depth int) *air.Schema {
	if n.kind == kBool {
		return air.BoolSchema(n.str == "true")
	}
	if n.kind != kObject {
		l.warnf(l.pos(doc, n), CodeInvalidSchema, "a schema must be an object, not %s; loaded as an empty schema", n.kind)
		return &air.Schema{}
	}
	if !l.spend(doc, n, len(n.kids)+1) || depth > maxDepth {
		return &air.Schema{}
	}
	s := &air.Schema{}
	var (
		nullable        bool
		exclMin, exclMx bool
		examples        []json.RawMessage
	)
	for i := range n.kids {
		m := &n.kids[i]
		v := m.val
		switch m.key {
		case "title":
			s.Title = l.str(doc, m)
		case "description":
			s.Description = l.str(doc, m)
		case "format":
			s.Format = l.str(doc, m)
		case "pattern":
			s.Pattern = l.pattern(doc, m)
		case "type":
			switch v.kind {
			case kString:
				s.Type = air.Types{v.str}
			case kArray:
				for _, e := range v.kids {
					if e.val.kind != kString {
						l.invalid(doc, m, "a string or a list of strings")
						s.Type = nil
						break
					}
					s.Type = append(s.Type, e.val.str)
				}
			default:
				l.invalid(doc, m, "a string or a list of strings")
			}
		case "nullable", "x-nullable":
			nullable = v.isTrue()
		case "enum":
			if v.kind != kArray {
				l.invalid(doc, m, "a list")
				continue
			}
			s.Enum = make([]json.RawMessage, 0, len(v.kids))
			for _, e := range v.kids {
				s.Enum = append(s.Enum, l.rawJSON(doc, e.val))
			}
		case "const":
			s.Const = l.rawJSON(doc, v)
		case "default":
			s.Default = l.rawJSON(doc, v)
		case "example":
			examples = append(examples, l.rawJSON(doc, v))
		case "examples":
			if v.kind == kArray {
				for _, e := range v.kids {
					examples = append(examples, l.rawJSON(doc, e.val))
				}
			}
		case "properties":
			if v.kind != kObject {
				l.invalid(doc, m, "an object")
				continue
			}
			if len(v.kids) > 0 {
				s.Properties = make(map[string]*air.Schema, len(v.kids))
			}
			for j := range v.kids {
				p := &v.kids[j]
				s.Properties[p.key] = l.schema(doc, p.val, depth+1)
			}
		case "required":
			if v.kind != kArray {
				if v.kind != kBool { // "required: true" on a property is a common slip; ignore it quietly
					l.invalid(doc, m, "a list of property names")
				}
				continue
			}
			for _, e := range v.kids {
				if e.val.kind == kString {
					s.Required = append(s.Required, e.val.str)
				}
			}
		case "additionalProperties":
			switch v.kind {
			case kBool, kObject:
				s.AdditionalProperties = l.schema(doc, v, depth+1)
			default:
				l.invalid(doc, m, "a boolean or a schema")
			}
		case "items":
			switch v.kind {
			case kBool, kObject:
				s.Items = l.schema(doc, v, depth+1)
			case kArray: // draft-04 tuple form
				s.PrefixItems = l.schemaList(doc, v, depth)
			default:
				l.invalid(doc, m, "a schema")
			}
		case "prefixItems":
			if v.kind != kArray {
				l.invalid(doc, m, "a list of schemas")
				continue
			}
			s.PrefixItems = l.schemaList(doc, v, depth)
		case "oneOf", "anyOf", "allOf":
			if v.kind != kArray {
				l.invalid(doc, m, "a list of schemas")
				continue
			}
			list := l.schemaList(doc, v, depth)
			switch m.key {
			case "oneOf":
				s.OneOf = list
			case "anyOf":
				s.AnyOf = list
			default:
				s.AllOf = list
			}
		case "not":
			if v.kind != kBool && v.kind != kObject {
				l.invalid(doc, m, "a schema")
				continue
			}
			s.Not = l.schema(doc, v, depth+1)
		case "minimum":
			s.Minimum = l.number(doc, m)
		case "maximum":
			s.Maximum = l.number(doc, m)
		case "multipleOf":
			s.MultipleOf = l.number(doc, m)
		case "exclusiveMinimum":
			if v.kind == kBool {
				exclMin = v.str == "true"
			} else {
				s.ExclusiveMinimum = l.number(doc, m)
			}
		case "exclusiveMaximum":
			if v.kind == kBool {
				exclMx = v.str == "true"
			} else {
				s.ExclusiveMaximum = l.number(doc, m)
			}
		case "minLength":
			s.MinLength = l.count(doc, m)
		case "maxLength":
			s.MaxLength = l.count(doc, m)
		case "minItems":
			s.MinItems = l.count(doc, m)
		case "maxItems":
			s.MaxItems = l.count(doc, m)
		case "minProperties":
			s.MinProperties = l.count(doc, m)
		case "maxProperties":
			s.MaxProperties = l.count(doc, m)
		case "uniqueItems":
			s.UniqueItems = v.isTrue()
		case "readOnly":
			s.ReadOnly = v.isTrue()
		case "writeOnly":
			s.WriteOnly = v.isTrue()
		case "deprecated":
			s.Deprecated = v.isTrue()
		}
	}
	// OpenAPI 3.0 / Swagger 2.0 boolean exclusive bounds.
	if exclMin && s.Minimum != nil {
		s.ExclusiveMinimum, s.Minimum = s.Minimum, nil
	}
	if exclMx && s.Maximum != nil {
		s.ExclusiveMaximum, s.Maximum = s.Maximum, nil
	}
	// Swagger 2.0 file type.
	if len(s.Type) == 1 && s.Type[0] == "file" {
		s.Type = air.Types{"string"}
		if s.Format == "" {
			s.Format = "binary"
		}
	}
	if nullable {
		if len(s.Type) > 0 && !s.Type.Has("null") {
			s.Type = append(s.Type, "null")
		} else if len(s.Type) == 0 {
			nullableComposition(s)
		}
		if len(s.Enum) > 0 {
			hasNull := false
			for _, e := range s.Enum {
				if string(e) == "null" {
					hasNull = true
				}
			}
			if !hasNull {
				s.Enum = append(s.Enum, json.RawMessage("null"))
			}
		}
	}
	if len(examples) > 0 {
		s.Examples = examples
	}
	return s
}

// nullableComposition lets null through a typeless nullable schema built
// from oneOf/anyOf/allOf: a null branch is added to oneOf and anyOf, and an
// allOf (which null cannot pass) is wrapped as anyOf [{allOf...}, null].
func nullableComposition(s *air.Schema) {
	null := func() *air.Schema { return &air.Schema{Type: air.Types{"null"}} }
	switch {
	case len(s.AllOf) > 0:
		inner := &air.Schema{AllOf: s.AllOf, OneOf: s.OneOf, AnyOf: s.AnyOf}
		s.AllOf, s.OneOf = nil, nil
		s.AnyOf = []*air.Schema{inner, null()}
	default:
		if len(s.OneOf) > 0 {
			s.OneOf = append(s.OneOf, null())
		}
		if len(s.AnyOf) > 0 {
			s.AnyOf = append(s.AnyOf, null())
		}
	}
}

func (l *loader) schemaList(doc *document, v *node, depth int) []*air.Schema {
	out := make([]*air.Schema, 0, len(v.kids))
	for _, e := range v.kids {
		if e.val.kind != kObject && e.val.kind != kBool {
			l.warnf(l.pos(doc, e.val), CodeInvalidSchema, "a schema must be an object, not %s; loaded as an empty schema", e.val.kind)
			out = append(out, &air.Schema{})
			continue
		}
		out = append(out, l.schema(doc, e.val, depth+1))
	}
	return out
}

// str reads a scalar keyword as text.
func (l *loader) str(doc *document, m *member) string {
	if m.val.kind == kArray || m.val.kind == kObject {
		l.invalid(doc, m, "a string")
		return ""
	}
	return m.val.text()
}

func (l *loader) number(doc *document, m *member) *json.Number {
	if m.val.kind != kNumber {
		l.invalid(doc, m, "a number")
		return nil
	}
	n := json.Number(m.val.str)
	return &n
}

func (l *loader) count(doc *document, m *member) *int {
	if m.val.kind == kNumber {
		if i, err := strconv.Atoi(m.val.str); err == nil && i >= 0 {
			return &i
		}
		if f, err := strconv.ParseFloat(m.val.str, 64); err == nil && f >= 0 && f == float64(int(f)) {
			i := int(f)
			return &i
		}
	}
	l.invalid(doc, m, "a non-negative integer")
	return nil
}
