// Package tokenexchange obtains an upstream access token for a person by
// RFC 8693 token exchange: the gateway, a confidential client of the
// person's identity provider, trades the access token the person called it
// with (the subject token) for a token addressed to an upstream that trusts
// the same provider. The exchanged token is cached per person (issuer and
// subject) until shortly before it expires, one exchange per person at a
// time; neither token ever appears in an error or a log line.
package tokenexchange

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/anvil-dev/anvil/runtime/identity"
)

// RFC 8693 names.
const (
	GrantType       = "urn:ietf:params:oauth:grant-type:token-exchange"
	AccessTokenType = "urn:ietf:params:oauth:token-type:access_token"
)

// Bounds and timings.
const (
	// Timeout bounds one exchange.
	Timeout = 10 * time.Second
	// MaxResponseBytes is the largest token response read.
	MaxResponseBytes = 64 << 10
	// Skew is how long before its expiry a cached token is exchanged again.
	Skew = 30 * time.Second
	// DefaultLifetime is how long a token is cached when the response has
	// no expires_in.
	DefaultLifetime = time.Minute
	// MaxCached is the most people whose tokens one Exchanger caches.
	MaxCached = 10000
)

// Errors of Token (match with errors.Is).
var (
	// ErrNoSubjectToken: the caller holds no access token of the
	// exchange's issuer (another issuer's caller, Branchyard, none).
	ErrNoSubjectToken = errors.New("the caller has no access token of the exchange's identity provider")
	// ErrRefused: the provider refused the exchange (an error response).
	ErrRefused = errors.New("the identity provider refused the token exchange")
	// ErrUnavailable: the provider could not be asked, or its answer was
	// not a token.
	ErrUnavailable = errors.New("the token exchange failed")
)

