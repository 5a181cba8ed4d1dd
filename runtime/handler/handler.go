// Package handler is what serves one operation's calls, below the executor:
// the Handler interface, its two implementations (AIR-driven, for every
// tool of anvil serve mcp --fleet, and generated, over a generated
// gateway's Operation table), and the API that generated code is written
// against, under RuntimeVersion2: the Workspace and Operation tables; the
// typed inputs (Opt arguments, the Controls every input embeds, Fields);
// the decoder (ArgReader), the checks (Checks, Required, OneOf, …), the
// request Builder and the effect Mapping generated functions are lists of
// calls to. It reads AIR and calls runtime/upstream, runtime/effect and
// runtime/audit's canonical hash; it knows nothing of grants, credentials
// or HTTP front doors.
package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/audit"
	"github.com/anvil-dev/anvil/runtime/effect"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// Handler is the part of a call that depends on how its operation is
// served: reading the arguments, checking them, mapping a staged call to
// its draft, building the upstream request and the effect report. The
// executor does everything else (grant, gates, credential, upstream leg,
// staging, audit, answer) the same way whichever Handler a tool holds.
// There are two: the AIR-driven one (airHandler, every tool of anvil serve
// mcp --fleet) and the generated one (generatedHandler, over a generated
// gateway's Operation).
type Handler interface {
	// Decode reads the arguments object (empty or null: {}). ok is false
	// when raw is not one JSON object. The input it returns has not
	// necessarily been checked.
	Decode(raw json.RawMessage) (in Input, ok bool)
	// Check checks in against the operation's input schema. It returns the
	// input the call goes on with and, when it does not match, false and
	// the validator's one-line message.
	Check(in Input) (checked Input, problem string, ok bool)
	// Draft maps a checked staged call's input to the input of its draft
	// operation (draft), in the mapping's order.
	Draft(in Input, draft *air.Operation) (Input, *envelope.Error)
	// Build builds the upstream request of a checked input.
	Build(ctx context.Context, base *Base, in Input) (*http.Request, error)
	// Effect builds the effect report of a call.
	Effect(c *EffectCall) *effect.Report
}

// MapInput is a tool call's arguments as decoded JSON (numbers as
// json.Number): the AIR-driven handler's input, and a generated handler's
// for arguments its typed decoding does not take.
type MapInput struct {
	m  map[string]any
	op *air.Operation
}

// NewMapInput wraps decoded arguments of op (nil: {}).
func NewMapInput(m map[string]any, op *air.Operation) *MapInput {
	if m == nil {
		m = map[string]any{}
	}
	return &MapInput{m: m, op: op}
}

// Args returns the arguments (not a copy).
func (in *MapInput) Args() map[string]any { return in.m }

// InputSHA256 is audit.InputSHA256 of the arguments.
func (in *MapInput) InputSHA256() string { return audit.InputSHA256(in.m) }

// IdempotencyKey reads the carrier input (air.Safety.IdempotencyKey).
func (in *MapInput) IdempotencyKey() (s string, isString, present bool) {
	k := in.op.Input.Safety.IdempotencyKey
	if k == "" {
		return "", false, false
	}
	v, ok := in.m[k]
	if !ok || v == nil {
		return "", false, false
	}
	s, isString = v.(string)
	return s, isString, true
}

// SetIdempotencyKey sets the carrier input.
func (in *MapInput) SetIdempotencyKey(key string) {
	if k := in.op.Input.Safety.IdempotencyKey; k != "" {
		in.m[k] = key
	}
}

// confirmKey is the confirm input's name ("confirm" when the operation
// names none).
func (in *MapInput) confirmKey() string {
	if k := in.op.Input.Safety.ConfirmKey; k != "" {
		return k
	}
	return "confirm"
}

// Confirm reads the confirm input: its value when it is a boolean, and
// whether it is present.
func (in *MapInput) Confirm() (v, present bool) {
	x, ok := in.m[in.confirmKey()]
	b, _ := x.(bool)
	return b, ok
}

// SetConfirm sets the confirm input.
func (in *MapInput) SetConfirm(v bool) { in.m[in.confirmKey()] = v }

// DryRun reports whether anvil_dry_run is true.
func (in *MapInput) DryRun() bool {
	v, _ := in.m[air.DryRunKey].(bool)
	return v
}

// SetDryRun sets anvil_dry_run to true.
func (in *MapInput) SetDryRun() { in.m[air.DryRunKey] = true }

// argsOf is the decoded form of an input (nil for none).
func argsOf(in Input) map[string]any {
	if in == nil {
		return nil
	}
	return in.Args()
}

// ForAIR is the AIR-driven Handler of op: schema validates its arguments
// (compiled on first use), tools resolves the follow-ups and drafts of its
// effect reports.
func ForAIR(op *air.Operation, schema *Validator, tools effect.Tools) Handler {
	return &airHandler{op: op, schema: schema, tools: tools}
}

// airHandler is the AIR-driven handler: the JSON Schema validator, the
// generic request builder and effect.Build, all read from the operation.
type airHandler struct {
	op     *air.Operation
	schema *Validator
	tools  effect.Tools
}

func (h *airHandler) Prepare() *envelope.Error { return prepare(h.schema, h.op) }

func (h *airHandler) Decode(raw json.RawMessage) (Input, bool) {
	args, err := DecodeArgs(raw)
	if err != nil {
		return nil, false
	}
	return &MapInput{m: args, op: h.op}, true
}

func (h *airHandler) Check(in Input) (Input, string, bool) {
	args := argsOf(in)
	if msg := h.schema.validate(args); msg != "" {
		return in, msg, false
	}
	if msg := integerProblem(h.op.Input.Schema, args); msg != "" {
		return in, msg, false
	}
	return in, "", true
}

func (h *airHandler) Draft(in Input, draft *air.Operation) (Input, *envelope.Error) {
	_, resolved, err := effect.ResolveDraft(h.op, argsOf(in), h.tools)
	if err != nil {
		return nil, err
	}
	return NewMapInput(resolved.Map(), draft), nil
}

func (h *airHandler) Build(ctx context.Context, base *Base, in Input) (*http.Request, error) {
	return upstream.BuildRequest(ctx, base.URL, h.op, argsOf(in))
}

func (h *airHandler) Effect(c *EffectCall) *effect.Report {
	return effect.Build(h.op, effect.Call{Request: argsOf(c.Input), Response: c.Response, IdempotencyKey: c.IdempotencyKey,
		Failed: c.Failed, Staged: c.Staged, Now: c.Now}, h.tools)
}

// DecodeArgs decodes a tool call's arguments object keeping numbers exact
// (json.Number); empty input and null are {}.
func DecodeArgs(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("arguments must be a JSON object")
	}
	if dec.More() {
		return nil, fmt.Errorf("arguments must be one JSON object")
	}
	return m, nil
}

// schemaMessage shortens a validator error to one line.
func schemaMessage(err error) string {
	s := err.Error()
	s = strings.ReplaceAll(s, "\n", "; ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// CompileSchema compiles an input schema for validation (draft 2020-12);
// name names it in the validator's messages (anvil:///tools/<name>.json).
func CompileSchema(name string, s *air.Schema) (*jsonschema.Schema, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "anvil:///tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
