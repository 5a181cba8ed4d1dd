package harness

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/compiler/emit"
	"github.com/anvil-dev/anvil/compiler/naming"
	"github.com/anvil-dev/anvil/runtime/air"
)

// refPrefixes are the reference forms AIR schemas use for named schemas.
var refPrefixes = []string{"#/$defs/", "#/components/schemas/", "#/definitions/", "#/schemas/"}

// refName returns the schema name a local reference points at, or "".
func refName(ref string) string {
	for _, p := range refPrefixes {
		if strings.HasPrefix(ref, p) {
			n := strings.TrimPrefix(ref, p)
			if n != "" && !strings.Contains(n, "/") {
				return n
			}
		}
	}
	return ""
}

// schemas resolves references against a root schema's $defs and the
// document's named schemas.
type schemas struct {
	doc *air.Document
}

// named returns the named schema for a reference, looking in root's $defs
// first and then in the document's schemas.
func (c schemas) named(root *air.Schema, ref string) (*air.Schema, string) {
	n := refName(ref)
	if n == "" {
		return nil, ""
	}
	if root != nil && root.Defs != nil {
		if s, ok := root.Defs[n]; ok {
			return s, n
		}
	}
	if c.doc != nil && c.doc.Schemas != nil {
		if s, ok := c.doc.Schemas[n]; ok {
			return s, n
		}
	}
	return nil, n
}

// resolve follows references (a bounded number of times).
func (c schemas) resolve(root, s *air.Schema) *air.Schema {
	for i := 0; s != nil && s.Ref != "" && i < 16; i++ {
		t, _ := c.named(root, s.Ref)
		if t == nil {
			return s
		}
		s = t
	}
	return s
}

// jsonType is the main JSON type of a schema: its first non-null type, or
// one inferred from its keywords; "" when nothing says.
func (c schemas) jsonType(root, s *air.Schema) string {
	s = c.resolve(root, s)
	if s == nil || s.Bool != nil {
		return ""
	}
	for _, t := range s.Type {
		if t != "null" {
			return t
		}
	}
	if len(s.Type) == 1 {
		return "null"
	}
	switch {
	case len(s.Properties) > 0 || s.AdditionalProperties != nil:
		return "object"
	case s.Items != nil || len(s.PrefixItems) > 0:
		return "array"
	case len(s.Enum) > 0:
		return emit.LiteralType(s.Enum[0])
	case len(s.Const) > 0:
		return emit.LiteralType(s.Const)
	}
	for _, alts := range [][]*air.Schema{s.OneOf, s.AnyOf, s.AllOf} {
		for _, a := range alts {
			if t := c.jsonType(root, a); t != "" && t != "null" {
				return t
			}
		}
	}
	return ""
}

