package auth

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/anvil-dev/anvil/runtime/identity"
)

// Error codes of an authentication failure (the body's error.code and the
// WWW-Authenticate error parameter).
const (
	CodeInvalidToken   = "invalid_token"
	CodeInvalidRequest = "invalid_request"
)

// Sentinels that [*Error] matches with errors.Is, by code.
var (
	// ErrInvalidToken matches every failure with code invalid_token.
	ErrInvalidToken = errors.New(CodeInvalidToken)
	// ErrInvalidRequest matches a missing or malformed Authorization header.
	ErrInvalidRequest = errors.New(CodeInvalidRequest)
	// ErrConfig is wrapped by every configuration error.
	ErrConfig = errors.New("invalid inbound auth configuration")
)

// Error is an authentication failure. Every failure of [Verifier.Verify] is
// one; runtime/identity/branchyard answers it with its WWWAuthenticate
// challenge.
type Error struct {
	// Status is the HTTP status: 401.
	Status int
	// Code is CodeInvalidToken or CodeInvalidRequest.
	Code string
	// Message says what failed. It never contains the token or key material.
	Message string

	cause error // e.g. a grant.ErrInvalidGrant for by_grants
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// Is matches ErrInvalidToken or ErrInvalidRequest by code.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrInvalidToken:
		return e.Code == CodeInvalidToken
	case ErrInvalidRequest:
		return e.Code == CodeInvalidRequest
	}
	return false
}

func invalidToken(msg string) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, Message: msg}
}

// WWWAuthenticate is the challenge for this failure:
//
//	Bearer realm="mcp", error="<code>", error_description="<message>"
//
// with double quotes (and backslashes) in the message written as ' and
// control characters as spaces, followed by
// resource_metadata="<origin>/.well-known/oauth-protected-resource" only when
// resource (the gateway's /mcp URL) is https.
func (e *Error) WWWAuthenticate(resource string) string {
	return identity.Challenge{Error: e.Code, Description: e.Message, ResourceMetadata: resourceMetadata(resource)}.String()
}

// resourceMetadata is the protected-resource metadata URL for an https
// resource, or "".
func resourceMetadata(resource string) string {
	u, err := url.Parse(resource)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return ""
	}
	return "https://" + u.Host + "/.well-known/oauth-protected-resource"
}
