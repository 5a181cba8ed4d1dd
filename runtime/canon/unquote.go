package canon

import (
	"unicode/utf16"
	"unicode/utf8"
)

// UnquoteFault names what is wrong with a JSON string literal.
type UnquoteFault uint8

// The faults Unquote reports.
const (
	// FaultControl: a raw control character (below U+0020) in the string.
	FaultControl UnquoteFault = iota + 1
	// FaultEscape: a backslash followed by a letter JSON does not define.
	FaultEscape
	// FaultUnicode: \u not followed by four hexadecimal digits.
	FaultUnicode
	// FaultEnd: the input ends inside the string.
	FaultEnd
)

// UnquoteError is why Unquote could not read a string literal, and where:
// At is the index of the control character, of the backslash of a bad
// escape, of the first of the four digits a \u escape lacks, or where the
// input ends (the index of a last lone backslash).
type UnquoteError struct {
	Fault UnquoteFault
	At    int
}

func (e *UnquoteError) Error() string {
	switch e.Fault {
	case FaultControl:
		return "invalid control character in a string"
	case FaultEscape:
		return "invalid escape in a string"
	case FaultUnicode:
		return "invalid \\u escape in a string"
	}
	return "unexpected end of input inside a string"
}

// Unquote reads the JSON string literal at s[i:], s[i] being its opening
// quote, and returns its value and the index just past its closing quote.
// A string without escapes is returned as a slice of s (no copy). Escapes
// are read as JSON defines them; a \u escape that is not one half of a
// well-formed surrogate pair reads as U+FFFD, as encoding/json reads it.
// Other bytes are kept as they are, invalid UTF-8 included: a caller that
// must hold valid text checks or replaces it. On a fault the error is an
// *UnquoteError.
func Unquote(s string, i int) (string, int, error) {
	i++
	start := i
	for i < len(s) {
		switch c := s[i]; {
		case c == '"':
			return s[start:i], i + 1, nil
		case c == '\\':
			return unescape(s, start, i)
		case c < 0x20:
			return "", i, &UnquoteError{FaultControl, i}
		}
		i++
	}
	return "", i, &UnquoteError{FaultEnd, i}
}

// unescape is Unquote from the first backslash, at i.
func unescape(s string, start, i int) (string, int, error) {
	b := make([]byte, 0, i-start+16)
	b = append(b, s[start:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return string(b), i + 1, nil
		case c < 0x20:
			return "", i, &UnquoteError{FaultControl, i}
		case c != '\\':
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return "", i, &UnquoteError{FaultEnd, i}
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok {
				return "", i + 2, &UnquoteError{FaultUnicode, i + 2}
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2, ok = hex4(s, i+2)
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			b = utf8.AppendRune(b, r)
			continue
		default:
			return "", i, &UnquoteError{FaultEscape, i}
		}
		i += 2
	}
	return "", i, &UnquoteError{FaultEnd, i}
}

// hex4 reads the four hexadecimal digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}
