package handler

import (
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

// Validator is an operation's input-schema validator, compiled on its first
// use rather than when the fleet loads: a gateway serving 100,000 tools
// starts without compiling 100,000 schemas, and compiles only the ones its
// callers use (docs/scale.md). The compile runs once, whichever goroutine
// asks first; every caller gets its result.
type Validator struct {
	name string
	src  *air.Schema

	once     sync.Once
	compiled *jsonschema.Schema
	err      error

	mu   sync.Mutex
	done bool // set once the compile has run (Pending)
}

// NewValidator is the validator of schema s, named name in the validator's
// messages (CompileSchema); nothing is compiled yet.
func NewValidator(name string, s *air.Schema) *Validator {
	return &Validator{name: name, src: s}
}

// CompiledValidator wraps a schema compiled already.
func CompiledValidator(s *jsonschema.Schema) *Validator {
	v := &Validator{compiled: s, done: true}
	v.once.Do(func() {})
	return v
}

// Pending reports whether the schema has not been compiled yet (no call
// has needed it).
func (v *Validator) Pending() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return !v.done
}

// Compiled compiles the schema on the first call and returns it, or the
// error that kept it from compiling (every time, without trying again).
func (v *Validator) Compiled() (*jsonschema.Schema, error) {
	v.once.Do(func() {
		v.compiled, v.err = CompileSchema(v.name, v.src)
		if v.err == nil && v.compiled == nil {
			v.err = errNoSchema
		}
		v.mu.Lock()
		v.done = true
		v.mu.Unlock()
	})
	return v.compiled, v.err
}

type noSchemaError struct{}

func (noSchemaError) Error() string { return "the compiler returned no schema" }

var errNoSchema error = noSchemaError{}

// Preparer is a Handler that does work on its first use which can fail
// (compiling its validator).
type Preparer interface {
	// Prepare does that work once and returns nil, or the refusal of every
	// call while it fails.
	Prepare() *envelope.Error
}

// Prepare runs h's first-use work when it has any (Preparer): the executor
// calls it before Check, so that a schema which does not compile refuses
// the call with internal_error instead of reading as the caller's mistake.
func Prepare(h Handler) *envelope.Error {
	if p, ok := h.(Preparer); ok {
		return p.Prepare()
	}
	return nil
}

// prepare is Prepare of an operation's validator.
func prepare(v *Validator, op *air.Operation) *envelope.Error {
	if _, err := v.Compiled(); err != nil {
		return &envelope.Error{Code: envelope.InternalError, Operation: op.ID,
			Message: "The input schema of " + op.ID + " does not compile (" + schemaMessage(err) + "); nothing was called."}
	}
	return nil
}

// validate checks args against v's schema; it returns the validator's
// one-line message, or "" when they match. A schema that does not compile
// (which Prepare reports first) matches nothing.
func (v *Validator) validate(args map[string]any) string {
	s, err := v.Compiled()
	if err != nil {
		return "the input schema does not compile: " + schemaMessage(err)
	}
	if err := s.Validate(args); err != nil {
		return schemaMessage(err)
	}
	return ""
}
