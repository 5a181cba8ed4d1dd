package effect

import (
	"bytes"
	"encoding/json"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/canon"
	"sort"
	"strconv"
	"unicode/utf8"
)

// maxDepth bounds how deep appendValue descends into a value: anything
// deeper (or a cyclic value built by hand) is written as null, so the
// report always stays well inside encoding/json's nesting limit (10000),
// which the MCP SDK applies when it re-reads MarshalJSON output.
const maxDepth = 1000

const hexDigits = "0123456789abcdef"

// appendValue appends the JSON of a decoded JSON value. The common decoded
// types are written directly, as JavaScript's JSON.stringify writes them
// (the earlier implementation's wire form): float64 in shortest form (100,
// not 1e+02), json.Number verbatim, json.RawMessage compacted, objects with
// sorted keys. Any other type goes through encoding/json; a value that
// cannot be encoded (a channel, NaN) is written as null. It never panics.
func appendValue(b []byte, v any, depth int) []byte {
	if depth > maxDepth {
		return append(b, "null"...)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return canon.AppendString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case float64:
		return canon.AppendNumber(b, x, 64)
	case float32:
		return canon.AppendNumber(b, float64(x), 32)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int8:
		return strconv.AppendInt(b, int64(x), 10)
	case int16:
		return strconv.AppendInt(b, int64(x), 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case json.Number:
		if air.IsJSONNumber(string(x)) {
			return append(b, x...)
		}
		return canon.AppendString(b, string(x))
	case json.RawMessage:
		return appendRaw(b, x)
	case map[string]any:
		if x == nil {
			return append(b, "null"...)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = canon.AppendString(b, k)
			b = append(b, ':')
			b = appendValue(b, x[k], depth+1)
		}
		return append(b, '}')
	case []any:
		if x == nil {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e, depth+1)
		}
		return append(b, ']')
	case Args:
		return x.appendJSON(b, depth+1)
	}
	return appendFallback(b, v)
}

// appendFallback encodes v with encoding/json, without HTML escaping.
func appendFallback(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...)
	}
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}

// appendRaw appends raw JSON compacted, or null when it is not valid JSON.
func appendRaw(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 || !json.Valid(raw) {
		return append(b, "null"...)
	}
	if !hasJSONSpace(raw) {
		return append(b, raw...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(b, "null"...)
	}
	return append(b, buf.Bytes()...)
}

func hasJSONSpace(raw []byte) bool {
	for _, c := range raw {
		if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
			return true
		}
	}
	return false
}

// appendU16 writes \uXXXX for one UTF-16 code unit.
func appendU16(b []byte, u uint16) []byte {
	return append(b, '\\', 'u', hexDigits[u>>12&0xf], hexDigits[u>>8&0xf], hexDigits[u>>4&0xf], hexDigits[u&0xf])
}

// asciiJSON rewrites JSON text so that it is printable ASCII: every
// character from U+007F up is written as \uXXXX (lower-case hex), and a
// character above U+FFFF as its UTF-16 surrogate pair. Raw non-ASCII bytes
// only occur inside JSON strings, so the result decodes to the same values.
// Invalid UTF-8 becomes \ufffd.
func asciiJSON(js []byte) []byte {
	i := 0
	for i < len(js) && js[i] < 0x7f {
		i++
	}
	if i == len(js) {
		return js
	}
	out := make([]byte, i, len(js)+len(js)/2+16)
	copy(out, js[:i])
	for i < len(js) {
		c := js[i]
		if c < 0x7f {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(js[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			r = utf8.RuneError
		}
		if r > 0xffff {
			r -= 0x10000
			out = appendU16(out, uint16(0xd800+(r>>10)))
			out = appendU16(out, uint16(0xdc00+(r&0x3ff)))
			continue
		}
		out = appendU16(out, uint16(r))
	}
	return out
}
