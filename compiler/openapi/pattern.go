package openapi

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/compiler/diag"
)

// A schema "pattern" is an ECMA-262 regular expression, and real
// descriptions also carry Java's (AWS's generated descriptions above all).
// The gateway validates arguments with Go's RE2 engine, which cannot run
// some of that syntax, and an input schema whose pattern does not compile
// cannot be served at all. runnablePattern turns a pattern into one RE2
// runs:
//
//   - exact rewrites (the result means the same): \uXXXX and \u{X…}
//     become \x{…}; \cX and \0 become \x{…}; Java's POSIX classes
//     (\p{Alpha}, \p{Print}, \P{XDigit}, …) become [[:alpha:]] and friends;
//     \p{IsLetter} and \p{IsAlphabetic} become \p{L}; a '[' inside a class
//     is escaped; \Z (end of input) becomes \z.
//   - loosenings (the result accepts more strings than the original, never
//     fewer): lookahead and lookbehind assertions are removed; a repeat
//     count above RE2's limit of 1000 is capped ({1,1600} becomes {1,});
//     possessive quantifiers become greedy ones and atomic groups plain
//     groups.
//   - anything else RE2 refuses (backreferences, Java's class intersection
//     &&) makes the pattern unusable: it is dropped.
//
// A pattern RE2 already compiles is kept exactly as written.

// patternFix is what runnablePattern did.
type patternFix int

const (
	patternKept      patternFix = iota // compiled as written
	patternRewritten                   // rewritten to the same meaning
	patternLoosened                    // rewritten to accept more strings
	patternDropped                     // no usable rewrite
)

// maxRepeat is RE2's largest repeat count.
const maxRepeat = 1000

// javaPOSIX maps Java's POSIX character class names (US-ASCII) to RE2's.
var javaPOSIX = map[string]string{
	"Lower": "lower", "Upper": "upper", "ASCII": "ascii", "Alpha": "alpha", "Digit": "digit",
	"Alnum": "alnum", "Punct": "punct", "Graph": "graph", "Print": "print", "Blank": "blank",
	"Cntrl": "cntrl", "XDigit": "xdigit", "Space": "space",
}

// runnablePattern returns a pattern RE2 compiles for p, and what was done.
func runnablePattern(p string) (string, patternFix) {
	if _, err := regexp.Compile(p); err == nil {
		return p, patternKept
	}
	out, loosened, ok := translatePattern(p)
	if !ok {
		return "", patternDropped
	}
	if _, err := regexp.Compile(out); err != nil {
		return "", patternDropped
	}
	if loosened {
		return out, patternLoosened
	}
	return out, patternRewritten
}

