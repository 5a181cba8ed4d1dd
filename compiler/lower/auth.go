package lower

import (
	"cmp"
	"fmt"
	"reflect"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

// authFromRequirements models a security requirement list: no requirement
// (or only empty ones) is auth none; otherwise the first non-empty
// alternative, and within it the first scheme. More than one alternative, or
// an alternative combining schemes, is reported as auth/alternatives_unmodeled.
func (l *lowerer) authFromRequirements(reqs []openapi.SecurityRequirement, pos diag.Pos, where string, opIdx int) air.Auth {
	var chosen openapi.SecurityRequirement
	for _, r := range reqs {
		if len(r) > 0 {
			chosen = r
			break
		}
	}
	if chosen == nil {
		return air.Auth{Type: air.AuthNone}
	}
	if len(reqs) > 1 {
		names := make([]string, 0, len(reqs))
		for _, r := range reqs {
			names = append(names, requirementName(r))
		}
		l.addDiag(pos, diag.Info, "auth/alternatives_unmodeled", opIdx,
			"%s accepts %d security alternatives (%s); only %s is modeled", where, len(reqs), strings.Join(names, " | "), requirementName(chosen))
	} else if len(chosen) > 1 {
		l.addDiag(pos, diag.Info, "auth/alternatives_unmodeled", opIdx,
			"%s requires the security schemes %s together; only %s is modeled", where, requirementName(chosen), chosen[0].Scheme)
	}
	use := chosen[0]
	ss := l.spec.SecuritySchemes[use.Scheme]
	if ss == nil {
		l.addDiag(pos, diag.Warning, "auth/unknown_scheme", opIdx, "%s names the undeclared security scheme %q; auth is modeled as none", where, use.Scheme)
		return air.Auth{Type: air.AuthNone}
	}
	return l.authFromScheme(ss, use.Scopes, pos, where, opIdx)
}

func requirementName(r openapi.SecurityRequirement) string {
	if len(r) == 0 {
		return "{}"
	}
	names := make([]string, len(r))
	for i, u := range r {
		names[i] = u.Scheme
	}
	return strings.Join(names, "+")
}

// authFromScheme maps one security scheme onto AIR auth:
// http bearer → bearer, http basic → basic, any other http scheme →
// custom_header on Authorization, apiKey → api_key with its carrier,
// oauth2 → oauth2_authorization_code (authorizationCode, or implicit with
// grant "implicit") or oauth2_client_credentials (clientCredentials, or
// password with grant "password"; both reported by checkAuthFlow), openIdConnect
// → oauth2_authorization_code with the issuer left unknown, mutualTLS → mtls.
func (l *lowerer) authFromScheme(ss *openapi.SecurityScheme, scopes []string, pos diag.Pos, where string, opIdx int) air.Auth {
	a := air.Auth{Scheme: ss.Name}
	if len(scopes) > 0 {
		a.Scopes = append([]string(nil), scopes...)
	}
	bearer := &air.Carrier{In: air.InHeader, Name: "Authorization", Scheme: "Bearer"}
	switch strings.ToLower(ss.Type) {
	case "http":
		switch strings.ToLower(ss.Scheme) {
		case "bearer":
			a.Type, a.Carrier = air.AuthBearer, bearer
		case "basic":
			a.Type, a.Carrier = air.AuthBasic, &air.Carrier{In: air.InHeader, Name: "Authorization", Scheme: "Basic"}
		default:
			a.Type, a.Carrier = air.AuthCustomHeader, &air.Carrier{In: air.InHeader, Name: "Authorization", Scheme: httpSchemeName(ss.Scheme)}
		}
	case "apikey":
		a.Type, a.Carrier = air.AuthAPIKey, &air.Carrier{In: air.Location(ss.In), Name: ss.ParamName}
	case "oauth2":
		var flows []string
		for _, f := range []struct {
			name string
			flow *openapi.OAuthFlow
		}{{"authorizationCode", ss.AuthorizationCode}, {"clientCredentials", ss.ClientCredentials}, {"implicit", ss.Implicit}, {"password", ss.Password}} {
			if f.flow != nil {
				flows = append(flows, f.name)
			}
		}
		a.Carrier = bearer
		switch {
		case ss.AuthorizationCode != nil:
			f := ss.AuthorizationCode
			a.Type = air.AuthOAuth2AuthorizationCode
			a.Provider = &air.Provider{AuthorizationEndpoint: f.AuthorizationURL, TokenEndpoint: f.TokenURL, Grant: air.GrantAuthorizationCode}
		case ss.ClientCredentials != nil:
			f := ss.ClientCredentials
			a.Type = air.AuthOAuth2ClientCredentials
			a.Provider = &air.Provider{TokenEndpoint: f.TokenURL, Grant: air.GrantClientCredentials}
		case ss.Implicit != nil:
			// Kept as the implicit grant so checkAuthFlow reports it unless
			// the manifest replaces it.
			a.Type = air.AuthOAuth2AuthorizationCode
			a.Provider = &air.Provider{AuthorizationEndpoint: ss.Implicit.AuthorizationURL, Grant: air.GrantImplicit}
		case ss.Password != nil:
			a.Type = air.AuthOAuth2ClientCredentials
			a.Provider = &air.Provider{TokenEndpoint: ss.Password.TokenURL, Grant: air.GrantPassword}
		default:
			a.Type = air.AuthOAuth2AuthorizationCode
		}
		if len(flows) > 1 {
			l.addDiag(pos, diag.Info, "auth/service_oauth2_ambiguous", opIdx,
				"%s: security scheme %q declares the OAuth2 flows %s; modeled as %s", where, ss.Name, strings.Join(flows, ", "), a.Type)
		}
	case "openidconnect":
		a.Type, a.Carrier = air.AuthOAuth2AuthorizationCode, bearer
		a.Provider = &air.Provider{Grant: air.GrantAuthorizationCode}
	case "mutualtls":
		a.Type = air.AuthMTLS
	default:
		l.addDiag(pos, diag.Warning, "auth/unknown_scheme", opIdx, "%s: security scheme %q has the unsupported type %q; auth is modeled as none", where, ss.Name, ss.Type)
		return air.Auth{Type: air.AuthNone}
	}
	return a
}

func httpSchemeName(s string) string {
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + strings.ToLower(s[1:])
}

// manifestAuthType maps a manifest auth type onto AIR; the legacy "oauth2"
// becomes oauth2_authorization_code when an authorization endpoint is known
// (from the manifest or the spec) and oauth2_client_credentials otherwise.
func manifestAuthType(m *manifest.Auth, base air.Auth) air.AuthType {
	if m.Type != air.AuthOAuth2 {
		return m.Type
	}
	if (m.Provider != nil && m.Provider.AuthorizationEndpoint != "") || (base.Provider != nil && base.Provider.AuthorizationEndpoint != "") {
		return air.AuthOAuth2AuthorizationCode
	}
	return air.AuthOAuth2ClientCredentials
}

// applyManifestAuth overlays a manifest auth block on base. Base (derived
// from the spec) is kept when the block names the same type or no type;
// otherwise the block starts afresh.
func applyManifestAuth(m *manifest.Auth, base air.Auth) air.Auth {
	t := manifestAuthType(m, base)
	a := base
	if t != "" && t != base.Type {
		a = air.Auth{Type: t}
	}
	if t != "" && a.Provider != nil && unsupportedFlows[a.Provider.Grant] != "" {
		// Naming the type takes the flow over from the spec: the grant
		// becomes the type's own unless the block names one.
		p := *a.Provider
		p.Grant = defaultGrant(t)
		a.Provider = &p
	}
	if a.Type == "" {
		a.Type = air.AuthNone
	}
	a.CredentialProfile = cmp.Or(m.CredentialProfile, a.CredentialProfile)
	a.Principal = cmp.Or(m.Principal, a.Principal)
	a.Issuer = cmp.Or(m.Issuer, a.Issuer)
	a.Audience = cmp.Or(m.Audience, a.Audience)
	if m.Carrier != nil {
		c := air.Carrier{In: m.Carrier.In, Name: m.Carrier.Name, Scheme: m.Carrier.Scheme}
		if a.Carrier != nil {
			if c.In == "" {
				c.In = a.Carrier.In
			}
			if c.Name == "" {
				c.Name = a.Carrier.Name
			}
			if c.Scheme == "" && c.Name == a.Carrier.Name {
				c.Scheme = a.Carrier.Scheme
			}
		}
		a.Carrier = &c
	}
	if p := m.Provider; p != nil {
		var np air.Provider
		if a.Provider != nil {
			np = *a.Provider
		}
		np.AuthorizationEndpoint = cmp.Or(p.AuthorizationEndpoint, np.AuthorizationEndpoint)
		np.TokenEndpoint = cmp.Or(p.TokenEndpoint, np.TokenEndpoint)
		np.Grant = cmp.Or(p.Grant, np.Grant)
		np.ClientAuth = cmp.Or(p.ClientAuth, np.ClientAuth)
		np.Resource = cmp.Or(p.Resource, np.Resource)
		if p.PKCE != nil {
			v := *p.PKCE
			np.PKCE = &v
		}
		np.RedirectURI = cmp.Or(p.RedirectURI, np.RedirectURI)
		a.Provider = &np
	}
	if len(m.Scopes) > 0 {
		a.Scopes = append([]string(nil), m.Scopes...)
	}
	return a
}

func authEqual(a, b air.Auth) bool { return reflect.DeepEqual(a, b) }

// unsupportedFlows explains, per unsupported grant, why the gateway cannot
// run it: it holds credentials server-side and acts for a person through a
// refreshable token, which neither flow gives.
var unsupportedFlows = map[air.OAuthGrant]string{
	air.GrantImplicit: "the OAuth2 implicit flow, which hands tokens to a browser and has no token endpoint, so the gateway can neither obtain nor refresh one",
	air.GrantPassword: "the OAuth2 resource-owner password flow, which would make the gateway hold a person's password",
}

// defaultGrant is the grant an OAuth2 auth type runs.
func defaultGrant(authType air.AuthType) air.OAuthGrant {
	switch authType {
	case air.AuthOAuth2AuthorizationCode:
		return air.GrantAuthorizationCode
	case air.AuthOAuth2ClientCredentials:
		return air.GrantClientCredentials
	}
	return ""
}

// CodeUnsupportedOAuthFlow is the warning of a security scheme that offers
// only OAuth2 flows the gateway cannot run.
const CodeUnsupportedOAuthFlow = "auth/unsupported_oauth_flow"

// checkAuthFlow returns why an operation's effective auth cannot run (an
// OAuth2 flow the gateway cannot run), or "". The operation is then
// blocked, not the compile failed: the rest of the description stays
// servable. The warning (auth/unsupported_oauth_flow) is reported once per
// security scheme and says what the manifest needs: an auth: block, at the
// top for every operation or on the operation, naming a type the gateway
// runs.
func (l *lowerer) checkAuthFlow(a air.Auth, pos diag.Pos, where string, opIdx int) string {
	if a.Provider == nil {
		return ""
	}
	why := unsupportedFlows[a.Provider.Grant]
	if why == "" || l.flowReported[a.Scheme] {
		return why
	}
	if l.flowReported == nil {
		l.flowReported = map[string]bool{}
	}
	l.flowReported[a.Scheme] = true
	l.addDiag(pos, diag.Warning, CodeUnsupportedOAuthFlow, opIdx,
		"%s uses security scheme %q, which offers only %s; every operation that needs it is blocked (not served, not approvable) until anvil.yaml has an auth: block (at the top level to cover every operation, or under the operation) naming a type the gateway runs, "+
			"for example {type: oauth2_authorization_code, provider: {authorization_endpoint: <url>, token_endpoint: <url>}}, {type: oauth2_client_credentials, provider: {token_endpoint: <url>}} or {type: api_key, carrier: {in: header, name: <header>}}",
		where, a.Scheme, why)
	return why
}

// operationAuth is the auth an operation runs with. The spec's security
// requirement of the operation is the base; the manifest's auth: block of
// the operation overlays it, or else the manifest's top-level auth: block
// does, so a service-level block covers every operation that does not set
// its own. An operation whose spec requires no credential (security: [])
// stays public: that is a statement about the operation, not a default.
//
// blocked is why the auth cannot run ("" when it can; checkAuthFlow).
func (l *lowerer) operationAuth(st *opState, m *manifest.Operation) (a air.Auth, blocked string) {
	sop := st.spec
	opAuth := l.serviceAuth
	if sop.HasSecurity {
		where := fmt.Sprintf("%s %s", sop.Method, sop.Path)
		opAuth = l.authFromRequirements(sop.Security, l.opPos(st), where, st.i)
		switch {
		case opAuth.Type == air.AuthNone && len(sop.Security) == 0:
			// security: [] — public whatever the service requires.
		case authEqual(opAuth, l.specAuth):
			opAuth = l.serviceAuth
		case m.Auth == nil && l.man != nil && l.man.Auth != nil && opAuth.Type != air.AuthNone:
			// The top-level block names another type: the operation runs
			// the service's auth; else it refines the operation's own.
			if t := manifestAuthType(l.man.Auth, opAuth); t != "" && t != opAuth.Type {
				opAuth = l.serviceAuth
			} else {
				opAuth = applyManifestAuth(l.man.Auth, opAuth)
			}
		}
	}
	if m.Auth != nil {
		opAuth = applyManifestAuth(m.Auth, opAuth)
	}
	return opAuth, l.checkAuthFlow(opAuth, l.opPos(st), fmt.Sprintf("%s %s", sop.Method, sop.Path), st.i)
}

// checkReview enforces the contract's rule for approving an operation that
// acts as a person (effective auth oauth2_authorization_code): its manifest
// entry must name reviewed_by and review_reason. Without them the approval
// is refused (auth/review_required, an error) and the operation stays
// review_required; with them, the review is recorded as a review note.
func (l *lowerer) checkReview(st *opState, m *manifest.Operation, a air.Auth) {
	op := st.op
	if op.State != air.StateApproved || st.entry == nil {
		return
	}
	person := a.Type == air.AuthOAuth2AuthorizationCode || a.Type == air.AuthOAuth2
	switch {
	case person && (m.ReviewedBy == "" || m.ReviewReason == ""):
		op.State = air.StateReviewRequired
		l.addDiag(firstPos(m.StatePos, st.entry.KeyPos), diag.Error, "auth/review_required", st.i,
			"operations.%s is approved but acts as a person (auth %s): write reviewed_by and review_reason under it; it stays review_required",
			st.entry.Key, a.Type)
	case m.ReviewedBy != "":
		note := "Reviewed by " + m.ReviewedBy
		if m.ReviewReason != "" {
			note += ": " + m.ReviewReason
		}
		op.ReviewNotes = append(op.ReviewNotes, note)
	}
}