// example picks an example value for an input: an explicit example, the
// schema's examples, default, const or first enum value, else a placeholder
// for its type.
func (c schemas) example(root, s *air.Schema, key string, explicit json.RawMessage, depth int) json.RawMessage {
	if len(explicit) > 0 {
		return compact(explicit)
	}
	r := c.resolve(root, s)
	if r != nil && r.Bool == nil {
		switch {
		case len(r.Examples) > 0:
			return compact(r.Examples[0])
		case len(r.Default) > 0:
			return compact(r.Default)
		case len(r.Const) > 0:
			return compact(r.Const)
		case len(r.Enum) > 0:
			return compact(r.Enum[0])
		}
	}
	switch c.jsonType(root, s) {
	case "string":
		switch r.Format {
		case "date-time":
			return json.RawMessage(`"2024-01-01T00:00:00Z"`)
		case "date":
			return json.RawMessage(`"2024-01-01"`)
		case "email":
			return json.RawMessage(`"user@example.com"`)
		case "uri", "url":
			return json.RawMessage(`"https://example.com"`)
		case "uuid":
			return json.RawMessage(`"00000000-0000-0000-0000-000000000000"`)
		}
		return placeholderString(key)
	case "integer", "number":
		return json.RawMessage(`1`)
	case "boolean":
		return json.RawMessage(`true`)
	case "array":
		if depth < 4 && r.Items != nil {
			return json.RawMessage("[" + string(c.example(root, r.Items, key, nil, depth+1)) + "]")
		}
		return json.RawMessage(`[]`)
	case "object":
		if depth < 4 && len(r.Required) > 0 {
			var b strings.Builder
			b.WriteByte('{')
			req := append([]string(nil), r.Required...)
			for i, k := range req {
				if i > 0 {
					b.WriteByte(',')
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteByte(':')
				b.Write(c.example(root, r.Properties[k], k, nil, depth+1))
			}
			b.WriteByte('}')
			return json.RawMessage(b.String())
		}
		return json.RawMessage(`{}`)
	case "null":
		return json.RawMessage(`null`)
	}
	return placeholderString(key)
}

// placeholderString is "<key>" as a JSON string.
func placeholderString(key string) json.RawMessage {
	b, err := air.MarshalCompact("<" + key + ">")
	if err != nil {
		return json.RawMessage(`""`)
	}
	return b
}

func compact(v json.RawMessage) json.RawMessage {
	var x any
	d := json.NewDecoder(strings.NewReader(string(v)))
	d.UseNumber()
	if d.Decode(&x) != nil {
		return json.RawMessage(`null`)
	}
	b, err := air.MarshalCompact(x)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// tsTypes writes TypeScript type expressions for schemas and collects the
// named schemas they reference.
type tsTypes struct {
	c     schemas
	names map[string]string // schema name → TS type name
	taken map[string]bool
	want  []string // schema names referenced, in discovery order
	defs  map[string]namedDef
}

// namedDef is a named schema and the root its references resolve against.
type namedDef struct {
	root, schema *air.Schema
}

func newTSTypes(c schemas, taken map[string]bool) *tsTypes {
	return &tsTypes{c: c, names: map[string]string{}, taken: taken, defs: map[string]namedDef{}}
}

// name returns the TS type name of a named schema, reserving it.
func (g *tsTypes) name(root *air.Schema, schemaName string, s *air.Schema) string {
	if n, ok := g.names[schemaName]; ok {
		return n
	}
	base := naming.Pascal(schemaName)
	if base == "" || !naming.IsJSIdent(base) {
		base = "Schema" + base
	}
	n := naming.Unique(base, g.taken, "")
	g.names[schemaName] = n
	if root == nil || root.Defs == nil || root.Defs[schemaName] != s {
		root = s
	}
	g.defs[schemaName] = namedDef{root: root, schema: s}
	g.want = append(g.want, schemaName)
	return n
}

// expr is the TypeScript type for s. Objects are written over several lines
// indented by indent.
func (g *tsTypes) expr(root, s *air.Schema, indent string, depth int) string {
	if s == nil {
		return "unknown"
	}
	if s.Bool != nil {
		if *s.Bool {
			return "unknown"
		}
		return "never"
	}
	if depth > 12 {
		return "unknown"
	}
	if s.Ref != "" {
		t, n := g.c.named(root, s.Ref)
		if t == nil {
			return "unknown"
		}
		return g.name(root, n, t)
	}
	if len(s.Const) > 0 {
		return tsLiteral(s.Const)
	}
	if len(s.Enum) > 0 {
		var parts []string
		for _, e := range s.Enum {
			parts = appendUnique(parts, tsLiteral(e))
		}
		return strings.Join(parts, " | ")
	}
	if len(s.OneOf) > 0 || len(s.AnyOf) > 0 {
		var parts []string
		for _, a := range append(append([]*air.Schema(nil), s.OneOf...), s.AnyOf...) {
			parts = appendUnique(parts, wrap(g.expr(root, a, indent, depth+1)))
		}
		return strings.Join(parts, " | ")
	}
	if len(s.AllOf) > 0 {
		var parts []string
		for _, a := range s.AllOf {
			parts = appendUnique(parts, wrap(g.expr(root, a, indent, depth+1)))
		}
		return strings.Join(parts, " & ")
	}
	types := []string(s.Type)
	if len(types) == 0 {
		switch t := g.c.jsonType(root, s); t {
		case "":
			return "unknown"
		default:
			types = []string{t}
		}
	}
	var parts []string
	for _, t := range types {
		switch t {
		case "string":
			parts = appendUnique(parts, "string")
		case "integer", "number":
			parts = appendUnique(parts, "number")
		case "boolean":
			parts = appendUnique(parts, "boolean")
		case "null":
			parts = appendUnique(parts, "null")
		case "array":
			if s.Items == nil {
				parts = appendUnique(parts, "unknown[]")
			} else {
				parts = appendUnique(parts, wrap(g.expr(root, s.Items, indent, depth+1))+"[]")
			}
		case "object":
			parts = appendUnique(parts, g.object(root, s, indent, depth))
		default:
			parts = appendUnique(parts, "unknown")
		}
	}
	return strings.Join(parts, " | ")
}

// object writes an object type literal.
func (g *tsTypes) object(root, s *air.Schema, indent string, depth int) string {
	if len(s.Properties) == 0 {
		if s.AdditionalProperties != nil && s.AdditionalProperties.Bool == nil {
			return "Record<string, " + g.expr(root, s.AdditionalProperties, indent, depth+1) + ">"
		}
		return "Record<string, unknown>"
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	keys := sortedKeys(s.Properties)
	var b strings.Builder
	b.WriteString("{\n")
	inner := indent + "  "
	for _, k := range keys {
		p := s.Properties[k]
		if d := description(g.c.resolve(root, p)); d != "" {
			b.WriteString(inner + "/** " + jsDoc(d) + " */\n")
		}
		opt := "?"
		if req[k] {
			opt = ""
		}
		b.WriteString(inner + tsKey(k) + opt + ": " + g.expr(root, p, inner, depth+1) + ";\n")
	}
	if s.AdditionalProperties != nil && (s.AdditionalProperties.Bool == nil || *s.AdditionalProperties.Bool) {
		b.WriteString(inner + "[key: string]: unknown;\n")
	}
	b.WriteString(indent + "}")
	return b.String()
}

func description(s *air.Schema) string {
	if s == nil || s.Bool != nil {
		return ""
	}
	return s.Description
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

// wrap parenthesises a union or intersection so it can take [] or join another.
func wrap(t string) string {
	if strings.ContainsAny(t, "|&") && !strings.HasPrefix(t, "{") {
		return "(" + t + ")"
	}
	return t
}

// tsLiteral writes a JSON literal as a TS literal type.
func tsLiteral(v json.RawMessage) string {
	switch emit.LiteralType(v) {
	case "string", "integer", "number", "boolean", "null":
		return string(compact(v))
	}
	return "unknown"
}

// tsKey quotes a property name when it is not an identifier.
func tsKey(k string) string {
	if naming.IsJSIdent(k) {
		return k
	}
	b, _ := json.Marshal(k)
	return string(b)
}

// jsDoc makes text safe inside a /** */ or // comment, on one line: white
// space (line terminators included) collapsed, "*/" broken, and control
// characters (and bytes that are not UTF-8) written as \uXXXX text.
func jsDoc(s string) string {
	var b strings.Builder
	for _, r := range strings.Join(strings.Fields(s), " ") {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return strings.ReplaceAll(b.String(), "*/", "*\\/")
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
