package canon

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendString appends s quoted as JSON.stringify would: only '"', '\\' and
// control characters are escaped (\b \f \n \r \t, others as lowercase
// \u00xx); HTML characters and U+2028/U+2029 are written as they are.
// Invalid UTF-8 bytes become U+FFFD.
func AppendString(b []byte, s string) []byte { return appendQuoted(b, s, false) }

// AppendStringHTML appends s quoted byte for byte as encoding/json.Marshal writes
// a string: as AppendString, and also <, > and & as \u003c, \u003e and \u0026,
// U+2028 and U+2029 as \u2028 and \u2029, and each invalid UTF-8 byte as
// the escape \ufffd.
func AppendStringHTML(b []byte, s string) []byte { return appendQuoted(b, s, true) }

// plain[html][c] reports whether the ASCII byte c is written as it is.
var plain = func() (t [2][utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[0][c] = c != '"' && c != '\\'
		t[1][c] = t[0][c] && c != '<' && c != '>' && c != '&'
	}
	return t
}()

func appendQuoted(b []byte, s string, html bool) []byte {
	safe := &plain[0]
	if html {
		safe = &plain[1]
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
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
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			if html {
				b = append(b, `\ufffd`...)
			} else {
				b = utf8.AppendRune(b, utf8.RuneError)
			}
		case html && (r == '\u2028' || r == '\u2029'):
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
