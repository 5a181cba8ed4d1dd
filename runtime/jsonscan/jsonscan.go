// Package jsonscan reads JSON by scanning its bytes, for the small objects
// read on every call (the bodies of /call and /mcp, tool arguments): the
// members of an object in order, string literals, and the extent of a value,
// without decoding into maps.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/canon"
)

// Members are listed by a scanner over the bytes (after one validity check)
// instead of a decoded map, in order, with encoding/json reading escaped
// keys and as the fallback for anything the scanner leaves (deep nesting).

// Member is one key of a JSON object with its raw value.
type Member struct {
	Key   string
	Value []byte
}

// ObjectMembers lists the members of the JSON object body, in order; a repeated key appears each time (the last one is the
// one encoding/json keeps). ok is false when body is not a JSON object.
func ObjectMembers(body []byte) ([]Member, bool) {
	if len(body) == 0 || body[0] != '{' {
		return nil, false
	}
	if m, ok := scanMembers(body); ok {
		return m, true
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &raw) != nil || raw == nil {
		return nil, false
	}
	out := make([]Member, 0, len(raw))
	for k, v := range raw {
		out = append(out, Member{k, v})
	}
	return out, true
}

// String decodes a JSON string literal (the common case without escapes
// is a plain copy).
func String(v []byte) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		if in := v[1 : len(v)-1]; plainString(in) {
			return string(in), true
		}
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// plainString reports whether s can stand as a JSON string's content as it
// is: valid UTF-8 with no quote, backslash or control character.
func plainString(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(s)
}

// scanMembers lists the members of a valid JSON object without decoding
// its values. It reports false, leaving the object to encoding/json, when
// body is not valid JSON or nests too deep.
func scanMembers(body []byte) ([]Member, bool) {
	if !json.Valid(body) {
		return nil, false
	}
	return ValidMembers(body)
}

// ValidMembers is scanMembers for a body already known to be a valid JSON
// object.
func ValidMembers(body []byte) ([]Member, bool) {
	var out []Member
	i := canon.SkipSpace(body, 1)
	for i < len(body) && body[i] != '}' {
		if body[i] == ',' {
			i = canon.SkipSpace(body, i+1)
		}
		end, escaped := i+1, false
		for body[end] != '"' {
			if body[end] == '\\' {
				escaped = true
				end++
			}
			end++
		}
		key := string(body[i+1 : end])
		if escaped {
			// encoding/json reads the escapes; the scan keeps the order.
			if key, escaped = String(body[i : end+1]); !escaped {
				return nil, false
			}
		}
		i = canon.SkipSpace(body, end+1) + 1 // past the colon
		i = canon.SkipSpace(body, i)
		vend, ok := skipValue(body, i, 0)
		if !ok {
			return nil, false
		}
		out = append(out, Member{key, body[i:vend]})
		i = canon.SkipSpace(body, vend)
	}
	return out, true
}

// SkipValue returns the end of the JSON value at b[i:] (structure only;
// encoding/json checks the rest), false when it does not end or nests more
// than 1000 deep.
func SkipValue(b []byte, i int) (int, bool) { return skipValue(b, i, 0) }

// skipValue returns the end of the JSON value at b[i:] (structure only;
// encoding/json checks the rest).
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > 1000 {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		i++
		for i < len(b) {
			switch b[i] {
			case '\\':
				i += 2
				continue
			case '"':
				return i + 1, true
			}
			i++
		}
		return i, false
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i++
		for {
			for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r' || b[i] == ',' || b[i] == ':') {
				i++
			}
			if i >= len(b) {
				return i, false
			}
			if b[i] == closer {
				return i + 1, true
			}
			var ok bool
			if i, ok = skipValue(b, i, depth+1); !ok {
				return i, false
			}
		}
	case c == 't' || c == 'f' || c == 'n':
		for i < len(b) && b[i] >= 'a' && b[i] <= 'z' {
			i++
		}
		return i, true
	default:
		return canon.NumberEnd(b, i)
	}
}

// Kind classifies a JSON value by its first byte after leading white space:
// '{', '[', '"', 't', 'f', 'n', '0' for a number, or 0 when raw is empty
// or starts with no JSON value. It looks at one byte only: it does not
// validate the value.
func Kind(raw []byte) byte {
	for len(raw) > 0 && (raw[0] == ' ' || raw[0] == '\t' || raw[0] == '\r' || raw[0] == '\n') {
		raw = raw[1:]
	}
	if len(raw) == 0 {
		return 0
	}
	switch c := raw[0]; c {
	case '{', '[', '"', 't', 'f', 'n':
		return c
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return '0'
	}
	return 0
}
