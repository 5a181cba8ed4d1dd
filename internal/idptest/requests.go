package idptest

import (
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// The request types below are what the storage hands zitadel. The storage
// keeps its own records and returns copies, so zitadel may hold or mutate
// (SetCurrentScopes) what it got without racing a login or a later request.

// authRequest is one authorization request, from /authorize to the code
// exchange.
type authRequest struct {
	id           string
	created      time.Time
	clientID     string
	redirectURI  string
	state        string
	nonce        string
	scopes       []string
	responseType oidc.ResponseType
	responseMode oidc.ResponseMode
	challenge    *oidc.CodeChallenge
	resources    []string // RFC 8707 resources granted at /authorize
	audience     []string // aud of the tokens: the resources, or the client's audience
	subject      string   // set by the login
	authTime     time.Time
	done         bool
	code         string // the authorization code issued for it, once logged in
}

var _ op.AuthRequest = (*authRequest)(nil)

func (a *authRequest) GetID() string                         { return a.id }
func (a *authRequest) GetACR() string                        { return "" }
func (a *authRequest) GetAMR() []string                      { return amrPassword(a.done) }
func (a *authRequest) GetAudience() []string                 { return a.audience }
func (a *authRequest) GetAuthTime() time.Time                { return a.authTime }
func (a *authRequest) GetClientID() string                   { return a.clientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.challenge }
func (a *authRequest) GetNonce() string                      { return a.nonce }
func (a *authRequest) GetRedirectURI() string                { return a.redirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType    { return a.responseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode    { return a.responseMode }
func (a *authRequest) GetScopes() []string                   { return a.scopes }
func (a *authRequest) GetState() string                      { return a.state }
func (a *authRequest) GetSubject() string                    { return a.subject }
func (a *authRequest) Done() bool                            { return a.done }

// clone copies a, with slices of its own.
func (a *authRequest) clone() *authRequest {
	c := *a
	c.scopes = slices.Clone(a.scopes)
	c.resources = slices.Clone(a.resources)
	c.audience = slices.Clone(a.audience)
	if a.challenge != nil {
		ch := *a.challenge
		c.challenge = &ch
	}
	return &c
}

func amrPassword(loggedIn bool) []string {
	if loggedIn {
		return []string{"pwd"}
	}
	return nil
}

// refreshRequest is a refresh token presented at the token endpoint.
// scopes and audience are what this refresh asks for (narrowed by a scope
// or resource parameter); the grant's full scopes and resources carry over
// to the rotated refresh token (RFC 6749 section 6).
type refreshRequest struct {
	rec      refreshRecord
	scopes   []string
	audience []string
}

var _ op.RefreshTokenRequest = (*refreshRequest)(nil)

func (r *refreshRequest) GetAMR() []string                 { return slices.Clone(r.rec.amr) }
func (r *refreshRequest) GetAudience() []string            { return r.audience }
func (r *refreshRequest) GetAuthTime() time.Time           { return r.rec.authTime }
func (r *refreshRequest) GetClientID() string              { return r.rec.clientID }
func (r *refreshRequest) GetScopes() []string              { return r.scopes }
func (r *refreshRequest) GetSubject() string               { return r.rec.subject }
func (r *refreshRequest) SetCurrentScopes(scopes []string) { r.scopes = scopes }

// clientCredentialsRequest is a client_credentials grant: the client is
// its own subject.
type clientCredentialsRequest struct {
	clientID string
	scopes   []string
	audience []string
}

func (c *clientCredentialsRequest) GetSubject() string    { return c.clientID }
func (c *clientCredentialsRequest) GetAudience() []string { return c.audience }
func (c *clientCredentialsRequest) GetScopes() []string   { return c.scopes }
func (c *clientCredentialsRequest) GetClientID() string   { return c.clientID }

// accessRecord is an issued access token, JWT or opaque: its ID is the
// JWT's jti or the ID sealed in the opaque token.
type accessRecord struct {
	id       string
	clientID string
	subject  string
	audience []string
	scopes   []string
	issued   time.Time
	expires  time.Time
}

// refreshRecord is an issued refresh token; the token is its own ID.
type refreshRecord struct {
	token     string
	clientID  string
	subject   string
	audience  []string // aud without a resource parameter at refresh
	resources []string // RFC 8707 resources granted
	scopes    []string
	amr       []string
	authTime  time.Time
	expires   time.Time
	accessID  string // the access token issued with it
}
