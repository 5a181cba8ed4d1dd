package idptest

import (
	"net/url"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// opClient is a Client as zitadel's op.Client sees it. It is built once per
// registration and never mutated, so zitadel may hold it across a request.
type opClient struct {
	Client
	loginURL  string        // the login page, to which the auth request ID is appended
	accessTTL time.Duration // Client.AccessTokenTTL or the provider's
	idTTL     time.Duration
}

var _ op.Client = (*opClient)(nil)

func (c *opClient) GetID() string                    { return c.ID }
func (c *opClient) RedirectURIs() []string           { return slices.Clone(c.Client.RedirectURIs) }
func (c *opClient) PostLogoutRedirectURIs() []string { return nil }
func (c *opClient) confidential() bool               { return c.Secret != "" }

// ApplicationType is web for a confidential client and native for a public
// one: zitadel then accepts a public client's loopback redirect on any port
// (RFC 8252 section 7.3), as MCP hosts and CLIs use.
func (c *opClient) ApplicationType() op.ApplicationType {
	if c.confidential() {
		return op.ApplicationTypeWeb
	}
	return op.ApplicationTypeNative
}

func (c *opClient) AuthMethod() oidc.AuthMethod {
	switch {
	case !c.confidential():
		return oidc.AuthMethodNone
	case c.Client.AuthMethod == authPost:
		return oidc.AuthMethodPost
	default:
		return oidc.AuthMethodBasic
	}
}

func (c *opClient) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}

func (c *opClient) GrantTypes() []oidc.GrantType {
	g := []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
	if c.confidential() {
		g = append(g, oidc.GrantTypeClientCredentials)
	}
	if len(c.ExchangeAudiences) > 0 {
		g = append(g, oidc.GrantTypeTokenExchange)
	}
	return g
}

func (c *opClient) LoginURL(authRequestID string) string {
	return c.loginURL + "?" + url.Values{"authRequestID": {authRequestID}}.Encode()
}

func (c *opClient) AccessTokenType() op.AccessTokenType {
	if c.Opaque {
		return op.AccessTokenTypeBearer
	}
	return op.AccessTokenTypeJWT
}

func (c *opClient) IDTokenLifetime() time.Duration { return c.idTTL }
func (c *opClient) DevMode() bool                  { return false }

func (c *opClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

func (c *opClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

func (c *opClient) IsScopeAllowed(scope string) bool {
	return c.Scopes == nil || slices.Contains(c.Scopes, scope)
}

// IDTokenUserinfoClaimsAssertion puts the user's profile and email claims
// in the ID token even when an access token is issued beside it.
func (c *opClient) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *opClient) ClockSkew() time.Duration             { return c.Backdate }

// audience is the aud of the client's tokens when no resource was asked for.
func (c *opClient) audience() []string {
	if len(c.Audience) > 0 {
		return slices.Clone(c.Audience)
	}
	return []string{c.ID}
}

// isAudience reports whether a token addressed to aud is addressed to this
// client, as a resource server.
func (c *opClient) isAudience(aud []string) bool {
	for _, a := range aud {
		if a == c.ID || slices.Contains(c.Audience, a) {
			return true
		}
	}
	return false
}
