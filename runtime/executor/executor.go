// Package executor runs every tool call, whichever handler serves its tool:
// the grant decision, the caller's key and stage request, the handler's
// decoding and checks, the confirmation and idempotency gates, the draft of
// a staged call, the egress allowlist, the credential, the upstream leg, the
// effect report, the answer and the audit line — once, in that order, in
// this package. The front doors (MCP, REST) only frame its Outcome.
package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/effect"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/grant"
	"github.com/anvil-dev/anvil/runtime/handler"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/metrics"
	"github.com/anvil-dev/anvil/runtime/store"
	"github.com/anvil-dev/anvil/runtime/tracing"
	"github.com/anvil-dev/anvil/runtime/upstream"
	"github.com/anvil-dev/anvil/runtime/wirejson"
	"go.opentelemetry.io/otel/trace"
)

// Credentials resolves the upstream credential of a call.
type Credentials interface {
	// Resolve returns a function that authenticates the upstream request, or
	// an auth_required envelope. It is called only for granted calls, after
	// the egress check and before anything is sent.
	// p is the caller: its Sub keys the person's connections, its Token is
	// what a token exchange trades.
	Resolve(ctx context.Context, p *identity.Principal, c *fleet.Connector, op *air.Operation, account string) (func(*http.Request), *envelope.Error)
}

// Executor runs calls: grant, gates, validation, credentials, upstream,
// effect report and audit, the same for /mcp and /call.
type Executor struct {
	// Fleet is the served fleet when Served is nil.
	Fleet *fleet.Fleet
	// Served, when set, holds the served fleet instead: a reload swaps it,
	// and each call reads it once when it starts, so a call in flight
	// finishes on the fleet it started with.
	Served      *atomic.Pointer[fleet.Fleet]
	Credentials Credentials
	Upstream    *upstream.Client
	Allowlist   upstream.Allowlist
	Audit       *audit.Logger
	// AuditFailed is called when an audit line cannot be written; the call
	// still succeeds.
	AuditFailed func(error)
	Now         func() time.Time
	// Metrics records calls, upstream legs and vault errors; nil records
	// nothing.
	Metrics *metrics.Metrics
	// Tracer makes a span per call and per upstream leg, and its trace id
	// the audit line's; nil traces nothing.
	Tracer *tracing.Tracer
	// Ledger is the gateway-side idempotency ledger (ledger.go); nil runs
	// without one (a write's ledger id then only goes upstream).
	Ledger store.Store
	// LedgerFailed is called when an answer cannot be recorded after the
	// upstream answered (the caller still gets the answer).
	LedgerFailed func(error)
	// Confirm asks the person behind a client that can be asked before a
	// call that needs confirmation runs (confirmation.go); nil never asks.
	Confirm *Confirmation
}

// Call is one tool call.
type Call struct {
	Tool      string
	Args      json.RawMessage // the arguments object; empty means {}
	Meta      map[string]any  // the caller's _meta; only idempotency_key and stage are read
	Principal *identity.Principal
	// Ask is set by a door whose client can answer input requests: a call
	// that needs confirmation then asks the person (confirmation.go).
	Ask *Ask
}

// Outcome is what a call produced.
type Outcome struct {
	Tool *fleet.Tool // nil when no such tool is served
	// Raw is the answer as the caller sees it: the upstream's JSON compacted
	// with its key order kept, a JSON string for a non-JSON body, or null.
	Raw json.RawMessage
	// RawCompact says Raw is compact JSON (answerJSON's), which the MCP
	// encoding then only escapes.
	RawCompact bool
	// resp is the upstream's answer to a call that reached it; data decodes
	// it when something reads it.
	resp *upstream.Response
	// Plan is set for a dry run.
	Plan any
	// Err is set when the call failed.
	Err *envelope.Error
	// InvalidParams is set (with Err) when the arguments failed the tool's
	// input schema; MCP answers it as JSON-RPC error -32602.
	InvalidParams bool
	// Effect is the effect report; nil for a dry run or an unknown tool.
	Effect *effect.Report
	// Question is set, with nothing else but Effect, when the call needs the
	// person's confirmation first (confirmation.go): the door asks it and
	// calls again with the answer.
	Question *Question
}

