package oidc

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/policy"
)

// Limits on claims.
const (
	// MaxSubjectChars is the longest sub, in characters (UTF-16 code
	// units, as Branchyard's tokens count them).
	MaxSubjectChars = 256
	// MaxClaimValues is the most scopes, groups or roles a token may carry.
	MaxClaimValues = 1024
	// MaxTokenLifetime is how far ahead exp may be (plus leeway): a token
	// that would stay valid longer is refused.
	MaxTokenLifetime = 24 * 60 * 60
)

// failure is why a token is refused: a bounded code and a message that
// never holds the token.
type failure struct {
	code, msg string
}

func invalidToken(msg string) *failure { return &failure{code: "invalid_token", msg: msg} }

// Messages callers and tests rely on.
const (
	msgNoBearer     = "No bearer token was presented."
	msgTooLarge     = "Token is too large."
	msgMalformed    = "Token is not a well-formed compact JWT."
	msgIssuer       = "Token issuer is not accepted."
	msgAlgorithm    = "Token algorithm is not accepted for its issuer."
	msgKeysUnread   = "Token signing keys could not be read."
	msgBadSignature = "Token signature is invalid."
	msgNotObject    = "Token payload is not a JSON object."
	msgAudience     = "Token audience does not name this gateway."
	msgNoExpiration = "Token has no expiration (exp)."
	msgExpired      = "Token has expired."
	msgNotYetValid  = "Token is not yet valid."
	msgFuture       = "Token was issued in the future (iat)."
	msgLifetime     = "Token expiration is more than a day away."
	msgSubject      = "Token subject (sub) must be a non-empty string of at most 256 characters."
	msgParty        = "Token was issued to a client this gateway does not accept (azp, client_id)."
	msgInactive     = "Token is not active."
	msgIntrospect   = "Token could not be introspected."
	msgOpaque       = "Token is not a JWT, and no issuer of this gateway introspects opaque tokens."
)

// tokenClaims are the claims of a verified token the gateway reads.
type tokenClaims struct {
	iss, sub, azp, clientID, tenant string
	aud                             []string
	scopes, groups, roles           []string
	exp, nbf, iat                   float64
	hasExp, hasNbf, hasIat          bool
}

// readClaims type-checks the claims the gateway reads (other claims,
// by_grants among them, are ignored: grants come from the policy alone).
func readClaims(raw map[string]json.RawMessage, names policy.ClaimNames) (*tokenClaims, *failure) {
	c := &tokenClaims{}
	for _, s := range []struct {
		name string
		dst  *string
	}{{"iss", &c.iss}, {"sub", &c.sub}, {"azp", &c.azp}, {"client_id", &c.clientID}, {names.Tenant, &c.tenant}} {
		v, ok := stringClaim(raw, s.name)
		if !ok {
			return nil, invalidToken("Token claim " + s.name + " must be a string.")
		}
		*s.dst = v
	}
	for _, n := range []struct {
		name    string
		dst     *float64
		present *bool
	}{{"exp", &c.exp, &c.hasExp}, {"nbf", &c.nbf, &c.hasNbf}, {"iat", &c.iat, &c.hasIat}} {
		v, present, ok := numberClaim(raw, n.name)
		if !ok {
			return nil, invalidToken("Token claim " + n.name + " must be a finite number.")
		}
		*n.dst, *n.present = v, present
	}
	aud, ok := listClaim(raw, "aud", false)
	if !ok {
		return nil, invalidToken("Token audience (aud) must be a string or a list of strings.")
	}
	c.aud = aud
	for _, l := range []struct {
		name   string
		dst    *[]string
		fields bool
	}{{names.Scope, &c.scopes, true}, {names.Groups, &c.groups, false}, {names.Roles, &c.roles, false}} {
		v, ok := listClaim(raw, l.name, l.fields)
		if !ok {
			return nil, invalidToken("Token claim " + l.name + " must be a string or a list of at most 1024 strings.")
		}
		*l.dst = v
	}
	return c, nil
}

// check applies the checks every token takes, verified by signature or by
// introspection: the issuer, the audience, the times (with leeway, in
// seconds), the subject and the authorized party.
func (c *tokenClaims) check(is *policy.Issuer, audiences func(string) bool, now, leeway float64) *failure {
	switch {
	case c.iss != is.Issuer:
		return invalidToken(msgIssuer)
	case !slices.ContainsFunc(c.aud, audiences):
		return invalidToken(msgAudience)
	case !c.hasExp:
		return invalidToken(msgNoExpiration)
	}
	if f := c.checkTimes(now, leeway); f != nil {
		return f
	}
	if c.sub == "" || canon.UTF16Len(c.sub) > MaxSubjectChars {
		return invalidToken(msgSubject)
	}
	if len(is.AuthorizedParties) > 0 {
		party := c.azp
		if party == "" {
			party = c.clientID
		}
		if !slices.Contains(is.AuthorizedParties, party) {
			return invalidToken(msgParty)
		}
	}
	return nil
}

// checkTimes checks exp, nbf, iat and the lifetime; it runs again on every
// use of a remembered token.
func (c *tokenClaims) checkTimes(now, leeway float64) *failure {
	switch {
	case now >= c.exp+leeway:
		return invalidToken(msgExpired)
	case c.hasNbf && now < c.nbf-leeway:
		return invalidToken(msgNotYetValid)
	case c.hasIat && c.iat > now+leeway:
		return invalidToken(msgFuture)
	case c.exp-now > MaxTokenLifetime+leeway:
		return invalidToken(msgLifetime)
	}
	return nil
}

// stringClaim reads a claim that must be a string when present.
func stringClaim(raw map[string]json.RawMessage, name string) (string, bool) {
	v, present := raw[name]
	if !present || isNull(v) && name != "iss" && name != "sub" {
		return "", true
	}
	var s string
	if kind(v) != '"' || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// numberClaim reads a claim that must be a finite number when present.
func numberClaim(raw map[string]json.RawMessage, name string) (val float64, present, ok bool) {
	v, present := raw[name]
	if !present {
		return 0, false, true
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, true, false
	}
	return f, true, true
}

// listClaim reads a claim that is a string or a list of strings (at most
// MaxClaimValues); with fields, a string is a space-separated list (the
// scope claim), else one value. null is absent.
func listClaim(raw map[string]json.RawMessage, name string, fields bool) ([]string, bool) {
	v, present := raw[name]
	if !present || isNull(v) {
		return nil, true
	}
	switch kind(v) {
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil {
			return nil, false
		}
		if fields {
			out := strings.Fields(s)
			return out, len(out) <= MaxClaimValues
		}
		return []string{s}, true
	case '[':
		var list []json.RawMessage
		if json.Unmarshal(v, &list) != nil || len(list) > MaxClaimValues {
			return nil, false
		}
		out := make([]string, 0, len(list))
		for _, item := range list {
			var s string
			if kind(item) != '"' || json.Unmarshal(item, &s) != nil {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// kind is the first byte of a JSON value.
func kind(v json.RawMessage) byte {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }
