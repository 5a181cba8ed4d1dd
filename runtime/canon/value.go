package canon

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strconv"
)

// Numbers names a value encoder's rule for numbers, and so for the JSON
// text a value already holds (json.Number, json.RawMessage, a Go value
// encoding/json writes). Each rule is a contract: the effect report and the
// audit hash are compared byte for byte by clients and by chained hashes.
type Numbers uint8

const (
	// NumberExact writes a number as the Go value holds it: an integer type
	// in full (2^60 stays 1152921504606846976), a float32 in its own
	// shortest form (0.1), a float64 as AppendNumber does, a json.Number's
	// text as it is when it is a JSON number (else as a string); the text
	// of a json.RawMessage compacted as it is (null when it is not JSON);
	// any other Go value as encoding/json writes it, without HTML escaping
	// (null when it cannot). A nil map[string]any or []any is null. It is
	// the effect report's rule: the report echoes a caller's arguments as
	// they came, so a replay re-encodes them to the same bytes.
	NumberExact Numbers = iota
	// NumberJS writes every value as JavaScript holds it after JSON.parse:
	// each number is a float64 written by AppendNumber (an int64 beyond 2^53
	// rounds, a float32 widens: 0.10000000149011612, a json.Number's text is
	// read (1.0 is 1, 1e2 is 100, beyond float64's range or not a number is
	// null); a json.RawMessage, and any other Go value through
	// encoding/json, is read back as a JSON value and written by these
	// rules (its keys sorted, its numbers as numbers), null when it cannot
	// be; a nil map[string]any or []any is {} or [] (JavaScript has no nil
	// object). It is the audit hash's rule: the earlier gateway hashed
	// JSON.stringify of the parsed arguments.
	NumberJS
)

// DefaultMaxDepth is the depth bound of a Value with MaxDepth 0.
const DefaultMaxDepth = 1000

// Value is a JSON value encoder: compact output, strings as AppendString
// writes them, object keys sorted, numbers by the Numbers rule. It never
// panics and always writes valid JSON: a value it cannot write is null, and
// so is anything nested deeper than MaxDepth (a value cut off there, or a
// cycle built by hand, does not overflow the stack).
type Value struct {
	// Numbers is the number rule (NumberExact by default).
	Numbers Numbers
	// KeysUTF16 sorts object keys by UTF-16 code units (CompareUTF16,
	// JavaScript's sort) instead of bytes (Go's sort.Strings). The two
	// orders differ only between characters above U+FFFF and
	// U+E000-U+FFFF.
	KeysUTF16 bool
	// Redact writes the value of every object key for which SensitiveKey
	// holds, at any depth, as the string Redacted.
	Redact bool
	// MaxDepth bounds nesting: a value below MaxDepth containers is
	// written as null. 0 is DefaultMaxDepth.
	MaxDepth int
}

// Appender is a value that writes its own JSON with an encoder's rules, an
// object whose member order is part of its contract for example. Under
// NumberExact the encoder calls AppendJSONValue with the depth the value
// is at; under NumberJS a value's own order does not count (JavaScript
// re-sorts it), so the encoder writes it as any other Go value.
type Appender interface {
	AppendJSONValue(b []byte, enc Value, depth int) []byte
}

// Append appends the JSON of v.
func (e Value) Append(b []byte, v any) []byte { return e.AppendAt(b, v, 0) }

// AppendAt appends the JSON of v found depth containers deep (an
// Appender's members are one deeper than the Appender).
func (e Value) AppendAt(b []byte, v any, depth int) []byte {
	maxDepth := e.MaxDepth
	if maxDepth == 0 {
		maxDepth = DefaultMaxDepth
	}
	if depth > maxDepth {
		return append(b, "null"...)
	}
	js := e.Numbers == NumberJS
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return AppendString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case float64:
		return AppendNumber(b, x, 64)
	case float32:
		if js {
			return AppendNumber(b, float64(x), 64)
		}
		return AppendNumber(b, float64(x), 32)
	case json.Number:
		return e.appendNumberText(b, string(x))
	case json.RawMessage:
		if js {
			return e.AppendAt(b, readJSON(x), depth)
		}
		return appendCompact(b, x)
	case map[string]any:
		if x == nil && !js {
			return append(b, "null"...)
		}
		return e.appendObject(b, x, depth)
	case []any:
		if x == nil && !js {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.AppendAt(b, el, depth+1)
		}
		return append(b, ']')
	}
	if n, ok := signed(v); ok {
		if js {
			return AppendNumber(b, float64(n), 64)
		}
		return strconv.AppendInt(b, n, 10)
	}
	if n, ok := unsigned(v); ok {
		if js {
			return AppendNumber(b, float64(n), 64)
		}
		return strconv.AppendUint(b, n, 10)
	}
	if js {
		return e.appendReread(b, v, depth)
	}
	if a, ok := v.(Appender); ok {
		return a.AppendJSONValue(b, e, depth)
	}
	return appendMarshal(b, v)
}

// appendObject writes m with sorted keys, redacted when e.Redact.
func (e Value) appendObject(b []byte, m map[string]any, depth int) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	if e.KeysUTF16 {
		slices.SortFunc(keys, CompareUTF16)
	} else {
		sort.Strings(keys)
	}
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		if e.Redact && SensitiveKey(k) {
			b = AppendString(b, Redacted)
		} else {
			b = e.AppendAt(b, m[k], depth+1)
		}
	}
	return append(b, '}')
}

// appendNumberText writes a json.Number by the e.Numbers rule.
func (e Value) appendNumberText(b []byte, s string) []byte {
	if e.Numbers == NumberJS {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return append(b, "null"...)
		}
		return AppendNumber(b, f, 64)
	}
	if IsNumber(s) {
		return append(b, s...)
	}
	return AppendString(b, s)
}

// appendReread writes a Go value as NumberJS does: encoded by
// encoding/json, read back as a JSON value, written by e's rules.
func (e Value) appendReread(b []byte, v any, depth int) []byte {
	if rv := reflect.ValueOf(v); (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Map ||
		rv.Kind() == reflect.Slice || rv.Kind() == reflect.Interface) && rv.IsNil() {
		return append(b, "null"...)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return e.AppendAt(b, readJSON(raw), depth)
}

// readJSON reads the first JSON value of raw with numbers as json.Number,
// or nil when there is none.
func readJSON(raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil
	}
	return out
}

// appendMarshal writes v as encoding/json does without HTML escaping, or
// null when it cannot.
func appendMarshal(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...)
	}
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}

// appendCompact writes raw JSON text compacted, or null when it is not
// JSON.
func appendCompact(b []byte, raw []byte) []byte {
	if len(raw) == 0 || !json.Valid(raw) {
		return append(b, "null"...)
	}
	if bytes.IndexAny(raw, " \t\r\n") < 0 {
		return append(b, raw...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(b, "null"...)
	}
	return append(b, buf.Bytes()...)
}

// signed returns the value of a signed integer type.
func signed(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// unsigned returns the value of an unsigned integer type.
func unsigned(v any) (uint64, bool) {
	switch x := v.(type) {
	case uint:
		return uint64(x), true
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	}
	return 0, false
}