// data is the decoded upstream answer (nil for an empty or non-JSON body).
func (o *Outcome) data() any { return o.resp.Decoded() }

// AnswersObject reports whether the answer is a JSON object (MCP passes an
// object as structuredContent and wraps anything else as {"result": …}).
func (o *Outcome) AnswersObject() bool { return len(o.Raw) > 0 && o.Raw[0] == '{' }

// responseFor is the decoded answer for an effect report that reads it,
// else nil (the answer is then never decoded).
func responseFor(reads bool, resp *upstream.Response) any {
	if !reads {
		return nil
	}
	return resp.Decoded()
}

func (x *Executor) now() time.Time {
	if x.Now != nil {
		return x.Now()
	}
	return time.Now()
}

// callState carries what the audit line and the report need.
type callState struct {
	fleet     *fleet.Fleet // the fleet the call runs on, read once
	start     time.Time
	traceID   string
	principal *identity.Principal
	tool      *fleet.Tool
	decision  string
	grantRule json.RawMessage
	account   *string
	rule      *string
	input     handler.Input // the arguments; nil when they are not a JSON object
	status    *int
	ledgerID  *string
	sentKey   string
	stagedFor *string
	dryRun    bool
	span      trace.Span // the call's span when tracing is on
	lease     *heldLease // the ledger entry this call owns, until Call ends
	replay    bool       // the outcome is the ledger's recorded answer
	// lookup and lookupTool are set while a taken-over entry whose
	// earlier outcome is unknown awaits resolution by lookup (ledger.go).
	lookup     *effect.Lookup
	lookupTool *fleet.Tool
	// resolvedBy is "lookup" when the answer is the lookup's: the earlier
	// attempt had acted.
	resolvedBy string
	// parentTraceID is the caller's trace ("trace_" + 32 hex), when it sent
	// a traceparent and tracing is on.
	parentTraceID string
	// wrote is set once the upstream request of a keyed write began to be
	// written: a transport error after it leaves the outcome unknown.
	wrote atomic.Bool
	// ask is Call.Ask; confirmed is set when the person confirmed this
	// call (confirmation.go).
	ask       *Ask
	confirmed bool
}

// CurrentFleet returns the served fleet: Served's, else Fleet.
func (x *Executor) CurrentFleet() *fleet.Fleet {
	if x.Served != nil {
		return x.Served.Load()
	}
	return x.Fleet
}

// Call runs one call.
func (x *Executor) Call(ctx context.Context, call Call) *Outcome {
	st := &callState{start: x.now(), principal: call.Principal, decision: "allowed", ask: call.Ask}
	if x.Tracer == nil {
		st.traceID = audit.NewTraceID()
		out := x.call(ctx, call, st)
		if x.Metrics != nil {
			x.observe(st, out)
		}
		return out
	}
	// With tracing on, the audit line's trace id is the call span's: "trace_"
	// and the same 32 hex digits, so a line and its trace are found from
	// each other. The span is the root of the gateway's own trace; an
	// incoming traceparent is only its parent (linked, and the audit
	// line's parent_trace_id).
	ctx, span, parent := x.Tracer.StartCall(ctx)
	st.traceID = "trace_" + tracing.TraceID(span)
	if parent != "" {
		st.parentTraceID = "trace_" + parent
	}
	st.span = span
	out := x.call(ctx, call, st)
	x.observe(st, out)
	var code string
	if out.Err != nil {
		code = out.Err.Code
	}
	tracing.EndCall(span, st.decision, code)
	return out
}

