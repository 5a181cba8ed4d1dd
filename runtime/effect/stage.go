package effect

import (
	"bytes"
	"encoding/json"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

// ResolveDraft resolves the draft form of op for a staged call with the
// caller's arguments: the draft's AIR id and its input, in the draft
// mapping's order (Args.Map gives the call's argument map). Draft arguments
// read request.* only; a "?" path that names nothing is left out, and a
// literal is decoded with numbers as json.Number. The values are shared
// with request, not copied.
//
// It refuses, and nothing may be called, with:
//   - unsupported_operation effect/no_draft_form when op has no draft;
//   - unsupported_operation effect/draft_unavailable when the draft
//     operation is not served (tools);
//   - validation_error effect/draft_argument_missing, details.argument
//     naming the input, when a mapped path without "?" names nothing.
//
// The gateway then checks the input against the draft tool's schema
// (DraftInputInvalid), applies the ledger key with PlaceKey(draftOp, …),
// passes the caller's confirm on when the draft needs it, and calls the
// draft; its report is Build with Call.Staged set.
func ResolveDraft(op *air.Operation, request map[string]any, tools Tools) (draftOperation string, args Args, err *envelope.Error) {
	if op == nil || op.Effect.Draft == nil {
		id := ""
		if op != nil {
			id = op.ID
		}
		e := newError(envelope.UnsupportedOperation, id, "This operation has no draft form, so it cannot be staged; nothing was called.", details(CodeNoDraftForm))
		if id != "" {
			e.Message = id + " has no draft form, so it cannot be staged; nothing was called."
		}
		return "", nil, e
	}
	d := op.Effect.Draft
	if _, served := lookupTool(tools, d.Operation); !served {
		e := DraftUnavailable(d.Operation)
		e.Operation = op.ID
		return d.Operation, nil, e
	}
	rt := roots{request: request, requestOnly: true}
	args, missing, reason := rt.resolve(d.Arguments)
	if reason != "" {
		return d.Operation, nil, newError(envelope.ValidationError, op.ID,
			"Cannot stage "+op.ID+": the draft argument "+missing+" has no value ("+reason+"); nothing was called.",
			details(CodeDraftArgumentMissing, "argument", missing))
	}
	for i := range args {
		if raw, ok := args[i].Value.(json.RawMessage); ok {
			args[i].Value = decodeConst(raw)
		}
	}
	return d.Operation, args, nil
}

// DraftUnavailable is the refusal for a draft operation this gateway does
// not serve: unsupported_operation effect/draft_unavailable. The caller
// fills Operation (the staged operation) and TraceID.
func DraftUnavailable(draftOperation string) *envelope.Error {
	return newError(envelope.UnsupportedOperation, "",
		"The draft operation "+draftOperation+" is not served by this gateway; nothing was called.",
		details(CodeDraftUnavailable))
}

// DraftInputInvalid is the refusal for a mapped draft input that fails the
// draft tool's own schema: validation_error effect/draft_input_invalid.
// problem is the validator's message (it must not carry secrets). The
// caller fills Operation (the staged operation) and TraceID.
func DraftInputInvalid(draftOperation, problem string) *envelope.Error {
	msg := "The mapped draft input for " + draftOperation + " does not match its schema"
	if problem != "" {
		msg += ": " + problem
	}
	return newError(envelope.ValidationError, "", msg+"; nothing was called.", details(CodeDraftInputInvalid))
}

// decodeConst decodes a literal's canonical JSON, keeping numbers exact.
func decodeConst(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	return v
}
