// Package envelope defines the error envelope every Anvil surface returns
// ({"error": {...}}), its codes, and the HTTP status each code maps to on the
// REST route.
package envelope

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Error codes callers see in error envelopes.
const (
	ValidationError              = "validation_error"
	AuthRequired                 = "auth_required"
	PermissionDenied             = "permission_denied"
	NotFound                     = "not_found"
	Conflict                     = "conflict"
	RateLimited                  = "rate_limited"
	UpstreamTimeout              = "upstream_timeout"
	UpstreamUnavailable          = "upstream_unavailable"
	UnsafeRetryBlocked           = "unsafe_retry_blocked"
	ConfirmationRequired         = "confirmation_required"
	IdempotencyRequired          = "idempotency_required"
	SchemaMismatch               = "schema_mismatch"
	UnsupportedOperation         = "unsupported_operation"
	PolicyDenied                 = "policy_denied"
	UnknownUpstreamError         = "unknown_upstream_error"
	IdempotencyLedgerUnavailable = "idempotency_ledger_unavailable"
	InternalError                = "internal_error"
	// GatewayLoading refuses a request a gateway takes while it is still
	// loading the fleet it serves (HTTP 503, retryable): its listener opens
	// first so that /healthz answers at once (docs/scale.md).
	GatewayLoading = "gateway_loading"
)

// Codes lists the error codes SDKs know (ERROR_CODES), in documented order.
var Codes = []string{
	ValidationError, AuthRequired, PermissionDenied, NotFound, Conflict, RateLimited,
	UpstreamTimeout, UpstreamUnavailable, UnsafeRetryBlocked, ConfirmationRequired,
	IdempotencyRequired, SchemaMismatch, UnsupportedOperation, PolicyDenied, UnknownUpstreamError,
}

// Upstream describes the upstream answer behind an error.
type Upstream struct {
	Status    int    `json:"status"`
	RequestID string `json:"request_id,omitempty"`
	Code      string `json:"code,omitempty"`
}

// Error is one error envelope's body. Its JSON key order is the contract's:
// code, message, retryable, safe_to_retry, operation, trace_id, then
// upstream, required_flags and details when set.
type Error struct {
	Code          string    `json:"code"`
	Message       string    `json:"message"`
	Retryable     bool      `json:"retryable"`
	SafeToRetry   bool      `json:"safe_to_retry"`
	Operation     string    `json:"operation"`
	TraceID       string    `json:"trace_id"`
	Upstream      *Upstream `json:"upstream,omitempty"`
	RequiredFlags []string  `json:"required_flags,omitempty"`
	// Details holds code-specific fields as an ordered JSON object.
	Details json.RawMessage `json:"details,omitempty"`
	// RetryAfter, when positive, is when a retry may succeed: the REST
	// route sends it as a Retry-After header (whole seconds, at least 1).
	// It is not part of the envelope's JSON.
	RetryAfter time.Duration `json:"-"`
}

// RetryAfterSeconds is e's Retry-After header value ("" for none): whole
// seconds, rounded up, at least 1.
func (e *Error) RetryAfterSeconds() string {
	if e == nil || e.RetryAfter <= 0 {
		return ""
	}
	return strconv.FormatInt(int64((e.RetryAfter+time.Second-1)/time.Second), 10)
}

// Error renders "code: message".
func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Wrapped is the {"error": ...} document.
type Wrapped struct {
	Error *Error `json:"error"`
}

// Marshal returns the compact JSON of {"error": e}.
func (e *Error) Marshal() []byte {
	b, err := json.Marshal(Wrapped{Error: e})
	if err != nil {
		// Details is the only free-form part; drop it rather than fail.
		c := *e
		c.Details = nil
		b, _ = json.Marshal(Wrapped{Error: &c})
	}
	return b
}

// RESTStatus is the HTTP status the REST route answers for an error code.
func RESTStatus(code string) int {
	switch code {
	case ValidationError:
		return http.StatusBadRequest
	case AuthRequired:
		return http.StatusUnauthorized
	case PermissionDenied, PolicyDenied:
		return http.StatusForbidden
	case NotFound:
		return http.StatusNotFound
	case Conflict, UnsafeRetryBlocked:
		return http.StatusConflict
	case UnsupportedOperation:
		return http.StatusUnprocessableEntity
	case ConfirmationRequired, IdempotencyRequired:
		return http.StatusPreconditionRequired
	case RateLimited:
		return http.StatusTooManyRequests
	case IdempotencyLedgerUnavailable, GatewayLoading:
		return http.StatusServiceUnavailable
	case UpstreamTimeout:
		return http.StatusGatewayTimeout
	case InternalError:
		return http.StatusInternalServerError
	}
	return http.StatusBadGateway
}

// Simple is the {"error":{"code","message"}} body of transport-level refusals
// (routes, connect endpoints, auth).
type Simple struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// WriteSimple writes {"error":{"code","message"}} with status.
func WriteSimple(w http.ResponseWriter, status int, code, message string) {
	b, _ := json.Marshal(struct {
		Error Simple `json:"error"`
	}{Simple{Code: code, Message: message}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