// observe records a finished call's metrics.
func (x *Executor) observe(st *callState, out *Outcome) {
	var connector, tool, code string
	if st.tool != nil {
		connector, tool = st.tool.Connector.ID, st.tool.Name
	}
	status := 0
	if st.status != nil {
		status = *st.status
	}
	if out.Err != nil {
		code = out.Err.Code
	}
	x.Metrics.Call(connector, tool, st.decision, status, code, x.now().Sub(st.start))
}

func (x *Executor) call(ctx context.Context, call Call, st *callState) *Outcome {
	st.fleet = x.CurrentFleet()
	tool := st.fleet.Tool(call.Tool)
	if tool == nil {
		return &Outcome{Err: &envelope.Error{Code: envelope.NotFound,
			Message: fmt.Sprintf("No tool named %s is served by this gateway.", call.Tool), TraceID: st.traceID}}
	}
	st.tool = tool
	if st.span != nil {
		tracing.NameCall(st.span, tool.Connector.ID, tool.Name)
	}
	out := x.run(ctx, call, st)
	out.Tool = tool
	if out.Err != nil {
		out.Err.TraceID = st.traceID
		if out.Err.Operation == "" {
			out.Err.Operation = st.tool.Op.ID
		}
	}
	// A failed call still reports its class, key and lookup.
	if !st.dryRun && out.Effect == nil {
		out.Effect = st.tool.Handler.Effect(&handler.EffectCall{Input: st.input, IdempotencyKey: st.sentKey, Failed: true, Now: x.now()})
	}
	x.ledgerFinish(ctx, st, out)
	x.writeAudit(st, out)
	return out
}

func (x *Executor) run(ctx context.Context, call Call, st *callState) *Outcome {
	tool := st.tool

	// The arguments and the caller's key are read first (nothing is sent or
	// stored for that), so even a refused call's audit line carries its input
	// hash and ledger id, and its effect report can resolve the lookup.
	in, isObject := tool.Handler.Decode(call.Args)
	st.input = in
	meta, merr := effect.ParseMeta(call.Meta)
	if merr == nil && meta.HasKey {
		k := meta.IdempotencyKey
		st.ledgerID = &k
	}

	// The grant is decided first: nothing about a refused call reaches the
	// upstream or the vault.
	if refusal := x.checkGrant(st, tool); refusal != nil {
		return &Outcome{Err: refusal}
	}
	if !isObject {
		return &Outcome{Err: validationError("Arguments must be a JSON object.", nil), InvalidParams: true}
	}
	if merr != nil {
		return &Outcome{Err: merr}
	}
	if meta.Stage {
		return x.stage(ctx, st, in, meta)
	}
	return x.execute(ctx, st, tool, in, meta.IdempotencyKey, meta.HasKey)
}

// checkGrant applies the principal's grant to tool and records the decision.
func (x *Executor) checkGrant(st *callState, tool *fleet.Tool) *envelope.Error {
	p := st.principal
	if p == nil || p.Unrestricted {
		return nil
	}
	d := st.fleet.Decide(p.Grants, tool)
	if d.Entry != nil {
		st.grantRule = d.Rule()
		acct := d.Entry.EffectiveAccount()
		st.account = &acct
	}
	if d.Outcome == grant.Allowed {
		return nil
	}
	st.decision = d.Outcome
	code := d.Code
	st.rule = &code
	rule := json.RawMessage("null")
	if d.Entry != nil {
		rule = d.Entry.AuditJSON(d.Index)
	}
	details := wirejson.Object(
		"code", code,
		"connector", tool.Connector.ID,
		"principalId", p.Sub,
		"rule", rule,
	)
	if d.Outcome == grant.ConfirmationRequired {
		return &envelope.Error{Code: envelope.ConfirmationRequired, Details: details,
			Message: fmt.Sprintf("The grant allows %s only with confirm: \"allow\"; this branch's grant does not confirm it.", tool.Op.ID)}
	}
	return &envelope.Error{Code: envelope.PolicyDenied, Details: details,
		Message: fmt.Sprintf("The grant does not allow %s on connector %s.", tool.Op.ID, tool.Connector.ID)}
}

