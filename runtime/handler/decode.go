package handler

import (
	"bytes"
	"encoding/json"
	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/jsonscan"
	"github.com/anvil-dev/anvil/runtime/upstream"
	"math/big"
	"strconv"
	"unicode/utf8"
)

// ArgReader reads a tool call's arguments object for generated decoders,
// one member at a time, without reflection or maps. It takes only the plain
// cases and gives up (Done reports false) on anything else: escaped member
// names, \u escapes of surrogates, invalid UTF-8, malformed JSON, trailing
// data. The runtime then decodes the arguments the generic way (DecodeArgs)
// and converts them with the generated FromArgs, so the outcome never
// depends on which path took the input.
type ArgReader struct {
	b      []byte
	i      int
	n      int
	key    []byte
	bad    bool
	empty  bool
	closed bool
	buf    []byte
}

// Reset starts reading raw. Like DecodeArgs, it trims surrounding white
// space and takes empty input or null as the empty object.
func (r *ArgReader) Reset(raw []byte) {
	raw = bytes.TrimSpace(raw)
	*r = ArgReader{b: raw, buf: r.buf[:0]}
	if len(raw) == 0 || string(raw) == "null" {
		r.empty = true
		return
	}
	if raw[0] != '{' {
		r.bad = true
		return
	}
	r.i = 1
}

func (r *ArgReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// Next moves to the next member and reports whether there is one.
func (r *ArgReader) Next() bool {
	if r.bad || r.empty || r.closed {
		return false
	}
	r.ws()
	if r.i >= len(r.b) {
		r.bad = true
		return false
	}
	if r.n > 0 {
		switch r.b[r.i] {
		case '}':
			r.i++
			r.closed = true
			return false
		case ',':
			r.i++
			r.ws()
		default:
			r.bad = true
			return false
		}
	} else if r.b[r.i] == '}' {
		r.i++
		r.closed = true
		return false
	}
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		r.bad = true
		return false
	}
	start := r.i + 1
	j := start
	for j < len(r.b) && r.b[j] != '"' {
		if c := r.b[j]; c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			r.bad = true
			return false
		}
		j++
	}
	if j >= len(r.b) {
		r.bad = true
		return false
	}
	r.key = r.b[start:j]
	r.i = j + 1
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != ':' {
		r.bad = true
		return false
	}
	r.i++
	r.ws()
	r.n++
	return true
}

// Key is the current member's name.
func (r *ArgReader) Key() []byte { return r.key }

// Fail gives up on the input.
func (r *ArgReader) Fail() bool {
	r.bad = true
	return false
}

// Done reports whether the whole input was one object read to its end.
func (r *ArgReader) Done() bool {
	if r.bad {
		return false
	}
	if r.empty {
		return true
	}
	if !r.closed {
		return false
	}
	r.ws()
	return r.i == len(r.b)
}

// Null consumes a null value and reports whether there was one.
func (r *ArgReader) Null() bool {
	if !r.bad && len(r.b)-r.i >= 4 && string(r.b[r.i:r.i+4]) == "null" {
		r.i += 4
		return true
	}
	return false
}

// Bool reads a boolean value.
func (r *ArgReader) Bool(dst *bool) bool {
	switch {
	case r.bad:
		return false
	case len(r.b)-r.i >= 4 && string(r.b[r.i:r.i+4]) == "true":
		r.i += 4
		*dst = true
		return true
	case len(r.b)-r.i >= 5 && string(r.b[r.i:r.i+5]) == "false":
		r.i += 5
		*dst = false
		return true
	}
	return r.Fail()
}

// Number reads a number value, keeping its text (as json.Number).
func (r *ArgReader) Number(dst *json.Number) bool {
	if r.bad {
		return false
	}
	end, ok := canon.NumberEnd(r.b, r.i)
	if !ok {
		return r.Fail()
	}
	*dst = json.Number(r.b[r.i:end])
	r.i = end
	return true
}

// String reads a string value.
func (r *ArgReader) String(dst *string) bool {
	if r.bad || r.i >= len(r.b) || r.b[r.i] != '"' {
		return r.Fail()
	}
	start := r.i + 1
	j := start
	ascii := true
	for j < len(r.b) {
		c := r.b[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			return r.escaped(dst, start)
		}
		if c < 0x20 {
			return r.Fail()
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
		j++
	}
	if j >= len(r.b) {
		return r.Fail()
	}
	s := r.b[start:j]
	if !ascii && !utf8.Valid(s) {
		return r.Fail()
	}
	*dst = string(s)
	r.i = j + 1
	return true
}

// escaped reads a string with escapes starting at b[start:].
func (r *ArgReader) escaped(dst *string, start int) bool {
	out := r.buf[:0]
	j := start
	for j < len(r.b) {
		c := r.b[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return r.Fail()
			}
			*dst = string(out)
			r.buf = out
			r.i = j + 1
			return true
		case c < 0x20:
			return r.Fail()
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(r.b) {
			return r.Fail()
		}
		switch e := r.b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if j+6 > len(r.b) {
				return r.Fail()
			}
			v, err := strconv.ParseUint(string(r.b[j+2:j+6]), 16, 16)
			if err != nil || (v >= 0xD800 && v <= 0xDFFF) {
				return r.Fail()
			}
			out = utf8.AppendRune(out, rune(v))
			j += 6
			continue
		default:
			return r.Fail()
		}
		j += 2
	}
	return r.Fail()
}

// Any reads any value as encoding/json decodes it (numbers as json.Number).
func (r *ArgReader) Any(dst *any) bool {
	if r.bad {
		return false
	}
	end, ok := jsonscan.SkipValue(r.b, r.i)
	if !ok {
		return r.Fail()
	}
	dec := json.NewDecoder(bytes.NewReader(r.b[r.i:end]))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return r.Fail()
	}
	*dst = v
	r.i = end
	return true
}

// IsInteger reports whether a JSON number is an integer by value (1.0 and
// 1e2 are) within [upstream.MinInteger, upstream.MaxInteger]
// (upstream.ExactInteger): JSON Schema's "integer" also admits 1e400, which
// no upstream can take exactly, so both gateways refuse it (the AIR-driven
// one through integerProblem after its schema check).
func IsInteger(n json.Number) bool {
	_, ok := upstream.ExactInteger(string(n))
	return ok
}

// CompareNumber compares a JSON number with a bound written as JSON (-1, 0
// or +1), exactly; ok is false when either does not parse.
func CompareNumber(n json.Number, bound string) (c int, ok bool) {
	a, b := string(n), bound
	if len(a) < 19 && len(b) < 19 && upstream.IsIntegerText(a) && upstream.IsIntegerText(b) {
		x, err1 := strconv.ParseInt(a, 10, 64)
		y, err2 := strconv.ParseInt(b, 10, 64)
		if err1 == nil && err2 == nil {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	}
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	return x.Cmp(y), true
}

// NumberIn reports whether a JSON number equals one of the values (JSON
// numbers), as enum and const compare numbers.
func NumberIn(n json.Number, values ...string) bool {
	for _, v := range values {
		if c, ok := CompareNumber(n, v); ok && c == 0 {
			return true
		}
	}
	return false
}

// RuneCount is the length JSON Schema's minLength and maxLength measure.
func RuneCount(s string) int { return utf8.RuneCountInString(s) }
