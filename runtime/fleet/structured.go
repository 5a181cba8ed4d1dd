package fleet

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/jsonscan"
)

// Structured output (docs/mcp.md). A tool whose success response is JSON
// has an outputSchema (air.Output.StructuredSchema, derived by lowering),
// and MCP requires a result's structuredContent to conform to it; the
// TypeScript and Python SDK clients refuse a result whose structuredContent
// does not, or is missing. Upstream answers do not always match their
// description, so the rule is: structuredContent is the answer (an object
// as it is, anything else as {"result": …}) with every object member that
// does not conform to its schema left out, at any depth; the text content
// still carries the whole answer. Lowering's schemas use only type,
// properties, additionalProperties, items, prefixItems, anyOf and allOf,
// never "required", so leaving members out always makes a value conform:
// a value stops conforming only by having a member, an item or a type its
// schema refuses, and an item or a type is never changed (a value whose
// type, or one of whose items, does not conform is left out whole, as the
// member it is). A schema with any other keyword that constrains values is
// not served at all (OutputSchema is nil), so this never has to guess.

// maxStructuredNesting bounds how deeply a served output schema nests;
// lowering's nest at most 6 deep.
const maxStructuredNesting = 32

// ListOutputSchemas makes every tool's tools/list entry carry its
// outputSchema (OutputSchema). The MCP door calls it once, before it
// lists any tool, when it sends every successful call's structuredContent
// through StructuredContent; until then tools are listed without one, so
// no client is promised a shape it might not get.
func (f *Fleet) ListOutputSchemas() {
	for _, t := range f.Tools {
		t.listOutput = true
	}
}

// OutputSchema is the tool's MCP outputSchema as compact JSON: the
// operation's structured output schema when it is an object schema of
// the vocabulary StructuredContent can make any answer conform to; nil
// otherwise (no JSON success response, or a schema AIR was edited to give
// another keyword).
func (t *Tool) OutputSchema() json.RawMessage {
	t.outputOnce.Do(func() {
		s := t.Op.Output.StructuredSchema
		if s == nil || len(s.Type) != 1 || s.Type[0] != "object" || len(s.AnyOf) > 0 || len(s.AllOf) > 0 || !conformable(s, 0) {
			return
		}
		if b, err := air.MarshalCompact(s); err == nil {
			t.output = b
		}
	})
	return t.output
}

// StructuredContent returns the structuredContent to send for content,
// the structured content a successful call answers today (the upstream
// answer when it is an object, else {"result": answer}; a dry run's
// {"anvil_dry_run": plan}), made to conform to the tool's outputSchema by
// leaving out what does not (see the top of this file), as compact JSON
// with the answer's member order kept. It returns content unchanged when
// the tool has no outputSchema, and {} when content is not a JSON object.
func (t *Tool) StructuredContent(content json.RawMessage) json.RawMessage {
	if t.OutputSchema() == nil {
		return content
	}
	content = bytes.TrimSpace(content)
	if len(content) == 0 || content[0] != '{' || !json.Valid(content) {
		return json.RawMessage("{}")
	}
	out, _, ok := conform(content, t.Op.Output.StructuredSchema)
	if !ok { // an object always conforms to an object schema once pruned
		return json.RawMessage("{}")
	}
	return out
}

// conformable reports whether s constrains values only with the
// vocabulary conform implements (annotations such as title and
// description are allowed), at most maxStructuredNesting deep.
func conformable(s *air.Schema, depth int) bool {
	if s == nil {
		return true
	}
	if depth > maxStructuredNesting || s.Bool != nil || s.Ref != "" || len(s.Defs) > 0 || len(s.Enum) > 0 || s.Const != nil ||
		len(s.Required) > 0 || len(s.OneOf) > 0 || s.Not != nil || s.Format != "" || s.Pattern != "" ||
		s.Minimum != nil || s.Maximum != nil || s.ExclusiveMinimum != nil || s.ExclusiveMaximum != nil || s.MultipleOf != nil ||
		s.MinLength != nil || s.MaxLength != nil || s.MinItems != nil || s.MaxItems != nil || s.UniqueItems ||
		s.MinProperties != nil || s.MaxProperties != nil {
		return false
	}
	for _, t := range s.Type {
		switch t {
		case "object", "array", "string", "number", "integer", "boolean", "null":
		default:
			return false
		}
	}
	ok := true
	s.EachChild(func(c *air.Schema) { ok = ok && conformable(c, depth+1) })
	return ok
}

// conform returns v (one valid JSON value) made to conform to s by leaving
// out object members that do not (changed says whether any was), or false
// when v cannot conform without changing its type or an item of an array.
func conform(v []byte, s *air.Schema) (out []byte, changed, ok bool) {
	if s == nil {
		return v, false, true
	}
	if len(s.Type) > 0 && !hasType(s.Type, v) {
		return nil, false, false
	}
	out = v
	switch v[0] {
	case '{':
		if len(s.Properties) > 0 || s.AdditionalProperties != nil {
			out, changed = conformObject(v, s)
		}
	case '[':
		if s.Items != nil || len(s.PrefixItems) > 0 {
			if out, changed, ok = conformArray(v, s); !ok {
				return nil, false, false
			}
		}
	}
	for _, m := range s.AllOf {
		next, ch, ok := conform(out, m)
		if !ok {
			return nil, false, false
		}
		out, changed = next, changed || ch
	}
	if len(s.AnyOf) > 0 {
		// A branch the value conforms to as it is wins over one it must
		// be pruned for; then the first that works.
		var first []byte
		for _, b := range s.AnyOf {
			next, ch, ok := conform(out, b)
			if ok && !ch {
				return out, changed, true
			}
			if ok && first == nil {
				first = next
			}
		}
		if first == nil {
			return nil, false, false
		}
		out, changed = first, true
	}
	return out, changed, true
}