// StepUp is the refusal of a call the caller's grant refuses but one of
// its step-up options (identity.StepUp: the scopes an OIDC caller could
// add) would allow: 403 insufficient_scope asking for that option's
// scopes, which the door answers before the call runs (an MCP client then
// signs in again with them and retries). It is nil for a caller without
// step-up, an unrestricted one, a tool nobody serves, a call the grant
// allows, and a refusal no option lifts (that call runs and is refused
// policy_denied as any other).
func (x *Executor) StepUp(p *identity.Principal, name string) *identity.Refusal {
	if p == nil || p.StepUp == nil || p.Unrestricted {
		return nil
	}
	f := x.CurrentFleet()
	tool := f.Tool(name)
	if tool == nil || f.Decide(p.Grants, tool).IsAllowed() {
		return nil
	}
	for _, o := range p.StepUp.Options() {
		if f.Decide(o.Grants, tool).IsAllowed() {
			x.Metrics.TokenError("insufficient_scope")
			return p.StepUp.Challenge(o.Scopes)
		}
	}
	return nil
}

// schemaRefusal refuses arguments that fail tool's input schema.
func schemaRefusal(tool *fleet.Tool, problem string) *Outcome {
	return &Outcome{Err: validationError(fmt.Sprintf("The arguments do not match %s's input schema: %s", tool.Name, problem), nil), InvalidParams: true}
}

// carriesKey reports whether op sends an idempotency key upstream in an
// input (effect.PlaceKey's carrier).
func carriesKey(op *air.Operation) bool {
	return op.Idempotency.HasCarrier() && op.Input.Safety.IdempotencyKey != ""
}

// keyConflict is effect.CheckKeyConflict over an input, with key the
// call's own key ("" when it has none). A key in the arguments (the
// idempotency input) becomes the ledger id and the audit line's even when
// the call has no key of its own, so it gets the same length cap
// (effect.CheckKey) in every case, not only when it is compared.
func keyConflict(op *air.Operation, in handler.Input, key string) *envelope.Error {
	field := op.Input.Safety.IdempotencyKey
	if field == "" {
		return nil
	}
	s, isString, present := in.IdempotencyKey()
	if !present {
		return nil
	}
	if isString {
		if err := effect.CheckKey(field, s); err != nil {
			err.Operation = op.ID
			return err
		}
	}
	if key == "" || !carriesKey(op) || (isString && s == key) {
		return nil
	}
	// Word the refusal exactly as the shared check does.
	var v any = s
	if !isString {
		v = struct{}{}
	}
	return effect.CheckKeyConflict(op, map[string]any{field: v}, key)
}

