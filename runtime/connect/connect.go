// Package connect runs the gateway's OAuth connections: the authorization-code
// grant with PKCE (S256) that /connect/start and /connect/callback drive, and
// the refresh of stored access tokens when a call needs one.
//
// A Service keeps the pending flows in memory (at most MaxPending, and
// MaxPendingPerSubject per person, each valid for FlowTTL, each state single
// use), exchanges codes and refreshes tokens
// with golang.org/x/oauth2 through an HTTP client that never follows a
// redirect, and stores connections in the vault. Refreshes of one connection
// are serialised under the vault's per-connection lock, so concurrent calls
// on an expiring token cause one refresh.
//
// Every error is an *Error carrying the contract's code, the route's HTTP
// status and a message that never holds a link, a token or a secret.
package connect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/anvil-dev/anvil/runtime/vault"
)

// DefaultTimeout bounds one token-endpoint request.
const DefaultTimeout = 30 * time.Second

// Vault is the part of *vault.Store a Service uses.
type Vault interface {
	Get(sub, connector, account string) (*vault.Connection, error)
	Put(c *vault.Connection) error
	SetStatus(sub, connector, account, status string) (*vault.Connection, error)
	Lock(sub, connector, account string) (unlock func())
}

// Options tune a Service. The zero value is usable.
type Options struct {
	// Now is the clock (time.Now by default).
	Now func() time.Time
	// HTTPClient is the base client for token-endpoint requests; the
	// Service uses a copy whose CheckRedirect refuses every redirect.
	HTTPClient *http.Client
	// Timeout bounds one token request when HTTPClient sets none
	// (DefaultTimeout by default).
	Timeout time.Duration
	// MaxPending overrides MaxPending (tests).
	MaxPending int
	// MaxPendingPerSubject overrides MaxPendingPerSubject (tests).
	MaxPendingPerSubject int
	// FlowTTL overrides FlowTTL (tests).
	FlowTTL time.Duration
	// AllowHost is the egress policy for the OAuth endpoints a spec declares
	// (the gateway passes its upstream allowlist's Allows); nil allows every
	// host. Endpoints set by the operator are not checked.
	AllowHost func(host string) bool
	// Shared, when set, keeps the pending flows where every replica sees
	// them (a flow started on one replica completes on another); the
	// in-memory table is then unused.
	Shared SharedFlows
}

// Service runs OAuth connections for one gateway.
type Service struct {
	vault  Vault
	now    func() time.Time
	client *http.Client
	ttl    time.Duration
	flows  *flows
	shared SharedFlows
	allow  func(host string) bool
}

