package handler

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/effect"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

// RuntimeVersion2 names the version of this package's API for generated
// code (Workspace, Operation, Input, Controls, Opt, ArgReader, Fields,
// Builder, Mapping, EffectCall, FieldError and the helpers generated code
// calls). Every generated gateway refers to it (var _ =
// handler.RuntimeVersion2), so a tree generated for another version of the
// API fails to compile against this runtime instead of misbehaving. A change
// that breaks generated code renames it (RuntimeVersion3). Version 1 trees
// (two decoders per operation, every control accessor generated) no longer
// compile: regenerate them with anvil compile --workspace.
const RuntimeVersion2 = 2

// Workspace is the table a generated gateway registers: every
// connector of the workspace it was generated from, fixed at generation time.
type Workspace struct {
	Connectors []*Connector
}

// Connector is one bundle of a generated workspace.
type Connector struct {
	// ID is the connector id (the bundle's path in the workspace, folded).
	ID string
	// AIR is the bundle's AIR document (canonical JSON, its approved
	// operations only): what the runtime reads about every operation
	// (policies, auth, listing, schema) comes from it, exactly as for the
	// generic gateway. ANVIL_UPSTREAM_<CONNECTOR>_URL overrides its server
	// URL, as it does for the generic gateway.
	AIR string
	// BundleHash is the bundle's generation.json bundleHash when the tree
	// was generated ("" when it had none): what the gateway reports it was
	// built from (version, /readyz).
	BundleHash string
	// Ops are the generated handlers, one per served operation.
	Ops []*Operation
}

// Operation is the generated handler of one served operation, which it
// names by its AIR id; everything else about the operation is read from the
// AIR.
type Operation struct {
	// ID is the AIR operation id.
	ID string
	// SchemaCheck asks for the shared JSON Schema validator on top of the
	// generated one, for inputs whose schemas the generator does not
	// specialise (nested objects, combinators).
	SchemaCheck bool

	// Decode reads the arguments object straight from its JSON into the
	// operation's typed input (see ArgReader): it returns the input and nil,
	// the input and the first *FieldError its Validate finds (the input still
	// holds every argument), or nil and an error when raw is not one JSON
	// object as DecodeArgs reads it.
	Decode func(raw []byte) (Input, error)
	// Build builds the upstream request.
	Build func(ctx context.Context, base *Base, in Input) (*http.Request, error)
	// Effect builds the effect report of a finished call; nil for an
	// operation whose report maps no arguments (no lookup, inverse,
	// compensation or draft), which effect.Build then writes from the AIR.
	Effect func(c *EffectCall) *effect.Report
	// Draft maps a staged call's input to its draft's input, in the draft
	// mapping's order; nil when the operation has no draft form.
	Draft func(in Input) (draft Input, missing *DraftMissing)
}

// DraftMissing names a draft argument whose path named nothing.
type DraftMissing struct {
	// Argument is the draft input's name.
	Argument string
	// Reason is why it has no value ("request.name names nothing in this call").
	Reason string
}

// Input is a call's arguments as the executor reads them: a generated
// operation's typed input struct (Typed: the Controls it embeds make it an
// Input), or a MapInput.
type Input interface {
	// Args returns the arguments as decoded JSON (cold paths: validator
	// messages, the ledger, tests).
	Args() map[string]any
	// InputSHA256 is audit.InputSHA256 of Args().
	InputSHA256() string
	// IdempotencyKey reads the carrier input (air.Safety.IdempotencyKey):
	// present is false when it is absent or null; isString tells a string
	// value (s) from another one.
	IdempotencyKey() (s string, isString, present bool)
	// SetIdempotencyKey sets the carrier input.
	SetIdempotencyKey(key string)
	// Confirm reads the confirm input (air.Safety.ConfirmKey): its value when
	// it is a boolean, and whether it is present.
	Confirm() (v, present bool)
	// SetConfirm sets the confirm input.
	SetConfirm(v bool)
	// DryRun reports whether anvil_dry_run is true.
	DryRun() bool
	// SetDryRun sets anvil_dry_run to true.
	SetDryRun()
}

// EffectCall is what a generated effect function reads (effect.Call over
// typed arguments).
type EffectCall struct {
	// Input is the call's typed arguments; nil when they were not a JSON
	// object.
	Input Input
	// Response is the decoded upstream answer (the draft's for a staged call).
	Response any
	// IdempotencyKey is the key that went upstream; "" when none did.
	IdempotencyKey string
	// Failed marks a call that returned an error.
	Failed bool
	// Staged marks a call that performed the draft form instead.
	Staged bool
	// Now is the time of the call.
	Now time.Time
}