// translatePattern rewrites an ECMA-262 (or Java) pattern for RE2; ok is
// false when it holds syntax with no rewrite.
func translatePattern(p string) (out string, loosened, ok bool) {
	var b strings.Builder
	b.Grow(len(p) + 16)
	inClass := false
	classFirst := false // just after "[" or "[^"
	lastAtom := false   // the previous output can take a quantifier
	for i := 0; i < len(p); {
		c := p[i]
		if c == '\\' {
			if i+1 >= len(p) {
				return "", false, false
			}
			n, adv, _, good := translateEscape(p[i:], inClass)
			if !good {
				return "", false, false
			}
			b.WriteString(n)
			i += adv
			classFirst = false
			lastAtom = true
			continue
		}
		if inClass {
			switch {
			case c == ']' && classFirst:
				// JavaScript's [] and [^] (nothing, anything): no RE2 form kept simple.
				return "", false, false
			case c == ']':
				inClass = false
				lastAtom = true
				b.WriteByte(c)
				i++
			case c == '[' && strings.HasPrefix(p[i:], "[:"):
				end := strings.Index(p[i:], ":]")
				if end < 0 {
					return "", false, false
				}
				b.WriteString(p[i : i+end+2])
				i += end + 2
			case c == '[':
				b.WriteString(`\[`)
				i++
			case c == '&' && strings.HasPrefix(p[i:], "&&"):
				// Java's class intersection.
				return "", false, false
			default:
				_, size := utf8.DecodeRuneInString(p[i:])
				b.WriteString(p[i : i+size])
				i += size
			}
			classFirst = false
			continue
		}
		switch c {
		case '[':
			inClass, classFirst = true, true
			b.WriteByte('[')
			i++
			if i < len(p) && p[i] == '^' {
				b.WriteByte('^')
				i++
			}
			continue
		case '(':
			if end, look := lookaround(p, i); look {
				if end < 0 {
					return "", false, false
				}
				i = end
				loosened = true
				continue
			}
			if strings.HasPrefix(p[i:], "(?>") {
				// An atomic group: a plain group accepts at least as much.
				b.WriteString("(?:")
				i += 3
				loosened = true
				lastAtom = false
				continue
			}
			b.WriteByte('(')
			i++
			lastAtom = false
			continue
		case '{':
			if q, adv, capped, isQ := repeat(p[i:]); isQ {
				b.WriteString(q)
				i += adv
				loosened = loosened || capped
				if i < len(p) && p[i] == '+' {
					i++ // possessive
					loosened = true
				}
				lastAtom = false
				continue
			}
		case '*', '+', '?':
			b.WriteByte(c)
			i++
			if i < len(p) && p[i] == '+' && lastAtom {
				i++ // possessive: greedy accepts at least as much
				loosened = true
			}
			lastAtom = false
			continue
		}
		_, size := utf8.DecodeRuneInString(p[i:])
		b.WriteString(p[i : i+size])
		i += size
		lastAtom = c != '|' && c != '('
	}
	if inClass {
		return "", false, false
	}
	return b.String(), loosened, true
}

