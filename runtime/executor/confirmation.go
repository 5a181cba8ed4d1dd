package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/confirm"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/handler"
	"github.com/anvil-dev/anvil/runtime/wirejson"
)

// Confirmation asked in the protocol (issue 27).
//
// A write that needs confirmation and arrives without it is refused with
// confirmation_required: the caller passes confirm: true and calls again
// (REST, the SDKs, and MCP clients that cannot be asked). When the door
// says its client can answer input requests (Call.Ask), the gate asks the
// person instead: the Outcome carries a Question (the tool, the exact
// arguments, the effect class and the undo) with a signed state
// (runtime/confirm) binding subject, tool, the arguments' digest, an
// expiry and a nonce. The door puts the question to the client (2026-07-28
// input_required, 2025-11-25 elicitation) and calls again with the state
// and the person's answer; the gate runs the call once when the state is
// good and the answer yes, and refuses it, sending nothing upstream,
// otherwise.

// Confirmation configures the asking gate; a nil *Confirmation never asks.
type Confirmation struct {
	Signer *confirm.Signer
	// OwnConfirmSuffices keeps a caller's own confirm: true enough for a
	// client that could be asked (ANVIL_MCP_CONFIRM=self, the default);
	// false asks the person anyway (ANVIL_MCP_CONFIRM=ask).
	OwnConfirmSuffices bool
}

// Ask is a call from a client that can answer input requests.
type Ask struct {
	// State is the state of the question being answered; "" on a first call.
	State string
	// Accepted is the person's answer to it.
	Accepted bool
}

// Question is what the door asks the person before a call runs.
type Question struct {
	Tool        string          // the wire tool name
	Operation   string          // the AIR id
	Arguments   json.RawMessage // the exact arguments, as the call would send them
	EffectClass string
	// Undo is the wire name of the tool that undoes the call (its inverse,
	// else its compensation), or "".
	Undo    string
	Reason  string // the operation's own reason for confirmation, if any
	State   string
	Expires time.Time
	Message string // the question as a person reads it
}

// askOrRefuse decides a call of op that needs confirmation: nil lets it
// run (confirmed now, or earlier in this call), else the outcome (a
// question, or a refusal). It runs before the input schema is checked: the
// schema requires confirm: true, and the contract answers a missing
// confirmation with confirmation_required (REST 428, an MCP tool error),
// never with the schema's validation_error, so that a client can ask the
// person and retry.
func (x *Executor) askOrRefuse(ctx context.Context, st *callState, op *air.Operation, in handler.Input) *Outcome {
	if !op.Confirmation.Required || st.confirmed {
		return nil
	}
	own, _ := in.Confirm()
	c := x.Confirm
	if st.ask == nil || c == nil || c.Signer == nil {
		if own {
			return nil
		}
		st.decision = "confirmation_required"
		return &Outcome{Err: confirmationGate(op)}
	}
	// The state binds the person (tenant and subject), not the turn: the
	// answer may come with the next turn's token.
	subject, digest := st.principal.Subject(), confirm.ArgumentsDigest(in.InputSHA256())
	if st.principal != nil {
		subject = st.principal.Tenant + "\x00" + subject
	}
	if st.ask.State != "" {
		if !st.ask.Accepted {
			st.decision = "confirmation_required"
			return &Outcome{Err: confirmRefusal(op, &confirm.Error{Code: confirm.CodeDeclined, Message: "The person did not confirm the call; nothing was sent."})}
		}
		if e := c.Signer.Accept(ctx, st.ask.State, subject, st.tool.Name, digest); e != nil {
			st.decision = "confirmation_required"
			return &Outcome{Err: confirmRefusal(op, e)}
		}
		st.confirmed = true
		in.SetConfirm(true)
		return nil
	}
	if own && c.OwnConfirmSuffices {
		return nil
	}
	st.decision = "confirmation_required"
	state, expires := c.Signer.Issue(subject, st.tool.Name, digest)
	return &Outcome{Question: x.question(st, op, in, state, expires)}
}

// confirmRefusal is the refusal of an answer that does not confirm the
// call: confirmation_required (the caller may ask again), its reason in
// details.code.
func confirmRefusal(op *air.Operation, e *confirm.Error) *envelope.Error {
	return &envelope.Error{Code: envelope.ConfirmationRequired, Message: e.Message,
		Details: wirejson.Object("code", e.Code, "operation", op.ID)}
}

// question describes the call for the person who is asked.
func (x *Executor) question(st *callState, op *air.Operation, in handler.Input, state string, expires time.Time) *Question {
	args, err := wirejson.Marshal(in.Args())
	if err != nil {
		args = json.RawMessage("{}")
	}
	q := &Question{Tool: st.tool.Name, Operation: op.ID, Arguments: args, EffectClass: string(air.EffectClassOf(op)),
		Reason: op.Confirmation.Reason, State: state, Expires: expires}
	undo := "it cannot be undone by a tool call"
	wire := func(id string) string {
		if t := st.tool.Connector.ToolFor(id); t != nil {
			return t.Name
		}
		return id
	}
	switch e := op.Effect; {
	case e.Inverse != nil:
		q.Undo = wire(e.Inverse.Operation)
		undo = "undone by " + q.Undo
	case e.Compensate != nil:
		q.Undo = wire(e.Compensate.Operation)
		undo = "compensated by " + q.Undo
	}
	q.Message = fmt.Sprintf("Run %s (%s; effect: %s; %s) with these arguments?\n%s", q.Tool, op.ID, q.EffectClass, undo, args)
	if q.Reason != "" {
		q.Message += "\n" + q.Reason
	}
	return q
}
