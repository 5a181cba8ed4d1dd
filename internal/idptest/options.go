package idptest

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Options configure a provider. The zero value is a working provider with
// no clients and no users; the YAML tags are the cmd/idp config file's keys.
type Options struct {
	// Addr is the TCP address to listen on. It must be a loopback address;
	// empty is 127.0.0.1 on a free port.
	Addr string `yaml:"addr"`
	// SigningAlg is the algorithm of the first signing key: RS256 (the
	// default), ES256 or EdDSA. RotateKey can change it later.
	SigningAlg string `yaml:"signing_alg"`
	// AccessTokenTTL is the lifetime of access tokens of clients that set
	// none themselves; 0 is 5 minutes.
	AccessTokenTTL time.Duration `yaml:"access_token_ttl"`
	// RefreshTokenTTL is the lifetime of refresh tokens; 0 is 1 hour.
	RefreshTokenTTL time.Duration `yaml:"refresh_token_ttl"`
	// IDTokenTTL is the lifetime of ID tokens; 0 is 5 minutes.
	IDTokenTTL time.Duration `yaml:"id_token_ttl"`
	// Scopes are advertised in the metadata's scopes_supported beside the
	// OpenID Connect ones (openid, profile, email, phone, address,
	// offline_access). Clients may request scopes not listed here unless
	// their own Scopes say otherwise.
	Scopes  []string `yaml:"scopes"`
	Clients []Client `yaml:"clients"`
	Users   []User   `yaml:"users"`
}

// Client is an OAuth client registered with the provider.
type Client struct {
	ID string `yaml:"id"`
	// Secret makes the client confidential (it authenticates with
	// AuthMethod at the token endpoint). Empty makes it public: no secret,
	// PKCE required, loopback redirect URIs may use any port (RFC 8252).
	Secret string `yaml:"secret"`
	// AuthMethod is client_secret_basic (the default) or
	// client_secret_post, for a confidential client.
	AuthMethod   string   `yaml:"auth_method"`
	RedirectURIs []string `yaml:"redirect_uris"`
	// Scopes are the scopes beyond OpenID Connect's that the client may
	// request; nil allows any. A scope outside a non-nil list is dropped
	// from the request (zitadel's behaviour), not refused.
	Scopes []string `yaml:"scopes"`
	// Audience is the aud of access tokens the client obtains without an
	// RFC 8707 resource parameter (empty: the client ID). It is also what
	// the client is, as a resource server: a token whose aud includes it
	// (or the client ID) is one the client may exchange (RFC 8693).
	Audience []string `yaml:"audience"`
	// Resources are the RFC 8707 resource indicators the client may
	// request at the authorization and token endpoints; a token obtained
	// with resource parameters has exactly those as its aud. A resource
	// outside this list is refused with invalid_target.
	Resources []string `yaml:"resources"`
	// ExchangeAudiences are the audiences the client may obtain tokens for
	// by RFC 8693 token exchange (confidential clients only); empty
	// disables the grant for the client.
	ExchangeAudiences []string `yaml:"exchange_audiences"`
	// Opaque makes the client's access tokens opaque (verified by RFC 7662
	// introspection) instead of JWTs.
	Opaque bool `yaml:"opaque"`
	// AccessTokenTTL overrides Options.AccessTokenTTL for this client.
	AccessTokenTTL time.Duration `yaml:"access_token_ttl"`
	// Backdate moves the iat, nbf and exp of the client's access tokens
	// (and the iat of its ID tokens) this far into the past while
	// expires_in stays the TTL: with Backdate > AccessTokenTTL the client
	// receives tokens that are already expired, for attack tests, without
	// waiting. It is zitadel's per-client clock skew.
	Backdate time.Duration `yaml:"backdate"`
}

// User is an account that can log in through the login page.
type User struct {
	// Subject is the sub claim.
	Subject string `yaml:"subject"`
	// Username is the login name; empty is Subject.
	Username string `yaml:"username"`
	// Password is the login password; empty is a random one, which
	// Provider.Login knows.
	Password string `yaml:"password"`
	Name     string `yaml:"name"`
	Email    string `yaml:"email"`
	// Groups and Roles are the groups and roles claims of access tokens,
	// ID tokens, userinfo and introspection responses.
	Groups []string `yaml:"groups"`
	Roles  []string `yaml:"roles"`
	// Claims are further claims (tenant, department, …) added to the same
	// places. They never replace a registered claim (iss, sub, aud, exp,
	// scope, client_id, …) or the ones above.
	Claims map[string]any `yaml:"claims"`
}