// Config is one upstream's exchange.
type Config struct {
	// Issuer is the provider; only its callers' tokens are exchanged.
	Issuer string
	// Endpoint returns the token endpoint (configured, or from the
	// issuer's metadata).
	Endpoint func(ctx context.Context) (string, error)
	// ClientID and ClientSecret authenticate the gateway (HTTP Basic).
	ClientID, ClientSecret string
	// Audience, Resource and Scopes are the request's audience, resource
	// and scope parameters (empty: not sent).
	Audience, Resource string
	Scopes             []string
	// HTTPClient posts the request; nil is a client with Timeout that
	// follows no redirect.
	HTTPClient *http.Client
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Exchanger exchanges and caches tokens for one upstream. It is safe for
// concurrent use.
type Exchanger struct {
	cfg Config

	mu       sync.Mutex
	cached   map[[32]byte]cachedToken
	inflight map[[32]byte]*flight
}

type cachedToken struct {
	token   string
	refresh time.Time // exchange again from here on
}

// flight is one exchange in progress; the callers for the same person
// wait for it.
type flight struct {
	done  chan struct{}
	token string
	err   error
}

// New returns the Exchanger of cfg.
func New(cfg Config) *Exchanger {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Exchanger{cfg: cfg, cached: map[[32]byte]cachedToken{}, inflight: map[[32]byte]*flight{}}
}

// Token returns an upstream token for the caller p: the cached one while
// it is fresh, else a new exchange of p's access token.
func (e *Exchanger) Token(ctx context.Context, p *identity.Principal) (string, error) {
	if p == nil || p.Token.IsZero() || p.Issuer != e.cfg.Issuer {
		return "", ErrNoSubjectToken
	}
	key := sha256.Sum256([]byte(p.Issuer + "\x00" + p.Sub))
	now := e.cfg.Now()
	e.mu.Lock()
	if c, ok := e.cached[key]; ok && now.Before(c.refresh) {
		e.mu.Unlock()
		return c.token, nil
	}
	if f, ok := e.inflight[key]; ok {
		e.mu.Unlock()
		select {
		case <-f.done:
			return f.token, f.err
		case <-ctx.Done():
			return "", fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
		}
	}
	f := &flight{done: make(chan struct{})}
	e.inflight[key] = f
	e.mu.Unlock()

	token, lifetime, err := e.exchange(ctx, p.Token.Reveal())
	f.token, f.err = token, err
	e.mu.Lock()
	delete(e.inflight, key)
	if err == nil {
		e.store(key, cachedToken{token: token, refresh: now.Add(lifetime - Skew)}, now)
	}
	e.mu.Unlock()
	close(f.done)
	return token, err
}

// store caches a token; a full cache first drops stale entries, then an
// arbitrary eighth. Callers hold mu.
func (e *Exchanger) store(key [32]byte, c cachedToken, now time.Time) {
	if _, ok := e.cached[key]; !ok && len(e.cached) >= MaxCached {
		for k, v := range e.cached {
			if !now.Before(v.refresh) {
				delete(e.cached, k)
			}
		}
		for k := range e.cached {
			if len(e.cached) < MaxCached-MaxCached/8 {
				break
			}
			delete(e.cached, k)
		}
	}
	e.cached[key] = c
}

// errorCode is the charset of an OAuth error code (RFC 6749 section 5.2),
// the only part of an error response an error repeats.
var errorCode = regexp.MustCompile(`^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,64}$`)

// exchange posts the token exchange request and reads the token response.
func (e *Exchanger) exchange(ctx context.Context, subject string) (string, time.Duration, error) {
	endpoint, err := e.cfg.Endpoint(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	form := url.Values{
		"grant_type":           {GrantType},
		"subject_token":        {subject},
		"subject_token_type":   {AccessTokenType},
		"requested_token_type": {AccessTokenType},
	}
	if e.cfg.Audience != "" {
		form.Set("audience", e.cfg.Audience)
	}
	if e.cfg.Resource != "" {
		form.Set("resource", e.cfg.Resource)
	}
	if len(e.cfg.Scopes) > 0 {
		form.Set("scope", strings.Join(e.cfg.Scopes, " "))
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("%w: the token endpoint is not a URL", ErrUnavailable)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(e.cfg.ClientID), url.QueryEscape(e.cfg.ClientSecret))
	resp, err := e.cfg.HTTPClient.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("%w: the token endpoint did not answer", ErrUnavailable)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil || len(raw) > MaxResponseBytes {
		return "", 0, fmt.Errorf("%w: the token response could not be read", ErrUnavailable)
	}
	var body struct {
		AccessToken     string          `json:"access_token"`
		IssuedTokenType string          `json:"issued_token_type"`
		TokenType       string          `json:"token_type"`
		ExpiresIn       json.Number     `json:"expires_in"`
		Error           json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return "", 0, fmt.Errorf("%w: the token response (HTTP %d) is not JSON", ErrUnavailable, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		var code string
		if json.Unmarshal(body.Error, &code) != nil || !errorCode.MatchString(code) {
			code = "unknown"
		}
		if resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized {
			return "", 0, fmt.Errorf("%w: %s (HTTP %d)", ErrRefused, code, resp.StatusCode)
		}
		return "", 0, fmt.Errorf("%w: HTTP %d", ErrUnavailable, resp.StatusCode)
	}
	switch {
	case body.AccessToken == "":
		return "", 0, fmt.Errorf("%w: the token response has no access_token", ErrUnavailable)
	case body.IssuedTokenType != "" && body.IssuedTokenType != AccessTokenType:
		return "", 0, fmt.Errorf("%w: the issued token is not an access token", ErrUnavailable)
	case body.TokenType != "" && !strings.EqualFold(body.TokenType, "bearer") && !strings.EqualFold(body.TokenType, "N_A"):
		return "", 0, fmt.Errorf("%w: the issued token is not a bearer token", ErrUnavailable)
	}
	lifetime := DefaultLifetime
	if s, err := body.ExpiresIn.Int64(); err == nil && s > 0 {
		lifetime = time.Duration(min(s, 86400)) * time.Second
	}
	return body.AccessToken, lifetime, nil
}