// New returns a Service storing connections in v (nil: no vault, so flows
// cannot start and stored connections cannot be read).
func New(v Vault, opts *Options) *Service {
	if opts == nil {
		opts = &Options{}
	}
	s := &Service{vault: v, now: opts.Now, ttl: opts.FlowTTL, allow: opts.AllowHost, shared: opts.Shared}
	if s.now == nil {
		s.now = time.Now
	}
	if s.ttl <= 0 {
		s.ttl = FlowTTL
	}
	max := opts.MaxPending
	if max <= 0 {
		max = MaxPending
	}
	perSub := opts.MaxPendingPerSubject
	if perSub <= 0 {
		perSub = MaxPendingPerSubject
	}
	s.flows = newFlows(max, perSub)
	c := &http.Client{}
	if opts.HTTPClient != nil {
		*c = *opts.HTTPClient
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if c.Timeout == 0 {
		c.Timeout = opts.Timeout
		if c.Timeout <= 0 {
			c.Timeout = DefaultTimeout
		}
	}
	s.client = c
	return s
}

// StartRequest names what a flow connects and where the browser returns.
type StartRequest struct {
	Sub       string
	Connector string
	Account   string
	// Config is the connector's OAuth client (ConfigFor).
	Config Config
	// RedirectURI is <public base>/connect/callback.
	RedirectURI string
	// Granted is the scope of the grant the person already holds for the
	// connector and account (its stored scope), or "": with an
	// incremental provider the login asks only for what it lacks
	// (Increment), and the new grant keeps what it had.
	Granted string
}

// Started is a started flow: the authorization URL to send the person to,
// and when its state expires.
type Started struct {
	URL       string
	ExpiresAt time.Time
}

// Start begins an authorization-code flow. The URL carries response_type=code,
// client_id, redirect_uri, scope (space-joined, only when there are scopes:
// the configuration's, or the increment of Increment), state, code_challenge
// and code_challenge_method=S256, then the resource indicator (RFC 8707)
// and the extra parameters when configured; state and the PKCE
// verifier are 32 random bytes, base64url. Nothing is sent anywhere. Errors:
// ErrNotConfigured (503), ErrEgressDenied (403), ErrVaultUnavailable (503),
// ErrTooManyPending (503 when the table is full, 429 when the person already
// has MaxPendingPerSubject flows).
func (s *Service) Start(req StartRequest) (*Started, error) {
	if err := req.Config.Validate(); err != nil {
		return nil, AsError(err).forConnector(req.Connector, http.StatusServiceUnavailable)
	}
	if err := req.Config.checkEgress(s.allow, http.StatusForbidden); err != nil {
		return nil, err
	}
	if s.vault == nil {
		return nil, newError(ErrVaultUnavailable, http.StatusServiceUnavailable, "The gateway has no vault to store connections in (set ANVIL_VAULT_KEY_FILE).")
	}
	now := s.now()
	f := &flow{
		Sub: req.Sub, Connector: req.Connector, Account: req.Account,
		RedirectURI: req.RedirectURI, Config: req.Config,
		ExpiresAt: now.Add(s.ttl),
		verifier:  randomToken(),
	}
	if inc := Increment(req.Config, req.Granted); !slices.Equal(inc, req.Config.Scopes) {
		f.Config.Scopes, f.Kept = inc, req.Granted
	}
	var state string
	why := addedFlow
	if s.shared != nil {
		var err error
		if state, err = s.putShared(f); err != nil {
			if !errors.Is(err, ErrFlowsFull) {
				return nil, newError(ErrVaultUnavailable, http.StatusServiceUnavailable, "The gateway's state store is unavailable; try again shortly.")
			}
			why = tableFull
		}
	} else {
		state, why = s.flows.add(f, now)
	}
	switch why {
	case subjectFull:
		return nil, newError(ErrTooManyPending, http.StatusTooManyRequests, fmt.Sprintf(
			"You have %d connections being set up already; finish one or try again in a few minutes.", s.flows.maxPerSub))
	case tableFull:
		return nil, newError(ErrTooManyPending, http.StatusServiceUnavailable, "Too many connections are being set up at once; try again in a few minutes.")
	}
	opts := append([]oauth2.AuthCodeOption{oauth2.S256ChallengeOption(f.verifier)}, f.Config.authorizationParams()...)
	u := f.Config.oauth2Config(f.RedirectURI).AuthCodeURL(state, opts...)
	return &Started{URL: u, ExpiresAt: f.ExpiresAt}, nil
}

// Pending returns how many flows are in progress (expired ones included
// until the next Sweep).
func (s *Service) Pending() int { return s.flows.len() }

// Sweep drops expired pending flows and returns how many it dropped.
func (s *Service) Sweep() int { return s.flows.sweep(s.now()) }

// providerError matches an OAuth error code safe to repeat in a message.
var providerError = regexp.MustCompile(`^[a-z_]{1,64}$`)

// Callback completes a flow from the callback's query (state, code, iss,
// error). The state is consumed first, on first sight. Then, in order: the
// connector must still be configured, iss must pass CheckIssuer, an error
// parameter is a denial, and a code must be present; only then is the code
// exchanged (with the verifier and the same redirect_uri) and the connection
// stored, kind oauth and status active. Errors: ErrEgressDenied (403,
// nothing sent); ErrInvalidState, ErrNotConfigured, ErrIssuerMismatch,
// ErrAuthorizationDenied, ErrMissingCode (400); ErrTokenEndpointUnreachable, ErrTokenExchangeFailed (502);
// ErrVaultUnavailable (503), ErrVaultWrite (500). Nothing is stored unless
// it succeeds.
func (s *Service) Callback(ctx context.Context, q url.Values) (*vault.Connection, error) {
	var f *flow
	if s.shared != nil {
		var err error
		if f, err = s.takeShared(ctx, q.Get("state")); err != nil && !errors.Is(err, ErrFlowNotFound) {
			return nil, newError(ErrVaultUnavailable, http.StatusServiceUnavailable, "The gateway's state store is unavailable; try the sign-in again shortly.")
		}
	} else {
		f = s.flows.take(q.Get("state"), s.now())
	}
	if f == nil {
		return nil, newError(ErrInvalidState, http.StatusBadRequest, "This sign-in link is unknown, already used or expired; start the connection again.")
	}
	if err := f.Config.Validate(); err != nil {
		return nil, AsError(err).forConnector(f.Connector, http.StatusBadRequest)
	}
	if err := f.Config.checkEgress(s.allow, http.StatusForbidden); err != nil {
		return nil, err
	}
	if err := f.Config.CheckIssuer(q.Get("iss"), q.Has("iss")); err != nil {
		return nil, err
	}
	if q.Has("error") {
		msg := "The authorization was denied."
		if code := q.Get("error"); providerError.MatchString(code) {
			msg = fmt.Sprintf("The authorization was denied (%s).", code)
		}
		return nil, newError(ErrAuthorizationDenied, http.StatusBadRequest, msg)
	}
	code := q.Get("code")
	if code == "" {
		return nil, newError(ErrMissingCode, http.StatusBadRequest, "The authorization response carries no code.")
	}
	if s.vault == nil {
		return nil, newError(ErrVaultUnavailable, http.StatusServiceUnavailable, "The gateway has no vault to store connections in.")
	}
	conf := f.Config.oauth2Config(f.RedirectURI)
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(f.verifier)}
	if f.Config.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", f.Config.Resource))
	}
	tok, err := conf.Exchange(s.clientContext(ctx), code, opts...)
	if err != nil {
		if unreachable(err) {
			return nil, newError(ErrTokenEndpointUnreachable, http.StatusBadGateway, "The provider's token endpoint could not be reached.")
		}
		return nil, newError(ErrTokenExchangeFailed, http.StatusBadGateway, "The provider did not issue a token for this sign-in.")
	}
	conn := &vault.Connection{
		Sub: f.Sub, Connector: f.Connector, Account: f.Account,
		Kind: vault.KindOAuth, Status: vault.StatusActive,
	}
	s.applyToken(conn, tok, f.Config)
	if f.Kept != "" && !hasScope(tok) {
		// An incremental grant the provider did not describe: it keeps
		// what was granted before (Config.Incremental).
		conn.Scope = strings.Join(unionScopes(strings.Fields(f.Kept), f.Config.Scopes), " ")
	}
	if err := s.vault.Put(conn); err != nil {
		return nil, newError(ErrVaultWrite, http.StatusInternalServerError, "The connection could not be stored.")
	}
	return conn, nil
}

