package handler

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/jsonscan"
)

// ErrNotObject is a generated decoder's error for arguments that are not
// one JSON object as DecodeArgs reads them.
var ErrNotObject = errors.New("handler: the arguments are not one JSON object")

// maxValueDepth is how deep a member's value may nest: encoding/json, which
// DecodeArgs uses, refuses more than 10,000 levels, the arguments object
// being the first.
const maxValueDepth = 9999

// ArgReader reads a tool call's arguments object into a generated input
// struct, one member at a time, without reflection. It takes exactly what
// DecodeArgs takes and reads it the same way (the last of repeated keys
// wins, invalid UTF-8 and lone surrogates read as U+FFFD, numbers keep their
// text), so that the typed input always holds the same arguments as the
// generic decoding: a value its field cannot hold goes to Controls.Wrong, a
// key the schema does not declare to Controls.Extra. Only input that is not
// one JSON object stops it (ErrNotObject).
type ArgReader struct {
	b    []byte
	i    int
	n    int // members read
	key  []byte
	kbuf []byte // the current key, when it had escapes
	sbuf []byte // the current string value, when it had escapes
	c    *Controls
	err  error
	done bool // the object was read to its end
}

// NewReader starts reading raw into in, a new generated input struct (it
// binds in as New does). Like DecodeArgs, it trims surrounding white space
// and takes empty input or null as the empty object.
func NewReader(raw []byte, in Typed) ArgReader {
	c := in.controls()
	c.self = in
	raw = bytes.TrimSpace(raw)
	r := ArgReader{b: raw, c: c}
	switch {
	case len(raw) == 0 || string(raw) == "null":
		r.i, r.done = len(raw), true
	case raw[0] != '{':
		r.err = ErrNotObject
	default:
		r.i = 1
	}
	return r
}

// fail stops the reading: the input is not one JSON object.
func (r *ArgReader) fail() bool {
	if r.err == nil {
		r.err = ErrNotObject
	}
	return false
}

// Next moves to the next member and reports whether there is one.
func (r *ArgReader) Next() bool {
	if r.err != nil || r.done {
		return false
	}
	r.i = canon.SkipSpace(r.b, r.i)
	if r.i >= len(r.b) {
		return r.fail()
	}
	switch c := r.b[r.i]; {
	case c == '}':
		r.i++
		r.done = true
		return false
	case r.n == 0:
	case c == ',':
		r.i = canon.SkipSpace(r.b, r.i+1)
	default:
		return r.fail()
	}
	k, ok := r.str(&r.kbuf)
	if !ok {
		return r.fail()
	}
	r.key = k
	r.i = canon.SkipSpace(r.b, r.i)
	if r.i >= len(r.b) || r.b[r.i] != ':' {
		return r.fail()
	}
	r.i = canon.SkipSpace(r.b, r.i+1)
	r.n++
	return true
}

// Key is the current member's name, unescaped.
func (r *ArgReader) Key() []byte { return r.key }

