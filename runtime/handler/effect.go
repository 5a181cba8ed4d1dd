package handler

import (
	"encoding/json"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/effect"
)

// The helpers below are what generated effect and draft functions call.
// They word and compute what effect.Build and effect.ResolveDraft do for
// the same mapping; the differential and property tests compare the two.

// NewReport is the report a generated effect function starts from (the
// first line of effect.Build).
func NewReport(c *EffectCall, class air.EffectClass, opID string) *effect.Report {
	return &effect.Report{Class: class, Operation: opID, IdempotencyKey: c.IdempotencyKey}
}

// InputOf is the call's typed input, or an empty one when the call has
// none (its arguments were not a JSON object): every path then names
// nothing.
func InputOf[T any](c *EffectCall) *T {
	if in, ok := any(c.Input).(*T); ok {
		return in
	}
	return new(T)
}

// Mapping resolves a follow-up's arguments in the mapping's order, one call
// per argument: Const for a literal, Arg(...).Request for a path into the
// request, Arg(...).Value for one into the response or the idempotency key,
// Fail for a path that can name nothing. The first argument whose path
// names nothing (and is not optional, a trailing "?") stops it, with the
// reason.
type Mapping struct {
	c    *Controls
	args effect.Args
	why  string
	name string // the argument Arg started
	path string
}

// NewMapping starts a mapping of n arguments over the call's input c.
func NewMapping(c *Controls, n int) Mapping {
	return Mapping{c: c, args: make(effect.Args, 0, n)}
}

// Const adds a literal argument (its JSON).
func (m *Mapping) Const(name, raw string) {
	if m.why == "" {
		m.args = append(m.args, effect.Arg{Name: name, Value: json.RawMessage(raw)})
	}
}

// Arg starts argument name, read from path.
func (m *Mapping) Arg(name, path string) *Mapping {
	m.name, m.path = name, path
	return m
}

// Value completes the argument with the value its path found (ok), or
// with nothing.
func (m *Mapping) Value(v any, ok bool) {
	switch {
	case m.why != "":
	case ok:
		m.args = append(m.args, effect.Arg{Name: m.name, Value: v})
	case !strings.HasSuffix(m.path, "?"):
		m.why = NamesNothing(m.path)
	}
}

// Request completes an argument read from the request: the typed field's
// value, or else what the path finds among the arguments no typed field
// holds (Controls.Extra and Wrong), as effect.Build would in the decoded
// arguments.
func (m *Mapping) Request(v any, ok bool) {
	if !ok && m.why == "" && m.c != nil {
		v, ok = m.loose()
	}
	m.Value(v, ok)
}

func (m *Mapping) loose() (any, bool) {
	p, err := air.ParsePath(m.path)
	if err != nil || p.Root != air.RootRequest {
		return nil, false
	}
	for _, args := range [...]map[string]any{m.c.Extra, m.c.Wrong} {
		if v, ok := p.Lookup(args); ok {
			return v, true
		}
	}
	return nil, false
}

// Fail stops the mapping with why (a path that can name nothing).
func (m *Mapping) Fail(why string) {
	if m.why == "" {
		m.why = why
	}
}

// FollowUp is the resolved call of operation op (tool is its wire name),
// or nil and why its arguments did not resolve.
func (m *Mapping) FollowUp(op, tool string) (*effect.FollowUp, string) {
	if m.why != "" {
		return nil, m.why
	}
	return &effect.FollowUp{Operation: op, Tool: tool, Arguments: m.args}, ""
}

// Lookup sets r's lookup when its arguments resolve.
func (m *Mapping) Lookup(r *effect.Report, op, tool string, by air.LookupBy) {
	if f, _ := m.FollowUp(op, tool); f != nil {
		r.Lookup = &effect.Lookup{FollowUp: *f, By: by}
	}
}

// Undo sets r's undo of kind (effect.KindInverse, effect.KindCompensate)
// with its deadline, or says why there is none.
func (m *Mapping) Undo(r *effect.Report, kind, op, tool string, deadline *int64) {
	f, why := m.FollowUp(op, tool)
	if f == nil {
		r.UndoUnavailable = UndoUnavailable(why)
		return
	}
	r.Undo = &effect.Undo{Kind: kind, FollowUp: *f}
	r.DeadlineMs = deadline
}

