// Package oauthtest is a standards-compliant OAuth 2.0 authorization server
// on loopback for tests, built on github.com/go-oauth2/oauth2/v4:
// authorization-code grant with mandatory PKCE (S256 only), client
// authentication (client_secret_basic or the form), refresh-token rotation,
// revocation by removing a refresh token, and iss on the authorization
// response (RFC 9207) when an issuer is set. It is test infrastructure
// (internal/archtest keeps it out of shipped code).
package oauthtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	oauth2srv "github.com/go-oauth2/oauth2/v4"
	oerrors "github.com/go-oauth2/oauth2/v4/errors"
	"github.com/go-oauth2/oauth2/v4/manage"
	"github.com/go-oauth2/oauth2/v4/models"
	"github.com/go-oauth2/oauth2/v4/server"
	"github.com/go-oauth2/oauth2/v4/store"
)

// Client is the one client the server knows.
type Client struct {
	ID, Secret string
	// RedirectBase is the client's registered redirect origin (go-oauth2
	// checks redirect_uri against it).
	RedirectBase string
	// User is the person every authorization approves as.
	User string
}

// Server is the authorization server. Its counters and Deny may be read and
// set while it serves.
type Server struct {
	URL     string
	Manager *manage.Manager

	// Deny makes the person refuse: the authorization answers
	// access_denied.
	Deny atomic.Bool
	// Refreshes and Exchanges count the token requests by grant type.
	Refreshes, Exchanges atomic.Int64

	mu         sync.Mutex
	issuer     string
	tokenForms []url.Values
	tokenAuth  []string
}

// New starts the server for c; it stops when the test ends.
func New(t testing.TB, c Client) *Server {
	t.Helper()
	a := &Server{}
	m := manage.NewDefaultManager()
	m.SetAuthorizeCodeTokenCfg(&manage.Config{AccessTokenExp: time.Hour, RefreshTokenExp: 24 * time.Hour, IsGenerateRefresh: true})
	m.SetRefreshTokenCfg(&manage.RefreshingConfig{AccessTokenExp: time.Hour, IsGenerateRefresh: true, IsRemoveAccess: true, IsRemoveRefreshing: true})
	m.MustTokenStorage(store.NewMemoryTokenStore())
	clients := store.NewClientStore()
	if err := clients.Set(c.ID, &models.Client{ID: c.ID, Secret: c.Secret, Domain: c.RedirectBase}); err != nil {
		t.Fatal(err)
	}
	m.MapClientStorage(clients)
	a.Manager = m

	cfg := server.NewConfig()
	cfg.ForcePKCE = true
	cfg.AllowedCodeChallengeMethods = []oauth2srv.CodeChallengeMethod{oauth2srv.CodeChallengeS256}
	cfg.AllowedGrantTypes = []oauth2srv.GrantType{oauth2srv.AuthorizationCode, oauth2srv.Refreshing}
	srv := server.NewServer(cfg, m)
	srv.SetClientInfoHandler(clientInfo)
	srv.SetUserAuthorizationHandler(func(http.ResponseWriter, *http.Request) (string, error) {
		if a.Deny.Load() {
			return "", oerrors.ErrAccessDenied
		}
		return c.User, nil // auto-approve
	})

	mux := http.NewServeMux()
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		iss := a.issuer
		a.mu.Unlock()
		_ = srv.HandleAuthorizeRequest(&issWriter{ResponseWriter: w, iss: iss}, r)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err == nil {
			a.mu.Lock()
			a.tokenForms = append(a.tokenForms, r.PostForm)
			a.tokenAuth = append(a.tokenAuth, r.Header.Get("Authorization"))
			a.mu.Unlock()
			switch r.PostForm.Get("grant_type") {
			case "refresh_token":
				a.Refreshes.Add(1)
			case "authorization_code":
				a.Exchanges.Add(1)
			}
		}
		_ = srv.HandleTokenRequest(w, r)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	a.URL = ts.URL
	return a
}

// SetIssuer sets the iss sent on the authorization responses that follow
// ("" sends none).
func (a *Server) SetIssuer(iss string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.issuer = iss
}

// Issuer is the iss sent on authorization responses ("" when none).
func (a *Server) Issuer() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.issuer
}

// clientInfo reads client_secret_basic (RFC 6749 §2.3.1: the id and secret
// are form-urlencoded before Basic encoding) or the form's client_id and
// client_secret.
func clientInfo(r *http.Request) (string, string, error) {
	if id, secret, ok := r.BasicAuth(); ok {
		uid, err1 := url.QueryUnescape(id)
		usec, err2 := url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return "", "", oerrors.ErrInvalidClient
		}
		return uid, usec, nil
	}
	return server.ClientFormHandler(r)
}

// issWriter adds iss (RFC 9207) to the authorization response's redirect.
type issWriter struct {
	http.ResponseWriter
	iss string
}

func (w *issWriter) WriteHeader(code int) {
	if w.iss != "" && code >= 300 && code < 400 {
		if loc, err := url.Parse(w.Header().Get("Location")); err == nil {
			q := loc.Query()
			q.Set("iss", w.iss)
			loc.RawQuery = q.Encode()
			w.Header().Set("Location", loc.String())
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// Authorize follows an authorization URL as the person's browser would and
// returns the redirect back to the client (the Location).
func (a *Server) Authorize(t testing.TB, authURL string) *url.URL {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatalf("authorization request: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorization answered %d, want 302", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// Valid reports whether the server still honours an access token.
func (a *Server) Valid(token string) bool {
	_, err := a.Manager.LoadAccessToken(context.Background(), token)
	return err == nil
}

// Revoke removes a refresh token: its next use is invalid_grant.
func (a *Server) Revoke(t testing.TB, refresh string) {
	t.Helper()
	if err := a.Manager.RemoveRefreshToken(context.Background(), refresh); err != nil {
		t.Fatal(err)
	}
}

// LastTokenForm is the form and the Authorization header of the last token
// request (nil and "" before any).
func (a *Server) LastTokenForm() (url.Values, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.tokenForms) == 0 {
		return nil, ""
	}
	return a.tokenForms[len(a.tokenForms)-1], a.tokenAuth[len(a.tokenAuth)-1]
}
