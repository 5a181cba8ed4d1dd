package gateway

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The request bodies of /call and /mcp are small JSON objects read on every
// call: their members are listed by a scanner over the bytes (after one
// validity check) instead of a decoded map, with encoding/json as the
// fallback for anything the scanner leaves (escaped keys, deep nesting).

// member is one key of a JSON object with its raw value.
type member struct {
	key   string
	value []byte
}

// objectMembers lists the members of the JSON object body, in order; a repeated key appears each time (the last one is the
// one encoding/json keeps). ok is false when body is not a JSON object.
func objectMembers(body []byte) ([]member, bool) {
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
	out := make([]member, 0, len(raw))
	for k, v := range raw {
		out = append(out, member{k, v})
	}
	return out, true
}

// jsonString decodes a JSON string literal (the common case without escapes
// is a plain copy).
func jsonString(v []byte) (string, bool) {
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
// body is not valid JSON or a key has an escape sequence.
func scanMembers(body []byte) ([]member, bool) {
	if !json.Valid(body) {
		return nil, false
	}
	return validMembers(body)
}

// validMembers is scanMembers for a body already known to be a valid JSON
// object.
func validMembers(body []byte) ([]member, bool) {
	var out []member
	i := skipSpace(body, 1)
	for i < len(body) && body[i] != '}' {
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
		end := i + 1
		for body[end] != '"' {
			if body[end] == '\\' {
				return nil, false
			}
			end++
		}
		key := string(body[i+1 : end])
		i = skipSpace(body, end+1) + 1 // past the colon
		i = skipSpace(body, i)
		vend, ok := skipValue(body, i, 0) // compiled_decode.go
		if !ok {
			return nil, false
		}
		out = append(out, member{key, body[i:vend]})
		i = skipSpace(body, vend)
	}
	return out, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
