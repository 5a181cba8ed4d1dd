package connect

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/oauth2"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Client authentication methods at the token endpoint (AIR provider.clientAuth).
const (
	ClientSecretBasic = air.ClientSecretBasic
	ClientSecretPost  = air.ClientSecretPost
	PrivateKeyJWT     = air.PrivateKeyJWT
)

// Config is one connector's OAuth client: what AIR declares, overridden by
// the ANVIL_CONNECT_<C>_* variables. String and GoString leave the client
// secret out.
type Config struct {
	ClientID              string
	ClientSecret          string
	AuthorizationEndpoint string
	TokenEndpoint         string
	// Issuer is the authorization server's issuer identifier (RFC 9207);
	// empty when none is configured.
	Issuer string
	Scopes []string
	// ClientAuth is the provider's client authentication method, if it
	// asked for one (ClientSecretBasic, ClientSecretPost, PrivateKeyJWT).
	ClientAuth air.ClientAuthMethod
	// AuthorizationFromOperator and TokenFromOperator report that the
	// endpoint was set by the operator (ANVIL_CONNECT_<C>_*), not declared
	// by the spec: only a declared endpoint must pass the egress allowlist.
	AuthorizationFromOperator, TokenFromOperator bool
	// ScopesFromOperator reports that _SCOPES replaced what AIR declares:
	// the calls' scope check then asks for those scopes, not each
	// operation's (OperationScopes).
	ScopesFromOperator bool

	// Provider quirks, each a setting rather than code (docs/oauth.md).

	// Resource is the RFC 8707 resource indicator sent with the
	// authorization request and the code exchange: AIR's provider.resource,
	// or _RESOURCE; _OMIT_RESOURCE=1 clears it, for providers that refuse
	// it beside scope (Microsoft Entra ID's v2 endpoints).
	Resource string
	// AuthParams are extra authorization request parameters
	// (_AUTH_PARAMS, a query string such as
	// prompt=consent&access_type=offline). They never replace a parameter
	// the flow sets itself (Validate refuses that).
	AuthParams url.Values
	// Incremental says the provider keeps what it granted before when it
	// grants more (Google with include_granted_scopes=true): a person
	// connecting again is asked only for the scopes the stored grant lacks
	// (_INCREMENTAL=1).
	Incremental bool
	// NoScopeCheck turns off the calls' check of the stored grant's scope
	// (_SCOPE_CHECK=off), for a provider that names granted scopes
	// differently from how they are requested.
	NoScopeCheck bool

	// problem is why the settings cannot be used (Validate reports it).
	problem string
}

// String describes the configuration without its client secret.
func (c Config) String() string {
	return fmt.Sprintf("connect.Config{clientID=%q authorization=%q token=%q issuer=%q scopes=%q clientAuth=%q resource=%q authParams=%q incremental=%t secret=%t}",
		c.ClientID, c.AuthorizationEndpoint, c.TokenEndpoint, c.Issuer, c.Scopes, c.ClientAuth, c.Resource, c.AuthParams.Encode(), c.Incremental, c.ClientSecret != "")
}

// GoString describes the configuration without its client secret.
func (c Config) GoString() string { return c.String() }

// EnvPrefix returns "ANVIL_CONNECT_<C>_" for a connector id: the id
// uppercased, with every run of characters outside [A-Z0-9] turned into one
// underscore.
func EnvPrefix(connector string) string {
	var b strings.Builder
	b.WriteString("ANVIL_CONNECT_")
	run := false
	for _, r := range strings.ToUpper(connector) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			run = false
			continue
		}
		if !run {
			b.WriteByte('_')
			run = true
		}
	}
	b.WriteByte('_')
	return b.String()
}

