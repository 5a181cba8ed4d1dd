package canon

import "unicode/utf8"

// ASCII returns JSON text js rewritten as printable ASCII: every character
// from U+007F (DEL) up is written as \uXXXX (lowercase hex), a character
// above U+FFFF as its UTF-16 surrogate pair, and each invalid UTF-8 byte
// as \ufffd. Raw bytes from 0x7F up occur only inside JSON strings, so the
// result decodes to the same values; it is also a JavaScript and Python
// source fragment. js is returned as it is when it is ASCII already.
// The X-Anvil-Effect header and the generated harness literals use it.
func ASCII(js []byte) []byte {
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
		if r > 0xffff {
			r -= 0x10000
			out = appendU16(out, 0xd800+uint16(r>>10))
			out = appendU16(out, 0xdc00+uint16(r&0x3ff))
			continue
		}
		out = appendU16(out, uint16(r))
	}
	return out
}

// appendU16 writes \uXXXX for one UTF-16 code unit.
func appendU16(b []byte, u uint16) []byte {
	return append(b, '\\', 'u', hexDigits[u>>12&0xf], hexDigits[u>>8&0xf], hexDigits[u>>4&0xf], hexDigits[u&0xf])
}