// translateEscape rewrites the escape at the start of s ("\…"), returning the
// RE2 text, the bytes consumed, whether it is a class, and ok=false for an
// escape with no rewrite (a backreference).
func translateEscape(s string, inClass bool) (out string, adv int, isClass, ok bool) {
	n := s[1]
	switch {
	case n == 'u':
		if len(s) > 2 && s[2] == '{' {
			end := strings.IndexByte(s[3:], '}')
			if end < 1 || !allHex(s[3:3+end]) {
				return "", 0, false, false
			}
			return `\x{` + s[3:3+end] + `}`, 4 + end, false, true
		}
		if len(s) >= 6 && allHex(s[2:6]) {
			return `\x{` + s[2:6] + `}`, 6, false, true
		}
		return "", 0, false, false
	case n == 'c':
		if len(s) >= 3 && (s[2]|0x20 >= 'a' && s[2]|0x20 <= 'z') {
			return `\x{` + hexByte(s[2]&0x1f) + `}`, 3, false, true
		}
		return "", 0, false, false
	case n == '0' && (len(s) < 3 || s[2] < '0' || s[2] > '9'):
		return `\x{0}`, 2, false, true
	case n >= '1' && n <= '9':
		return "", 0, false, false // a backreference
	case n == 'Z' && !inClass:
		return `\z`, 2, false, true
	case n == 'p' || n == 'P':
		if len(s) > 2 && s[2] == '{' {
			end := strings.IndexByte(s[3:], '}')
			if end < 1 {
				return "", 0, false, false
			}
			name := s[3 : 3+end]
			neg := n == 'P'
			if posix, ok := javaPOSIX[name]; ok {
				switch {
				case inClass && neg:
					return "[:^" + posix + ":]", 4 + end, true, true
				case inClass:
					return "[:" + posix + ":]", 4 + end, true, true
				case neg:
					return "[^[:" + posix + ":]]", 4 + end, true, true
				}
				return "[[:" + posix + ":]]", 4 + end, true, true
			}
			switch name {
			case "IsLetter", "IsAlphabetic", "javaLetter":
				name = "L"
			case "IsDigit":
				name = "Nd"
			case "all":
				if inClass {
					return `\x{0}-\x{10FFFF}`, 4 + end, true, true
				}
				return `[\x{0}-\x{10FFFF}]`, 4 + end, true, true
			}
			return `\` + string(n) + "{" + name + "}", 4 + end, true, true
		}
	}
	_, size := utf8.DecodeRuneInString(s[1:])
	return s[:1+size], 1 + size, strings.ContainsRune("dDwWsS", rune(n)), true
}

// lookaround reports whether a lookahead or lookbehind group starts at
// p[i], and the index just after its closing parenthesis (-1 when it is
// never closed).
func lookaround(p string, i int) (int, bool) {
	rest := p[i:]
	if !(strings.HasPrefix(rest, "(?=") || strings.HasPrefix(rest, "(?!") ||
		strings.HasPrefix(rest, "(?<=") || strings.HasPrefix(rest, "(?<!")) {
		return 0, false
	}
	depth := 0
	inClass := false
	for j := i; j < len(p); j++ {
		switch c := p[j]; {
		case c == '\\':
			j++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			if j+1 < len(p) && p[j+1] == ']' {
				j++
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return j + 1, true
			}
		}
	}
	return -1, true
}

// repeat parses a {m}, {m,} or {m,n} quantifier at the start of s, capping
// counts above RE2's limit (capped: the result accepts more repetitions).
func repeat(s string) (out string, adv int, capped, ok bool) {
	end := strings.IndexByte(s, '}')
	if end < 2 {
		return "", 0, false, false
	}
	body := s[1:end]
	lo, hi, comma := body, "", false
	if k := strings.IndexByte(body, ','); k >= 0 {
		lo, hi, comma = body[:k], body[k+1:], true
	}
	if !allDigits(lo) || lo == "" || (hi != "" && !allDigits(hi)) {
		return "", 0, false, false
	}
	big := func(d string) bool { return len(d) > 4 || (len(d) == 4 && d > "1000") }
	if !big(lo) && !big(hi) {
		return s[:end+1], end + 1, false, true
	}
	if big(lo) {
		lo = "1000"
	}
	switch {
	case !comma:
		return "{" + lo + ",}", end + 1, true, true
	case hi == "" || big(hi):
		return "{" + lo + ",}", end + 1, true, true
	}
	return "{" + lo + "," + hi + "}", end + 1, true, true
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !(s[i] >= '0' && s[i] <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func hexByte(b byte) string {
	const hexDigits = "0123456789abcdef"
	return string([]byte{hexDigits[b>>4], hexDigits[b&0xF]})
}

// patternStats counts the patterns runnablePattern had to loosen or drop.
type patternStats struct {
	loosened, dropped int
	first             diag.Pos
	firstText         string
	firstFix          patternFix
}

// pattern reads a "pattern" keyword, making it one RE2 runs.
func (l *loader) pattern(doc *document, m *member) string {
	p := l.str(doc, m)
	if p == "" {
		return ""
	}
	out, fix := runnablePattern(p)
	if fix == patternLoosened || fix == patternDropped {
		st := &l.patterns
		if st.loosened+st.dropped == 0 {
			st.first, st.firstText, st.firstFix = l.pos(doc, m.val), p, fix
		}
		if fix == patternLoosened {
			st.loosened++
		} else {
			st.dropped++
		}
	}
	return out
}

// reportPatterns warns once about the patterns that were loosened or dropped.
func (l *loader) reportPatterns() {
	st := &l.patterns
	n := st.loosened + st.dropped
	if n == 0 {
		return
	}
	what := "loosened"
	if st.firstFix == patternDropped {
		what = "dropped"
	}
	first := st.firstText
	if len(first) > 120 {
		first = first[:120] + "…"
	}
	l.warnf(st.first, CodeUnsupportedPattern,
		"%d schema pattern(s) use regular-expression syntax that RE2 (which validates arguments) cannot run: %d loosened (lookarounds removed, repeat counts capped at 1000, possessive quantifiers made greedy) and %d dropped (backreferences, class intersection); the first, %s, was %s",
		n, st.loosened, st.dropped, quote(first), what)
}
