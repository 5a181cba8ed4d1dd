package handler

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// Opt is one argument of a generated input struct, ogen-style: Value when
// Set, and Null when the argument was JSON null (a nullable input, or an
// input of any type). An Opt[any] holding nil always has Null set, so
// Present is the one test of "given and not null" for every type.
type Opt[T any] struct {
	Value T
	Set   bool
	Null  bool
}

// Present reports whether the argument is given and not null.
func (o Opt[T]) Present() bool { return o.Set && !o.Null }

// Any is the argument as a decoded JSON value, and whether it is present.
func (o Opt[T]) Any() (any, bool) {
	if !o.Present() {
		return nil, false
	}
	return o.Value, true
}

// Of is the argument holding v.
func Of[T any](v T) Opt[T] { return Opt[T]{Value: v, Set: true} }

// Boxed is o with its value as any (an idempotency carrier handed to a body
// encoder that takes any value).
func Boxed[T any](o Opt[T]) Opt[any] {
	if !o.Present() {
		return Opt[any]{Set: o.Set, Null: o.Null}
	}
	return Opt[any]{Value: o.Value, Set: true}
}

// NumberText is a number argument as a URL, header or form writes it.
func NumberText(o Opt[json.Number]) Opt[string] { return text(o, upstream.NumberString) }

// BoolText is a boolean argument as a URL, header or form writes it.
func BoolText(o Opt[bool]) Opt[string] { return text(o, strconv.FormatBool) }

// ScalarText is an argument of any type as a query writes a scalar
// (upstream.ScalarString).
func ScalarText(o Opt[any]) Opt[string] { return text(o, upstream.ScalarString) }

// HeaderText is an argument of any type as a header or cookie writes it.
func HeaderText(o Opt[any]) Opt[string] { return text(o, upstream.HeaderValue) }

// text is o written by format, when present.
func text[T any](o Opt[T], format func(T) string) Opt[string] {
	if !o.Present() {
		return Opt[string]{Set: o.Set, Null: o.Null}
	}
	return Of(format(o.Value))
}

// Typed is a generated operation's input struct: its typed arguments, listed
// in canonical key order by Fields, the generated check of its input schema
// (Validate: nil or a *FieldError), and the Controls it embeds, which make
// it an Input.
type Typed interface {
	Input
	// Fields writes every typed argument to f, in canonical key order (by
	// UTF-16 code units, as the audit hash sorts keys).
	Fields(f *Fields)
	// Validate checks the arguments against the input schema (for an
	// operation with SchemaCheck, the parts the generator specialised).
	Validate() error
	controls() *Controls
}

// Controls is embedded in every generated input struct. It holds what every
// operation's input has besides its typed arguments: the control inputs
// the executor reads and sets (anvil_dry_run, the confirm input, the
// idempotency carrier) and the arguments no typed field holds. With them it
// makes the struct an Input: the control accessors, Args and InputSHA256
// are written once, here, instead of in every operation.
//
// A control input the schema declares as the generator expects it
// (anvil_dry_run and confirm as booleans, the carrier as a string) lives in
// its field below; the generator writes its own accessors for any other
// declaration (they take precedence over these).
type Controls struct {
	// DryRunInput is anvil_dry_run.
	DryRunInput Opt[bool]
	// ConfirmInput is the confirm input (air.Safety.ConfirmKey, or confirm).
	ConfirmInput Opt[bool]
	// KeyInput is the idempotency carrier (air.Safety.IdempotencyKey).
	KeyInput Opt[string]
	// Extra holds the arguments the input schema does not declare.
	Extra map[string]any
	// Wrong holds the declared arguments whose value their typed field
	// cannot hold (a string for a number, null for a non-nullable input):
	// the struct keeps every argument it was given, and Validate refuses it.
	Wrong map[string]any

	self Typed          // the struct this is embedded in (New)
	op   *air.Operation // the operation the runtime reads this input for
}

func (c *Controls) controls() *Controls { return c }

// New binds a new generated input struct to the Controls it embeds and
// returns it. Every typed input is made by New or NewReader.
func New[P Typed](in P) P {
	in.controls().self = in
	return in
}

// setOperation records the operation the runtime reads in for (the names
// of its control inputs).
func setOperation(in Input, op *air.Operation) {
	if t, ok := in.(Typed); ok {
		t.controls().op = op
	}
}

// validate is the generated check of a typed input.
func validate(in Input) error {
	if t, ok := in.(Typed); ok {
		return t.Validate()
	}
	return Invalid("", "type") // not a generated input: never from the runtime
}

