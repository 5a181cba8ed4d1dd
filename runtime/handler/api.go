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

// RuntimeVersion1 names the version of this package's API for generated
// code (Workspace, Operation, Input, EffectCall, FieldError and the helpers
// generated code calls). Every generated gateway refers to it (var _ =
// handler.RuntimeVersion1), so a tree generated for another version of the
// API fails to compile against this runtime instead of misbehaving. A change
// that breaks generated code renames it (RuntimeVersion2).
const RuntimeVersion1 = 1

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

	// Decode reads the arguments object straight from its JSON. It returns
	// false whenever it cannot decide alone (anything unusual, or input that
	// is not valid): the runtime then decodes the arguments generically and
	// calls FromArgs.
	Decode func(raw []byte) (Input, bool)
	// FromArgs converts decoded arguments (numbers as json.Number) and
	// validates them; false when they do not match the input schema.
	FromArgs func(args map[string]any) (Input, bool)
	// Build builds the upstream request.
	Build func(ctx context.Context, base *Base, in Input) (*http.Request, error)
	// Effect builds the effect report of a finished call.
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
// operation's typed input struct, or a MapInput.
type Input interface {
	// Args returns the arguments as decoded JSON (cold paths: validator
	// messages, tests).
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

// validator is what generated input structs add to Input: the generated
// check of the input schema (for an operation with SchemaCheck, the parts
// the generator specialised), nil or a *FieldError.
type validator interface {
	Validate() error
}

// FieldError is a generated validator's refusal: the argument and the JSON
// Schema keyword it fails.
type FieldError struct {
	// Path is a JSON pointer to the argument ("" for the arguments object).
	Path string
	// Rule is the keyword it fails: required, type, enum, pattern,
	// minLength, maximum, additionalProperties, …
	Rule string
}

// Error reads "at '/owner': required".
func (e *FieldError) Error() string { return "at '" + e.Path + "': " + e.Rule }

// Invalid is the FieldError of top-level argument prop ("" for the
// arguments object) failing rule.
func Invalid(prop, rule string) error {
	path := ""
	if prop != "" {
		path = "/" + strings.ReplaceAll(strings.ReplaceAll(prop, "~", "~0"), "/", "~1")
	}
	return &FieldError{Path: path, Rule: rule}
}

// EffectCall is what a generated effect function reads (effect.Call over
// typed arguments).
type EffectCall struct {
	// Input is the call's typed arguments; nil when they did not decode.
	Input Input
	// Args holds the decoded arguments when Input is nil (nil when they
	// were not a JSON object).
	Args map[string]any
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

// generatedHandler is the Handler of a generated operation.
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

// Decode runs the generated decoder first, then (for anything it does not
// take) the generic decoding and the generated conversion. Arguments the
// conversion refuses stay a MapInput, which Check refuses.
func (h *generatedHandler) Decode(raw json.RawMessage) (Input, bool) {
	if in, ok := h.op.Decode(raw); ok {
		return in, true
	}
	args, err := DecodeArgs(raw)
	if err != nil {
		return nil, false
	}
	if in, ok := h.op.FromArgs(args); ok {
		return in, true
	}
	return &MapInput{m: args, op: h.aop}, true
}

func (h *generatedHandler) Check(in Input) (Input, string, bool) {
	v, typed := in.(validator)
	var verr error
	if typed {
		verr = v.Validate()
	}
	if typed && verr == nil {
		if !h.op.SchemaCheck {
			return in, "", true
		}
		a := in.Args()
		if msg := h.schema.validate(a); msg != "" {
			return &MapInput{m: a, op: h.aop}, msg, false
		}
		if msg := integerProblem(h.aop.Input.Schema, a); msg != "" {
			return &MapInput{m: a, op: h.aop}, msg, false
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
	if verr != nil {
		return in, verr.Error(), false
	}
	return in, "the arguments are not valid", false
}

func (h *generatedHandler) Draft(in Input, _ *air.Operation) (Input, *envelope.Error) {
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
	return d, nil
}

func (h *generatedHandler) Build(ctx context.Context, base *Base, in Input) (*http.Request, error) {
	return h.op.Build(ctx, base, in)
}

// Effect hands generated code a MapInput as EffectCall.Args (its typed
// reading takes only its own input struct).
func (h *generatedHandler) Effect(c *EffectCall) *effect.Report {
	if m, ok := c.Input.(*MapInput); ok {
		cc := *c
		cc.Input, cc.Args = nil, m.m
		return h.op.Effect(&cc)
	}
	return h.op.Effect(c)
}
