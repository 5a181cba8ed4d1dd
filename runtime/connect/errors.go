package connect

import (
	"errors"
	"net/http"
)

// Sentinel errors. Every error the package returns is an *Error wrapping one
// of them, so callers test with errors.Is and read the contract code and
// HTTP status from the *Error (errors.As).
var (
	// ErrInvalidState: the callback's state is missing, unknown, already
	// used or expired (400 invalid_state).
	ErrInvalidState = errors.New("invalid_state")
	// ErrAuthorizationDenied: the authorization server answered the
	// callback with an error, such as access_denied (400 authorization_denied).
	ErrAuthorizationDenied = errors.New("authorization_denied")
	// ErrNotConfigured: the connector's OAuth client is incomplete, uses
	// private_key_jwt, or has an endpoint that is not HTTPS (503
	// connector_not_configured at start, 400 at the callback).
	ErrNotConfigured = errors.New("connector_not_configured")
	// ErrIssuerMismatch: the callback's iss does not name the expected
	// authorization server (RFC 9207; 400 issuer_mismatch).
	ErrIssuerMismatch = errors.New("issuer_mismatch")
	// ErrMissingCode: the callback carries no code (400 missing_code).
	ErrMissingCode = errors.New("missing_code")
	// ErrTokenEndpointUnreachable: the token request got no HTTP answer
	// (502 token_endpoint_unreachable).
	ErrTokenEndpointUnreachable = errors.New("token_endpoint_unreachable")
	// ErrTokenExchangeFailed: the token endpoint answered with an error, a
	// redirect, or no usable token (502 token_exchange_failed).
	ErrTokenExchangeFailed = errors.New("token_exchange_failed")
	// ErrEgressDenied: an OAuth endpoint the spec declared is on a host
	// outside the egress allowlist (403 egress_denied at start and at the
	// callback; a refresh fails with it before anything is sent).
	ErrEgressDenied = errors.New("egress_denied")
	// ErrTooManyPending: the pending-flow table is full (503
	// too_many_pending), or the person's share of it is (429).
	ErrTooManyPending = errors.New("too_many_pending")
	// ErrVaultUnavailable: there is no vault to store a connection in (503
	// vault_unavailable).
	ErrVaultUnavailable = errors.New("vault_unavailable")
	// ErrVaultWrite: the connection could not be stored (500 vault_write_failed).
	ErrVaultWrite = errors.New("vault_write_failed")
	// ErrNeedsReconnect: the provider refused a refresh (invalid_grant) or
	// the stored connection cannot be used; the person must connect again
	// (auth_required, connector/needs_reconnect).
	ErrNeedsReconnect = errors.New("connector/needs_reconnect")
	// ErrRefreshFailed: a refresh could not complete (auth_required,
	// connector/refresh_failed).
	ErrRefreshFailed = errors.New("connector/refresh_failed")
)

// Error is a coded connect error. Message is safe to show to the person: it
// never carries a link, a token, a secret or the provider's own error text.
type Error struct {
	// Code is the contract's error code (the sentinel's text).
	Code string
	// Status is the HTTP status the route answers with.
	Status int
	// Message is a human sentence without links or secrets.
	Message string
	// Host is the refused host of ErrEgressDenied.
	Host   string
	err    error
	reason string // for ErrNotConfigured: what is missing
}

// Error renders "code: message".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.err }

func newError(sentinel error, status int, msg string) *Error {
	return &Error{Code: sentinel.Error(), Status: status, Message: msg, err: sentinel}
}

// AsError returns err's *Error, or an internal error for anything else.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: "internal_error", Status: http.StatusInternalServerError,
		Message: "The connection could not be completed.", err: err}
}