// stage performs an operation's draft form instead of the operation.
func (x *Executor) stage(ctx context.Context, st *callState, in handler.Input, meta effect.Meta) *Outcome {
	tool := st.tool
	op := tool.Op
	if refusal := x.askOrRefuse(ctx, st, op, in); refusal != nil {
		return refusal
	}
	// The staged call's own arguments meet its tool's schema first, as any
	// call's do (nothing passes unchecked because it is staged).
	if perr := handler.Prepare(tool.Handler); perr != nil {
		st.input = in
		return &Outcome{Err: perr}
	}
	in, problem, ok := tool.Handler.Check(in)
	st.input = in
	if !ok {
		return schemaRefusal(tool, problem)
	}
	// The key the draft carries: the caller's, which must not differ from
	// one already in the staged call's own arguments, or else that one (an
	// SDK sends its key as an argument).
	key, hasKey := meta.IdempotencyKey, meta.HasKey
	callKey := ""
	if hasKey {
		callKey = key
	}
	if cerr := keyConflict(op, in, callKey); cerr != nil {
		return &Outcome{Err: cerr}
	}
	if !hasKey && carriesKey(op) {
		if s, isString, present := in.IdempotencyKey(); present && isString && s != "" {
			key, hasKey = s, true
			st.ledgerID = &s
		}
	}
	if op.Effect.Draft == nil {
		_, _, derr := effect.ResolveDraft(op, nil, nil)
		return &Outcome{Err: derr}
	}
	draftID := op.Effect.Draft.Operation
	draft := tool.Connector.ToolFor(draftID)
	if draft == nil {
		e := effect.DraftUnavailable(draftID)
		e.Operation = op.ID
		return &Outcome{Err: e}
	}
	draftIn, derr := tool.Handler.Draft(in, draft.Op)
	if derr != nil {
		return &Outcome{Err: derr}
	}
	// The caller's confirm is passed on when the draft needs confirmation.
	if dop := draft.Op; dop.Confirmation.Required && dop.Input.Safety.ConfirmKey != "" && op.Input.Safety.ConfirmKey != "" {
		if v, present := in.Confirm(); present {
			draftIn.SetConfirm(v)
		}
	}
	// A staged dry run stays a dry run: the flag is passed on to the draft,
	// which then reports its plan and sends nothing.
	if in.DryRun() {
		draftIn.SetDryRun()
	}
	if perr := handler.Prepare(draft.Handler); perr != nil {
		return &Outcome{Err: perr}
	}
	if _, problem, ok := draft.Handler.Check(draftIn); !ok {
		return &Outcome{Err: effect.DraftInputInvalid(draftID, problem)}
	}
	stagedFor := op.ID
	st.stagedFor = &stagedFor
	if draft != tool {
		if refusal := x.checkGrant(st, draft); refusal != nil {
			return &Outcome{Err: refusal}
		}
	}
	st.tool = draft
	out := x.execute(ctx, st, draft, draftIn, key, hasKey)
	if out.Plan != nil || st.replay {
		return out
	}
	out.Effect = tool.Handler.Effect(&handler.EffectCall{Input: in, Response: out.data(), IdempotencyKey: st.sentKey,
		Staged: true, Failed: out.Err != nil, Now: x.now()})
	return out
}

// execute runs a granted call of tool with decoded arguments.
func (x *Executor) execute(ctx context.Context, st *callState, tool *fleet.Tool, in handler.Input, ledgerKey string, hasKey bool) *Outcome {
	op := tool.Op
	h := tool.Handler
	if refusal := x.askOrRefuse(ctx, st, op, in); refusal != nil {
		return refusal
	}
	if perr := handler.Prepare(h); perr != nil {
		st.input = in
		return &Outcome{Err: perr}
	}
	in, problem, ok := h.Check(in)
	st.input = in
	if !ok {
		return schemaRefusal(tool, problem)
	}
	callKey := ""
	if hasKey {
		callKey = ledgerKey
	}
	if cerr := keyConflict(op, in, callKey); cerr != nil {
		return &Outcome{Err: cerr}
	}
	if hasKey && carriesKey(op) {
		in.SetIdempotencyKey(ledgerKey)
	}
	if op.Input.Safety.IdempotencyKey != "" {
		if s, isString, present := in.IdempotencyKey(); present && isString && s != "" {
			st.sentKey = s
			if st.ledgerID == nil {
				st.ledgerID = &s
			}
		}
	}
	if op.Idempotency.Mode == air.IdemRequired && st.sentKey == "" && op.Input.Safety.IdempotencyKey != "" {
		return &Outcome{Err: &envelope.Error{Code: envelope.IdempotencyRequired, RequiredFlags: []string{"--idempotency-key"},
			Message: fmt.Sprintf("%s requires an idempotency key.", op.ID)}}
	}
	base, host, berr := tool.Connector.UpstreamBase()
	if berr != nil {
		return &Outcome{Err: berr}
	}
	if in.DryRun() {
		st.dryRun = true
		req, err := h.Build(ctx, base, in)
		if err != nil {
			return &Outcome{Err: validationError(err.Error(), nil)}
		}
		return &Outcome{Plan: dryRunPlan(tool, req)}
	}
	if x.ledgerApplies(st, op) {
		if stop := x.ledgerBegin(ctx, st, tool, in); stop != nil {
			return stop
		}
		if st.lookup != nil {
			if done := x.resolveByLookup(ctx, st, tool, in); done != nil {
				return done
			}
		}
	}
	resp, refused := x.send(ctx, st, tool, host, func() (*http.Request, error) { return h.Build(ctx, base, in) })
	if refused != nil {
		return refused
	}
	rep := h.Effect(&handler.EffectCall{Input: in, Response: responseFor(tool.ReadsResponse, resp), IdempotencyKey: st.sentKey, Now: x.now()})
	return &Outcome{resp: resp, Raw: answerJSON(resp), RawCompact: true, Effect: rep}
}

