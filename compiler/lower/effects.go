package lower

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/runtime/air"
)

// effectChecker checks one operation's effect block.
type effectChecker struct {
	l    *lowerer
	st   *opState
	msgs []string // "code: message" of every error
}

func (c *effectChecker) report(pos diag.Pos, level diag.Level, code, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.l.addDiag(c.pos(pos), level, code, c.st.i, "%s", msg)
	if level == diag.Error {
		c.msgs = append(c.msgs, code+": "+msg)
	}
}

func (c *effectChecker) errorf(pos diag.Pos, code, format string, args ...any) {
	c.report(pos, diag.Error, code, format, args...)
}

// pos falls back from an unknown position to the effect block, the entry and
// the entry's key.
func (c *effectChecker) pos(p diag.Pos) diag.Pos {
	for _, q := range []diag.Pos{p, c.st.m.Effect.Pos, c.st.m.Pos, c.st.entry.KeyPos} {
		if q.Line != 0 {
			return q
		}
	}
	return p
}

func firstPos(ps ...diag.Pos) diag.Pos {
	for _, p := range ps {
		if p.Line != 0 {
			return p
		}
	}
	return diag.Pos{}
}

// place is where a mapping is written; it decides which roots it may read
// and which schemas its paths are checked against.
type place struct {
	label string          // inverse, compensate, lookup, draft, draft promote, draft discard
	roots map[string]bool // allowed roots
	// request paths are checked against req's input schema; response paths
	// against resp's output schema (nil: not checked).
	req, resp *opState
}

