package idptest

import (
	"context"
	"net/http"
	"slices"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// zitadel's authorization and token requests do not parse RFC 8707's
// resource parameter (only token exchange does). formInterceptor reads
// it from the request before zitadel does and puts it on the context, where
// the storage reads it when it stores an authorization request and when it
// hands zitadel the request behind a code, a refresh token or a
// client_credentials grant. The protocol handling stays zitadel's.

type resourcesKey struct{}

// maxFormBytes bounds what the provider reads of a request body: a token or
// login form is a few hundred bytes.
const maxFormBytes = 64 << 10

// formInterceptor is a zitadel HTTP interceptor (op.WithHttpInterceptors)
// and wraps the login page too. It bounds the body every handler reads
// (maxFormBytes), parses the form once, and carries the resource
// parameters on the context.
func formInterceptor(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "idptest: request form too large or malformed", http.StatusBadRequest)
			return
		}
		if res, ok := r.Form["resource"]; ok {
			r = r.WithContext(context.WithValue(r.Context(), resourcesKey{}, slices.Clone(res)))
		}
		next.ServeHTTP(w, r)
	})
}

// requestedResources returns the resource parameters of the request behind
// ctx, and whether it had any.
func requestedResources(ctx context.Context) ([]string, bool) {
	res, ok := ctx.Value(resourcesKey{}).([]string)
	return res, ok
}

// grantResources checks the resources a request asks for against those it
// may ask for. Every requested one must be well formed and allowed, or the
// request fails with invalid_target (RFC 8707 section 2).
func grantResources(requested, allowed []string) ([]string, error) {
	out := make([]string, 0, len(requested))
	for _, r := range requested {
		// The descriptions do not echo the value: RFC 6749 section 5.2
		// limits error_description to printable ASCII without a double quote or a backslash.
		if checkResource(r) != nil {
			return nil, oidc.ErrInvalidTarget().WithDescription("a resource is not an absolute URI without a fragment (RFC 8707)")
		}
		if !slices.Contains(allowed, r) {
			return nil, oidc.ErrInvalidTarget().WithDescription("a requested resource is not allowed for this client")
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}
