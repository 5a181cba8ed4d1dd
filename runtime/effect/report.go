package effect

import (
	"github.com/anvil-dev/anvil/runtime/canon"
	"strconv"
)

// Undo kinds.
const (
	KindInverse    = "inverse"
	KindCompensate = "compensate"
)

// Arg is one resolved argument of a follow-up call.
type Arg struct {
	Name string
	// Value is the decoded JSON value: shared with the call's request or
	// response (not copied), or a json.RawMessage for a {const: v} literal.
	Value any
}

// Args is an ordered argument list. It keeps the manifest's mapping order,
// which is part of the report's contract (clients compare it byte for byte).
type Args []Arg

// Get returns the value of the argument called name.
func (a Args) Get(name string) (any, bool) {
	for _, x := range a {
		if x.Name == name {
			return x.Value, true
		}
	}
	return nil, false
}

// Map returns the arguments as a map, for building the follow-up call.
func (a Args) Map() map[string]any {
	m := make(map[string]any, len(a))
	for _, x := range a {
		m[x.Name] = x.Value
	}
	return m
}

// MarshalJSON writes the arguments as one object in order.
func (a Args) MarshalJSON() ([]byte, error) { return a.AppendJSONValue(nil, reportValues, 0), nil }

// AppendJSONValue writes the arguments as one object in order, their
// values by enc's rules one level below depth (canon.Appender: an Args
// held in a value keeps its order).
func (a Args) AppendJSONValue(b []byte, enc canon.Value, depth int) []byte {
	b = append(b, '{')
	for i, x := range a {
		if i > 0 {
			b = append(b, ',')
		}
		b = canon.AppendString(b, x.Name)
		b = append(b, ':')
		b = enc.AppendAt(b, x.Value, depth+1)
	}
	return append(b, '}')
}

// FollowUp is a resolved follow-up call: the AIR id of its operation, the
// tool to call on this gateway (the prefixed wire name) and its arguments.
type FollowUp struct {
	Operation string
	Tool      string
	Arguments Args
}

func (f *FollowUp) appendFields(b []byte) []byte {
	b = append(b, `"operation":`...)
	b = canon.AppendString(b, f.Operation)
	b = append(b, `,"tool":`...)
	b = canon.AppendString(b, f.Tool)
	b = append(b, `,"arguments":`...)
	return f.Arguments.AppendJSONValue(b, reportValues, 0)
}

// appendJSON writes {operation, tool, arguments}, or null for nil.
func (f *FollowUp) appendJSON(b []byte) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	b = f.appendFields(b)
	return append(b, '}')
}

// Undo is the report's undo: {kind, operation, tool, arguments}.
type Undo struct {
	Kind string // KindInverse or KindCompensate
	FollowUp
}

// Compensation is the report's compensate key, set on a reversible effect
// that also declares a compensation (for after the inverse's deadline):
// {operation, tool, arguments, deadline_ms}.
type Compensation struct {
	FollowUp
	DeadlineMs *int64 // nil: null
}

// Lookup is the report's lookup for reconciliation: {operation, tool,
// arguments, by}.
type Lookup struct {
	FollowUp
	By string // idempotency_key or id
}

// Staged is the report's staged key on a staged call: {draft_operation,
// handle, promote, discard, unavailable?}.
type Staged struct {
	// DraftOperation is the AIR id of the operation performed instead.
	DraftOperation string
	// Handle is the draft's handle read from its response; nil: null.
	Handle any
	// Promote and Discard are the calls that make the draft real or drop
	// it; nil: null (not declared, or unavailable for this call).
	Promote *FollowUp
	Discard *FollowUp
	// Unavailable says why a declared promote or discard is null; empty:
	// the key is left out.
	Unavailable string
}