// send is the end of every call that goes upstream:
// the egress allowlist (before anything is built or read from the vault),
// the request, the credential, the exchange and its status. It returns the
// 2xx answer, or the outcome of a call that stopped.
func (x *Executor) send(ctx context.Context, st *callState, tool *fleet.Tool, host string, build func() (*http.Request, error)) (*upstream.Response, *Outcome) {
	op := tool.Op
	if !x.Allowlist.Allows(host) {
		// Audited denied (a policy refusal), with rule null: rule names only
		// grant sub-codes.
		code := "policy/egress_denied"
		st.decision = "denied"
		return nil, &Outcome{Err: &envelope.Error{Code: envelope.PolicyDenied,
			Message: fmt.Sprintf("Upstream host is not in the allowed hosts list (ANVIL_ALLOWED_HOSTS): %s.", host),
			Details: wirejson.Object("code", code, "host", host)}}
	}
	req, err := build()
	if err != nil {
		return nil, &Outcome{Err: validationError(err.Error(), nil)}
	}
	account := "default"
	if st.account != nil {
		account = *st.account
	}
	if x.Credentials != nil {
		apply, cerr := x.Credentials.Resolve(ctx, st.principal, tool.Connector, op, account)
		if cerr != nil {
			x.Metrics.VaultError(tool.Connector.ID, cerr.Code)
			return nil, &Outcome{Err: cerr}
		}
		if apply != nil {
			apply(req)
		}
	}
	if st.lease != nil {
		// A keyed write: whether any byte of it left for the upstream
		// decides what a transport error means for the ledger (ledgerFinish).
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			WroteHeaderField: func(string, []string) { st.wrote.Store(true) },
		}))
	}
	resp, xerr := x.exchange(ctx, st, tool, req)
	if xerr != nil {
		return nil, &Outcome{Err: xerr}
	}
	status := resp.Status
	st.status = &status
	if resp.Status < 200 || resp.Status >= 300 {
		return nil, &Outcome{Err: upstream.ErrorFor(resp, op)}
	}
	return resp, nil
}

// exchange sends req upstream, timing it for the metrics and wrapping it in
// a client span (whose traceparent req then carries) when those are on.
func (x *Executor) exchange(ctx context.Context, st *callState, tool *fleet.Tool, req *http.Request) (*upstream.Response, *envelope.Error) {
	if x.Metrics == nil && x.Tracer == nil {
		resp, err := x.Upstream.Do(req)
		if err != nil {
			return nil, upstream.AsEnvelope(err)
		}
		return resp, nil
	}
	var span trace.Span
	if x.Tracer != nil {
		span = x.Tracer.StartUpstream(ctx, req)
	}
	start := time.Now()
	resp, err := x.Upstream.Do(req)
	d := time.Since(start)
	var e *envelope.Error
	var code string
	status := 0
	if err != nil {
		e = upstream.AsEnvelope(err)
		code = e.Code
	} else {
		status = resp.Status
	}
	x.Metrics.Upstream(tool.Connector.ID, tool.Name, d, code)
	if span != nil {
		tracing.EndUpstream(span, status, code)
	}
	return resp, e
}

