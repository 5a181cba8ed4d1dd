package air

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/canon"
)

// decodeSchema reads a schema in one pass over b, the form Marshal writes:
// every member a Schema field's exact name, no null, integers where Schema
// has ints. It reports false for anything else (and for invalid JSON),
// and the caller then decodes with encoding/json, so the result is always
// what encoding/json gives. The one pass matters because encoding/json
// scans a value again for each Unmarshaler nested in it: nested schemas
// cost their depth times their size, and a large AIR document is mostly
// schemas.
func decodeSchema(b []byte) (*Schema, bool) {
	p := &schemaParser{b: b}
	p.space()
	s, ok := p.schema(0)
	if !ok {
		return nil, false
	}
	p.space()
	return s, p.i == len(p.b)
}

// maxSchemaDepth is encoding/json's nesting limit, which the slow path
// then reports.
const maxSchemaDepth = 10000

type schemaParser struct {
	b []byte
	i int
}

func (p *schemaParser) space() { p.i = canon.SkipSpace(p.b, p.i) }

func (p *schemaParser) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// expect consumes c after white space.
func (p *schemaParser) expect(c byte) bool {
	p.space()
	if p.peek() != c {
		return false
	}
	p.i++
	p.space()
	return true
}

// literal consumes the word w (true, false).
func (p *schemaParser) literal(w string) bool {
	if !bytes.HasPrefix(p.b[p.i:], []byte(w)) {
		return false
	}
	p.i += len(w)
	return true
}

// schema bits name each member once, so a repeated member (which
// encoding/json would merge) takes the slow path.
const (
	bitRef = 1 << iota
	bitDefs
	bitTitle
	bitDescription
	bitType
	bitFormat
	bitEnum
	bitConst
	bitDefault
	bitExamples
	bitProperties
	bitRequired
	bitAdditional
	bitItems
	bitPrefixItems
	bitOneOf
	bitAnyOf
	bitAllOf
	bitNot
	bitMinimum
	bitMaximum
	bitExclusiveMinimum
	bitExclusiveMaximum
	bitMultipleOf
	bitMinLength
	bitMaxLength
	bitPattern
	bitMinItems
	bitMaxItems
	bitUniqueItems
	bitMinProperties
	bitMaxProperties
	bitReadOnly
	bitWriteOnly
	bitDeprecated
)

func (p *schemaParser) schema(depth int) (*Schema, bool) {
	if depth > maxSchemaDepth {
		return nil, false
	}
	switch p.peek() {
	case 't':
		v := true
		return &Schema{Bool: &v}, p.literal("true")
	case 'f':
		v := false
		return &Schema{Bool: &v}, p.literal("false")
	case '{':
	default:
		return nil, false
	}
	p.i++
	p.space()
	s := &Schema{}
	if p.peek() == '}' {
		p.i++
		return s, true
	}
	var seen uint64
	for {
		key, ok := p.plainKey()
		if !ok || !p.expect(':') {
			return nil, false
		}
		bit, ok := p.member(s, key, depth)
		if !ok || seen&bit != 0 {
			return nil, false
		}
		seen |= bit
		p.space()
		switch p.peek() {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			return s, true
		default:
			return nil, false
		}
	}
}

