// Package anvilsdk is the runtime of every generated Go SDK: the gateway
// transport (MCP JSON-RPC over Streamable HTTP, one short-lived session per
// call, as the Python and TypeScript SDKs speak it), the local safety gates,
// the retry policy, the effect report and the typed errors. anvil package
// harness copies this file into the SDK's module, renamed to the SDK's
// package, beside the generated client (compiler/emit/gosdk); it is tested
// here, in its own package, by runtime_test.go. Standard library only.
package anvilsdk

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The environment a client reads (and no other variable: no upstream
// credential is ever looked for).
const (
	EnvGatewayURL       = "ANVIL_GATEWAY_URL"
	EnvGatewayTokenFile = "ANVIL_GATEWAY_TOKEN_FILE"
	EnvGatewayConnector = "ANVIL_GATEWAY_CONNECTOR"
)

const (
	protocolVersion  = "2025-06-18"
	defaultUserAgent = "anvil-sdk (go)"
	dryRunArg        = "anvil_dry_run"
	maxAnswer        = 8 << 20
	unreachable      = "The Anvil gateway could not be reached."
)

// ErrorCode is one of the gateway's error codes.
type ErrorCode string

// The error codes, as every Anvil SDK and the gateway name them.
const (
	CodeValidationError      ErrorCode = "validation_error"
	CodeAuthRequired         ErrorCode = "auth_required"
	CodePermissionDenied     ErrorCode = "permission_denied"
	CodeNotFound             ErrorCode = "not_found"
	CodeConflict             ErrorCode = "conflict"
	CodeRateLimited          ErrorCode = "rate_limited"
	CodeUpstreamTimeout      ErrorCode = "upstream_timeout"
	CodeUpstreamUnavailable  ErrorCode = "upstream_unavailable"
	CodeUnsafeRetryBlocked   ErrorCode = "unsafe_retry_blocked"
	CodeConfirmationRequired ErrorCode = "confirmation_required"
	CodeIdempotencyRequired  ErrorCode = "idempotency_required"
	CodeSchemaMismatch       ErrorCode = "schema_mismatch"
	CodeUnsupportedOperation ErrorCode = "unsupported_operation"
	CodePolicyDenied         ErrorCode = "policy_denied"
	CodeUnknownUpstreamError ErrorCode = "unknown_upstream_error"
)

// ErrorCodes lists every code an *Error carries.
var ErrorCodes = []ErrorCode{CodeValidationError, CodeAuthRequired, CodePermissionDenied, CodeNotFound, CodeConflict,
	CodeRateLimited, CodeUpstreamTimeout, CodeUpstreamUnavailable, CodeUnsafeRetryBlocked, CodeConfirmationRequired,
	CodeIdempotencyRequired, CodeSchemaMismatch, CodeUnsupportedOperation, CodePolicyDenied, CodeUnknownUpstreamError}

// Error is a call that failed, locally or at the gateway. errors.Is(err,
// ErrPolicyDenied) (one sentinel per code) tells the codes apart.
type Error struct {
	Code              ErrorCode      `json:"code"`
	Message           string         `json:"message"`
	Operation         string         `json:"operation,omitempty"`
	TraceID           string         `json:"trace_id,omitempty"`
	Retryable         bool           `json:"retryable"`
	SafeToRetry       bool           `json:"safe_to_retry"`
	Upstream          map[string]any `json:"upstream,omitempty"`
	RequiredArguments []string       `json:"required_arguments,omitempty"`
	Details           map[string]any `json:"details,omitempty"`
	RetryAfterMs      *int64         `json:"retry_after_ms,omitempty"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Is matches the sentinel of e's code (ErrNotFound, ...) and any *Error of
// the same code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// One sentinel per code, for errors.Is.
var (
	ErrValidation           = &Error{Code: CodeValidationError}
	ErrAuthRequired         = &Error{Code: CodeAuthRequired}
	ErrPermissionDenied     = &Error{Code: CodePermissionDenied}
	ErrNotFound             = &Error{Code: CodeNotFound}
	ErrConflict             = &Error{Code: CodeConflict}
	ErrRateLimited          = &Error{Code: CodeRateLimited}
	ErrUpstreamTimeout      = &Error{Code: CodeUpstreamTimeout}
	ErrUpstreamUnavailable  = &Error{Code: CodeUpstreamUnavailable}
	ErrUnsafeRetryBlocked   = &Error{Code: CodeUnsafeRetryBlocked}
	ErrConfirmationRequired = &Error{Code: CodeConfirmationRequired}
	ErrIdempotencyRequired  = &Error{Code: CodeIdempotencyRequired}
	ErrSchemaMismatch       = &Error{Code: CodeSchemaMismatch}
	ErrUnsupportedOperation = &Error{Code: CodeUnsupportedOperation}
	ErrPolicyDenied         = &Error{Code: CodePolicyDenied}
	ErrUnknownUpstream      = &Error{Code: CodeUnknownUpstreamError}
)

func knownCode(c string) (ErrorCode, bool) {
	for _, k := range ErrorCodes {
		if string(k) == c {
			return k, true
		}
	}
	return "", false
}

func newError(code ErrorCode, op, format string, args ...any) *Error {
	return &Error{Code: code, Operation: op, Message: fmt.Sprintf(format, args...)}
}

// FollowUp is an undo, compensation or promote call an effect report names:
// call Tool with Arguments (Client.Call does).
type FollowUp struct {
	Kind      string          `json:"kind,omitempty"`
	Operation string          `json:"operation"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// Lookup finds a call's effect for reconciliation.
type Lookup struct {
	By        string          `json:"by"`
	Operation string          `json:"operation"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// Staged is what a staged call (WithStage) made: the draft's handle and the
// calls that promote or discard it.
type Staged struct {
	DraftOperation string    `json:"draft_operation"`
	Handle         any       `json:"handle"`
	Promote        *FollowUp `json:"promote"`
	Discard        *FollowUp `json:"discard"`
}

// EffectReport is what a call did to the world and how to undo it (the
// gateway's _meta.effect).
type EffectReport struct {
	Class           string    `json:"class"`
	Operation       string    `json:"operation"`
	IdempotencyKey  *string   `json:"idempotency_key"`
	Undo            *FollowUp `json:"undo"`
	DeadlineMs      *int64    `json:"deadline_ms"`
	Compensate      *FollowUp `json:"compensate,omitempty"`
	Lookup          *Lookup   `json:"lookup"`
	UndoUnavailable string    `json:"undo_unavailable,omitempty"`
	Staged          *Staged   `json:"staged,omitempty"`
}

// Plan is what a dry run returns: the request the gateway would send.
type Plan struct {
	Operation            string            `json:"operation"`
	Tool                 string            `json:"tool"`
	Method               string            `json:"method"`
	URL                  string            `json:"url"`
	Headers              map[string]string `json:"headers"`
	Body                 json.RawMessage   `json:"body"`
	ConfirmationRequired bool              `json:"confirmation_required"`
	EffectClass          string            `json:"effect_class"`
}

// SearchResult is one tool the gateway's search ranked.
type SearchResult struct {
	Name            string `json:"name"`
	OperationID     string `json:"operation_id"`
	Title           string `json:"title"`
	Summary         string `json:"summary"`
	Effect          string `json:"effect"`
	ConfirmRequired bool   `json:"confirm_required"`
	// Method is this SDK's method for the tool, or "" when it has none.
	Method string `json:"method"`
}

// operation is one served operation as the generated client declares it.
type operation struct {
	Method      string // the Go method
	ID          string // the AIR id
	Tool        string // the tool name without the connector prefix
	Read        bool
	Confirm     bool
	ConfirmKey  string // the tool input that confirms, when Confirm
	IdemInput   string // the tool input that carries the key upstream, or ""
	KeyRequired bool   // a caller key is required
	KeyDerived  bool   // a key is derived from the inputs when none is given
}

// Option configures a Client.
type Option func(*Client)

// WithGatewayURL sets the gateway's /mcp URL (default: ANVIL_GATEWAY_URL).
func WithGatewayURL(u string) Option { return func(c *Client) { c.url = u } }

// WithTokenFile sets the file the bearer token is read from on every call
// (default: ANVIL_GATEWAY_TOKEN_FILE).
func WithTokenFile(path string) Option { return func(c *Client) { c.tokenFile = path } }

// WithConnector sets the connector id tools are called under (default:
// ANVIL_GATEWAY_CONNECTOR, else the one the SDK was built for).
func WithConnector(id string) Option { return func(c *Client) { c.connector = id } }

// WithHTTPClient sets the HTTP client (default: one that never follows a
// redirect, so the bearer token goes to the gateway only).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithTimeout bounds each HTTP request of every call (default 60s; a call's
// context and WithCallTimeout bound it further).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithMaxRetries sets how many times a retryable failure is retried (default
// 2; 0 turns retries off). See Client.
func WithMaxRetries(n int) Option { return func(c *Client) { c.maxRetries = n } }

// WithUserAgent sets the User-Agent and MCP client name.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// Client calls the Anvil gateway as one connector. Every call is an MCP
// tools/call in a fresh session, with the bearer read from the token file
// then. A call that fails with rate_limited, upstream_unavailable or
// upstream_timeout and is marked retryable is sent again (up to
// WithMaxRetries times, after the gateway's retry_after_ms or 0.5s, 1s, 2s,
// ... up to 8s), but only for reads and writes whose idempotency key goes
// upstream. A Client is safe for concurrent use.
type Client struct {
	url, tokenFile, connector, userAgent string
	http                                 *http.Client
	timeout                              time.Duration
	maxRetries                           int
	ops                                  []*operation

	mu         sync.Mutex
	lastEffect *EffectReport
}

func newClient(defaultConnector string, ops []*operation, opts ...Option) (*Client, error) {
	c := &Client{url: os.Getenv(EnvGatewayURL), tokenFile: os.Getenv(EnvGatewayTokenFile), connector: os.Getenv(EnvGatewayConnector),
		userAgent: defaultUserAgent, timeout: 60 * time.Second, maxRetries: 2, ops: ops}
	if c.connector == "" {
		c.connector = defaultConnector
	}
	for _, o := range opts {
		o(c)
	}
	if c.http == nil {
		c.http = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if c.url != "" {
		u, err := url.Parse(c.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return nil, &Error{Code: CodeValidationError, Message: "The gateway URL must be an http(s) URL without credentials.",
				Details: map[string]any{"code": "sdk/invalid_gateway_url"}}
		}
	}
	return c, nil
}

// Connector is the connector id tools are called under (<connector>__<tool>).
func (c *Client) Connector() string { return c.connector }

// LastEffect is the effect report of the client's last call (nil after a
// dry run or when the gateway sent none). With concurrent calls, pass
// WithEffect to each call instead.
func (c *Client) LastEffect() *EffectReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastEffect
}

// CallOption is a safety control or transport option of one call.
type CallOption func(*callOptions)

type callOptions struct {
	confirm, stage bool
	key            *string
	plan           *Plan
	effect         *EffectReport
	headers        http.Header
	timeout        time.Duration
}

// WithConfirm confirms a write that needs confirmation; without it such a
// call is refused before anything is sent (ErrConfirmationRequired).
func WithConfirm() CallOption { return func(o *callOptions) { o.confirm = true } }

// WithIdempotencyKey sets the key sent upstream (derived from the inputs,
// where the operation supports keys, when none is given).
func WithIdempotencyKey(key string) CallOption { return func(o *callOptions) { o.key = &key } }

// WithDryRun asks the gateway for its plan, written into plan; nothing is
// sent upstream, nothing changes, and the call returns a zero result.
func WithDryRun(plan *Plan) CallOption { return func(o *callOptions) { o.plan = plan } }

// WithStage performs the operation's draft form instead (operations that
// declare one); the effect report's Staged names the promote and discard
// calls.
func WithStage() CallOption { return func(o *callOptions) { o.stage = true } }

// WithEffect writes the call's effect report into effect (left as it was
// when the gateway sent none).
func WithEffect(effect *EffectReport) CallOption { return func(o *callOptions) { o.effect = effect } }

// WithHeader adds an HTTP header to the call's requests to the gateway.
func WithHeader(name, value string) CallOption {
	return func(o *callOptions) {
		if o.headers == nil {
			o.headers = http.Header{}
		}
		o.headers.Add(name, value)
	}
}

// WithCallTimeout bounds each HTTP request of this call.
func WithCallTimeout(d time.Duration) CallOption { return func(o *callOptions) { o.timeout = d } }

// Call calls an operation by Go method name, AIR id or tool name (bare, or
// <connector>__<tool> as an effect report names it) with tool-input
// arguments, and returns its result as JSON. It makes the undo call an
// effect report names: c.Call(ctx, undo.Tool, undo.Arguments, WithConfirm()).
func (c *Client) Call(ctx context.Context, name string, arguments json.RawMessage, opts ...CallOption) (json.RawMessage, error) {
	op := c.operationFor(name)
	if op == nil {
		return nil, newError(CodeUnsupportedOperation, name, "%s is not an operation of this client (connector %s).", name, c.connector)
	}
	var out json.RawMessage
	if len(arguments) == 0 {
		arguments = json.RawMessage("{}")
	}
	if err := c.invoke(ctx, op, arguments, &out, opts); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Client) operationFor(name string) *operation {
	tool := name
	if strings.HasPrefix(name, c.connector+"__") {
		tool = name[len(c.connector)+2:]
	} else if strings.Contains(name, "__") {
		return nil
	}
	for _, op := range c.ops {
		if op.Method == name || op.ID == name || op.Tool == tool {
			return op
		}
	}
	return nil
}

// invoke runs one call of op with input (a JSON object of tool inputs) and
// decodes its result into out.
func (c *Client) invoke(ctx context.Context, op *operation, input any, out any, opts []CallOption) error {
	var o callOptions
	for _, f := range opts {
		f(&o)
	}
	args, err := toArguments(input)
	if err != nil {
		return newError(CodeValidationError, op.ID, "The arguments of %s are not a JSON object: %v", op.ID, err)
	}
	if op.Confirm && !o.confirm {
		return &Error{Code: CodeConfirmationRequired, Operation: op.ID, RequiredArguments: []string{"confirm"},
			Message: op.ID + " needs confirmation: pass WithConfirm() only when the task really asks for this change.",
			Details: map[string]any{"code": "sdk/confirmation_required"}}
	}
	key, err := resolveKey(op, o.key, args)
	if err != nil {
		return err
	}
	if c.url == "" {
		return &Error{Code: CodeValidationError, Operation: op.ID, Details: map[string]any{"code": "sdk/gateway_url_unset"},
			Message: EnvGatewayURL + " is not set; this client calls operations only through the Anvil gateway."}
	}
	if op.Confirm && o.confirm {
		args[op.ConfirmKey] = true
	}
	if key != "" && op.IdemInput != "" {
		args[op.IdemInput] = key
	}
	if o.plan != nil {
		args[dryRunArg] = true
	}
	var meta map[string]any
	if o.stage {
		meta = map[string]any{"stage": true}
	}
	retries := 0
	if op.Read || (key != "" && op.IdemInput != "") {
		retries = c.maxRetries
	}
	c.mu.Lock()
	c.lastEffect = nil
	c.mu.Unlock()
	for attempt := 0; ; attempt++ {
		result, err := c.callTool(ctx, c.connector+"__"+op.Tool, args, meta, op.ID, &o)
		if err == nil {
			return c.decode(result, op, out, &o)
		}
		var e *Error
		if attempt >= retries || !errors.As(err, &e) || !e.Retryable ||
			(e.Code != CodeRateLimited && e.Code != CodeUpstreamUnavailable && e.Code != CodeUpstreamTimeout) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(retryDelay(attempt, e.RetryAfterMs)):
		}
	}
}

// retryDelay is the wait before retry attempt+1: retry_after_ms (capped at
// a minute), else 0.5s doubling up to 8s.
func retryDelay(attempt int, afterMs *int64) time.Duration {
	if afterMs != nil && *afterMs >= 0 {
		return min(time.Duration(*afterMs)*time.Millisecond, time.Minute)
	}
	return min(500*time.Millisecond<<attempt, 8*time.Second)
}

func toArguments(input any) (map[string]any, error) {
	b, ok := input.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(input); err != nil {
			return nil, err
		}
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var args map[string]any
	if err := d.Decode(&args); err != nil {
		return nil, err
	}
	if args == nil {
		return nil, errors.New("null")
	}
	return args, nil
}

// resolveKey is the call's idempotency key: the caller's, a derived one
// ("anvil-" + 32 hex of sha256(id NUL canonical JSON of the inputs), as the
// other SDKs derive it), or "".
func resolveKey(op *operation, given *string, args map[string]any) (string, error) {
	if given != nil {
		if *given == "" {
			return "", &Error{Code: CodeValidationError, Operation: op.ID, Message: "The idempotency key must not be empty.",
				Details: map[string]any{"code": "sdk/invalid_idempotency_key"}}
		}
		return *given, nil
	}
	if op.KeyRequired {
		return "", &Error{Code: CodeIdempotencyRequired, Operation: op.ID, RequiredArguments: []string{"idempotency_key"},
			Message: op.ID + " needs an idempotency key: pass WithIdempotencyKey.", Details: map[string]any{"code": "sdk/idempotency_required"}}
	}
	if !op.KeyDerived {
		return "", nil
	}
	var canon bytes.Buffer
	writeCanonical(&canon, args)
	sum := sha256.Sum256([]byte(op.ID + "\x00" + canon.String()))
	return "anvil-" + hex.EncodeToString(sum[:])[:32], nil
}

// writeCanonical writes v as compact JSON with sorted keys.
func writeCanonical(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, k)
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	default:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(x)
		b.Truncate(b.Len() - 1)
	}
}

// toolResult is a tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	Meta              struct {
		Effect *EffectReport `json:"effect"`
	} `json:"_meta"`
}

// decode records the effect report and writes the result's data into out:
// a dry run's plan into the WithDryRun plan, else the first of
// structuredContent.anvil_unvalidated, the text when it is JSON,
// structuredContent.result when it is the only key, structuredContent.
func (c *Client) decode(r *toolResult, op *operation, out any, o *callOptions) error {
	if r.Meta.Effect != nil {
		c.mu.Lock()
		c.lastEffect = r.Meta.Effect
		c.mu.Unlock()
		if o.effect != nil {
			*o.effect = *r.Meta.Effect
		}
	}
	text, hasText := "", false
	for _, item := range r.Content {
		if item.Type == "text" {
			text, hasText = item.Text, true
			break
		}
	}
	if r.IsError {
		return toolError(text, op.ID)
	}
	var structured map[string]json.RawMessage
	_ = json.Unmarshal(r.StructuredContent, &structured)
	if p, ok := structured[dryRunArg]; ok {
		if o.plan != nil {
			return json.Unmarshal(p, o.plan)
		}
		return nil
	}
	data := json.RawMessage(nil)
	switch {
	case structured["anvil_unvalidated"] != nil:
		data = structured["anvil_unvalidated"]
	case hasText && json.Valid([]byte(text)):
		data = json.RawMessage(text)
	case len(structured) == 1 && structured["result"] != nil:
		data = structured["result"]
	case len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null":
		data = r.StructuredContent
	case hasText:
		data, _ = json.Marshal(text)
	default:
		data = json.RawMessage("null")
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = append(json.RawMessage(nil), data...)
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &Error{Code: CodeSchemaMismatch, Operation: op.ID, Message: "The answer of " + op.ID + " does not fit its result type: " + err.Error(),
			Details: map[string]any{"code": "sdk/result_type"}}
	}
	return nil
}

// envelope is the gateway's error envelope.
type envelope struct {
	Code          string         `json:"code"`
	Message       string         `json:"message"`
	Operation     string         `json:"operation"`
	TraceID       string         `json:"trace_id"`
	Retryable     bool           `json:"retryable"`
	SafeToRetry   bool           `json:"safe_to_retry"`
	Upstream      map[string]any `json:"upstream"`
	RequiredFlags []string       `json:"required_flags"`
	Details       map[string]any `json:"details"`
	RetryAfterMs  *int64         `json:"retry_after_ms"`
}

func (env *envelope) toError(op string, fallback ErrorCode) *Error {
	e := &Error{Code: fallback, Message: env.Message, Operation: env.Operation, TraceID: env.TraceID, Retryable: env.Retryable,
		SafeToRetry: env.SafeToRetry, Upstream: env.Upstream, Details: env.Details, RetryAfterMs: env.RetryAfterMs}
	if k, ok := knownCode(env.Code); ok {
		e.Code = k
	} else if env.Code != "" {
		if e.Details == nil {
			e.Details = map[string]any{}
		}
		if _, ok := e.Details["code"]; !ok {
			e.Details["code"] = env.Code
		}
	}
	if e.Operation == "" {
		e.Operation = op
	}
	if e.Message == "" {
		e.Message = "The tool call failed."
	}
	for _, f := range env.RequiredFlags {
		e.RequiredArguments = append(e.RequiredArguments, strings.ReplaceAll(strings.TrimLeft(f, "-"), "-", "_"))
	}
	return e
}

func toolError(text, op string) error {
	var doc struct {
		Error *envelope `json:"error"`
	}
	if json.Unmarshal([]byte(text), &doc) != nil || doc.Error == nil {
		if text == "" {
			text = "The tool call failed."
		}
		return &Error{Code: CodeUnknownUpstreamError, Message: text, Operation: op}
	}
	return doc.Error.toError(op, CodeUnknownUpstreamError)
}

// statusCodes: the code a refusal without a known envelope code gets from
// its HTTP status alone.
var statusCodes = map[int]ErrorCode{401: CodeAuthRequired, 403: CodePermissionDenied, 409: CodeConflict,
	428: CodeConfirmationRequired, 429: CodeRateLimited}

func httpError(status int, header http.Header, body []byte, op string) *Error {
	fallback, ok := statusCodes[status]
	if !ok {
		fallback = CodeUpstreamUnavailable
	}
	var doc struct {
		Error *envelope `json:"error"`
	}
	var e *Error
	if json.Unmarshal(body, &doc) == nil && doc.Error != nil {
		e = doc.Error.toError(op, fallback)
		if doc.Error.Message == "" {
			e.Message = fmt.Sprintf("The Anvil gateway refused the request (HTTP %d).", status)
		}
	} else {
		e = &Error{Code: fallback, Operation: op, Message: fmt.Sprintf("The Anvil gateway refused the request (HTTP %d).", status)}
	}
	if status >= 500 || status == 429 {
		e.Retryable = true
	}
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details["http_status"] = status
	if after := strings.TrimSpace(header.Get("Retry-After")); e.RetryAfterMs == nil && after != "" {
		if s, err := strconv.ParseInt(after, 10, 64); err == nil && s >= 0 {
			ms := s * 1000
			e.RetryAfterMs = &ms
		}
	}
	return e
}

// readToken reads the bearer from the token file now, so a replaced file
// takes effect at once.
func (c *Client) readToken(op string) (string, error) {
	if c.tokenFile == "" {
		return "", &Error{Code: CodeAuthRequired, Operation: op, Message: "No gateway token: " + EnvGatewayTokenFile + " is not set.",
			Details: map[string]any{"code": "sdk/token_file_unset"}}
	}
	b, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return "", &Error{Code: CodeAuthRequired, Operation: op, Message: "The gateway token file could not be read.",
			Details: map[string]any{"code": "sdk/token_file_unreadable"}}
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", &Error{Code: CodeAuthRequired, Operation: op, Message: "The gateway token file is empty.",
			Details: map[string]any{"code": "sdk/token_file_empty"}}
	}
	return tok, nil
}

// callTool calls one tool in a fresh MCP session: initialize,
// notifications/initialized, tools/call, then DELETE.
func (c *Client) callTool(ctx context.Context, name string, args, meta map[string]any, op string, o *callOptions) (*toolResult, error) {
	token, err := c.readToken(op)
	if err != nil {
		return nil, err
	}
	timeout := c.timeout
	if o.timeout > 0 {
		timeout = o.timeout
	}
	base := http.Header{}
	for k, vs := range o.headers {
		switch strings.ToLower(k) {
		case "authorization", "content-type", "accept", "mcp-session-id", "mcp-protocol-version":
		default:
			base[http.CanonicalHeaderKey(k)] = vs
		}
	}
	base.Set("Content-Type", "application/json")
	base.Set("Accept", "application/json, text/event-stream")
	base.Set("Authorization", "Bearer "+token)
	base.Set("User-Agent", c.userAgent)
	init := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": protocolVersion, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": c.userAgent, "version": "1"}}}
	status, header, body, err := c.post(ctx, base, init, timeout, op)
	if err != nil {
		return nil, err
	}
	session := header.Get("Mcp-Session-Id")
	headers := base.Clone()
	if session != "" {
		headers.Set("Mcp-Session-Id", session)
		defer c.closeSession(headers)
	}
	var initResult struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := answer(status, header, body, 1, &initResult, op); err != nil {
		return nil, err
	}
	version := initResult.ProtocolVersion
	if version == "" {
		version = protocolVersion
	}
	headers.Set("Mcp-Protocol-Version", version)
	status, header, body, err = c.post(ctx, headers, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, timeout, op)
	if err != nil {
		return nil, err
	}
	if status >= 400 {
		return nil, httpError(status, header, body, op)
	}
	params := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	status, header, body, err = c.post(ctx, headers, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}, timeout, op)
	if err != nil {
		return nil, err
	}
	var result toolResult
	if err := answer(status, header, body, 2, &result, op); err != nil {
		return nil, err
	}
	return &result, nil
}

func (c *Client) closeSession(headers http.Header) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return
	}
	req.Header = headers
	if resp, err := c.http.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
		resp.Body.Close()
	}
}

func (c *Client) post(ctx context.Context, headers http.Header, msg any, timeout time.Duration, op string) (int, http.Header, []byte, error) {
	b, err := json.Marshal(msg)
	if err != nil {
		return 0, nil, nil, err
	}
	return c.send(ctx, http.MethodPost, c.url, headers, b, timeout, op)
}

func (c *Client) send(ctx context.Context, method, u string, headers http.Header, body []byte, timeout time.Duration, op string) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return 0, nil, nil, &Error{Code: CodeUpstreamUnavailable, Operation: op, Message: unreachable, Retryable: true}
	}
	req.Header = headers.Clone()
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			return 0, nil, nil, &Error{Code: CodeUpstreamTimeout, Operation: op, Message: "The Anvil gateway did not answer in time.", Retryable: true}
		}
		return 0, nil, nil, &Error{Code: CodeUpstreamUnavailable, Operation: op, Message: unreachable, Retryable: true}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return 0, nil, nil, &Error{Code: CodeUpstreamUnavailable, Operation: op, Message: unreachable, Retryable: true}
	}
	return resp.StatusCode, resp.Header, data, nil
}

// answer finds the JSON-RPC response with id in a JSON or SSE body and
// decodes its result into out.
func answer(status int, header http.Header, body []byte, id int, out any, op string) error {
	if status >= 400 {
		return httpError(status, header, body, op)
	}
	for _, m := range messages(header.Get("Content-Type"), body) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int             `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal(m, &msg) != nil || string(msg.ID) != strconv.Itoa(id) {
			continue
		}
		if msg.Error != nil {
			var doc struct {
				Error *envelope `json:"error"`
			}
			if json.Unmarshal(msg.Error.Data, &doc) == nil && doc.Error != nil {
				return doc.Error.toError(op, CodeUnsupportedOperation)
			}
			text := msg.Error.Message
			if text == "" {
				text = "The Anvil gateway answered with a JSON-RPC error."
			}
			return &Error{Code: CodeUnsupportedOperation, Operation: op, Message: text, Details: map[string]any{"jsonrpc_code": msg.Error.Code}}
		}
		if msg.Result != nil {
			if err := json.Unmarshal(msg.Result, out); err != nil {
				return &Error{Code: CodeUpstreamUnavailable, Operation: op, Message: "The Anvil gateway answered with something that is not a tool result."}
			}
			return nil
		}
	}
	return &Error{Code: CodeUpstreamUnavailable, Operation: op, Retryable: true, Message: "The Anvil gateway's answer did not include this call's response."}
}

// messages splits a body into JSON-RPC messages: one message or an array,
// or the data of each server-sent event.
func messages(contentType string, body []byte) []json.RawMessage {
	trimmed := bytes.TrimSpace(body)
	if !strings.Contains(contentType, "text/event-stream") && json.Valid(trimmed) {
		if len(trimmed) > 0 && trimmed[0] == '[' {
			var list []json.RawMessage
			_ = json.Unmarshal(trimmed, &list)
			return list
		}
		return []json.RawMessage{trimmed}
	}
	var out []json.RawMessage
	var data []string
	flush := func() {
		if len(data) > 0 {
			out = append(out, messages("", []byte(strings.Join(data, "\n")))...)
			data = data[:0]
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), maxAnswer)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	flush()
	return out
}

// Search ranks this connector's tools that the branch's grant allows for a
// plain-language task, best first (the gateway's GET /tools?search=...).
func (c *Client) Search(ctx context.Context, query string, limit int) ([]SearchResult, error) {
	if c.url == "" {
		return nil, &Error{Code: CodeValidationError, Details: map[string]any{"code": "sdk/gateway_url_unset"},
			Message: EnvGatewayURL + " is not set; this client searches operations only through the Anvil gateway."}
	}
	token, err := c.readToken("")
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(c.url)
	p := strings.TrimRight(u.Path, "/")
	u.Path = p[:strings.LastIndex(p, "/")+1] + "tools"
	q := url.Values{"search": {query}, "connector": {c.connector}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	u.RawQuery, u.Fragment = q.Encode(), ""
	h := http.Header{"Accept": {"application/json"}, "Authorization": {"Bearer " + token}, "User-Agent": {c.userAgent}}
	status, header, body, err := c.send(ctx, http.MethodGet, u.String(), h, nil, c.timeout, "")
	if err != nil {
		return nil, err
	}
	if status >= 400 {
		return nil, httpError(status, header, body, "")
	}
	var doc struct {
		Tools []SearchResult `json:"tools"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, &Error{Code: CodeUpstreamUnavailable, Retryable: true, Message: "The Anvil gateway's answer to the search is not a tool list."}
	}
	for i := range doc.Tools {
		if op := c.operationFor(doc.Tools[i].Name); op != nil {
			doc.Tools[i].Method = op.Method
		}
	}
	return doc.Tools, nil
}