// AccessToken returns the access token to call the upstream with for a
// stored OAuth connection, refreshing it first when it expires within
// vault.RefreshSkew. Refreshes of one connection run one at a time under the
// vault's per-connection lock, and each re-reads the record first, so
// concurrent callers on an expiring token cause a single refresh. The refresh
// posts grant_type=refresh_token; a refresh token is kept unless a new one
// arrives. Errors: ErrNeedsReconnect when the record is not usable or the
// provider answers invalid_grant (the record is then marked needs_reconnect);
// ErrRefreshFailed for anything else (unreachable, 5xx, a redirect, an
// endpoint that is not HTTPS, a store failure), with nothing sent to an
// endpoint that fails Validate; ErrEgressDenied, with nothing sent, for a
// declared token endpoint outside the egress allowlist.
func (s *Service) AccessToken(ctx context.Context, cfg Config, conn *vault.Connection) (string, error) {
	if conn == nil || conn.Kind != vault.KindOAuth || conn.Status != vault.StatusActive {
		return "", needsReconnect()
	}
	now := s.now()
	if !conn.NeedsRefresh(now) {
		return conn.AccessToken, nil
	}
	if s.vault == nil {
		return "", refreshFailed()
	}
	if ex, ok := s.vault.(Exclusive); ok {
		var token string
		err := ex.RefreshExclusive(ctx, conn.Sub, conn.Connector, conn.Account, func(ctx context.Context) error {
			var err error
			token, err = s.refreshLocked(ctx, cfg, conn)
			return err
		})
		var ce *Error
		if err != nil && !errors.As(err, &ce) {
			return "", refreshFailed() // the store could not be reached
		}
		return token, err
	}
	unlock := s.vault.Lock(conn.Sub, conn.Connector, conn.Account)
	defer unlock()
	return s.refreshLocked(ctx, cfg, conn)
}

