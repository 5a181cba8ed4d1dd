package mcpdoor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/executor"
)

// Confirmation asked in the protocol: the executor's gate decides
// (runtime/executor/confirmation.go); the door frames its question for the
// client's revision and reads the answer back.
//
//   - 2026-07-28: the tools/call result is resultType "input_required" with
//     one input request, an elicitation keyed confirmKey, and the signed
//     requestState; the client retries the same call with inputResponses
//     and the requestState, on any replica.
//   - 2025-11-25 (and older) sessions: the door sends elicitation/create to
//     the client on the session, then runs the call again with the answer
//     and the state.
//
// Only clients that declare form elicitation are asked; the others (and
// REST, and the SDKs) get confirmation_required as before.

// confirmKey names the confirmation's input request and the boolean the
// person's answer carries.
const confirmKey = "confirm"

// canElicit reports whether the caller's client declared form elicitation
// (2026-07-28: in the request's _meta; before: at initialize).
func canElicit(req *mcp.CallToolRequest) bool {
	if req == nil || req.Session == nil {
		return false
	}
	ip := req.Session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false
	}
	e := ip.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // {} means form
}

// askOf returns the executor's Ask for a tools/call: nil when the client
// cannot be asked, else with the answer a 2026-07-28 retry carries.
func askOf(req *mcp.CallToolRequest) *executor.Ask {
	if req.Params != nil && req.Params.RequestState != "" {
		return &executor.Ask{State: req.Params.RequestState, Accepted: accepted(req.Params.InputResponses[confirmKey])}
	}
	if !canElicit(req) {
		return nil
	}
	return &executor.Ask{}
}

// accepted reads a person's answer: an elicitation accepted without
// saying confirm: false.
func accepted(r mcp.InputResponse) bool {
	er, ok := r.(*mcp.ElicitResult)
	if !ok || er == nil || er.Action != "accept" {
		return false
	}
	if v, ok := er.Content[confirmKey]; ok {
		b, isBool := v.(bool)
		return isBool && b
	}
	return true
}

// elicitation is the question as an elicitation request.
func elicitation(q *executor.Question) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: q.Message,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				confirmKey: map[string]any{
					"type":        "boolean",
					"title":       fmt.Sprintf("Run %s", q.Tool),
					"description": "Yes runs the call once with exactly these arguments.",
					"default":     true,
				},
			},
			"required": []string{confirmKey},
		},
		Meta: mcp.Meta{"anvil/confirmation": map[string]any{
			"tool": q.Tool, "operation": q.Operation, "arguments": q.Arguments,
			"effect_class": q.EffectClass, "undo": nullable(q.Undo),
			"expires": q.Expires.UTC().Format("2006-01-02T15:04:05Z"),
		}},
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// putQuestion answers an outcome that asks for confirmation: as
// input_required on 2026-07-28; on a session, by eliciting the answer now
// and running the call again with it.
func (m *Door) putQuestion(ctx context.Context, req *mcp.CallToolRequest, call executor.Call, out *executor.Outcome) *executor.Outcome {
	q := out.Question
	if newRevision(req) {
		return out // toolResult frames it (inputRequests, requestState)
	}
	res, err := req.Session.Elicit(ctx, elicitation(q))
	call.Ask = &executor.Ask{State: q.State}
	if err == nil && res != nil {
		call.Ask.Accepted = accepted(res)
	}
	return m.exec.Call(ctx, call)
}

// declaresElicitation reports whether an initialize request's params
// declare the elicitation capability (read before the SDK answers it, for
// the session table).
func declaresElicitation(params json.RawMessage) bool {
	var p struct {
		Capabilities struct {
			Elicitation json.RawMessage `json:"elicitation"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	e := bytes.TrimSpace(p.Capabilities.Elicitation)
	return len(e) > 0 && e[0] == '{'
}
