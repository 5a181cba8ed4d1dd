package gateway

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/effect"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/grant"
	"net/http"
)

// The compiled path runs a call of a compiled tool. It is the generic path
// (run, stage, execute in executor.go) step for step, with the AIR-driven
// steps replaced by the tool's generated handlers: typed decoding and
// validation, the request builder, the draft mapping and the effect report.
// Everything else (grant decisions and their refusals, gates, credentials,
// the upstream client, answers, audit) is the shared code.

// decision applies the principal's grant to tool: through the compiled
// grant (a lookup) for a compiled tool, else List.Decide.
func (p *Principal) decision(tool *Tool) grant.Decision {
	if ct := tool.compiled; ct != nil {
		return ct.table.decide(p.Grants, ct.index)
	}
	return p.Grants.Decide(tool.GrantOp)
}

// inputSHA256 is the audit line's input hash: of the typed arguments when
// the call decoded them, else of the decoded map.
func (st *callState) inputSHA256() string {
	if st.input != nil {
		return st.input.InputSHA256()
	}
	return audit.InputSHA256(st.args)
}

// decodeCompiled decodes a compiled tool's arguments: the generated decoder
// first, then (for anything it does not take) the generic decoding and the
// generated conversion. It returns the typed input when the arguments are
// valid, else the decoded map (nil, with notObject, when they are not a
// JSON object).
func decodeCompiled(op *CompiledOp, raw json.RawMessage) (in Input, args map[string]any, notObject bool) {
	if in, ok := op.Decode(raw); ok {
		return in, nil, false
	}
	args, err := decodeArgs(raw)
	if err != nil {
		return nil, nil, true
	}
	if in, ok := op.FromArgs(args); ok {
		return in, nil, false
	}
	return nil, args, false
}

// runCompiled is run for a compiled tool.
func (x *Executor) runCompiled(ctx context.Context, call Call, st *callState) *Outcome {
	tool := st.tool
	in, args, notObject := decodeCompiled(tool.compiled.op, call.Args)
	st.input, st.args = in, args
	meta, merr := effect.ParseMeta(call.Meta)
	if merr == nil && meta.HasKey {
		k := meta.IdempotencyKey
		st.ledgerID = &k
	}
	var out *Outcome
	switch refusal := x.checkGrant(st, tool); {
	case refusal != nil:
		out = &Outcome{Err: refusal}
	case notObject:
		out = &Outcome{Err: validationError("Arguments must be a JSON object.", nil), InvalidParams: true}
	case merr != nil:
		out = &Outcome{Err: merr}
	case meta.Stage:
		out = x.stageCompiled(ctx, st, in, args, meta)
	default:
		out = x.executeCompiled(ctx, st, tool, in, args, meta.IdempotencyKey, meta.HasKey)
	}
	// A failed call still reports its class, key and lookup (Call does it
	// from AIR for a generic tool).
	if !st.dryRun && out.Effect == nil {
		out.Effect = st.tool.compiled.op.Effect(&EffectCall{Input: st.input, Args: st.args,
			IdempotencyKey: st.sentKey, Failed: true, Now: x.now()})
	}
	return out
}

// schemaRefusal is the refusal of arguments that fail tool's input schema,
// worded by the shared validator.
func (x *Executor) schemaRefusal(tool *Tool, args map[string]any) *Outcome {
	return &Outcome{Err: validationError(fmt.Sprintf("The arguments do not match %s's input schema: %s", tool.Name, x.schemaProblem(tool, args)), nil), InvalidParams: true}
}

// schemaProblem is the validator's message for args, or a plain one when the
// validator finds nothing (which the differential tests rule out).
func (x *Executor) schemaProblem(tool *Tool, args map[string]any) string {
	if sch := tool.compiled.inputSchema(tool.Name); sch != nil {
		if err := sch.Validate(args); err != nil {
			return schemaMessage(err)
		}
	}
	return "the arguments are not valid"
}

// checkInput enforces the shared validator on a typed input whose
// operation asks for it, turning a failure into the untyped form.
func (x *Executor) checkInput(tool *Tool, in Input, args map[string]any) (Input, map[string]any) {
	if in == nil || !tool.compiled.op.SchemaCheck {
		return in, args
	}
	a := in.Args()
	if sch := tool.compiled.inputSchema(tool.Name); sch != nil && sch.Validate(a) != nil {
		return nil, a
	}
	return in, args
}

// keyConflict is effect.CheckKeyConflict over a typed input.
func keyConflict(tool *Tool, in Input, key string) *envelope.Error {
	op := tool.Op
	if key == "" || !op.Idempotency.HasCarrier() || op.Input.Safety.IdempotencyKey == "" {
		return nil
	}
	s, isString, present := in.IdempotencyKey()
	if !present || (isString && s == key) {
		return nil
	}
	// Word the refusal exactly as the shared check does.
	var v any = s
	if !isString {
		v = struct{}{}
	}
	return effect.CheckKeyConflict(op, map[string]any{op.Input.Safety.IdempotencyKey: v}, key)
}

