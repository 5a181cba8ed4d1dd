package executor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/effect"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/grant"
	"github.com/anvil-dev/anvil/runtime/handler"
	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// The gateway-side idempotency ledger (docs/state.md). A write that carries
// a ledger id is recorded with store.Begin before anything goes upstream:
//
//   - new: the call goes upstream; once the upstream has answered (success
//     or an HTTP error), Call records the final outcome with Complete. When
//     no upstream answer came back (a refusal before sending, a transport
//     error), the entry is released so that a retry starts afresh;
//   - replay: the first outcome (answer or error, and its effect report) is
//     returned and nothing goes upstream; the audit line says "replay";
//   - conflict: the same ledger id with other input to the same tool is refused
//     (envelope.Conflict: REST 409, an MCP tool error with the same code);
//   - in flight elsewhere: Begin itself waits and then replays.
//
// An entry is kept per (subject, tool, ledger id): the contract has the
// promotion of a staged call carry the staged call's own key, so one key
// legitimately names a call of each of two tools.
//
// A store that cannot be reached refuses the call with
// idempotency_ledger_unavailable (503), and nothing is sent.

// Markers of a recorded answer's Result bytes: a successful answer (the
// caller's JSON follows) or a refused one (the error envelope follows).
const (
	answerOK  = 'o'
	answerErr = 'e'
)

// ledgerApplies reports whether a call of op under st is recorded: a write
// (any effect class but read) carrying a ledger id, with a ledger
// configured.
func (x *Executor) ledgerApplies(st *callState, op *air.Operation) bool {
	return x.Ledger != nil && st.ledgerID != nil && *st.ledgerID != "" && air.EffectClassOf(op) != air.ClassRead
}