// Base is a connector's upstream base URL, parsed once.
type Base struct {
	// URL is the base URL as configured.
	URL string
	// Prefix is scheme://host plus the base path without a trailing slash.
	Prefix string
	// Query is the base URL's raw query ("" when none).
	Query string
	// Err is set when the base URL is not an absolute http(s) URL; every
	// request build then fails with it (internal_error).
	Err bool
}

// ParseBase parses an upstream base URL as upstream.BuildRequest does.
func ParseBase(raw string) *Base {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &Base{URL: raw, Err: true}
	}
	return &Base{URL: raw, Prefix: u.Scheme + "://" + u.Host + strings.TrimSuffix(u.EscapedPath(), "/"), Query: u.RawQuery}
}

// Generated is the Handler of a generated operation: op's functions for
// the operation aop, with the shared validator schema for the parts they do
// not specialise and for the wording of refusals.
func Generated(op *Operation, aop *air.Operation, schema *Validator) Handler {
	return &generatedHandler{op: op, aop: aop, schema: schema}
}

// generatedHandler is the Handler of a generated operation. Its inputs are
// the operation's typed struct: the generated decoder keeps every argument,
// of whatever type, so nothing falls back to a MapInput.
type generatedHandler struct {
	op     *Operation
	aop    *air.Operation
	schema *Validator // the shared validator: SchemaCheck and messages
}

// Prepare compiles the shared validator first only for an operation whose
// every call needs it (SchemaCheck); the others compile it on their first
// refusal, which it words.
func (h *generatedHandler) Prepare() *envelope.Error {
	if !h.op.SchemaCheck {
		return nil
	}
	return prepare(h.schema, h.aop)
}

// Decode runs the generated decoder. Its verdict is not kept: Check runs
// Validate again, since the executor may set controls in between.
func (h *generatedHandler) Decode(raw json.RawMessage) (Input, bool) {
	in, _ := h.op.Decode(raw)
	if in == nil {
		return nil, false
	}
	setOperation(in, h.aop)
	return in, true
}

func (h *generatedHandler) Check(in Input) (Input, string, bool) {
	verr := validate(in)
	if verr == nil {
		if !h.op.SchemaCheck {
			return in, "", true
		}
		a := in.Args()
		if msg := h.schema.validate(a); msg != "" {
			return in, msg, false
		}
		if msg := integerProblem(h.aop.Input.Schema, a); msg != "" {
			return in, msg, false
		}
		return in, "", true
	}
	// The shared validator words the refusal; it finds nothing only where
	// the generated one is stricter, which the differential tests rule out
	// (the generated refusal is then all there is to say).
	args := argsOf(in)
	if msg := h.schema.validate(args); msg != "" {
		return in, msg, false
	}
	if msg := integerProblem(h.aop.Input.Schema, args); msg != "" {
		return in, msg, false
	}
	return in, verr.Error(), false
}

func (h *generatedHandler) Draft(in Input, draft *air.Operation) (Input, *envelope.Error) {
	if h.op.Draft == nil { // the AIR has a draft form the generated code lacks
		return nil, &envelope.Error{Code: envelope.InternalError, Operation: h.aop.ID,
			Message: "The generated gateway has no draft mapping for " + h.aop.ID + "; nothing was called."}
	}
	d, missing := h.op.Draft(in)
	if missing != nil {
		b, _ := effect.Args{{Name: "code", Value: effect.CodeDraftArgumentMissing}, {Name: "argument", Value: missing.Argument}}.MarshalJSON()
		id := h.aop.ID
		return nil, &envelope.Error{Code: envelope.ValidationError, Operation: id, Details: b,
			Message: "Cannot stage " + id + ": the draft argument " + missing.Argument + " has no value (" + missing.Reason + "); nothing was called."}
	}
	setOperation(d, draft)
	return d, nil
}

func (h *generatedHandler) Build(ctx context.Context, base *Base, in Input) (*http.Request, error) {
	return h.op.Build(ctx, base, in)
}

// Effect runs the generated effect function, or, for an operation without
// one (its report maps no arguments), effect.Build over the AIR, which then
// reads nothing of the arguments.
func (h *generatedHandler) Effect(c *EffectCall) *effect.Report {
	if h.op.Effect == nil {
		return effect.Build(h.aop, effect.Call{Response: c.Response, IdempotencyKey: c.IdempotencyKey,
			Failed: c.Failed, Staged: c.Staged, Now: c.Now}, nil)
	}
	return h.op.Effect(c)
}
