package oidc

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// MaxIntrospectionBytes is the largest introspection answer read.
const MaxIntrospectionBytes = 64 << 10

// introspector asks one issuer about its opaque tokens (RFC 7662).
type introspector struct {
	is           *issuer
	clientID     string
	clientSecret string
}

// introspect posts the token to the issuer's introspection endpoint,
// authenticating with HTTP Basic (RFC 6749 section 2.3.1: both halves
// form-encoded), and returns the answer's members when the token is active.
// Any failure (the endpoint unreachable, not 200, not JSON, active not
// true) is a refusal: the gateway fails closed.
func (in *introspector) introspect(ctx context.Context, token string) (map[string]json.RawMessage, *failure) {
	endpoint := in.is.cfg.Introspection.Endpoint
	if endpoint == "" {
		m, err := in.is.metadata(ctx)
		if err != nil || m.IntrospectionEndpoint == "" {
			return nil, invalidToken(msgIntrospect)
		}
		endpoint = m.IntrospectionEndpoint
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, invalidToken(msgIntrospect)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.clientID), url.QueryEscape(in.clientSecret))
	resp, err := in.is.client.Do(req)
	if err != nil {
		return nil, invalidToken(msgIntrospect)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxIntrospectionBytes+1))
	if err != nil || resp.StatusCode != http.StatusOK || len(raw) > MaxIntrospectionBytes {
		return nil, invalidToken(msgIntrospect)
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil || members == nil {
		return nil, invalidToken(msgIntrospect)
	}
	if a, ok := members["active"]; !ok || strings.TrimSpace(string(a)) != "true" {
		return nil, invalidToken(msgInactive)
	}
	return members, nil
}
