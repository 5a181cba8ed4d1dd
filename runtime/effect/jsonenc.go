package effect

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/canon"
)

// reportValues writes the decoded values a report echoes (arguments, a
// staged handle) by canon.NumberExact: as they came, so that a replayed
// report re-encodes to the same bytes. Anything deeper than maxDepth (or a
// cyclic value built by hand) is written as null, so the report always
// stays well inside encoding/json's nesting limit (10000), which the MCP
// SDK applies when it re-reads MarshalJSON output.
var reportValues = canon.Value{Numbers: canon.NumberExact, MaxDepth: maxDepth}

const maxDepth = canon.DefaultMaxDepth

const hexDigits = "0123456789abcdef"

// appendValue appends the JSON of a decoded JSON value found depth
// containers deep (reportValues).
func appendValue(b []byte, v any, depth int) []byte { return reportValues.AppendAt(b, v, depth) }

// appendRaw appends raw JSON compacted, or null when it is not valid JSON.
func appendRaw(b []byte, raw json.RawMessage) []byte { return reportValues.Append(b, raw) }

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
