// Package effect builds the effect report of a gateway call:
// what the call did to the world and how to undo it, the staged (draft)
// form of a call, the caller's _meta, and the effect contract tools/list
// publishes.
//
// A gateway uses it on every call:
//
//	meta, eerr := effect.ParseMeta(params.Meta)              // effect/invalid_meta
//	eerr = effect.CheckKeyConflict(op, args, meta.IdempotencyKey)      // effect/idempotency_key_conflict
//	args, sent := effect.PlaceKey(op, args, meta.IdempotencyKey)
//	if meta.Stage {
//		draftID, draftArgs, eerr := effect.ResolveDraft(op, args, tools) // no_draft_form, draft_unavailable, draft_argument_missing
//		// validate draftArgs.Map() against the draft tool's schema (effect.DraftInputInvalid),
//		// PlaceKey(draftOp, …), pass confirm on, call the draft, then Build with Staged: true,
//		// Request: args (the staged request) and Response: the draft's answer.
//	}
//	report := effect.Build(op, effect.Call{Request: args, Response: data, IdempotencyKey: sent,
//		Failed: failed, Staged: meta.Stage, Now: start}, tools)
//	// MCP: result._meta["effect"] = report; REST: header X-Anvil-Effect: effect.HeaderValue(report)
//
// # The report
//
// Report's JSON has the keys class, operation, idempotency_key, undo,
// deadline_ms and lookup, always and in this order, then compensate,
// undo_unavailable and staged only when they apply. Every follow-up object
// carries operation (the AIR id) and tool (the wire name on this gateway,
// from Tools), since Branchyard treats a follow-up without tool as unusable.
// Arguments keep the manifest's mapping order. Values are written as
// JSON.stringify writes them: float64 100 is 100, json.Number verbatim,
// literals as their canonical JSON; objects inside values (decoded into Go
// maps) come out with sorted keys.
//
// # Resolution
//
// Argument sources are request.<path> (the call's arguments by input key),
// response.<path> (the decoded upstream answer), idempotency_key (the key
// that went upstream) and {const: v}. Resolution is all or nothing per
// follow-up: a path without "?" that names nothing (or null) makes the
// follow-up unavailable; a "?" path that names nothing is left out. The
// reasons are fixed sentences: "<prefix><path> names nothing in this call"
// and "<prefix><AIR id> is not served by this gateway", with the prefix
// "undo unavailable: " in Report.UndoUnavailable and "promote unavailable: "
// or "discard unavailable: " in Staged.Unavailable.
//
// # Call-time codes
//
// Refusals are *envelope.Error values whose details object starts with
// code: effect/invalid_meta, effect/idempotency_key_conflict (with field),
// effect/no_draft_form, effect/draft_unavailable,
// effect/draft_argument_missing (with argument) and
// effect/draft_input_invalid. The caller fills TraceID.
package effect