// answerJSON renders an upstream answer for the caller, keeping the
// upstream's key order: compact JSON, a JSON string for text, or null
// (always compact JSON).
func answerJSON(resp *upstream.Response) json.RawMessage {
	if resp.IsJSON {
		return resp.Compact
	}
	if len(bytes.TrimSpace(resp.Body)) == 0 {
		return json.RawMessage("null")
	}
	b, _ := wirejson.Marshal(string(resp.Body))
	return b
}

// confirmationGate is the refusal of a call that needs confirmation and
// lacks it.
func confirmationGate(op *air.Operation) *envelope.Error {
	key := op.Input.Safety.ConfirmKey
	if key == "" {
		key = "confirm"
	}
	// The argument, as REST and MCP callers send it; required_flags
	// names the CLI's flag (the contract's form, which the SDKs turn into
	// required_arguments).
	msg := fmt.Sprintf("%s needs confirmation: pass %s: true in its arguments (a dry run needs it too).", op.ID, key)
	if op.Confirmation.Reason != "" {
		msg += " " + op.Confirmation.Reason
	}
	return &envelope.Error{Code: envelope.ConfirmationRequired, Message: msg,
		RequiredFlags: []string{"--" + strings.ReplaceAll(key, "_", "-")}}
}

func validationError(msg string, details json.RawMessage) *envelope.Error {
	return &envelope.Error{Code: envelope.ValidationError, Message: msg, Details: details}
}

// dryRunPlan describes the request a call would send, without credentials.
func dryRunPlan(t *fleet.Tool, req *http.Request) any {
	headers := map[string]string{}
	var names []string
	for k := range req.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		headers[strings.ToLower(k)] = req.Header.Get(k)
	}
	var body any
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(rc)
			rc.Close()
			if buf.Len() > 0 {
				dec := json.NewDecoder(&buf)
				dec.UseNumber()
				if dec.Decode(&body) != nil {
					body = buf.String()
				}
			}
		}
	}
	return map[string]any{
		"operation":             t.Op.ID,
		"tool":                  t.Name,
		"method":                req.Method,
		"url":                   req.URL.String(),
		"headers":               headers,
		"body":                  body,
		"confirmation_required": t.Op.Confirmation.Required,
		"effect_class":          string(air.EffectClassOf(t.Op)),
	}
}

// writeAudit appends the call's audit line.
func (x *Executor) writeAudit(st *callState, out *Outcome) {
	if x.Audit == nil {
		return
	}
	p := st.principal
	line := audit.Line{
		Time:           st.start,
		Sub:            p.Subject(),
		Connector:      st.tool.Connector.ID,
		Account:        st.account,
		Operation:      st.tool.Op.ID,
		Decision:       st.decision,
		Grant:          st.grantRule,
		UpstreamStatus: st.status,
		LatencyMs:      x.now().Sub(st.start).Milliseconds(),
		InputSHA256:    st.inputSHA256(),
		Rule:           st.rule,
		DryRun:         st.dryRun,
		TraceID:        st.traceID,
		EffectClass:    string(air.EffectClassOf(st.tool.Op)),
		LedgerID:       st.ledgerID,
		StagedFor:      st.stagedFor,
		Replay:         st.replay,
		ResolvedBy:     st.resolvedBy,
		ParentTraceID:  st.parentTraceID,
	}
	if p != nil {
		line.Issuer = p.Issuer
		line.ByTenant = optional(p.Tenant)
		line.ByBranch = optional(p.Branch)
		line.ByTurn = optional(p.Turn)
	}
	if out.Err != nil {
		c := out.Err.Code
		line.ErrorCode = &c
	}
	if err := x.Audit.Write(line); err != nil && x.AuditFailed != nil {
		x.AuditFailed(err)
	}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// inputSHA256 is the audit line's input hash.
func (st *callState) inputSHA256() string {
	if st.input == nil {
		return audit.InputSHA256(nil)
	}
	return st.input.InputSHA256()
}