// conformObject keeps the members of the object v that conform to their
// schema (the property's, else additionalProperties, else any), each
// pruned, in order.
func conformObject(v []byte, s *air.Schema) ([]byte, bool) {
	var out []byte
	changed := false
	n := 0
	eachMember(v, func(rawKey, val []byte) {
		var ps *air.Schema
		declared := false
		if in := rawKey[1 : len(rawKey)-1]; bytes.IndexByte(in, '\\') < 0 {
			ps, declared = s.Properties[string(in)] // no copy: a map index
		} else if key, ok := jsonscan.String(rawKey); ok {
			ps, declared = s.Properties[key]
		}
		if !declared {
			ps = s.AdditionalProperties
		}
		next, ch, ok := conform(val, ps)
		if !ok {
			changed = true
			return
		}
		changed = changed || ch
		if n == 0 {
			out = append(make([]byte, 0, len(v)), '{')
		} else {
			out = append(out, ',')
		}
		n++
		out = append(out, rawKey...)
		out = append(out, ':')
		out = append(out, next...)
	})
	if !changed {
		return v, false
	}
	if n == 0 {
		return []byte("{}"), true
	}
	return append(out, '}'), true
}

// conformArray conforms each item of the array v to its schema (prefixItems
// by position, then items); an item that cannot conform makes the array
// fail, since leaving it out would move the ones after it.
func conformArray(v []byte, s *air.Schema) ([]byte, bool, bool) {
	var items [][]byte
	changed, ok := false, true
	i := 0
	eachItem(v, func(item []byte) {
		if !ok {
			return
		}
		is := s.Items
		if i < len(s.PrefixItems) {
			is = s.PrefixItems[i]
		}
		i++
		next, ch, good := conform(item, is)
		if !good {
			ok = false
			return
		}
		changed = changed || ch
		items = append(items, next)
	})
	if !ok {
		return nil, false, false
	}
	if !changed {
		return v, false, true
	}
	out := append(make([]byte, 0, len(v)), '[')
	for j, it := range items {
		if j > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	return append(out, ']'), true, true
}

// eachMember calls f with each member of the valid JSON object v: the key
// as written (a string literal) and the value.
func eachMember(v []byte, f func(rawKey, val []byte)) {
	i := canon.SkipSpace(v, 1)
	for i < len(v) && v[i] != '}' {
		end, _ := jsonscan.SkipValue(v, i)
		rawKey := v[i:end]
		i = canon.SkipSpace(v, end) + 1 // past the colon
		i = canon.SkipSpace(v, i)
		vend, _ := jsonscan.SkipValue(v, i)
		f(rawKey, v[i:vend])
		i = canon.SkipSpace(v, vend)
		if i < len(v) && v[i] == ',' {
			i = canon.SkipSpace(v, i+1)
		}
	}
}

// eachItem calls f with each item of the valid JSON array v.
func eachItem(v []byte, f func(item []byte)) {
	i := canon.SkipSpace(v, 1)
	for i < len(v) && v[i] != ']' {
		end, _ := jsonscan.SkipValue(v, i)
		f(v[i:end])
		i = canon.SkipSpace(v, end)
		if i < len(v) && v[i] == ',' {
			i = canon.SkipSpace(v, i+1)
		}
	}
}

// hasType reports whether the JSON value v is of one of the types (an
// integer: a number with no fractional part, as JSON Schema counts it).
func hasType(types air.Types, v []byte) bool {
	var t string
	switch v[0] {
	case '{':
		t = "object"
	case '[':
		t = "array"
	case '"':
		t = "string"
	case 't', 'f':
		t = "boolean"
	case 'n':
		t = "null"
	default:
		for _, want := range types {
			if want == "number" || (want == "integer" && isInteger(v)) {
				return true
			}
		}
		return false
	}
	return types.Has(t)
}

// isInteger reports whether the JSON number v has no fractional part,
// exactly (1.0 and 1e2 do; 1.0000000000000000001 does not, though a
// float64 would say so). A number with an exponent beyond ±400 counts as
// not: it is left out, which is always safe.
func isInteger(v []byte) bool {
	s := string(v)
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 400 || e < -400 {
			return false
		}
		mant, exp = s[:i], e
	}
	mant = strings.TrimPrefix(mant, "-")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimRight(intPart+frac, "0")
	if strings.Trim(digits, "0") == "" {
		return true // zero
	}
	// The digits after the decimal point once the exponent moved it.
	return len(digits)-len(intPart)-exp <= 0
}