// confirmKey is the confirm input's name ("confirm" when the operation
// names none, as for MapInput).
func (c *Controls) confirmKey() string {
	if c.op != nil && c.op.Input.Safety.ConfirmKey != "" {
		return c.op.Input.Safety.ConfirmKey
	}
	return "confirm"
}

// carrierKey is the idempotency carrier's name ("" when the operation has
// none, or the input is not the runtime's yet).
func (c *Controls) carrierKey() string {
	if c.op == nil {
		return ""
	}
	return c.op.Input.Safety.IdempotencyKey
}

// Loose is the argument key among the ones no typed field holds (Extra,
// then Wrong).
func (c *Controls) Loose(key string) (any, bool) {
	if v, ok := c.Extra[key]; ok {
		return v, true
	}
	v, ok := c.Wrong[key]
	return v, ok
}

// SetExtra keeps an undeclared argument.
func (c *Controls) SetExtra(key string, v any) {
	if c.Extra == nil {
		c.Extra = map[string]any{}
	}
	c.Extra[key] = v
}

// SetWrong keeps a declared argument its typed field cannot hold.
func (c *Controls) SetWrong(key string, v any) {
	if c.Wrong == nil {
		c.Wrong = map[string]any{}
	}
	c.Wrong[key] = v
}

// fits forgets a value of key that did not fit its field, now that the
// field holds one.
func (c *Controls) fits(key string) {
	if c.Wrong != nil {
		delete(c.Wrong, key)
	}
}

// LooseBool reads a boolean control input no typed field holds: its value
// when it is a boolean, and whether it is present.
func (c *Controls) LooseBool(key string) (v, present bool) {
	x, ok := c.Loose(key)
	b, _ := x.(bool)
	return b, ok
}

// LooseString reads an idempotency carrier no typed field holds: present
// is false when it is absent or null; isString tells a string value (s)
// from another one.
func (c *Controls) LooseString(key string) (s string, isString, present bool) {
	if v, ok := c.Loose(key); ok && v != nil {
		s, isString = v.(string)
		return s, isString, true
	}
	return "", false, false
}

// Set sets typed argument key (dst) to v.
func Set[T any](c *Controls, key string, dst *Opt[T], v T) {
	*dst = Of(v)
	c.fits(key)
}

// Misfit sets argument key to v, which its typed field dst cannot hold.
func Misfit[T any](c *Controls, key string, dst *Opt[T], v any) {
	*dst = Opt[T]{}
	c.SetWrong(key, v)
}

// CheckLoose is the refusal of the arguments no typed field holds: a value
// of the wrong type (type), or, for a closed schema, an undeclared argument
// (additionalProperties). The key it names is the first in byte order.
func (c *Controls) CheckLoose(closed bool) error {
	if len(c.Wrong) > 0 {
		return Invalid(firstKey(c.Wrong), "type")
	}
	if closed && len(c.Extra) > 0 {
		return Invalid("", "additionalProperties")
	}
	return nil
}

// Closed and Open say whether a schema takes undeclared arguments
// (CheckLoose).
const (
	Closed = true
	Open   = false
)

func firstKey(m map[string]any) string {
	first := ""
	for k := range m {
		if first == "" || k < first {
			first = k
		}
	}
	return first
}

// DryRun reports whether anvil_dry_run is true.
func (c *Controls) DryRun() bool {
	if c.DryRunInput.Set {
		return c.DryRunInput.Value
	}
	b, _ := c.LooseBool(air.DryRunKey)
	return b
}

// SetDryRun sets anvil_dry_run to true.
func (c *Controls) SetDryRun() {
	c.DryRunInput = Of(true)
	c.fits(air.DryRunKey)
}

// Confirm reads the confirm input: its value when it is a boolean, and
// whether it is present.
func (c *Controls) Confirm() (v, present bool) {
	if c.ConfirmInput.Set {
		return c.ConfirmInput.Value, true
	}
	return c.LooseBool(c.confirmKey())
}

// SetConfirm sets the confirm input.
func (c *Controls) SetConfirm(v bool) {
	c.ConfirmInput = Of(v)
	c.fits(c.confirmKey())
}

// IdempotencyKey reads the idempotency carrier input.
func (c *Controls) IdempotencyKey() (s string, isString, present bool) {
	if c.KeyInput.Set {
		return c.KeyInput.Value, true, true
	}
	if k := c.carrierKey(); k != "" {
		return c.LooseString(k)
	}
	return "", false, false
}

// SetIdempotencyKey sets the idempotency carrier input (nothing for an
// operation the runtime knows to have none).
func (c *Controls) SetIdempotencyKey(key string) {
	k := c.carrierKey()
	if c.op != nil && k == "" {
		return
	}
	c.KeyInput = Of(key)
	c.fits(k)
}

