package air

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/anvil-dev/anvil/runtime/canon"
)

// appendSchemaJSON appends s as compact JSON, byte for byte what
// encoding/json.Marshal writes for it (fields in struct order, omitempty,
// map keys sorted, HTML characters escaped), in one pass: encoding/json
// re-validates the output of every nested MarshalJSON, which makes deep
// schemas quadratic, and the largest descriptions (tens of thousands of
// operations) spend most of their compile time there.
func appendSchemaJSON(b []byte, s *Schema) ([]byte, error) {
	if s == nil {
		return append(b, "null"...), nil
	}
	if s.Bool != nil {
		return strconv.AppendBool(b, *s.Bool), nil
	}
	w := schemaWriter{b: append(b, '{'), first: true}
	w.str("$ref", s.Ref)
	w.schemaMap("$defs", s.Defs)
	w.str("title", s.Title)
	w.str("description", s.Description)
	if len(s.Type) == 1 {
		w.key("type")
		w.b = canon.AppendStringHTML(w.b, s.Type[0])
	} else if len(s.Type) > 1 {
		w.strings("type", s.Type)
	}
	w.str("format", s.Format)
	w.raws("enum", s.Enum)
	w.raw("const", s.Const)
	w.raw("default", s.Default)
	w.raws("examples", s.Examples)
	w.schemaMap("properties", s.Properties)
	w.strings("required", s.Required)
	w.schema("additionalProperties", s.AdditionalProperties)
	w.schema("items", s.Items)
	w.schemas("prefixItems", s.PrefixItems)
	w.schemas("oneOf", s.OneOf)
	w.schemas("anyOf", s.AnyOf)
	w.schemas("allOf", s.AllOf)
	w.schema("not", s.Not)
	w.number("minimum", s.Minimum)
	w.number("maximum", s.Maximum)
	w.number("exclusiveMinimum", s.ExclusiveMinimum)
	w.number("exclusiveMaximum", s.ExclusiveMaximum)
	w.number("multipleOf", s.MultipleOf)
	w.integer("minLength", s.MinLength)
	w.integer("maxLength", s.MaxLength)
	w.str("pattern", s.Pattern)
	w.integer("minItems", s.MinItems)
	w.integer("maxItems", s.MaxItems)
	w.flag("uniqueItems", s.UniqueItems)
	w.integer("minProperties", s.MinProperties)
	w.integer("maxProperties", s.MaxProperties)
	w.flag("readOnly", s.ReadOnly)
	w.flag("writeOnly", s.WriteOnly)
	w.flag("deprecated", s.Deprecated)
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '}'), nil
}

// schemaWriter writes the members of one schema object.
type schemaWriter struct {
	b     []byte
	first bool
	err   error
}

func (w *schemaWriter) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *schemaWriter) str(k, v string) {
	if v != "" {
		w.key(k)
		w.b = canon.AppendStringHTML(w.b, v)
	}
}

func (w *schemaWriter) strings(k string, l []string) {
	writeArray(w, k, l, func(v string) { w.b = canon.AppendStringHTML(w.b, v) })
}

func (w *schemaWriter) schema(k string, s *Schema) {
	if s == nil || w.err != nil {
		return
	}
	w.key(k)
	w.b, w.err = appendSchemaJSON(w.b, s)
}

func (w *schemaWriter) schemas(k string, l []*Schema) {
	writeArray(w, k, l, func(s *Schema) { w.b, w.err = appendSchemaJSON(w.b, s) })
}

func (w *schemaWriter) schemaMap(k string, m map[string]*Schema) {
	if len(m) == 0 || w.err != nil {
		return
	}
	w.key(k)
	keys := make([]string, 0, len(m))
	for n := range m {
		keys = append(keys, n)
	}
	sort.Strings(keys)
	w.b = append(w.b, '{')
	for i, n := range keys {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = canon.AppendStringHTML(w.b, n)
		w.b = append(w.b, ':')
		if w.b, w.err = appendSchemaJSON(w.b, m[n]); w.err != nil {
			return
		}
	}
	w.b = append(w.b, '}')
}

func (w *schemaWriter) raw(k string, r json.RawMessage) {
	if len(r) == 0 || w.err != nil {
		return
	}
	w.key(k)
	w.b, w.err = appendRawJSON(w.b, r)
}

func (w *schemaWriter) raws(k string, l []json.RawMessage) {
	writeArray(w, k, l, func(r json.RawMessage) {
		if r == nil {
			w.b = append(w.b, "null"...)
			return
		}
		w.b, w.err = appendRawJSON(w.b, r)
	})
}

// writeArray writes the member k: l as a JSON array, each element by each;
// nothing when l is empty, and it stops at the first element that sets w.err.
func writeArray[T any](w *schemaWriter, k string, l []T, each func(T)) {
	if len(l) == 0 || w.err != nil {
		return
	}
	w.key(k)
	w.b = append(w.b, '[')
	for i, x := range l {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		if each(x); w.err != nil {
			return
		}
	}
	w.b = append(w.b, ']')
}

func (w *schemaWriter) number(k string, n *json.Number) {
	if n == nil || w.err != nil {
		return
	}
	v := n.String()
	if v == "" {
		v = "0"
	}
	if !canon.IsNumber(v) {
		w.err = fmt.Errorf("json: invalid number literal %q", v)
		return
	}
	w.key(k)
	w.b = append(w.b, v...)
}

func (w *schemaWriter) integer(k string, n *int) {
	if n != nil {
		w.key(k)
		w.b = strconv.AppendInt(w.b, int64(*n), 10)
	}
}

func (w *schemaWriter) flag(k string, v bool) {
	if v {
		w.key(k)
		w.b = append(w.b, "true"...)
	}
}

// appendRawJSON appends a raw JSON value compacted, with <, > and & escaped
// inside strings and the line and paragraph separators (U+2028, U+2029)
// written as \u2028 and \u2029, as encoding/json does for a
// json.RawMessage. Compacted JSON holds those only inside strings, so the
// byte scan needs no string state.
func appendRawJSON(b []byte, r json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, r); err != nil {
		return nil, errors.Join(errors.New("json: error calling MarshalJSON for type json.RawMessage"), err)
	}
	raw := buf.Bytes()
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '<' || c == '>' || c == '&':
			b = append(b, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xF])
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9):
			b = append(b, '\\', 'u', '2', '0', '2', hexDigit[raw[i+2]&0xF])
			i += 2
		default:
			b = append(b, c)
		}
	}
	return b, nil
}

const hexDigit = "0123456789abcdef"