// ConfigFor resolves a connector's OAuth client from its declared auth (which
// may be nil) and the environment read through getenv:
// ANVIL_CONNECT_<C>_CLIENT_ID and _CLIENT_SECRET, and _AUTHORIZATION_ENDPOINT,
// _TOKEN_ENDPOINT, _ISSUER, _SCOPES (split on spaces or commas) and
// _RESOURCE, each of which overrides what AIR says when set; _EXTRA_SCOPES
// adds scopes to AIR's (offline_access, for a provider that issues refresh
// tokens only for it); and the provider quirks _OMIT_RESOURCE,
// _AUTH_PARAMS, _INCREMENTAL and _SCOPE_CHECK (see Config).
func ConfigFor(connector string, a *air.Auth, getenv func(string) string) Config {
	var c Config
	if a != nil {
		c.Issuer = a.Issuer
		c.Scopes = append([]string(nil), a.Scopes...)
		if p := a.Provider; p != nil {
			c.AuthorizationEndpoint = p.AuthorizationEndpoint
			c.TokenEndpoint = p.TokenEndpoint
			c.ClientAuth = p.ClientAuth
			c.Resource = p.Resource
		}
	}
	if getenv == nil {
		return c
	}
	prefix := EnvPrefix(connector)
	env := func(name string) (string, bool) {
		v := strings.TrimSpace(getenv(prefix + name))
		return v, v != ""
	}
	if v, ok := env("CLIENT_ID"); ok {
		c.ClientID = v
	}
	if v, ok := env("CLIENT_SECRET"); ok {
		c.ClientSecret = v
	}
	if v, ok := env("AUTHORIZATION_ENDPOINT"); ok {
		c.AuthorizationEndpoint, c.AuthorizationFromOperator = v, true
	}
	if v, ok := env("TOKEN_ENDPOINT"); ok {
		c.TokenEndpoint, c.TokenFromOperator = v, true
	}
	if v, ok := env("ISSUER"); ok {
		c.Issuer = v
	}
	if v, ok := env("SCOPES"); ok {
		c.Scopes, c.ScopesFromOperator = splitScopes(v), true
	}
	if v, ok := env("EXTRA_SCOPES"); ok {
		c.Scopes = unionScopes(c.Scopes, splitScopes(v))
	}
	if v, ok := env("RESOURCE"); ok {
		c.Resource = v
	}
	flag := func(name string) bool {
		v, ok := env(name)
		if !ok {
			return false
		}
		on, err := strconv.ParseBool(v)
		if err != nil {
			c.problem = cmp.Or(c.problem, fmt.Sprintf("%s%s is %q, not 1 or 0", prefix, name, v))
		}
		return on
	}
	if flag("OMIT_RESOURCE") {
		c.Resource = ""
	}
	c.Incremental = flag("INCREMENTAL")
	if v, ok := env("SCOPE_CHECK"); ok {
		switch strings.ToLower(v) {
		case "off", "0", "false":
			c.NoScopeCheck = true
		case "on", "1", "true":
		default:
			c.problem = cmp.Or(c.problem, fmt.Sprintf("%sSCOPE_CHECK is %q, not on or off", prefix, v))
		}
	}
	if v, ok := env("AUTH_PARAMS"); ok {
		q, err := url.ParseQuery(v)
		switch {
		case err != nil || len(v) > maxAuthParams:
			c.problem = cmp.Or(c.problem, prefix+"AUTH_PARAMS is not a query string of at most 2048 characters (name=value&…)")
		default:
			for name := range q {
				if reservedAuthParams[name] {
					c.problem = cmp.Or(c.problem, fmt.Sprintf("%sAUTH_PARAMS sets %s, which the gateway sets itself", prefix, name))
				}
			}
			c.AuthParams = q
		}
	}
	return c
}

// maxAuthParams bounds ANVIL_CONNECT_<C>_AUTH_PARAMS.
const maxAuthParams = 2048

// reservedAuthParams are the authorization request parameters the flow
// sets itself; _AUTH_PARAMS may not replace them (the resource indicator
// has its own settings).
var reservedAuthParams = map[string]bool{
	"response_type": true, "client_id": true, "redirect_uri": true, "scope": true, "state": true,
	"code_challenge": true, "code_challenge_method": true, "resource": true,
}