// stageCompiled is stage for a compiled tool.
func (x *Executor) stageCompiled(ctx context.Context, st *callState, in Input, args map[string]any, meta effect.Meta) *Outcome {
	tool := st.tool
	ct := tool.compiled
	in, args = x.checkInput(tool, in, args)
	st.input, st.args = in, args
	if in == nil {
		return x.schemaRefusal(tool, args)
	}
	key, hasKey := meta.IdempotencyKey, meta.HasKey
	if hasKey {
		if cerr := keyConflict(tool, in, key); cerr != nil {
			return &Outcome{Err: cerr}
		}
	} else if tool.Op.Idempotency.HasCarrier() && tool.Op.Input.Safety.IdempotencyKey != "" {
		if s, isString, present := in.IdempotencyKey(); present && isString && s != "" {
			key, hasKey = s, true
			st.ledgerID = &s
		}
	}
	if ct.op.Draft == nil {
		_, _, derr := effect.ResolveDraft(tool.Op, nil, nil)
		return &Outcome{Err: derr}
	}
	draft := tool.Connector.ToolFor(ct.op.DraftOp)
	if draft == nil || draft.compiled == nil {
		e := effect.DraftUnavailable(ct.op.DraftOp)
		e.Operation = tool.Op.ID
		return &Outcome{Err: e}
	}
	draftIn, missing := ct.op.Draft(in)
	if missing != nil {
		return &Outcome{Err: draftMissing(tool.Op.ID, missing)}
	}
	// The caller's confirm is passed on when the draft needs confirmation.
	if dop := draft.Op; dop.Confirmation.Required && dop.Input.Safety.ConfirmKey != "" && tool.Op.Input.Safety.ConfirmKey != "" {
		if v, present := in.Confirm(); present {
			draftIn.SetConfirm(v)
		}
	}
	// A staged dry run stays a dry run.
	if in.DryRun() {
		draftIn.SetDryRun()
	}
	valid := draftIn.Validate()
	if valid && draft.compiled.op.SchemaCheck {
		if sch := draft.compiled.inputSchema(draft.Name); sch != nil && sch.Validate(draftIn.Args()) != nil {
			valid = false
		}
	}
	if !valid {
		problem := "the arguments are not valid"
		if sch := draft.compiled.inputSchema(draft.Name); sch != nil {
			if err := sch.Validate(draftIn.Args()); err != nil {
				problem = schemaMessage(err)
			}
		}
		return &Outcome{Err: effect.DraftInputInvalid(ct.op.DraftOp, problem)}
	}
	stagedFor := tool.Op.ID
	st.stagedFor = &stagedFor
	if draft != tool {
		if refusal := x.checkGrant(st, draft); refusal != nil {
			return &Outcome{Err: refusal}
		}
	}
	st.tool = draft
	out := x.executeCompiled(ctx, st, draft, draftIn, nil, key, hasKey)
	if out.Plan != nil {
		return out
	}
	out.Effect = ct.op.Effect(&EffectCall{Input: in, Response: out.data(), IdempotencyKey: st.sentKey,
		Staged: true, Failed: out.Err != nil, Now: x.now()})
	return out
}

// draftMissing is effect.ResolveDraft's draft_argument_missing refusal.
func draftMissing(opID string, m *DraftMissing) *envelope.Error {
	d, _ := effect.Args{{Name: "code", Value: effect.CodeDraftArgumentMissing}, {Name: "argument", Value: m.Argument}}.MarshalJSON()
	return &envelope.Error{Code: envelope.ValidationError, Operation: opID, Details: d,
		Message: "Cannot stage " + opID + ": the draft argument " + m.Argument + " has no value (" + m.Reason + "); nothing was called."}
}

// executeCompiled is execute for a compiled tool.
func (x *Executor) executeCompiled(ctx context.Context, st *callState, tool *Tool, in Input, args map[string]any, ledgerKey string, hasKey bool) *Outcome {
	op := tool.Op
	ct := tool.compiled
	in, args = x.checkInput(tool, in, args)
	st.input, st.args = in, args
	if in == nil {
		return x.schemaRefusal(tool, args)
	}
	carrier := op.Idempotency.HasCarrier() && op.Input.Safety.IdempotencyKey != ""
	if hasKey {
		if cerr := keyConflict(tool, in, ledgerKey); cerr != nil {
			return &Outcome{Err: cerr}
		}
		if carrier {
			in.SetIdempotencyKey(ledgerKey)
		}
	}
	if op.Input.Safety.IdempotencyKey != "" {
		if s, isString, present := in.IdempotencyKey(); present && isString && s != "" {
			st.sentKey = s
			if st.ledgerID == nil {
				st.ledgerID = &s
			}
		}
	}
	if op.Confirmation.Required {
		if v, _ := in.Confirm(); !v {
			st.decision = "confirmation_required"
			return &Outcome{Err: confirmationGate(op, nil)}
		}
	}
	if op.Idempotency.Mode == "required" && st.sentKey == "" && op.Input.Safety.IdempotencyKey != "" {
		return &Outcome{Err: &envelope.Error{Code: envelope.IdempotencyRequired, RequiredFlags: []string{"--idempotency-key"},
			Message: fmt.Sprintf("%s requires an idempotency key.", op.ID)}}
	}
	cc := ct.base(tool.Connector)
	if cc.err {
		_, berr := serverURL(tool.Connector.Doc)
		return &Outcome{Err: berr}
	}
	if in.DryRun() {
		st.dryRun = true
		req, err := ct.op.Build(ctx, cc.pb, in)
		if err != nil {
			return &Outcome{Err: validationError(err.Error(), nil)}
		}
		return &Outcome{Plan: dryRunPlan(tool, req)}
	}
	resp, refused := x.send(ctx, st, tool, cc.host, func() (*http.Request, error) { return ct.op.Build(ctx, cc.pb, in) })
	if refused != nil {
		return refused
	}
	rep := ct.op.Effect(&EffectCall{Input: in, Response: responseFor(!ct.op.IgnoresResponse, resp), IdempotencyKey: st.sentKey, Now: x.now()})
	return &Outcome{resp: resp, Raw: answerJSON(resp), rawCompact: true, Effect: rep}
}
