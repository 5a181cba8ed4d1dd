package connect_test

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

// authServer is a standards-compliant OAuth 2.0 authorization server on
// loopback, built on github.com/go-oauth2/oauth2/v4: authorization-code
// grant with mandatory PKCE (S256 only), client authentication, refresh-token
// rotation, and revocation by removing a refresh token from its store.
type authServer struct {
	URL     string
	Issuer  string // sent as iss on every authorization response when non-empty
	Manager *manage.Manager
	srv     *httptest.Server

	deny atomic.Bool // the user refuses: access_denied

	mu         sync.Mutex
	tokenForms []url.Values
	tokenAuth  []string
	refreshes  atomic.Int64
	exchanges  atomic.Int64
}

const (
	testClientID     = "anvil-gateway"
	testClientSecret = "s3cret-client-value"
)

// newAuthServer starts the server. redirectBase is the client's registered
// redirect origin (go-oauth2 checks redirect_uri against it).
func newAuthServer(t *testing.T, redirectBase string, issuer bool) *authServer {
	t.Helper()
	a := &authServer{}
	m := manage.NewDefaultManager()
	m.SetAuthorizeCodeTokenCfg(&manage.Config{AccessTokenExp: time.Hour, RefreshTokenExp: 24 * time.Hour, IsGenerateRefresh: true})
	m.SetRefreshTokenCfg(&manage.RefreshingConfig{AccessTokenExp: time.Hour, IsGenerateRefresh: true, IsRemoveAccess: true, IsRemoveRefreshing: true})
	m.MustTokenStorage(store.NewMemoryTokenStore())
	clients := store.NewClientStore()
	if err := clients.Set(testClientID, &models.Client{ID: testClientID, Secret: testClientSecret, Domain: redirectBase}); err != nil {
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
	srv.SetUserAuthorizationHandler(func(w http.ResponseWriter, r *http.Request) (string, error) {
		if a.deny.Load() {
			return "", oerrors.ErrAccessDenied
		}
		return "person-1", nil // auto-approve
	})

	mux := http.NewServeMux()
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		rw := &issWriter{ResponseWriter: w, iss: a.Issuer}
		_ = srv.HandleAuthorizeRequest(rw, r)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err == nil {
			a.mu.Lock()
			a.tokenForms = append(a.tokenForms, r.PostForm)
			a.tokenAuth = append(a.tokenAuth, r.Header.Get("Authorization"))
			a.mu.Unlock()
			switch r.PostForm.Get("grant_type") {
			case "refresh_token":
				a.refreshes.Add(1)
			case "authorization_code":
				a.exchanges.Add(1)
			}
		}
		_ = srv.HandleTokenRequest(w, r)
	})
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	a.URL = a.srv.URL
	if issuer {
		a.Issuer = a.srv.URL
	}
	return a
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

// authorize follows an authorization URL as the person's browser would and
// returns the redirect back to the client (the Location).
func (a *authServer) authorize(t *testing.T, authURL string) *url.URL {
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

// valid reports whether the server still honours an access token.
func (a *authServer) valid(token string) bool {
	_, err := a.Manager.LoadAccessToken(context.Background(), token)
	return err == nil
}

// revoke removes a refresh token: its next use is invalid_grant.
func (a *authServer) revoke(t *testing.T, refresh string) {
	t.Helper()
	if err := a.Manager.RemoveRefreshToken(context.Background(), refresh); err != nil {
		t.Fatal(err)
	}
}

func (a *authServer) lastTokenForm() (url.Values, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.tokenForms) == 0 {
		return nil, ""
	}
	return a.tokenForms[len(a.tokenForms)-1], a.tokenAuth[len(a.tokenAuth)-1]
}