// unionScopes is a followed by the scopes of b it lacks, in order.
func unionScopes(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// splitScopes splits on spaces and commas, dropping empty pieces.
func splitScopes(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
}

// Validate checks that the configuration can run a flow: a client id, both
// endpoints, a client authentication the gateway can perform (not
// private_key_jwt), and endpoints that are absolute HTTPS URLs (plain HTTP
// only to 127.0.0.1) without userinfo or fragment. The error wraps
// ErrNotConfigured; its message names what is missing but never an endpoint
// or a secret.
func (c Config) Validate() error {
	switch {
	case c.problem != "":
		return notConfigured(c.problem)
	case c.ClientID == "":
		return notConfigured("it has no OAuth client id")
	case c.AuthorizationEndpoint == "":
		return notConfigured("it declares no authorization endpoint")
	case c.TokenEndpoint == "":
		return notConfigured("it declares no token endpoint")
	case c.ClientAuth == PrivateKeyJWT:
		return notConfigured("its provider asks for private_key_jwt client authentication, which the gateway does not perform")
	}
	if !secureEndpoint(c.AuthorizationEndpoint) {
		return notConfigured("its authorization endpoint is not an HTTPS URL")
	}
	if !secureEndpoint(c.TokenEndpoint) {
		return notConfigured("its token endpoint is not an HTTPS URL")
	}
	if c.Resource != "" {
		// RFC 8707 §2: an absolute URI without a fragment.
		if u, err := url.Parse(c.Resource); err != nil || !u.IsAbs() || strings.Contains(c.Resource, "#") {
			return notConfigured("its resource indicator is not an absolute URI without a fragment")
		}
	}
	return nil
}

func notConfigured(why string) *Error {
	e := newError(ErrNotConfigured, http.StatusServiceUnavailable, "The connector is not configured for OAuth: "+why+".")
	e.reason = why
	return e
}

// forConnector names the connector in a not-configured error's message.
func (e *Error) forConnector(connector string, status int) *Error {
	c := *e
	c.Status = status
	if c.reason != "" && connector != "" {
		c.Message = fmt.Sprintf("Connector %s is not configured for OAuth: %s (see %s*).", connector, c.reason, EnvPrefix(connector))
	}
	return &c
}

// secureEndpoint reports whether raw is an absolute https URL, or http to
// 127.0.0.1, with a host and no userinfo or fragment.
func secureEndpoint(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || u.RawFragment != "" || strings.Contains(raw, "#") {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		return u.Hostname() == "127.0.0.1"
	}
	return false
}

// checkEgress applies the gateway's egress policy (allow reports whether a
// host may be contacted; nil allows every host) to the endpoints the spec
// declared: the authorization endpoint, where the person's browser goes
// with the client id and the PKCE challenge, and the token endpoint, which
// receives the code, the verifier, refresh tokens and the client secret. An
// endpoint the operator set is trusted as set. The error wraps
// ErrEgressDenied and names the host, never the URL.
func (c Config) checkEgress(allow func(host string) bool, status int) error {
	if allow == nil {
		return nil
	}
	for _, e := range []struct {
		raw      string
		operator bool
	}{{c.AuthorizationEndpoint, c.AuthorizationFromOperator}, {c.TokenEndpoint, c.TokenFromOperator}} {
		if e.operator {
			continue
		}
		u, err := url.Parse(e.raw)
		if err != nil || !allow(u.Host) {
			host := ""
			if err == nil {
				host = u.Hostname()
			}
			ee := newError(ErrEgressDenied, status, fmt.Sprintf(
				"The connector's OAuth endpoint host %s is not in the allowed hosts list (ANVIL_ALLOWED_HOSTS); add it there or set the endpoint in ANVIL_CONNECT_<CONNECTOR>_*.", host))
			ee.Host = host
			return ee
		}
	}
	return nil
}

// authStyle is how the client authenticates at the token endpoint:
// client_secret_basic (HTTP Basic over the URL-encoded id and secret) when a
// secret is configured and the provider did not ask for client_secret_post;
// otherwise client_id in the form, plus the secret for client_secret_post.
func (c Config) authStyle() oauth2.AuthStyle {
	if c.ClientSecret != "" && c.ClientAuth != ClientSecretPost {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// oauth2Config is the golang.org/x/oauth2 client for one redirect URI.
func (c Config) oauth2Config(redirectURI string) *oauth2.Config {
	// With AuthStyleInParams and no secret, x/oauth2 sends client_id alone.
	return &oauth2.Config{
		ClientID:     c.ClientID,
		ClientSecret: c.ClientSecret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   c.AuthorizationEndpoint,
			TokenURL:  c.TokenEndpoint,
			AuthStyle: c.authStyle(),
		},
		RedirectURL: redirectURI,
		Scopes:      c.Scopes,
	}
}

// CheckIssuer applies RFC 9207 to a callback's iss parameter (present says
// whether the parameter was sent). With an issuer configured, iss must equal
// it exactly (a missing iss does not). Without one, an iss that is present
// must share the authorization endpoint's origin. The error wraps
// ErrIssuerMismatch.
func (c Config) CheckIssuer(iss string, present bool) error {
	mismatch := newError(ErrIssuerMismatch, http.StatusBadRequest, "The authorization response came from an unexpected authorization server.")
	if c.Issuer != "" {
		if !present || iss != c.Issuer {
			return mismatch
		}
		return nil
	}
	if !present {
		return nil
	}
	got, ok := origin(iss)
	want, ok2 := origin(c.AuthorizationEndpoint)
	if !ok || !ok2 || got != want {
		return mismatch
	}
	return nil
}

// origin returns scheme://host[:port] with the default port left out and the
// scheme and host lowercased, as the WHATWG URL origin serialises it.
func origin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}