func (p place) rootList() string {
	var rs []string
	for _, r := range []string{air.RootRequest, air.RootResponse, air.RootIdempotencyKey} {
		if p.roots[r] {
			rs = append(rs, r)
		}
	}
	return joinAnd(rs)
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return "nothing"
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// Follow-up target requirements.
const (
	wantMutation = iota
	wantRead
)

// checkEffect checks the effect block of st, stores the contract on its AIR
// operation (operation references rewritten to AIR ids), and applies the
// downgrade rule when it finds errors. It reports whether the operation's
// confirmation changed (its schema must then be republished).
func (l *lowerer) checkEffect(st *opState) bool {
	c := &effectChecker{l: l, st: st}
	e := st.m.Effect
	op := st.op
	isRead := op.Effect.Kind == air.KindRead
	classPos := firstPos(e.ClassPos, e.Pos)

	effective := e.Class
	if effective == "" {
		effective = air.EffectClassOf(op)
	}
	if e.Class != "" {
		switch {
		case isRead && e.Class != air.ClassRead:
			c.errorf(classPos, "effect/class_on_read", "%s is a read, so its effect class can only be read, not %s", op.ID, e.Class)
		case !isRead && e.Class == air.ClassRead:
			c.errorf(classPos, "effect/read_class_on_mutation", "%s is a mutation and cannot declare effect class read", op.ID)
		}
		if st.m.Reversible != nil {
			implied := e.Class == air.ClassRead || e.Class == air.ClassReversible
			if *st.m.Reversible != implied {
				c.errorf(classPos, "effect/class_conflicts_reversible", "effect class %s means reversible: %t, but the entry sets reversible: %t", e.Class, implied, *st.m.Reversible)
			}
		}
	}
	if effective == air.ClassReversible && e.Inverse == nil {
		c.errorf(classPos, "effect/reversible_without_inverse", "effect class reversible needs an inverse")
	}
	if effective == air.ClassCompensable && e.Compensate == nil {
		c.errorf(classPos, "effect/compensable_without_compensate", "effect class compensable needs a compensate call")
	}
	if e.Inverse != nil && effective != air.ClassReversible {
		c.errorf(firstPos(e.Inverse.Pos, e.Pos), "effect/inverse_on_non_reversible", "an inverse is only allowed on effect class reversible, and the class is %s", effective)
	}
	if e.Compensate != nil && effective != air.ClassCompensable && effective != air.ClassReversible {
		c.errorf(firstPos(e.Compensate.Pos, e.Pos), "effect/compensate_on_class", "a compensate call is only allowed on effect class compensable or reversible, and the class is %s", effective)
	}
	if isRead && e.Lookup != nil {
		c.errorf(firstPos(e.Lookup.Pos, e.Pos), "effect/lookup_on_read", "%s is a read and has no effect to look up", op.ID)
	}
	if isRead && e.Draft != nil {
		c.errorf(firstPos(e.Draft.Pos, e.Pos), "effect/draft_on_read", "%s is a read and has no draft form", op.ID)
	}

	both := map[string]bool{air.RootRequest: true, air.RootResponse: true}
	var inverse, compensate *air.FollowUp
	if e.Inverse != nil {
		inverse = c.followUp(e.Inverse, place{label: "inverse", roots: both, req: st, resp: st})
	}
	if e.Compensate != nil {
		compensate = c.followUp(e.Compensate, place{label: "compensate", roots: both, req: st, resp: st})
	}
	var lookup *air.Lookup
	if e.Lookup != nil {
		lookup = c.lookup(e.Lookup)
	}
	var draft *air.Draft
	forceDraft := false
	if e.Draft != nil {
		draft, forceDraft = c.draft(e.Draft)
	}

	confirmBefore := op.Confirmation.Required
	if len(c.msgs) > 0 {
		class := air.ClassIrreversible
		if isRead {
			class = air.ClassRead
		}
		op.Effect.Class = class
		op.Effect.Reversible = false
		op.Effect.Inverse, op.Effect.Compensate, op.Effect.Lookup, op.Effect.Draft = nil, nil, nil, nil
		op.ReviewNotes = append(op.ReviewNotes, fmt.Sprintf(
			"Effect contract rejected (%d error(s)); served as %s with no undo until it is fixed: %s",
			len(c.msgs), class, strings.Join(c.msgs, "; ")))
		if !isRead {
			if !op.Confirmation.Required {
				op.Confirmation.Reason = "Its effect contract was rejected, so it has no undo."
				if op.Confirmation.Risk == "" {
					op.Confirmation.Risk = op.Effect.Risk
				}
			}
			op.Confirmation.Required = true
		}
	} else {
		op.Effect.Class = e.Class
		op.Effect.Inverse, op.Effect.Compensate, op.Effect.Lookup, op.Effect.Draft = inverse, compensate, lookup, draft
		if forceDraft && !op.Confirmation.Required {
			op.Confirmation.Required = true
			op.Confirmation.Reason = "Its draft form needs confirmation, so a staged call can pass confirm on."
			if op.Confirmation.Risk == "" {
				op.Confirmation.Risk = op.Effect.Risk
			}
		}
	}
	return op.Confirmation.Required != confirmBefore
}

// target resolves a follow-up's operation reference and checks what it may
// be. It returns the target (nil when missing or ambiguous) and the
// reference rewritten to an AIR id (as written when unresolved).
func (c *effectChecker) target(label, ref string, pos diag.Pos, want int, selfOK bool) (*opState, string) {
	l := c.l
	t, hits := l.lookupRef(ref)
	if t == nil {
		if len(hits) > 1 {
			ids := make([]string, len(hits))
			for i, h := range hits {
				ids[i] = l.ops[h].r.ID
			}
			c.errorf(pos, "effect/operation_missing", "%s operation %q is ambiguous: it names %s", label, ref, strings.Join(ids, ", "))
		} else {
			msg := fmt.Sprintf("%s operation %q is not an operation of this service", label, ref)
			if s := l.nearestName(ref); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			c.errorf(pos, "effect/operation_missing", "%s", msg)
		}
		return nil, ref
	}
	if t == c.st && !selfOK {
		c.errorf(pos, "effect/operation_self", "%s names %s itself; only a draft may name its own operation", label, t.r.ID)
	}
	isRead := t.op.Effect.Kind == air.KindRead
	switch {
	case want == wantMutation && isRead:
		c.errorf(pos, "effect/follow_up_is_read", "%s operation %s is a read; it cannot change what the call did", label, t.r.ID)
	case want == wantRead && !isRead:
		c.errorf(pos, "effect/lookup_not_read", "lookup operation %s is a mutation; a lookup must be a read", t.r.ID)
	}
	if c.st.op.State == air.StateApproved && t.op.State != air.StateApproved {
		c.report(pos, diag.Warning, "effect/operation_not_approved", "%s operation %s is %s, not approved, so it is not served", label, t.r.ID, t.op.State)
	}
	return t, t.r.ID
}

func mapping(args manifest.Arguments) air.Mapping {
	m := make(air.Mapping, 0, len(args))
	for _, a := range args {
		m = append(m, air.MappingEntry{Name: a.Name, ArgSource: a.Source})
	}
	return m
}

func (c *effectChecker) followUp(f *manifest.FollowUp, p place) *air.FollowUp {
	blockPos := firstPos(f.Pos, c.st.m.Effect.Pos)
	t, id := c.target(p.label, f.Operation, firstPos(f.OperationPos, blockPos), wantMutation, false)
	if t != nil {
		c.checkMapping(f.Arguments, t, p, blockPos)
	}
	out := &air.FollowUp{Operation: id, Arguments: mapping(f.Arguments)}
	if d := f.Deadline; d != nil {
		dpos := firstPos(d.Pos, blockPos)
		switch {
		case (d.WithinMs != nil) == (d.At != ""):
			c.errorf(dpos, "effect/deadline_shape", "%s deadline needs exactly one of within_ms and at", p.label)
		case d.At != "":
			path, err := air.ParsePath(d.At)
			if err != nil || path.Root != air.RootResponse {
				c.errorf(dpos, "effect/deadline_path", "%s deadline at must be a response.<path>, not %q", p.label, d.At)
				break
			}
			c.checkResponsePath(dpos, p.label+" deadline at", path, c.st)
		case *d.WithinMs <= 0:
			c.errorf(dpos, "effect/deadline_shape", "%s deadline within_ms must be positive, not %d", p.label, *d.WithinMs)
		}
		dl := &air.Deadline{At: d.At}
		if d.WithinMs != nil {
			v := *d.WithinMs
			dl.WithinMs = &v
		}
		out.Deadline = dl
	}
	return out
}

func (c *effectChecker) lookup(lk *manifest.Lookup) *air.Lookup {
	st := c.st
	blockPos := firstPos(lk.Pos, st.m.Effect.Pos)
	byPos := firstPos(lk.ByPos, blockPos)
	p := place{label: "lookup", req: st, resp: st}
	switch lk.By {
	case air.RootIdempotencyKey:
		p.roots = map[string]bool{air.RootRequest: true, air.RootIdempotencyKey: true}
	default:
		p.roots = map[string]bool{air.RootRequest: true, air.RootResponse: true, air.RootIdempotencyKey: true}
	}
	t, id := c.target("lookup", lk.Operation, firstPos(lk.OperationPos, blockPos), wantRead, false)
	if t != nil {
		c.checkMapping(lk.Arguments, t, p, blockPos)
	}
	if lk.By == air.RootIdempotencyKey {
		if !st.op.Idempotency.HasCarrier() {
			c.errorf(byPos, "effect/lookup_without_idempotency_key",
				"lookup by idempotency_key, but %s sends no idempotency key upstream (idempotency mode %s, no carrier)", st.r.ID, st.op.Idempotency.Mode)
		}
		used := false
		for _, a := range lk.Arguments {
			if a.Source.IsConst() {
				continue
			}
			if path, err := air.ParsePath(a.Source.Path); err == nil && path.Root == air.RootIdempotencyKey {
				used = true
			}
		}
		if !used {
			c.errorf(byPos, "effect/lookup_key_unused", "lookup by idempotency_key, but no argument reads idempotency_key")
		}
	}
	return &air.Lookup{Operation: id, By: lk.By, Arguments: mapping(lk.Arguments)}
}

// draft checks a draft block; it reports whether the operation must now
// require confirmation (confirmation_for_draft).
func (c *effectChecker) draft(d *manifest.Draft) (*air.Draft, bool) {
	st := c.st
	blockPos := firstPos(d.Pos, st.m.Effect.Pos)
	t, id := c.target("draft", d.Operation, firstPos(d.OperationPos, blockPos), wantMutation, true)
	if t != nil {
		c.checkMapping(d.Arguments, t, place{label: "draft", roots: map[string]bool{air.RootRequest: true}, req: st}, blockPos)
	}
	hpos := firstPos(d.HandlePos, blockPos)
	if path, err := air.ParsePath(d.Handle); err != nil || path.Root != air.RootResponse {
		c.errorf(hpos, "effect/draft_handle", "draft handle must be a response.<path>, not %q", d.Handle)
	} else if t != nil {
		switch r := c.responseResolution(path, t); r.kind {
		case unresolved:
			c.errorf(hpos, "effect/draft_handle", "draft handle %s does not resolve in the response of %s: %s", d.Handle, t.r.ID, r.reason)
		case unverified:
			c.report(hpos, diag.Warning, "effect/path_unverified", "draft handle %s cannot be checked: %s", d.Handle, r.reason)
		}
	}
	out := &air.Draft{Operation: id, Arguments: mapping(d.Arguments), Handle: d.Handle}
	staged := map[string]bool{air.RootRequest: true, air.RootResponse: true}
	if d.Promote != nil {
		ppos := firstPos(d.Promote.Pos, blockPos)
		pt, pid := c.target("draft promote", d.Promote.Operation, firstPos(d.Promote.OperationPos, ppos), wantMutation, false)
		if pt != nil {
			c.checkMapping(d.Promote.Arguments, pt, place{label: "draft promote", roots: staged, req: st, resp: t}, ppos)
		}
		out.Promote = air.Call{Operation: pid, Arguments: mapping(d.Promote.Arguments)}
	} else {
		c.errorf(blockPos, "effect/operation_missing", "draft declares no promote operation")
		out.Promote = air.Call{Arguments: air.Mapping{}}
	}
	if d.Discard != nil {
		dpos := firstPos(d.Discard.Pos, blockPos)
		dt, did := c.target("draft discard", d.Discard.Operation, firstPos(d.Discard.OperationPos, dpos), wantMutation, false)
		if dt != nil {
			c.checkMapping(d.Discard.Arguments, dt, place{label: "draft discard", roots: staged, req: st, resp: t}, dpos)
		}
		out.Discard = &air.Call{Operation: did, Arguments: mapping(d.Discard.Arguments)}
	}
	force := false
	if t != nil && t.p1Confirm && !st.p1Confirm {
		c.report(firstPos(d.OperationPos, blockPos), diag.Warning, "effect/confirmation_for_draft",
			"draft operation %s requires confirmation and %s did not; %s now requires confirmation", t.r.ID, st.r.ID, st.r.ID)
		force = true
	}
	return out, force
}

// controlName names a target input that is a safety control, or "".
func controlName(t *opState, key string) string {
	switch key {
	case "":
		return ""
	case t.p1Safety.ConfirmKey:
		return "confirmation"
	case t.p1Safety.IdempotencyKey:
		return "idempotency key"
	case t.p1Safety.DryRun:
		return "dry-run"
	}
	return ""
}

// checkMapping checks one argument mapping against its target's input schema.
func (c *effectChecker) checkMapping(args manifest.Arguments, t *opState, p place, blockPos diag.Pos) {
	props := map[string]*air.Schema{}
	var required []string
	if t.p1Schema != nil {
		props, required = t.p1Schema.Properties, t.p1Schema.Required
	}
	mapped := map[string]bool{}
	for _, a := range args {
		apos := firstPos(a.Pos, blockPos)
		mapped[a.Name] = true
		if ctl := controlName(t, a.Name); ctl != "" {
			c.errorf(apos, "effect/mapping_sets_safety_control",
				"%s argument %q sets the %s control of %s; the caller passes it on the follow-up call itself", p.label, a.Name, ctl, t.r.ID)
			continue
		}
		prop, known := props[a.Name]
		if !known {
			c.errorf(apos, "effect/mapping_unknown_argument", "%s argument %q is not an input of %s (its inputs: %s)",
				p.label, a.Name, t.r.ID, strings.Join(businessInputs(t), ", "))
		}
		var tgtTypes []string
		if known {
			tgtTypes = c.l.schemaTypes(prop)
		}
		if a.Source.IsConst() {
			lt := jsonType(a.Source.Const)
			if ok, _ := typesFit([]string{lt}, tgtTypes, false); !ok {
				c.errorf(apos, "effect/mapping_type_mismatch", "%s argument %q is the %s literal %s, which does not fit the %s input of %s",
					p.label, a.Name, lt, a.Source.Const, joinTypes(tgtTypes), t.r.ID)
			}
			continue
		}
		path, err := air.ParsePath(a.Source.Path)
		if err != nil {
			c.errorf(apos, "effect/path_invalid", "%s argument %q: %v", p.label, a.Name, err)
			continue
		}
		if !p.roots[path.Root] {
			c.errorf(apos, "effect/path_root_not_allowed", "%s argument %q reads %s, but %s arguments may read only %s",
				p.label, a.Name, path.Root, p.label, p.rootList())
			continue
		}
		var src resolveResult
		switch path.Root {
		case air.RootRequest:
			src = c.l.resolvePath(p.req.p1Schema, path.Segments, "request")
			if src.kind == unresolved {
				src.reason += " (the inputs of " + p.req.r.ID + ")"
			}
		case air.RootResponse:
			if p.resp == nil {
				src = resolveResult{kind: unverified, reason: "the draft operation is unknown"}
			} else {
				src = c.responseResolution(path, p.resp)
			}
		case air.RootIdempotencyKey:
			src = resolveResult{kind: resolved, schema: &air.Schema{Type: air.Types{"string"}}}
		}
		switch src.kind {
		case unresolved:
			c.errorf(apos, "effect/path_unresolved", "%s argument %q: %s does not resolve: %s", p.label, a.Name, path.String(), src.reason)
		case unverified:
			c.report(apos, diag.Warning, "effect/path_unverified", "%s argument %q: %s cannot be checked: %s", p.label, a.Name, path.String(), src.reason)
		case resolved:
			if known {
				if ok, st := typesFit(c.l.schemaTypes(src.schema), tgtTypes, true); !ok {
					c.errorf(apos, "effect/mapping_type_mismatch", "%s argument %q: %s is %s, which does not fit the %s input of %s",
						p.label, a.Name, path.String(), joinTypes(st), joinTypes(tgtTypes), t.r.ID)
				}
			}
		}
		if known && path.Optional && slices.Contains(required, a.Name) {
			c.errorf(apos, "effect/mapping_required_optional", "%s argument %q is required by %s but comes from the optional path %s",
				p.label, a.Name, t.r.ID, path.String())
		}
	}
	for _, r := range required {
		if mapped[r] || controlName(t, r) != "" {
			continue
		}
		c.errorf(blockPos, "effect/mapping_missing_required", "%s does not map the required input %q of %s", p.label, r, t.r.ID)
	}
}

// responseResolution resolves a response.<path> against op's output schema.
func (c *effectChecker) responseResolution(path air.Path, op *opState) resolveResult {
	out := op.op.Output
	if out.Schema == nil {
		if out.Status == 0 {
			return resolveResult{kind: unverified, reason: op.r.ID + " declares no success response"}
		}
		return resolveResult{kind: unverified, reason: op.r.ID + " declares no response schema"}
	}
	r := c.l.resolvePath(out.Schema, path.Segments, "response")
	if r.kind == unresolved {
		r.reason += " (the response of " + op.r.ID + ")"
	}
	return r
}

func (c *effectChecker) checkResponsePath(pos diag.Pos, label string, path air.Path, op *opState) {
	switch r := c.responseResolution(path, op); r.kind {
	case unresolved:
		c.errorf(pos, "effect/path_unresolved", "%s: %s does not resolve: %s", label, path.String(), r.reason)
	case unverified:
		c.report(pos, diag.Warning, "effect/path_unverified", "%s: %s cannot be checked: %s", label, path.String(), r.reason)
	}
}

// businessInputs lists a target's input keys other than its safety controls.
func businessInputs(t *opState) []string {
	var out []string
	if t.p1Schema == nil {
		return out
	}
	for _, k := range slices.Sorted(maps.Keys(t.p1Schema.Properties)) {
		if controlName(t, k) == "" {
			out = append(out, k)
		}
	}
	return out
}