// member reads the value of s's member key and returns its bit.
func (p *schemaParser) member(s *Schema, key string, depth int) (uint64, bool) {
	var ok bool
	switch key {
	case "$ref":
		s.Ref, ok = p.str()
		return bitRef, ok
	case "$defs":
		s.Defs, ok = p.schemaMap(depth)
		return bitDefs, ok
	case "title":
		s.Title, ok = p.str()
		return bitTitle, ok
	case "description":
		s.Description, ok = p.str()
		return bitDescription, ok
	case "type":
		s.Type, ok = p.types()
		return bitType, ok
	case "format":
		s.Format, ok = p.str()
		return bitFormat, ok
	case "enum":
		s.Enum, ok = p.rawList()
		return bitEnum, ok
	case "const":
		s.Const, ok = p.raw()
		return bitConst, ok
	case "default":
		s.Default, ok = p.raw()
		return bitDefault, ok
	case "examples":
		s.Examples, ok = p.rawList()
		return bitExamples, ok
	case "properties":
		s.Properties, ok = p.schemaMap(depth)
		return bitProperties, ok
	case "required":
		s.Required, ok = p.strList()
		return bitRequired, ok
	case "additionalProperties":
		s.AdditionalProperties, ok = p.schema(depth + 1)
		return bitAdditional, ok
	case "items":
		s.Items, ok = p.schema(depth + 1)
		return bitItems, ok
	case "prefixItems":
		s.PrefixItems, ok = p.schemaList(depth)
		return bitPrefixItems, ok
	case "oneOf":
		s.OneOf, ok = p.schemaList(depth)
		return bitOneOf, ok
	case "anyOf":
		s.AnyOf, ok = p.schemaList(depth)
		return bitAnyOf, ok
	case "allOf":
		s.AllOf, ok = p.schemaList(depth)
		return bitAllOf, ok
	case "not":
		s.Not, ok = p.schema(depth + 1)
		return bitNot, ok
	case "minimum":
		s.Minimum, ok = p.number()
		return bitMinimum, ok
	case "maximum":
		s.Maximum, ok = p.number()
		return bitMaximum, ok
	case "exclusiveMinimum":
		s.ExclusiveMinimum, ok = p.number()
		return bitExclusiveMinimum, ok
	case "exclusiveMaximum":
		s.ExclusiveMaximum, ok = p.number()
		return bitExclusiveMaximum, ok
	case "multipleOf":
		s.MultipleOf, ok = p.number()
		return bitMultipleOf, ok
	case "minLength":
		s.MinLength, ok = p.integer()
		return bitMinLength, ok
	case "maxLength":
		s.MaxLength, ok = p.integer()
		return bitMaxLength, ok
	case "pattern":
		s.Pattern, ok = p.str()
		return bitPattern, ok
	case "minItems":
		s.MinItems, ok = p.integer()
		return bitMinItems, ok
	case "maxItems":
		s.MaxItems, ok = p.integer()
		return bitMaxItems, ok
	case "uniqueItems":
		s.UniqueItems, ok = p.boolean()
		return bitUniqueItems, ok
	case "minProperties":
		s.MinProperties, ok = p.integer()
		return bitMinProperties, ok
	case "maxProperties":
		s.MaxProperties, ok = p.integer()
		return bitMaxProperties, ok
	case "readOnly":
		s.ReadOnly, ok = p.boolean()
		return bitReadOnly, ok
	case "writeOnly":
		s.WriteOnly, ok = p.boolean()
		return bitWriteOnly, ok
	case "deprecated":
		s.Deprecated, ok = p.boolean()
		return bitDeprecated, ok
	}
	return 0, false
}

// plainKey reads an object key without escapes.
func (p *schemaParser) plainKey() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return string(p.b[start:j]), true
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// str reads a string: a plain copy without escapes, else encoding/json's
// decoding of the literal (which also validates it).
func (p *schemaParser) str() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	start := p.i + 1
	plain := true
	j := start
	for ; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			plain = false
			j++
		} else if c < 0x20 {
			return "", false
		}
	}
	if j >= len(p.b) {
		return "", false
	}
	p.i = j + 1
	if plain && utf8.Valid(p.b[start:j]) {
		return string(p.b[start:j]), true
	}
	var s string
	if json.Unmarshal(p.b[start-1:j+1], &s) != nil {
		return "", false
	}
	return s, true
}

func (p *schemaParser) boolean() (bool, bool) {
	switch p.peek() {
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	}
	return false, false
}

// numberEnd returns the end of the number literal at p.i.
func (p *schemaParser) numberEnd() (int, bool) { return canon.NumberEnd(p.b, p.i) }

func (p *schemaParser) number() (*json.Number, bool) {
	end, ok := p.numberEnd()
	if !ok {
		return nil, false
	}
	n := json.Number(p.b[p.i:end])
	p.i = end
	return &n, true
}