// Finish ends the reading: the input and the first refusal of its
// Validate, or nil and ErrNotObject. After the object it allows what
// DecodeArgs does (encoding/json's Decoder stops at a closing bracket).
func (r *ArgReader) Finish() (Input, error) {
	if r.err == nil && !r.done {
		r.fail()
	}
	if r.err == nil {
		if j := canon.SkipSpace(r.b, r.i); j < len(r.b) && r.b[j] != '}' && r.b[j] != ']' {
			r.fail()
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	in := r.c.self
	return in, in.Validate()
}

// fit records that the current member's value fits its field (a repeated
// key's earlier value may not have).
func (r *ArgReader) fit() {
	if r.c.Wrong != nil {
		delete(r.c.Wrong, string(r.key))
	}
}

// misfit keeps the current member's value, of another type than its
// field's, in Wrong, after clear empties the field (unless the value is
// not JSON: the reading stops).
func (r *ArgReader) misfit(clear func()) {
	if r.err != nil {
		return
	}
	if v, ok := r.value(); ok {
		clear()
		r.c.SetWrong(string(r.key), v)
	}
}

// String reads a string argument.
func (r *ArgReader) String(dst *Opt[string]) {
	if r.err == nil {
		if v, ok := r.stringValue(); ok {
			*dst = Of(v)
			r.fit()
		} else {
			r.misfit(func() { *dst = Opt[string]{} })
		}
	}
}

// StringOrNull reads a nullable string argument.
func (r *ArgReader) StringOrNull(dst *Opt[string]) {
	if r.null() {
		*dst = Opt[string]{Set: true, Null: true}
		r.fit()
		return
	}
	r.String(dst)
}

// Bool reads a boolean argument.
func (r *ArgReader) Bool(dst *Opt[bool]) {
	if r.err == nil {
		if v, ok := r.boolValue(); ok {
			*dst = Of(v)
			r.fit()
		} else {
			r.misfit(func() { *dst = Opt[bool]{} })
		}
	}
}

// BoolOrNull reads a nullable boolean argument.
func (r *ArgReader) BoolOrNull(dst *Opt[bool]) {
	if r.null() {
		*dst = Opt[bool]{Set: true, Null: true}
		r.fit()
		return
	}
	r.Bool(dst)
}

// Number reads a number argument, keeping its text (as json.Number).
func (r *ArgReader) Number(dst *Opt[json.Number]) {
	if r.err == nil {
		if v, ok := r.numberValue(); ok {
			*dst = Of(v)
			r.fit()
		} else {
			r.misfit(func() { *dst = Opt[json.Number]{} })
		}
	}
}

// NumberOrNull reads a nullable number argument.
func (r *ArgReader) NumberOrNull(dst *Opt[json.Number]) {
	if r.null() {
		*dst = Opt[json.Number]{Set: true, Null: true}
		r.fit()
		return
	}
	r.Number(dst)
}

// stringValue reads a string value, if there is one.
func (r *ArgReader) stringValue() (string, bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return "", false
	}
	s, ok := r.str(&r.sbuf)
	if !ok {
		return "", r.fail()
	}
	return string(s), true
}

// boolValue reads a boolean value, if there is one.
func (r *ArgReader) boolValue() (bool, bool) {
	if r.literal("true") {
		return true, true
	}
	return false, r.literal("false")
}

// numberValue reads a number value, if there is one.
func (r *ArgReader) numberValue() (json.Number, bool) {
	end, ok := canon.NumberEnd(r.b, r.i)
	if !ok {
		return "", false
	}
	n := json.Number(r.b[r.i:end])
	r.i = end
	return n, true
}

// Any reads an argument of any type, as encoding/json decodes it (numbers
// as json.Number); null sets Null.
func (r *ArgReader) Any(dst *Opt[any]) {
	if r.err != nil {
		return
	}
	if v, ok := r.value(); ok {
		*dst = Opt[any]{Value: v, Set: true, Null: v == nil}
	}
}

// Extra keeps an argument the schema does not declare.
func (r *ArgReader) Extra() {
	if r.err != nil {
		return
	}
	if v, ok := r.value(); ok {
		r.c.SetExtra(string(r.key), v)
	}
}

// null consumes a null value and reports whether there was one.
func (r *ArgReader) null() bool { return r.err == nil && r.literal("null") }

// literal consumes the literal lit and reports whether it was there (what
// follows it is the next member's business).
func (r *ArgReader) literal(lit string) bool {
	if len(r.b)-r.i >= len(lit) && string(r.b[r.i:r.i+len(lit)]) == lit {
		r.i += len(lit)
		return true
	}
	return false
}

// value reads any value as encoding/json decodes it.
func (r *ArgReader) value() (any, bool) {
	if r.i >= len(r.b) {
		return nil, r.fail()
	}
	switch c := r.b[r.i]; {
	case c == '"':
		s, ok := r.stringValue()
		return s, ok
	case c == '-' || c >= '0' && c <= '9':
		n, ok := r.numberValue()
		if !ok {
			return nil, r.fail()
		}
		return n, true
	case r.literal("true"):
		return true, true
	case r.literal("false"):
		return false, true
	case r.literal("null"):
		return nil, true
	case c == '[' || c == '{':
		if !shallow(r.b, r.i, maxValueDepth) {
			return nil, r.fail()
		}
		dec := json.NewDecoder(bytes.NewReader(r.b[r.i:]))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return nil, r.fail()
		}
		r.i += int(dec.InputOffset())
		return v, true
	}
	return nil, r.fail()
}

// shallow reports whether the array or object at b[i:] nests at most max
// levels (itself the first); it only counts brackets outside strings, and
// leaves the syntax to the decoder.
func shallow(b []byte, i, max int) bool {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '[', '{':
			if depth++; depth > max {
				return false
			}
		case ']', '}':
			if depth--; depth == 0 {
				return true
			}
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		}
	}
	return true
}

// str reads the JSON string at b[i] (its opening quote) and returns its
// text: a slice of the input when it has no escapes and is valid UTF-8,
// else its text as encoding/json unescapes it (jsonscan.String), in *buf.
func (r *ArgReader) str(buf *[]byte) ([]byte, bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, false
	}
	start := r.i + 1
	plain := true
	for j := start; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			s := r.b[start:j]
			if !plain || !utf8.Valid(s) {
				t, ok := jsonscan.String(r.b[r.i : j+1])
				if !ok {
					return nil, false
				}
				s = append((*buf)[:0], t...)
				*buf = s
			}
			r.i = j + 1
			return s, true
		case c == '\\':
			plain = false
			j++
		case c < 0x20:
			return nil, false
		}
	}
	return nil, false
}