// AppendJSON appends the staged object's JSON.
func (s *Staged) AppendJSON(b []byte) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"draft_operation":`...)
	b = canon.AppendString(b, s.DraftOperation)
	b = append(b, `,"handle":`...)
	b = appendValue(b, s.Handle, 0)
	b = append(b, `,"promote":`...)
	b = s.Promote.appendJSON(b)
	b = append(b, `,"discard":`...)
	b = s.Discard.appendJSON(b)
	if s.Unavailable != "" {
		b = append(b, `,"unavailable":`...)
		b = canon.AppendString(b, s.Unavailable)
	}
	return append(b, '}')
}

// MarshalJSON writes the staged object. It has a value receiver so that
// encoding/json uses it for a Staged value as well as a pointer.
func (s Staged) MarshalJSON() ([]byte, error) { return s.AppendJSON(make([]byte, 0, 256)), nil }

// Report is the effect report of one call: what it did to the world and how
// to undo it. It travels as the MCP result's _meta.effect and as the REST
// X-Anvil-Effect header (see HeaderValue).
//
// Its JSON keys are, in this order: class, operation, idempotency_key (string
// or null), undo (object or null), deadline_ms (number or null), lookup
// (object or null); then only when set: compensate, undo_unavailable, staged.
type Report struct {
	// Class is the operation's effect class (air.EffectClassOf).
	Class string
	// Operation is the AIR id of the called operation.
	Operation string
	// IdempotencyKey is the key that went upstream; empty: null.
	IdempotencyKey string
	// Undo is the call that undoes the effect; nil: null.
	Undo *Undo
	// DeadlineMs is the epoch millisecond after which Undo may stop
	// working; nil: null.
	DeadlineMs *int64
	// Lookup finds the effect for reconciliation; nil: null.
	Lookup *Lookup
	// Compensate is a reversible effect's declared compensation; nil: the
	// key is left out.
	Compensate *Compensation
	// UndoUnavailable says why Undo is nil although the class has an undo;
	// empty: the key is left out.
	UndoUnavailable string
	// Staged is set on a staged call; nil: the key is left out.
	Staged *Staged
}

// AppendJSON appends the report's compact JSON to b. A nil report is null.
func (r *Report) AppendJSON(b []byte) []byte {
	if r == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"class":`...)
	b = canon.AppendString(b, r.Class)
	b = append(b, `,"operation":`...)
	b = canon.AppendString(b, r.Operation)
	b = append(b, `,"idempotency_key":`...)
	if r.IdempotencyKey == "" {
		b = append(b, "null"...)
	} else {
		b = canon.AppendString(b, r.IdempotencyKey)
	}
	b = append(b, `,"undo":`...)
	if r.Undo == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"kind":`...)
		b = canon.AppendString(b, r.Undo.Kind)
		b = append(b, ',')
		b = r.Undo.appendFields(b)
		b = append(b, '}')
	}
	b = append(b, `,"deadline_ms":`...)
	b = appendMs(b, r.DeadlineMs)
	b = append(b, `,"lookup":`...)
	if r.Lookup == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		b = r.Lookup.appendFields(b)
		b = append(b, `,"by":`...)
		b = canon.AppendString(b, r.Lookup.By)
		b = append(b, '}')
	}
	if c := r.Compensate; c != nil {
		b = append(b, `,"compensate":{`...)
		b = c.appendFields(b)
		b = append(b, `,"deadline_ms":`...)
		b = appendMs(b, c.DeadlineMs)
		b = append(b, '}')
	}
	if r.UndoUnavailable != "" {
		b = append(b, `,"undo_unavailable":`...)
		b = canon.AppendString(b, r.UndoUnavailable)
	}
	if r.Staged != nil {
		b = append(b, `,"staged":`...)
		b = r.Staged.AppendJSON(b)
	}
	return append(b, '}')
}

// MarshalJSON writes the report's compact JSON. Strings are escaped as
// JSON.stringify escapes them (non-ASCII stays raw); note that
// encoding/json.Marshal of a value holding a Report additionally escapes
// <, > and & unless the encoder's SetEscapeHTML(false) is used. It has a
// value receiver so that encoding/json uses it for a Report value as well
// as a pointer (a nil *Report is written as null by encoding/json).
func (r Report) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, 512)), nil
}

// MaxHeaderBytes bounds the X-Anvil-Effect header value. Common clients
// refuse larger response headers (Node's http parser stops at 16 KiB for
// all of them together), and a report echoes the caller's arguments, so an
// unbounded header could break the client after the write went upstream.
const MaxHeaderBytes = 8 << 10

// TruncatedReason is the undo_unavailable of a header report cut down to
// MaxHeaderBytes.
const TruncatedReason = "effect_report_truncated: the report is larger than 8 KiB; the full report is in _meta.effect (MCP) or, with Prefer: anvil-effect=body, in the REST body"

// HeaderValue is the report as the X-Anvil-Effect header value: its JSON
// with every character from U+007F up written as \uXXXX (a character above
// U+FFFF as its UTF-16 surrogate pair), so the header is printable ASCII and
// decodes to the same values. A nil report is "null". It is never longer
// than MaxHeaderBytes (see HeaderValueBounded).
func HeaderValue(r *Report) string {
	h, _ := HeaderValueBounded(r)
	return h
}

// HeaderValueBounded returns HeaderValue's value and whether the report had
// to be cut down to fit MaxHeaderBytes. A cut-down report keeps class,
// operation, idempotency_key and deadline_ms (the key becomes null, and then
// the operation is shortened, only when they alone do not fit), has undo and
// lookup null, undo_unavailable set to TruncatedReason, and the marker
// "truncated": true last. The full report must then reach the caller another
// way (MCP: _meta.effect; REST: the gateway's response).
func HeaderValueBounded(r *Report) (string, bool) {
	h := canon.ASCII(r.AppendJSON(make([]byte, 0, 512)))
	if len(h) <= MaxHeaderBytes {
		return string(h), false
	}
	short := Report{Class: r.Class, Operation: r.Operation, IdempotencyKey: r.IdempotencyKey,
		DeadlineMs: r.DeadlineMs, UndoUnavailable: TruncatedReason}
	for attempt := 0; ; attempt++ {
		b := short.AppendJSON(make([]byte, 0, 512))
		b = append(b[:len(b)-1], `,"truncated":true}`...)
		if h = canon.ASCII(b); len(h) <= MaxHeaderBytes {
			return string(h), true
		}
		switch attempt {
		case 0:
			short.IdempotencyKey = ""
		case 1:
			short.Operation = cutRunes(short.Operation, 256)
		case 2:
			short.Class = cutRunes(short.Class, 64)
		default: // unreachable: 64 + 256 runes escape to well under the bound
			return `{"truncated":true}`, true
		}
	}
}

// cutRunes returns at most n runes of s.
func cutRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

func appendMs(b []byte, ms *int64) []byte {
	if ms == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *ms, 10)
}
