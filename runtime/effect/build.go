package effect

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Tools maps AIR operation ids to the tools of this gateway.
type Tools interface {
	// Tool returns the wire name a caller uses for the operation on this
	// gateway (the prefixed name, such as github__github_delete_comment)
	// and whether the operation is served (approved and mounted). A
	// follow-up whose operation is not served is reported unavailable.
	Tool(operationID string) (wireTool string, served bool)
}

// ToolsFunc adapts a function to Tools.
type ToolsFunc func(operationID string) (string, bool)

// Tool calls f.
func (f ToolsFunc) Tool(operationID string) (string, bool) { return f(operationID) }

// ToolMap is a Tools holding the wire name of every served operation by
// AIR id; an id it does not hold is not served.
type ToolMap map[string]string

// Tool returns the wire name of a served operation.
func (m ToolMap) Tool(operationID string) (string, bool) {
	t, ok := m[operationID]
	return t, ok && t != ""
}

// Call is what Build needs to know about one finished call.
type Call struct {
	// Request is the call's arguments by input key (the roots request.*).
	Request map[string]any
	// Response is the decoded upstream answer (the root response.*), nil
	// when it was empty. For a staged call it is the draft's response.
	Response any
	// IdempotencyKey is the key that went upstream (the root
	// idempotency_key and the report's idempotency_key); "" when none did.
	IdempotencyKey string
	// Failed marks a call that returned an error: its report carries the
	// class, key and lookup, and no undo.
	Failed bool
	// Staged marks a call that performed the operation's draft form
	// instead (see ResolveDraft): its report has the staged operation's
	// class, no undo, and the staged object built from Request (the staged
	// request) and Response (the draft's response).
	Staged bool
	// Now is the time of the call, for within_ms deadlines; the zero time
	// means time.Now().
	Now time.Time
}

// Reason prefixes used in Report.UndoUnavailable and Staged.Unavailable.
const (
	UndoUnavailablePrefix    = "undo unavailable: "
	PromoteUnavailablePrefix = "promote unavailable: "
	DiscardUnavailablePrefix = "discard unavailable: "
)

// Build reports what a finished call did and how to undo it. It never
// panics, whatever the request and response hold, and returns nil only for
// a nil operation.
//
// The class is air.EffectClassOf(op). For a read the report is exactly
// {class, operation, idempotency_key, undo: null, deadline_ms: null,
// lookup: null}. For any other class the lookup is resolved; then, unless
// the call failed or was staged, the undo: a reversible operation's inverse
// (plus its compensation, if declared, under compensate) or a compensable
// operation's compensation. When the undo's operation is not served or one
// of its paths names nothing, undo is null and undo_unavailable says why:
//
//	undo unavailable: github.comments.delete is not served by this gateway
//	undo unavailable: response.id names nothing in this call
//	undo unavailable: the operation declares no inverse
//
// An unresolvable lookup or compensate is reported null or left out.
func Build(op *air.Operation, in Call, tools Tools) *Report {
	if op == nil {
		return nil
	}
	r := &Report{Class: air.EffectClassOf(op), Operation: op.ID, IdempotencyKey: in.IdempotencyKey}
	if r.Class == air.ClassRead {
		return r
	}
	rt := roots{request: in.Request, response: in.Response, key: in.IdempotencyKey}
	e := &op.Effect
	if l := e.Lookup; l != nil {
		if f, _ := rt.followUp(l.Operation, l.Arguments, tools); f != nil {
			r.Lookup = &Lookup{FollowUp: *f, By: l.By}
		}
	}
	if in.Failed {
		return r
	}
	if in.Staged {
		r.Staged = BuildStaged(op, in.Request, in.Response, tools)
		return r
	}
	now := in.Now
	switch r.Class {
	case air.ClassReversible:
		undo(r, KindInverse, e.Inverse, "the operation declares no inverse", &rt, now, tools)
		if c := e.Compensate; c != nil {
			if f, _ := rt.followUp(c.Operation, c.Arguments, tools); f != nil {
				r.Compensate = &Compensation{FollowUp: *f, DeadlineMs: deadline(c.Deadline, in.Response, now)}
			}
		}
	case air.ClassCompensable:
		undo(r, KindCompensate, e.Compensate, "the operation declares no compensation", &rt, now, tools)
	}
	return r
}

