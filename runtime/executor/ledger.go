package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/handler"
	"github.com/anvil-dev/anvil/runtime/store"
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

// ledgerBegin records the call before it goes upstream. It returns an
// outcome when the call must not go upstream (a replay, a conflict, or the
// ledger failing); otherwise st.lease is set and the caller proceeds.
func (x *Executor) ledgerBegin(ctx context.Context, st *callState, tool *fleet.Tool, in handler.Input) *Outcome {
	k := store.LedgerKey{Subject: st.principal.Subject(), ID: tool.Name + " " + *st.ledgerID, Tool: tool.Name, InputHash: ledgerInputHash(in)}
	b, err := x.Ledger.Begin(ctx, k)
	if err != nil {
		return &Outcome{Err: ledgerError(err)}
	}
	switch b.Outcome {
	case store.OutcomeNew:
		st.lease = x.keepLease(b.Lease)
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
	}
	return &Outcome{Err: &envelope.Error{Code: envelope.InternalError, Message: "The idempotency ledger gave an unknown answer."}}
}

// ledgerError maps a store error from Begin to the caller's envelope.
func ledgerError(err error) *envelope.Error {
	switch {
	case errors.Is(err, store.ErrInvalid):
		return &envelope.Error{Code: envelope.ValidationError,
			Message: fmt.Sprintf("The idempotency key is not acceptable (at most %d bytes).", store.MaxKeyLen)}
	case errors.Is(err, store.ErrInFlight):
		return &envelope.Error{Code: envelope.Conflict, Retryable: true,
			Message: "A call with this idempotency key is still in flight; retry to receive its answer."}
	case errors.Is(err, store.ErrCorrupt):
		return &envelope.Error{Code: envelope.InternalError,
			Message: "The recorded answer to this idempotency key cannot be read."}
	}
	return &envelope.Error{Code: envelope.IdempotencyLedgerUnavailable, Retryable: true, SafeToRetry: true,
		Message: "The idempotency ledger is unavailable; nothing was sent upstream."}
}

// ledgerFinish ends the entry Call began: Complete with the outcome when
// the upstream answered, else Release. It runs even when the caller has
// gone (the upstream may have acted, and a retry must replay that).
func (x *Executor) ledgerFinish(ctx context.Context, st *callState, out *Outcome) {
	if st.lease == nil {
		return
	}
	l := st.lease.stop()
	ctx = context.WithoutCancel(ctx)
	var err error
	if st.status == nil {
		err = x.Ledger.Release(ctx, l)
	} else {
		err = x.Ledger.Complete(ctx, l, encodeAnswer(*st.status, out))
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
		rep, err := decodeReport(a.Effect)
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
