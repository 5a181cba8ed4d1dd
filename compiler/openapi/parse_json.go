package openapi

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/canon"
)

// maxDepth bounds the nesting of a parsed document.
const maxDepth = 1000

// syntaxError is a parse failure at a position.
type syntaxError struct {
	line, col int
	msg       string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.line, e.col, e.msg) }

// jsonParser is a small, allocation-conscious JSON parser that records the
// line and column (1-based, in bytes) of every value and key.
type jsonParser struct {
	s         string
	i         int
	line      int
	lineStart int
	depth     int
	alloc     nodeAlloc
	stack     []member
	err       *syntaxError
}

// parseJSON parses s as one JSON value.
func parseJSON(s string) (*node, *syntaxError) {
	p := &jsonParser{s: s, line: 1}
	p.ws()
	n := p.value()
	if p.err != nil {
		return nil, p.err
	}
	p.ws()
	if p.i < len(p.s) {
		p.fail("unexpected %s after the top-level value", p.describe())
		return nil, p.err
	}
	return n, nil
}

func (p *jsonParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = &syntaxError{line: p.line, col: p.i - p.lineStart + 1, msg: fmt.Sprintf(format, args...)}
	}
}

// describe names the byte at the cursor for a message.
func (p *jsonParser) describe() string {
	if p.i >= len(p.s) {
		return "end of input"
	}
	r, _ := utf8.DecodeRuneInString(p.s[p.i:])
	return "character " + strconv.QuoteRune(r)
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\r':
			p.i++
		case '\n':
			p.i++
			p.line++
			p.lineStart = p.i
		default:
			return
		}
	}
}

func (p *jsonParser) value() *node {
	if p.i >= len(p.s) {
		p.fail("unexpected end of input (the file is truncated?)")
		return nil
	}
	n := p.alloc.new()
	n.line = int32(p.line)
	n.col = int32(p.i - p.lineStart + 1)
	switch c := p.s[p.i]; {
	case c == '{':
		n.kind = kObject
		p.object(n)
	case c == '[':
		n.kind = kArray
		p.array(n)
	case c == '"':
		n.kind = kString
		n.str = p.string()
	case c == '-' || (c >= '0' && c <= '9'):
		n.kind = kNumber
		n.str = p.number()
	case c == 't':
		n.kind = kBool
		n.str = "true"
		p.literal("true")
	case c == 'f':
		n.kind = kBool
		n.str = "false"
		p.literal("false")
	case c == 'n':
		n.kind = kNull
		p.literal("null")
	default:
		p.fail("unexpected %s, expected a value", p.describe())
	}
	return n
}

func (p *jsonParser) literal(word string) {
	if len(p.s)-p.i >= len(word) && p.s[p.i:p.i+len(word)] == word {
		p.i += len(word)
		return
	}
	p.fail("unexpected %s, expected a value", p.describe())
}

func (p *jsonParser) enter() bool {
	p.depth++
	if p.depth > maxDepth {
		p.fail("nesting deeper than %d levels", maxDepth)
		return false
	}
	return true
}

func (p *jsonParser) object(n *node) {
	if !p.enter() {
		return
	}
	defer func() { p.depth-- }()
	p.i++ // {
	base := len(p.stack)
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return
	}
	for p.err == nil {
		if p.i >= len(p.s) {
			p.fail("unexpected end of input inside an object (the file is truncated?)")
			break
		}
		if p.s[p.i] != '"' {
			p.fail("unexpected %s, expected a string key", p.describe())
			break
		}
		m := member{line: int32(p.line), col: int32(p.i - p.lineStart + 1), written: true}
		m.key = p.string()
		p.ws()
		if p.err != nil {
			break
		}
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			p.fail("unexpected %s, expected ':' after an object key", p.describe())
			break
		}
		p.i++
		p.ws()
		m.val = p.value()
		if p.err != nil {
			break
		}
		p.stack = append(p.stack, m)
		p.ws()
		if p.i >= len(p.s) {
			p.fail("unexpected end of input inside an object (the file is truncated?)")
			break
		}
		if p.s[p.i] == ',' {
			p.i++
			p.ws()
			continue
		}
		if p.s[p.i] == '}' {
			p.i++
			break
		}
		p.fail("unexpected %s, expected ',' or '}'", p.describe())
	}
	n.kids = append([]member(nil), p.stack[base:]...)
	p.stack = p.stack[:base]
}

func (p *jsonParser) array(n *node) {
	if !p.enter() {
		return
	}
	defer func() { p.depth-- }()
	p.i++ // [
	base := len(p.stack)
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return
	}
	for p.err == nil {
		v := p.value()
		if p.err != nil {
			break
		}
		p.stack = append(p.stack, member{val: v})
		p.ws()
		if p.i >= len(p.s) {
			p.fail("unexpected end of input inside a list (the file is truncated?)")
			break
		}
		if p.s[p.i] == ',' {
			p.i++
			p.ws()
			continue
		}
		if p.s[p.i] == ']' {
			p.i++
			break
		}
		p.fail("unexpected %s, expected ',' or ']'", p.describe())
	}
	n.kids = append([]member(nil), p.stack[base:]...)
	p.stack = p.stack[:base]
}

func (p *jsonParser) number() string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			p.i++
			continue
		}
		break
	}
	lit := p.s[start:p.i]
	if !canon.IsNumber(lit) {
		p.i = start
		p.fail("invalid number %s", quote(lit))
	}
	return lit
}

// string parses a JSON string at the cursor (which is on the opening quote).
func (p *jsonParser) string() string {
	v, end, err := canon.Unquote(p.s, p.i)
	if err == nil {
		p.i = end
		return v
	}
	var e *canon.UnquoteError
	errors.As(err, &e)
	p.i = e.At
	switch e.Fault {
	case canon.FaultControl:
		p.fail("invalid control character %s in a string", strconv.QuoteRune(rune(p.s[p.i])))
	case canon.FaultEscape:
		p.fail("invalid escape %s in a string", quote(p.s[p.i:p.i+2]))
	case canon.FaultUnicode:
		p.fail("invalid \\u escape in a string")
	default:
		p.fail("unexpected end of input inside a string (the file is truncated?)")
	}
	return ""
}