// undo sets r's undo to the follow-up fu of the given kind (with its
// deadline), or says why there is none: fu is not declared (none), or its
// arguments do not resolve in this call.
func undo(r *Report, kind string, fu *air.FollowUp, none string, rt *roots, now time.Time, tools Tools) {
	if fu == nil {
		r.UndoUnavailable = UndoUnavailablePrefix + none
		return
	}
	f, why := rt.followUp(fu.Operation, fu.Arguments, tools)
	if f == nil {
		r.UndoUnavailable = UndoUnavailablePrefix + why
		return
	}
	r.Undo = &Undo{Kind: kind, FollowUp: *f}
	r.DeadlineMs = deadline(fu.Deadline, rt.response, now)
}

// BuildStaged builds the staged object of a staged call of op: the draft's
// AIR id, its handle read from the draft's response by draft.handle, and
// the promote and discard calls resolved with request.* reading the staged
// request and response.* reading the draft's response. A promote or discard
// whose operation is not served or whose paths name nothing is null, and
// unavailable gives the reasons ("promote unavailable: …", "discard
// unavailable: …", joined by "; "). It returns nil when op has no draft.
func BuildStaged(op *air.Operation, stagedRequest map[string]any, draftResponse any, tools Tools) *Staged {
	if op == nil || op.Effect.Draft == nil {
		return nil
	}
	d := op.Effect.Draft
	s := &Staged{DraftOperation: d.Operation}
	rt := roots{request: stagedRequest, response: draftResponse}
	if d.Handle != "" {
		if v, ok, _, _ := rt.value(d.Handle); ok {
			s.Handle = v
		}
	}
	var why string
	s.Promote, why = rt.followUp(d.Promote.Operation, d.Promote.Arguments, tools)
	if why != "" {
		s.Unavailable = PromoteUnavailablePrefix + why
	}
	if d.Discard != nil {
		s.Discard, why = rt.followUp(d.Discard.Operation, d.Discard.Arguments, tools)
		if why != "" {
			if s.Unavailable != "" {
				s.Unavailable += "; "
			}
			s.Unavailable += DiscardUnavailablePrefix + why
		}
	}
	return s
}

// deadline resolves a follow-up's deadline to epoch milliseconds: within_ms
// counts from now; at reads a response.* value that is epoch milliseconds
// (a number) or an RFC 3339 time (a string). Anything unresolvable is nil.
func deadline(d *air.Deadline, response any, now time.Time) *int64 {
	if d == nil {
		return nil
	}
	switch {
	case d.WithinMs != nil && d.At == "":
		return DeadlineWithin(now, *d.WithinMs)
	case d.At != "" && d.WithinMs == nil:
		rt := roots{response: response}
		p, valid := parsePath(d.At)
		if !valid || p.path.Root != air.RootResponse {
			return nil
		}
		v, ok, _, _ := rt.value(d.At)
		if !ok {
			return nil
		}
		return epochMs(v)
	}
	return nil
}

// DeadlineWithin resolves a within_ms deadline: now (time.Now() for the
// zero time) plus within, in epoch milliseconds; nil for a negative within
// or one that overflows.
func DeadlineWithin(now time.Time, within int64) *int64 {
	if now.IsZero() {
		now = time.Now()
	}
	base := now.UnixMilli()
	if within < 0 || base > math.MaxInt64-within {
		return nil
	}
	ms := base + within
	return &ms
}

// epochMs is EpochMs, accepting Go's int and int64 too.
func epochMs(v any) *int64 {
	switch x := v.(type) {
	case int:
		n := int64(x)
		return &n
	case int64:
		return &x
	}
	return EpochMs(v)
}

// EpochMs reads an at deadline's value, a decoded JSON value, as epoch
// milliseconds: a number (float64 or json.Number; a fraction is truncated)
// or an RFC 3339 time (a string). It returns nil for anything else and for
// a number out of int64's range.
func EpochMs(v any) *int64 {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return &n
		}
		g, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil
		}
		f = g
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return nil
		}
		n := t.UnixMilli()
		return &n
	default:
		return nil
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f >= math.MaxInt64 || f <= math.MinInt64 {
		return nil
	}
	n := int64(math.Trunc(f))
	return &n
}