const (
	authBasic = "client_secret_basic"
	authPost  = "client_secret_post"
)

// Defaults for zero durations in Options.
const (
	defaultAccessTTL  = 5 * time.Minute
	defaultRefreshTTL = time.Hour
	defaultIDTTL      = 5 * time.Minute
)

// withDefaults returns a copy of o with the zero durations filled in.
func (o Options) withDefaults() Options {
	if o.AccessTokenTTL == 0 {
		o.AccessTokenTTL = defaultAccessTTL
	}
	if o.RefreshTokenTTL == 0 {
		o.RefreshTokenTTL = defaultRefreshTTL
	}
	if o.IDTokenTTL == 0 {
		o.IDTokenTTL = defaultIDTTL
	}
	if o.SigningAlg == "" {
		o.SigningAlg = RS256
	}
	return o
}

// validate reports every problem of o, each naming the field at fault.
func (o Options) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.AccessTokenTTL < 0 || o.RefreshTokenTTL < 0 || o.IDTokenTTL < 0 {
		bad("token lifetimes must not be negative (use a client's backdate for expired tokens)")
	}
	switch o.SigningAlg {
	case "", RS256, ES256, EdDSA:
	default:
		bad("signing_alg %q: use %s, %s or %s", o.SigningAlg, RS256, ES256, EdDSA)
	}
	ids := map[string]bool{}
	for i, c := range o.Clients {
		if err := c.validate(); err != nil {
			bad("clients[%d]: %w", i, err)
		}
		if ids[c.ID] {
			bad("clients[%d]: id %q is used twice", i, c.ID)
		}
		ids[c.ID] = true
	}
	subjects, names := map[string]bool{}, map[string]bool{}
	for i, u := range o.Users {
		if err := u.validate(); err != nil {
			bad("users[%d]: %w", i, err)
		}
		if subjects[u.Subject] {
			bad("users[%d]: subject %q is used twice", i, u.Subject)
		}
		if names[u.loginName()] {
			bad("users[%d]: username %q is used twice", i, u.loginName())
		}
		subjects[u.Subject], names[u.loginName()] = true, true
	}
	return errors.Join(errs...)
}

func (c Client) validate() error {
	switch {
	case c.ID == "":
		return errors.New("id is empty")
	case c.Secret == "" && c.AuthMethod != "":
		return fmt.Errorf("auth_method %q needs a secret (a public client has none)", c.AuthMethod)
	case c.AuthMethod != "" && c.AuthMethod != authBasic && c.AuthMethod != authPost:
		return fmt.Errorf("auth_method %q: use %s or %s", c.AuthMethod, authBasic, authPost)
	case c.Secret == "" && len(c.ExchangeAudiences) > 0:
		return errors.New("exchange_audiences needs a secret: token exchange authenticates the client")
	case c.AccessTokenTTL < 0 || c.Backdate < 0:
		return errors.New("access_token_ttl and backdate must not be negative")
	}
	for _, u := range c.RedirectURIs {
		p, err := url.Parse(u)
		if err != nil || !p.IsAbs() || p.Fragment != "" {
			return fmt.Errorf("redirect URI %q is not an absolute URI without a fragment", u)
		}
	}
	for _, r := range c.Resources {
		if err := checkResource(r); err != nil {
			return err
		}
	}
	return nil
}

func (u User) validate() error {
	switch {
	case u.Subject == "":
		return errors.New("subject is empty")
	case strings.Contains(u.Subject, ":"):
		// zitadel seals an opaque token as "<token ID>:<subject>" and
		// splits it at the colon.
		return fmt.Errorf("subject %q contains a colon, which zitadel's opaque tokens cannot carry", u.Subject)
	}
	return nil
}

func (u User) loginName() string {
	if u.Username != "" {
		return u.Username
	}
	return u.Subject
}

// checkResource enforces RFC 8707 section 2: a resource indicator is an
// absolute URI without a fragment.
func checkResource(r string) error {
	p, err := url.Parse(r)
	if err != nil || !p.IsAbs() || p.Fragment != "" {
		return fmt.Errorf("resource %q is not an absolute URI without a fragment (RFC 8707)", r)
	}
	return nil
}

// randomID returns n random bytes, base64url-encoded: IDs, codes and
// refresh tokens nobody can guess.
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it panics instead)
	return base64.RawURLEncoding.EncodeToString(b)
}