// ledgerInputHash is the digest a repeat must match: SHA-256 of the
// canonical JSON of the checked arguments, without the audit hash's
// redaction (two calls that differ only in a secret are different calls).
func ledgerInputHash(in handler.Input) string {
	sum := sha256.Sum256(audit.CanonicalJSON(in.Args()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// How a takeover resolves an earlier attempt whose outcome is unknown (its
// owner lost the lease before recording the upstream's answer).
const (
	// resolveNone: it cannot be resolved; Begin answers outcome unknown
	// and the call is refused (never sent again blindly).
	resolveNone = iota
	// resolveKey: the operation sends the same idempotency key upstream,
	// which an upstream that declares key support acts on once: sending
	// again is safe.
	resolveKey
	// resolveLookup: the operation declares a lookup whose arguments the
	// request resolves: it tells whether the earlier write acted.
	resolveLookup
)

// resolution is how an unknown outcome of a call of tool with in would be
// resolved, and for resolveLookup the lookup and its tool.
func (x *Executor) resolution(st *callState, tool *fleet.Tool, in handler.Input) (int, *effect.Lookup, *fleet.Tool) {
	if carriesKey(tool.Op) && st.sentKey != "" {
		return resolveKey, nil, nil
	}
	if tool.Op.Effect.Lookup == nil {
		return resolveNone, nil, nil
	}
	rep := tool.Handler.Effect(&handler.EffectCall{Input: in, IdempotencyKey: st.sentKey, Failed: true, Now: x.now()})
	if rep == nil || rep.Lookup == nil {
		return resolveNone, nil, nil
	}
	lt := st.fleet.Tool(rep.Lookup.Tool)
	if lt == nil || air.EffectClassOf(lt.Op) != air.ClassRead {
		return resolveNone, nil, nil
	}
	// The lookup is a call of its own under the caller's grant.
	if p := st.principal; p != nil && !p.Unrestricted && st.fleet.Decide(p.Grants, lt).Outcome != grant.Allowed {
		return resolveNone, nil, nil
	}
	return resolveLookup, rep.Lookup, lt
}

// ledgerBegin records the call before it goes upstream. It returns an
// outcome when the call must not go upstream (a replay, a conflict, an
// unknown earlier outcome, or the ledger failing); otherwise st.lease is
// set and the caller proceeds, resolving a taken-over unknown outcome
// first when st.lookup is set.
func (x *Executor) ledgerBegin(ctx context.Context, st *callState, tool *fleet.Tool, in handler.Input) *Outcome {
	how, lookup, lookupTool := x.resolution(st, tool, in)
	k := store.LedgerKey{Subject: st.principal.Subject(), ID: tool.Name + " " + *st.ledgerID, Tool: tool.Name,
		InputHash: ledgerInputHash(in), TakeOver: how != resolveNone}
	b, err := x.Ledger.Begin(ctx, k)
	if err != nil {
		return &Outcome{Err: ledgerError(err)}
	}
	switch b.Outcome {
	case store.OutcomeNew:
		st.lease = x.keepLease(b.Lease)
		if b.TookOver && how == resolveLookup {
			st.lookup, st.lookupTool = lookup, lookupTool
		}
		return nil
	case store.OutcomeReplay:
		out, derr := decodeAnswer(b.Answer)
		if derr != nil {
			return &Outcome{Err: &envelope.Error{Code: envelope.InternalError,
				Message: "The recorded answer to this idempotency key cannot be read."}}
		}
		st.replay = true
		return out
	case store.OutcomeConflict:
		return &Outcome{Err: &envelope.Error{Code: envelope.Conflict,
			Message: fmt.Sprintf("The idempotency key %q was already used for a call of %s with different arguments.", *st.ledgerID, tool.Name)}}
	case store.OutcomeUnknown:
		return &Outcome{Err: outcomeUnknown(tool, b.Began, false,
			fmt.Sprintf("%s neither sends the key upstream nor declares a lookup this call can use, so it is not sent again", tool.Op.ID))}
	}
	return &Outcome{Err: &envelope.Error{Code: envelope.InternalError, Message: "The idempotency ledger gave an unknown answer."}}
}

// Details codes of the ledger's refusals (details.code).
const (
	// CodeInProgress (conflict, 409, retryable, Retry-After): a call with
	// this key is still in flight.
	CodeInProgress = "idempotency/in_progress"
	// CodeOutcomeUnknown (unsafe_retry_blocked, 409): an earlier call with
	// this key may or may not have acted upstream, and the gateway cannot
	// tell; it is not sent again.
	CodeOutcomeUnknown = "idempotency/outcome_unknown"
)

// inProgressRetry is the Retry-After of an in-progress answer.
const inProgressRetry = time.Second

// outcomeUnknown is the refusal of a call whose key names an earlier
// attempt with an unknown outcome: what happened, why it is not sent
// again, and what to check. retryable is set when a later retry may
// resolve it (the lookup that would tell failed for now).
func outcomeUnknown(tool *fleet.Tool, began time.Time, retryable bool, why string) *envelope.Error {
	at := "earlier"
	details := wirejson.Object("code", CodeOutcomeUnknown, "tool", tool.Name)
	if !began.IsZero() {
		at = "at " + began.UTC().Format(time.RFC3339)
		details = wirejson.Object("code", CodeOutcomeUnknown, "tool", tool.Name, "began", began.UTC().Format(time.RFC3339))
	}
	e := &envelope.Error{Code: envelope.UnsafeRetryBlocked, Retryable: retryable, Details: details,
		Message: fmt.Sprintf("A call of %s with this idempotency key began %s and its outcome is unknown: the gateway handling it stopped before recording the upstream's answer, and %s. Check whether %s took effect upstream; to send it again, use a new idempotency key.",
			tool.Name, at, why, tool.Op.ID)}
	if retryable {
		e.RetryAfter = inProgressRetry
	}
	return e
}

// ledgerError maps a store error from Begin to the caller's envelope.
func ledgerError(err error) *envelope.Error {
	switch {
	case errors.Is(err, store.ErrInvalid):
		return &envelope.Error{Code: envelope.ValidationError,
			Message: fmt.Sprintf("The idempotency key is not acceptable (at most %d bytes).", store.MaxKeyLen)}
	case errors.Is(err, store.ErrInFlight):
		return &envelope.Error{Code: envelope.Conflict, Retryable: true, RetryAfter: inProgressRetry,
			Details: wirejson.Object("code", CodeInProgress),
			Message: "A call with this idempotency key is still in progress; retry to receive its answer."}
	case errors.Is(err, store.ErrCorrupt):
		return &envelope.Error{Code: envelope.InternalError,
			Message: "The recorded answer to this idempotency key cannot be read."}
	}
	return &envelope.Error{Code: envelope.IdempotencyLedgerUnavailable, Retryable: true, SafeToRetry: true, RetryAfter: inProgressRetry,
		Message: "The idempotency ledger is unavailable; nothing was sent upstream."}
}

// resolveByLookup runs the lookup of a taken-over call whose earlier
// attempt's outcome is unknown. Found (the lookup answered data): the
// earlier write acted, and its answer is the lookup's, recorded as this
// key's answer; nothing is sent. Not found (not_found, or empty data): the
// earlier write did not act, and nil lets the call go upstream. Anything
// else: the lease is given up without an outcome, and the caller is told
// the outcome is still unknown (retryable: a later lookup may tell).
func (x *Executor) resolveByLookup(ctx context.Context, st *callState, tool *fleet.Tool, in handler.Input) *Outcome {
	lk, lt := st.lookup, st.lookupTool
	st.lookup, st.lookupTool = nil, nil
	args, _ := lk.Arguments.MarshalJSON()
	lin, ok := lt.Handler.Decode(args)
	ls := &callState{fleet: st.fleet, start: x.now(), traceID: st.traceID, principal: st.principal, account: st.account, decision: "allowed"}
	var out *Outcome
	if !ok {
		out = &Outcome{Err: validationError("The lookup's arguments are not an object.", nil)}
	} else {
		out = x.execute(ctx, ls, lt, lin, "", false)
	}
	switch {
	case out.Err == nil && found(out.Raw):
		st.resolvedBy = "lookup"
		st.status = ls.status
		rep := tool.Handler.Effect(&handler.EffectCall{Input: in, Response: out.data(), IdempotencyKey: st.sentKey, Now: x.now()})
		return &Outcome{resp: out.resp, Raw: out.Raw, RawCompact: out.RawCompact, Effect: rep}
	case out.Err == nil || out.Err.Code == envelope.NotFound:
		return nil
	}
	l := st.lease.stop()
	st.lease = nil
	if err := x.Ledger.Abandon(context.WithoutCancel(ctx), l); err != nil && x.LedgerFailed != nil {
		x.LedgerFailed(err)
	}
	return &Outcome{Err: outcomeUnknown(tool, time.Time{}, true,
		fmt.Sprintf("its lookup (%s) answered %s", lt.Name, out.Err.Code))}
}

// found is Branchyard's reading of a lookup's answer: data that is not
// null, an empty object or array, or a blank string.
func found(raw json.RawMessage) bool {
	v := bytes.TrimSpace(raw)
	switch string(v) {
	case "", "null", "{}", "[]", `""`, `"null"`:
		return false
	}
	if v[0] == '{' || v[0] == '[' {
		var x any
		if json.Unmarshal(v, &x) != nil {
			return false
		}
		switch t := x.(type) {
		case map[string]any:
			return len(t) > 0
		case []any:
			return len(t) > 0
		}
	}
	if v[0] == '"' {
		var str string
		return json.Unmarshal(v, &str) == nil && strings.TrimSpace(str) != "" && str != "null"
	}
	return true
}

// ledgerFinish ends the entry Call began: Complete with the outcome when
// the upstream answered; Release when nothing was sent (refused before
// sending, or the connection failed before the request was written), so a
// retry starts afresh; Abandon when the request was written but no answer
// came back (a reset, a timeout): the upstream may have acted, so the
// outcome is unknown and a retry resolves it rather than resending it
// blindly. It runs even when the caller has gone.
func (x *Executor) ledgerFinish(ctx context.Context, st *callState, out *Outcome) {
	if st.lease == nil {
		return
	}
	l := st.lease.stop()
	ctx = context.WithoutCancel(ctx)
	var err error
	switch {
	case st.status != nil:
		err = x.Ledger.Complete(ctx, l, encodeAnswer(*st.status, out))
	case st.wrote.Load():
		err = x.Ledger.Abandon(ctx, l)
	default:
		err = x.Ledger.Release(ctx, l)
	}
	if err != nil && x.LedgerFailed != nil {
		x.LedgerFailed(err)
	}
}

// encodeAnswer is the recorded form of a finished call: the upstream
// status, the answer (or error envelope, without its trace id) and the
// effect report's JSON.
func encodeAnswer(status int, out *Outcome) store.Answer {
	a := store.Answer{Status: status}
	if out.Err != nil {
		e := *out.Err
		e.TraceID = ""
		a.Result = append([]byte{answerErr}, e.Marshal()...)
	} else {
		raw := out.Raw
		if raw == nil {
			raw = json.RawMessage("null")
		}
		a.Result = append([]byte{answerOK}, raw...)
	}
	if out.Effect != nil {
		a.Effect = out.Effect.AppendJSON(nil)
	}
	return a
}

// decodeAnswer is encodeAnswer's inverse: the outcome a replay returns.
func decodeAnswer(a *store.Answer) (*Outcome, error) {
	if a == nil || len(a.Result) == 0 {
		return nil, errors.New("empty recorded answer")
	}
	out := &Outcome{}
	body := a.Result[1:]
	switch a.Result[0] {
	case answerOK:
		if !json.Valid(body) {
			return nil, errors.New("recorded answer is not JSON")
		}
		out.Raw, out.RawCompact = json.RawMessage(body), true
	case answerErr:
		var w envelope.Wrapped
		if err := json.Unmarshal(body, &w); err != nil || w.Error == nil {
			return nil, errors.New("recorded error is not an envelope")
		}
		out.Err = w.Error
	default:
		return nil, errors.New("unknown recorded answer")
	}
	if len(a.Effect) > 0 {
		rep, err := effect.DecodeReport(a.Effect)
		if err != nil {
			return nil, err
		}
		out.Effect = rep
	}
	return out, nil
}

// heldLease is a lease kept alive while its call runs: an upstream call may
// outlive the store's lease (ANVIL_UPSTREAM_TIMEOUT_MS can exceed it), and
// an expired lease would let a retry take the entry over and write twice.
// It renews a third of the way to each expiry until stopped.
type heldLease struct {
	mu    sync.Mutex
	lease store.Lease
	done  chan struct{}
	ended chan struct{}
}

func (x *Executor) keepLease(l store.Lease) *heldLease {
	h := &heldLease{lease: l, done: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(h.ended)
		for {
			h.mu.Lock()
			wait := h.lease.Until.Sub(x.now()) / 3
			cur := h.lease
			h.mu.Unlock()
			t := time.NewTimer(max(wait, 10*time.Millisecond))
			select {
			case <-h.done:
				t.Stop()
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait+time.Second)
			nl, err := x.Ledger.Renew(ctx, cur)
			cancel()
			if err != nil {
				if x.LedgerFailed != nil {
					x.LedgerFailed(err)
				}
				if errors.Is(err, store.ErrLeaseLost) {
					return
				}
				continue
			}
			h.mu.Lock()
			h.lease = nl
			h.mu.Unlock()
		}
	}()
	return h
}

// stop ends the renewals and returns the current lease.
func (h *heldLease) stop() store.Lease {
	close(h.done)
	<-h.ended
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease
}
