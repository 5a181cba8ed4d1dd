package lower

import (
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
// oauth2 → oauth2_authorization_code (authorizationCode, or implicit) or
// oauth2_client_credentials (clientCredentials, or password), openIdConnect
// → oauth2_authorization_code with the issuer left unknown, mutualTLS → mtls.
func (l *lowerer) authFromScheme(ss *openapi.SecurityScheme, scopes []string, pos diag.Pos, where string, opIdx int) air.Auth {
	a := air.Auth{Scheme: ss.Name}
	if len(scopes) > 0 {
		a.Scopes = append([]string(nil), scopes...)
	}
	bearer := &air.Carrier{In: "header", Name: "Authorization", Scheme: "Bearer"}
	switch strings.ToLower(ss.Type) {
	case "http":
		switch strings.ToLower(ss.Scheme) {
		case "bearer":
			a.Type, a.Carrier = air.AuthBearer, bearer
		case "basic":
			a.Type, a.Carrier = air.AuthBasic, &air.Carrier{In: "header", Name: "Authorization", Scheme: "Basic"}
		default:
			a.Type, a.Carrier = air.AuthCustomHeader, &air.Carrier{In: "header", Name: "Authorization", Scheme: httpSchemeName(ss.Scheme)}
		}
	case "apikey":
		a.Type, a.Carrier = air.AuthAPIKey, &air.Carrier{In: ss.In, Name: ss.ParamName}
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
			a.Provider = &air.Provider{AuthorizationEndpoint: f.AuthorizationURL, TokenEndpoint: f.TokenURL, Grant: "authorization_code"}
		case ss.ClientCredentials != nil:
			f := ss.ClientCredentials
			a.Type = air.AuthOAuth2ClientCredentials
			a.Provider = &air.Provider{TokenEndpoint: f.TokenURL, Grant: "client_credentials"}
		case ss.Implicit != nil:
			a.Type = air.AuthOAuth2AuthorizationCode
			a.Provider = &air.Provider{AuthorizationEndpoint: ss.Implicit.AuthorizationURL, Grant: "authorization_code"}
		case ss.Password != nil:
			a.Type = air.AuthOAuth2ClientCredentials
			a.Provider = &air.Provider{TokenEndpoint: ss.Password.TokenURL, Grant: "password"}
		default:
			a.Type = air.AuthOAuth2AuthorizationCode
		}
		if len(flows) > 1 {
			l.addDiag(pos, diag.Info, "auth/service_oauth2_ambiguous", opIdx,
				"%s: security scheme %q declares the OAuth2 flows %s; modeled as %s", where, ss.Name, strings.Join(flows, ", "), a.Type)
		}
	case "openidconnect":
		a.Type, a.Carrier = air.AuthOAuth2AuthorizationCode, bearer
		a.Provider = &air.Provider{Grant: "authorization_code"}
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
func manifestAuthType(m *manifest.Auth, base air.Auth) string {
	if m.Type != "oauth2" {
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
	if a.Type == "" {
		a.Type = air.AuthNone
	}
	if m.CredentialProfile != "" {
		a.CredentialProfile = m.CredentialProfile
	}
	if m.Principal != "" {
		a.Principal = m.Principal
	}
	if m.Issuer != "" {
		a.Issuer = m.Issuer
	}
	if m.Audience != "" {
		a.Audience = m.Audience
	}
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
		if p.AuthorizationEndpoint != "" {
			np.AuthorizationEndpoint = p.AuthorizationEndpoint
		}
		if p.TokenEndpoint != "" {
			np.TokenEndpoint = p.TokenEndpoint
		}
		if p.Grant != "" {
			np.Grant = p.Grant
		}
		if p.ClientAuth != "" {
			np.ClientAuth = p.ClientAuth
		}
		if p.Resource != "" {
			np.Resource = p.Resource
		}
		if p.PKCE != nil {
			v := *p.PKCE
			np.PKCE = &v
		}
		if p.RedirectURI != "" {
			np.RedirectURI = p.RedirectURI
		}
		a.Provider = &np
	}
	if len(m.Scopes) > 0 {
		a.Scopes = append([]string(nil), m.Scopes...)
	}
	return a
}

func authEqual(a, b air.Auth) bool { return reflect.DeepEqual(a, b) }
