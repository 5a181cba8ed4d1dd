package connect

import (
	"slices"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// oidcScopes are OpenID Connect's own scopes. Providers often leave them
// out of a token response's scope (Microsoft Entra ID does), and they never
// gate an API call, so a grant is not judged by them.
var oidcScopes = map[string]bool{
	"openid": true, "profile": true, "email": true, "address": true, "phone": true, "offline_access": true,
}

// MissingScopes returns the scopes of needed that a stored grant lacks, in
// needed's order. granted is the grant's scope as stored (space-separated,
// as the provider returned it, or as requested when it named none); an
// empty granted is unknown, and nothing is reported missing.
//
// The comparison is exact (scopes are case-sensitive, RFC 6749 §3.3) with
// two allowances for how real providers answer, so that a grant is never
// judged short when the provider did grant what was asked: OpenID Connect's
// own scopes are not judged, nor Entra ID's "<resource>/.default"; and a
// scope written as a URI counts as granted when the grant names its last
// path segment (Entra ID answers "Mail.Read" for
// "https://graph.microsoft.com/Mail.Read").
func MissingScopes(granted string, needed []string) []string {
	have := strings.Fields(granted)
	if len(have) == 0 {
		return nil
	}
	var missing []string
	for _, s := range needed {
		if oidcScopes[s] || s == ".default" || strings.HasSuffix(s, "/.default") || slices.Contains(have, s) || slices.Contains(missing, s) {
			continue
		}
		if i := strings.LastIndexByte(s, '/'); i >= 0 && strings.Contains(s, "://") && slices.Contains(have, s[i+1:]) {
			continue
		}
		missing = append(missing, s)
	}
	return missing
}

// OperationScopes are the scopes a call of an operation whose effective
// auth is a needs from a stored grant under cfg: the scopes the operator
// set (ANVIL_CONNECT_<C>_SCOPES, which is then what every login asks for),
// else those the operation declares; none when the scope check is off.
func OperationScopes(cfg Config, a *air.Auth) []string {
	switch {
	case cfg.NoScopeCheck:
		return nil
	case cfg.ScopesFromOperator:
		return cfg.Scopes
	case a != nil:
		return a.Scopes
	}
	return nil
}

// Increment is the scopes a login asks for when the person already holds a
// grant (granted, its stored scope): with an incremental provider
// (Config.Incremental), only those of cfg.Scopes the grant lacks, plus the
// OpenID Connect scopes cfg asks for (a refresh token keeps coming only
// with offline_access); otherwise, or when the grant lacks nothing or is
// unknown, all of cfg.Scopes.
func Increment(cfg Config, granted string) []string {
	if !cfg.Incremental {
		return cfg.Scopes
	}
	missing := MissingScopes(granted, cfg.Scopes)
	if len(missing) == 0 {
		return cfg.Scopes
	}
	var out []string
	for _, s := range cfg.Scopes {
		if oidcScopes[s] || slices.Contains(missing, s) {
			out = append(out, s)
		}
	}
	return out
}
