package upstream

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// UnsupportedAuth reports whether the gateway cannot supply a credential of
// this type from the vault (mtls, workload_identity): the caller refuses the
// call with auth_required, connector/unsupported_auth, before ApplyStatic.
func UnsupportedAuth(auth *air.Auth) bool {
	return auth != nil && (auth.Type == air.AuthMTLS || auth.Type == air.AuthWorkloadIdentity)
}

// ApplyStatic puts a static connection's secret on req as the operation's
// declared auth says (anvil-reference §e "Credential resolution"):
//
//   - basic: "Authorization: Basic base64(secret)", the secret being "user:password";
//   - api_key, custom_header and every other type: the declared carrier
//     (a header, query parameter or cookie; a carrier scheme such as
//     "Bearer" is written before the value), or "Authorization: Bearer
//     <secret>" when no carrier is declared.
//
// auth may be nil (bearer). The credential replaces a value of the same name
// already on the request. The caller checks UnsupportedAuth first.
func ApplyStatic(req *http.Request, auth *air.Auth, secret string) {
	if auth != nil && auth.Type == air.AuthBasic {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(secret)))
		return
	}
	if auth != nil && auth.Carrier != nil && applyCarrier(req, auth.Carrier, secret) {
		return
	}
	ApplyBearer(req, secret)
}

// ApplyBearer sets "Authorization: Bearer <token>" (an OAuth access token).
func ApplyBearer(req *http.Request, token string) {
	req.Header.Set("Authorization", "Bearer "+token)
}

// applyCarrier writes value where c says; false for an unusable carrier.
func applyCarrier(req *http.Request, c *air.Carrier, value string) bool {
	if c.Name == "" {
		return false
	}
	if c.Scheme != "" {
		value = c.Scheme + " " + value
	}
	switch air.Location(strings.ToLower(string(c.In))) {
	case air.InHeader:
		req.Header.Set(c.Name, value)
	case air.InQuery:
		setQueryParam(req.URL, c.Name, value)
	case air.InCookie:
		pair := c.Name + "=" + value
		if old := req.Header.Get("Cookie"); old != "" {
			pair = removeCookie(old, c.Name) + pair
		}
		req.Header.Set("Cookie", pair)
	default:
		return false
	}
	return true
}

// setQueryParam replaces every name=… pair in u's query by one name=value
// at the end, keeping the other pairs' order and encoding.
func setQueryParam(u *url.URL, name, value string) {
	var kept []string
	if u.RawQuery != "" {
		for _, pair := range strings.Split(u.RawQuery, "&") {
			k, _, _ := strings.Cut(pair, "=")
			if uk, err := url.QueryUnescape(k); err == nil && uk == name {
				continue
			}
			kept = append(kept, pair)
		}
	}
	kept = append(kept, url.QueryEscape(name)+"="+url.QueryEscape(value))
	u.RawQuery = strings.Join(kept, "&")
}

// removeCookie drops name's pairs from a Cookie header value and returns the
// rest with a trailing "; " (or "" when nothing is left).
func removeCookie(header, name string) string {
	var kept []string
	for _, p := range strings.Split(header, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if k, _, _ := strings.Cut(p, "="); k == name {
			continue
		}
		kept = append(kept, p)
	}
	if len(kept) == 0 {
		return ""
	}
	return strings.Join(kept, "; ") + "; "
}