// refreshLocked is AccessToken's refresh, run while no other caller
// refreshes the connection: it re-reads the record first, since the caller
// before it may have refreshed it already.
func (s *Service) refreshLocked(ctx context.Context, cfg Config, conn *vault.Connection) (string, error) {
	cur, err := s.vault.Get(conn.Sub, conn.Connector, conn.Account)
	if err != nil || cur.Kind != vault.KindOAuth || cur.Status != vault.StatusActive {
		return "", needsReconnect()
	}
	now := s.now()
	if !cur.NeedsRefresh(now) {
		return cur.AccessToken, nil
	}
	if cur.RefreshToken == "" {
		if exp, ok := cur.Expiry(); ok && cur.AccessToken != "" && now.Before(exp) {
			return cur.AccessToken, nil // still valid for a little while; nothing to refresh with
		}
		return "", needsReconnect()
	}
	if err := cfg.Validate(); err != nil {
		return "", refreshFailed()
	}
	if err := cfg.checkEgress(s.allow, http.StatusForbidden); err != nil {
		return "", err
	}
	src := cfg.oauth2Config("").TokenSource(s.clientContext(ctx), &oauth2.Token{RefreshToken: cur.RefreshToken})
	tok, err := src.Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			if _, serr := s.vault.SetStatus(cur.Sub, cur.Connector, cur.Account, vault.StatusNeedsReconnect); serr != nil {
				return "", refreshFailed()
			}
			return "", needsReconnect()
		}
		return "", refreshFailed()
	}
	s.applyToken(cur, tok, Config{})
	if err := s.vault.Put(cur); err != nil {
		return "", refreshFailed()
	}
	return cur.AccessToken, nil
}

func needsReconnect() *Error {
	return newError(ErrNeedsReconnect, http.StatusUnauthorized, "The connection needs to be made again.")
}

func refreshFailed() *Error {
	return newError(ErrRefreshFailed, http.StatusUnauthorized, "The connection's access could not be refreshed.")
}

// applyToken copies a token response onto conn: the access token, a new
// refresh token if one arrived, the expiry (epoch ms, from expires_in by the
// Service's clock) and the granted scope (or, on a first exchange, the
// requested one when the provider names none).
func (s *Service) applyToken(conn *vault.Connection, tok *oauth2.Token, requested Config) {
	conn.AccessToken = tok.AccessToken
	if tok.RefreshToken != "" {
		conn.RefreshToken = tok.RefreshToken
	}
	conn.ExpiresAt = nil
	switch {
	case tok.ExpiresIn > 0:
		ms := s.now().Add(time.Duration(tok.ExpiresIn) * time.Second).UnixMilli()
		conn.ExpiresAt = &ms
	case !tok.Expiry.IsZero():
		ms := tok.Expiry.UnixMilli()
		conn.ExpiresAt = &ms
	}
	if hasScope(tok) {
		conn.Scope = tok.Extra("scope").(string)
	} else if conn.Scope == "" && len(requested.Scopes) > 0 {
		conn.Scope = strings.Join(requested.Scopes, " ")
	}
}

// hasScope reports whether a token response names its granted scope.
func hasScope(tok *oauth2.Token) bool {
	scope, ok := tok.Extra("scope").(string)
	return ok && scope != ""
}

// authorizationParams are the authorization request's configured extras:
// the resource indicator, then the provider's extra parameters in name
// order.
func (c Config) authorizationParams() []oauth2.AuthCodeOption {
	var out []oauth2.AuthCodeOption
	if c.Resource != "" {
		out = append(out, oauth2.SetAuthURLParam("resource", c.Resource))
	}
	names := make([]string, 0, len(c.AuthParams))
	for n := range c.AuthParams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if v := c.AuthParams[n]; len(v) > 0 && !reservedAuthParams[n] {
			out = append(out, oauth2.SetAuthURLParam(n, v[0]))
		}
	}
	return out
}

// clientContext hands x/oauth2 the client that refuses redirects.
func (s *Service) clientContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, s.client)
}

// unreachable reports whether a token request got no HTTP answer at all.
func unreachable(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}