// integer reads a number that strconv.Atoi takes whole, as encoding/json
// requires of an int field.
func (p *schemaParser) integer() (*int, bool) {
	end, ok := p.numberEnd()
	if !ok {
		return nil, false
	}
	v, err := strconv.Atoi(string(p.b[p.i:end]))
	if err != nil {
		return nil, false
	}
	p.i = end
	return &v, true
}

// raw reads any JSON value and returns a copy of its bytes.
func (p *schemaParser) raw() (json.RawMessage, bool) {
	start := p.i
	if !p.skip(0) {
		return nil, false
	}
	return append(json.RawMessage(nil), p.b[start:p.i]...), true
}

// skip consumes one JSON value, checking it as it goes.
func (p *schemaParser) skip(depth int) bool {
	if depth > maxSchemaDepth {
		return false
	}
	switch c := p.peek(); {
	case c == '"':
		_, ok := p.str()
		return ok
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '[':
		p.i++
		p.space()
		if p.peek() == ']' {
			p.i++
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			p.space()
			switch p.peek() {
			case ',':
				p.i++
				p.space()
			case ']':
				p.i++
				return true
			default:
				return false
			}
		}
	case c == '{':
		p.i++
		p.space()
		if p.peek() == '}' {
			p.i++
			return true
		}
		for {
			if _, ok := p.str(); !ok || !p.expect(':') || !p.skip(depth+1) {
				return false
			}
			p.space()
			switch p.peek() {
			case ',':
				p.i++
				p.space()
			case '}':
				p.i++
				return true
			default:
				return false
			}
		}
	default:
		end, ok := p.numberEnd()
		p.i = end
		return ok
	}
}

// list reads a JSON array, calling item for each element; an empty array
// is reported with n == 0.
func (p *schemaParser) list(item func() bool) (n int, ok bool) {
	if p.peek() != '[' {
		return 0, false
	}
	p.i++
	p.space()
	if p.peek() == ']' {
		p.i++
		return 0, true
	}
	for {
		if !item() {
			return 0, false
		}
		n++
		p.space()
		switch p.peek() {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			return n, true
		default:
			return 0, false
		}
	}
}

// The lists below are empty, not nil, for "[]", as encoding/json leaves them.

func (p *schemaParser) rawList() ([]json.RawMessage, bool) {
	out := []json.RawMessage{}
	_, ok := p.list(func() bool {
		r, ok := p.raw()
		out = append(out, r)
		return ok
	})
	return out, ok
}

func (p *schemaParser) strList() ([]string, bool) {
	out := []string{}
	_, ok := p.list(func() bool {
		s, ok := p.str()
		out = append(out, s)
		return ok
	})
	return out, ok
}

func (p *schemaParser) schemaList(depth int) ([]*Schema, bool) {
	out := []*Schema{}
	_, ok := p.list(func() bool {
		s, ok := p.schema(depth + 1)
		out = append(out, s)
		return ok
	})
	return out, ok
}

// types reads "type": one name or a list of names.
func (p *schemaParser) types() (Types, bool) {
	if p.peek() == '"' {
		s, ok := p.str()
		return Types{s}, ok
	}
	l, ok := p.strList()
	return Types(l), ok
}

// schemaMap reads an object of schemas; a repeated name takes the slow
// path (encoding/json would merge the two).
func (p *schemaParser) schemaMap(depth int) (map[string]*Schema, bool) {
	if p.peek() != '{' {
		return nil, false
	}
	p.i++
	p.space()
	out := map[string]*Schema{}
	if p.peek() == '}' {
		p.i++
		return out, true
	}
	for {
		name, ok := p.str()
		if !ok || !p.expect(':') {
			return nil, false
		}
		if _, dup := out[name]; dup {
			return nil, false
		}
		s, ok := p.schema(depth + 1)
		if !ok {
			return nil, false
		}
		out[name] = s
		p.space()
		switch p.peek() {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			return out, true
		default:
			return nil, false
		}
	}
}
