// Package jsstring writes JSON strings exactly as JavaScript's
// JSON.stringify does. Bytes that clients compare or hash (audit input
// hashes, vault record names, effect reports, grant rules) must match what
// the earlier JavaScript implementation wrote, and Go's encoding/json
// differs (it escapes <, >, & and U+2028/U+2029).
package jsstring

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append appends s quoted as JSON.stringify would: only '"', '\\' and
// control characters are escaped (\b \f \n \r \t, others as lowercase
// \u00xx); HTML characters and U+2028/U+2029 are written as they are.
// Invalid UTF-8 bytes become U+FFFD.
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = utf8.AppendRune(b, utf8.RuneError)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