// Args returns the arguments as decoded JSON: the typed ones, and the ones
// no typed field holds.
func (c *Controls) Args() map[string]any {
	m := make(map[string]any, 8+len(c.Extra)+len(c.Wrong))
	f := fieldsPool.Get().(*Fields)
	f.m = m
	c.self.Fields(f)
	f.m = nil
	fieldsPool.Put(f)
	for k, v := range c.Extra {
		m[k] = v
	}
	for k, v := range c.Wrong {
		m[k] = v
	}
	return m
}

// InputSHA256 is the audit hash of the arguments (audit.InputSHA256 of
// Args), written straight from the typed fields.
func (c *Controls) InputSHA256() string {
	if len(c.Extra) > 0 || len(c.Wrong) > 0 {
		return audit.InputSHA256(c.Args())
	}
	f := fieldsPool.Get().(*Fields)
	f.b = append(f.b[:0], '{')
	f.n = 0
	c.self.Fields(f)
	f.b = append(f.b, '}')
	sum := sha256.Sum256(f.b)
	var out [7 + 64]byte
	copy(out[:], "sha256:")
	hex.Encode(out[7:], sum[:])
	if cap(f.b) <= 64<<10 {
		fieldsPool.Put(f)
	}
	return string(out[:])
}

// fieldsPool keeps the Fields a typed input's Args and InputSHA256 write
// through: Fields is called through an interface, so a Fields made per
// call would be allocated per call.
var fieldsPool = sync.Pool{New: func() any { return &Fields{b: make([]byte, 0, 256)} }}

// Fields is what a generated input's Fields method writes its typed
// arguments to, in canonical key order: the map of Args, or the canonical
// JSON the audit hash reads (keys in that order, values as audit's
// CanonicalJSON writes them). A sensitive argument (air.Input.Sensitive) is
// written with Redacted.
type Fields struct {
	m map[string]any // Args
	b []byte         // InputSHA256
	n int            // members written to b
}

// key starts a member of the canonical JSON.
func (f *Fields) key(name string) {
	if f.n > 0 {
		f.b = append(f.b, ',')
	}
	f.n++
	f.b = canon.AppendString(f.b, name)
	f.b = append(f.b, ':')
}

// null handles an argument given as null; it reports whether it was one.
func (f *Fields) null(key string, isNull bool) bool {
	if !isNull {
		return false
	}
	if f.m != nil {
		f.m[key] = nil
	} else {
		f.key(key)
		f.b = append(f.b, "null"...)
	}
	return true
}

// String writes a string argument.
func (f *Fields) String(key string, v Opt[string]) { member(f, key, v, canon.AppendString) }

// Bool writes a boolean argument.
func (f *Fields) Bool(key string, v Opt[bool]) { member(f, key, v, strconv.AppendBool) }

// Number writes a number argument, as JavaScript prints it.
func (f *Fields) Number(key string, v Opt[json.Number]) { member(f, key, v, appendNumber) }

// Any writes an argument of any type, with the sensitive keys of objects
// inside it redacted.
func (f *Fields) Any(key string, v Opt[any]) { member(f, key, v, audit.AppendRedacted) }

// member writes argument key when it is set: its value into the map of
// Args, or its key and what appendValue writes of its value into the
// canonical JSON.
func member[T any](f *Fields, key string, v Opt[T], appendValue func([]byte, T) []byte) {
	if !v.Set || f.null(key, v.Null) {
		return
	}
	if f.m != nil {
		f.m[key] = v.Value
		return
	}
	f.key(key)
	f.b = appendValue(f.b, v.Value)
}

// appendNumber writes a JSON number as JavaScript prints it (audit's
// CanonicalJSON), without parsing the common short integers.
func appendNumber(b []byte, n json.Number) []byte {
	s := string(n)
	if len(s) <= 15 && upstream.IsIntegerText(s) && s != "-0" && (len(s) == 1 || (s[0] != '0' && !strings.HasPrefix(s, "-0"))) {
		return append(b, s...)
	}
	return append(b, audit.CanonicalJSON(n)...)
}

// Redacted writes a sensitive argument: its value in Args, "***" in the
// audit hash (null included, as audit.InputSHA256 redacts any value).
func Redacted[T any](f *Fields, key string, v Opt[T]) {
	if !v.Set {
		return
	}
	if f.m != nil {
		if v.Null {
			f.m[key] = nil
		} else {
			f.m[key] = v.Value
		}
		return
	}
	f.key(key)
	f.b = canon.AppendString(f.b, canon.Redacted)
}
