package canon

import "unicode/utf8"

// CompareUTF16 orders strings by their UTF-16 code units, as JavaScript's
// default Array.prototype.sort does: a character above U+FFFF (a surrogate
// pair, first unit 0xD800-0xDBFF) sorts before U+E000-U+FFFF, unlike byte
// or rune order. Invalid UTF-8 bytes compare as U+FFFD.
func CompareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua != ub {
				return int(ua) - int(ub)
			}
			return int(ra) - int(rb)
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case a != "":
		return 1
	case b != "":
		return -1
	}
	return 0
}

// firstUnit is the first UTF-16 code unit of r.
func firstUnit(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}

// UTF16Len is the length of s in UTF-16 code units (JavaScript's
// String.prototype.length); an invalid UTF-8 byte counts as one unit
// (U+FFFD).
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