// Compensate sets r's compensation (of a reversible operation) when its
// arguments resolve.
func (m *Mapping) Compensate(r *effect.Report, op, tool string, deadline *int64) {
	if f, _ := m.FollowUp(op, tool); f != nil {
		r.Compensate = &effect.Compensation{FollowUp: *f, DeadlineMs: deadline}
	}
}

// Found is the value of the mapping's first argument, or nil (a staged
// call's handle).
func (m *Mapping) Found() any {
	if len(m.args) == 0 {
		return nil
	}
	return m.args[0].Value
}

// NamesNothing is the reason a mapped path gives when it names nothing in
// the call ("response.id names nothing in this call").
func NamesNothing(path string) string {
	return strings.TrimSuffix(path, "?") + " names nothing in this call"
}

// NotAPath is the reason a mapped path gives when it does not parse.
func NotAPath(path string) string {
	return "the path " + strings.TrimSuffix(path, "?") + " is not a valid argument path"
}

// NotServed is the reason a follow-up gives when its operation is not
// served by this gateway.
func NotServed(operation string) string { return operation + " is not served by this gateway" }

// UndoUnavailable prefixes a reason for Report.UndoUnavailable.
func UndoUnavailable(reason string) string { return effect.UndoUnavailablePrefix + reason }

// StagedUnavailable joins the promote and discard reasons of a staged
// report ("" when both are available).
func StagedUnavailable(promote, discard string) string {
	var s string
	if promote != "" {
		s = effect.PromoteUnavailablePrefix + promote
	}
	if discard != "" {
		if s != "" {
			s += "; "
		}
		s += effect.DiscardUnavailablePrefix + discard
	}
	return s
}

// DeadlineAt reads an at deadline's value (a response value): epoch
// milliseconds as a number, or an RFC 3339 time as a string; nil otherwise
// and when the value was not found (effect.EpochMs).
func DeadlineAt(v any, found bool) *int64 {
	if !found {
		return nil
	}
	return effect.EpochMs(v)
}

// DecodeJSON decodes a literal of generated code (numbers as json.Number).
func DecodeJSON(raw string) any {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// DraftMapping maps a staged call's typed input to its draft's typed input
// (effect.ResolveDraft over typed inputs), one call of Need per argument
// read from the request: the first whose path names nothing (and is not
// optional) stops it.
type DraftMapping struct {
	missing *DraftMissing
}

// Need reports whether draft argument name, read from path, has a value
// (present); when it has none, a path that is not optional stops the
// mapping.
func (m *DraftMapping) Need(name, path string, present bool) bool {
	switch {
	case m.missing != nil:
		return false
	case present:
		return true
	case !strings.HasSuffix(path, "?"):
		m.missing = &DraftMissing{Argument: name, Reason: NamesNothing(path)}
	}
	return false
}

// Fail stops the mapping at argument name for reason.
func (m *DraftMapping) Fail(name, reason string) {
	if m.missing == nil {
		m.missing = &DraftMissing{Argument: name, Reason: reason}
	}
}

// Done is the draft input, or what stopped the mapping.
func (m *DraftMapping) Done(d Input) (Input, *DraftMissing) {
	if m.missing != nil {
		return nil, m.missing
	}
	return d, nil
}

// Assign sets a draft's typed argument from a value of any type: v when it
// is a T, else v is kept in Wrong (the draft's Validate then refuses it).
func Assign[T any](d *Controls, name string, dst *Opt[T], v any) {
	if x, ok := v.(T); ok {
		*dst = Of(x)
		d.fits(name)
		return
	}
	*dst = Opt[T]{}
	d.SetWrong(name, v)
}

// AssignAny sets a draft's argument of any type.
func AssignAny(dst *Opt[any], v any) { *dst = Opt[any]{Value: v, Set: true, Null: v == nil} }
