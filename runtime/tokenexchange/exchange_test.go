package tokenexchange_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/internal/idptest"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/tokenexchange"
)

const (
	gateway  = "http://127.0.0.1:9/mcp"
	upstream = "https://upstream.example/api"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// claimsOf decodes a JWT's payload (the provider signed it; the test only
// reads it).
func claimsOf(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestExchangeWithARealProvider: zitadel's RFC 8693 implementation trades
// a person's token addressed to the gateway for one addressed to the
// upstream, with the person's subject; the exchanged token is reused for
// the person and each person gets their own.
func TestExchangeWithARealProvider(t *testing.T) {
	p := idptest.Start(t, idptest.Options{
		Clients: []idptest.Client{
			{ID: "host", RedirectURIs: []string{"http://127.0.0.1:7777/cb"}, Resources: []string{gateway}},
			{ID: "gateway", Secret: "gw-secret", Audience: []string{gateway}, ExchangeAudiences: []string{upstream}},
		},
		Users: []idptest.User{{Subject: "user-ada", Username: "ada"}, {Subject: "user-bob", Username: "bob"}},
	})
	login := func(user string) *identity.Principal {
		tok, err := p.AuthCode(ctx(t), idptest.AuthCodeRequest{ClientID: "host", Username: user, Scopes: []string{"openid"}, Resources: []string{gateway}})
		if err != nil {
			t.Fatal(err)
		}
		return &identity.Principal{Sub: "user-" + user, Issuer: p.Issuer(), Token: identity.NewSubjectToken(tok.AccessToken)}
	}
	ex := tokenexchange.New(tokenexchange.Config{
		Issuer:   p.Issuer(),
		Endpoint: func(context.Context) (string, error) { return p.Endpoint().TokenURL, nil },
		ClientID: "gateway", ClientSecret: "gw-secret", Audience: upstream,
	})
	ada, bob := login("ada"), login("bob")
	tok, err := ex.Token(ctx(t), ada)
	if err != nil {
		t.Fatal(err)
	}
	c := claimsOf(t, tok)
	if c["sub"] != "user-ada" || fmt.Sprint(c["aud"]) != "["+upstream+"]" || tok == ada.Token.Reveal() {
		t.Errorf("exchanged claims %v", c)
	}
	again, err := ex.Token(ctx(t), login("ada"))
	if err != nil || again != tok {
		t.Errorf("a second call of the person exchanged again (%v)", err)
	}
	other, err := ex.Token(ctx(t), bob)
	if err != nil || other == tok || claimsOf(t, other)["sub"] != "user-bob" {
		t.Errorf("bob: %v %v", err, err)
	}

	// The provider refuses what the gateway may not obtain.
	wrong := tokenexchange.New(tokenexchange.Config{
		Issuer:   p.Issuer(),
		Endpoint: func(context.Context) (string, error) { return p.Endpoint().TokenURL, nil },
		ClientID: "gateway", ClientSecret: "gw-secret", Audience: "https://not-allowed.example",
	})
	_, err = wrong.Token(ctx(t), ada)
	if !errors.Is(err, tokenexchange.ErrRefused) || !strings.Contains(err.Error(), "invalid_target") || strings.Contains(err.Error(), ada.Token.Reveal()) {
		t.Errorf("refused exchange: %v", err)
	}
	// A caller of another issuer, or without a token, is not exchanged.
	for _, p := range []*identity.Principal{nil, {Sub: "x", Issuer: "https://elsewhere"}, {Sub: "x", Issuer: p.Issuer()}} {
		if _, err := ex.Token(ctx(t), p); !errors.Is(err, tokenexchange.ErrNoSubjectToken) {
			t.Errorf("%+v: %v", p, err)
		}
	}
}

// TestOneExchangePerPerson: concurrent calls of one person wait for one
// exchange; the token is exchanged again only when it nears expiry.
func TestOneExchangePerPerson(t *testing.T) {
	var n atomic.Int64
	var form sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_ = r.ParseForm()
		for k, v := range r.PostForm {
			form.Store(k, v[0])
		}
		id, secret, _ := r.BasicAuth()
		form.Store("basic", id+":"+secret)
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"up-%d","issued_token_type":"%s","token_type":"Bearer","expires_in":120}`, n.Load(), tokenexchange.AccessTokenType)
	}))
	defer srv.Close()
	clock := time.Now()
	var mu sync.Mutex
	ex := tokenexchange.New(tokenexchange.Config{
		Issuer: "https://idp", Endpoint: func(context.Context) (string, error) { return srv.URL, nil },
		ClientID: "gw", ClientSecret: "s e/cret", Audience: "aud", Resource: "https://up/", Scopes: []string{"a", "b"},
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return clock },
	})
	p := &identity.Principal{Sub: "ada", Issuer: "https://idp", Token: identity.NewSubjectToken("subject-token")}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if tok, err := ex.Token(ctx(t), p); err != nil || tok != "up-1" {
				t.Errorf("%q %v", tok, err)
			}
		})
	}
	wg.Wait()
	if n.Load() != 1 {
		t.Errorf("%d exchanges for one person", n.Load())
	}
	for k, want := range map[string]string{"grant_type": tokenexchange.GrantType, "subject_token": "subject-token",
		"subject_token_type": tokenexchange.AccessTokenType, "audience": "aud", "resource": "https://up/", "scope": "a b", "basic": "gw:s+e%2Fcret"} {
		if got, _ := form.Load(k); got != want {
			t.Errorf("%s = %v, want %q", k, got, want)
		}
	}
	mu.Lock()
	clock = clock.Add(120*time.Second - tokenexchange.Skew)
	mu.Unlock()
	if tok, err := ex.Token(ctx(t), p); err != nil || tok != "up-2" {
		t.Errorf("near expiry: %q %v", tok, err)
	}
}

// TestExchangeFailures: what the provider answers other than a token is
// an error saying what, never holding a token.
func TestExchangeFailures(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		body   string
		want   error
		text   string
	}{
		{"refused", 400, `{"error":"invalid_grant","error_description":"subject-token is revoked"}`, tokenexchange.ErrRefused, "invalid_grant (HTTP 400)"},
		{"odd error code", 401, `{"error":"bad\"code"}`, tokenexchange.ErrRefused, "unknown (HTTP 401)"},
		{"server error", 503, `{"error":"temporarily_unavailable"}`, tokenexchange.ErrUnavailable, "HTTP 503"},
		{"not JSON", 200, `<html>`, tokenexchange.ErrUnavailable, "not JSON"},
		{"no token", 200, `{"token_type":"Bearer"}`, tokenexchange.ErrUnavailable, "no access_token"},
		{"a refresh token", 200, `{"access_token":"x","issued_token_type":"urn:ietf:params:oauth:token-type:refresh_token"}`, tokenexchange.ErrUnavailable, "not an access token"},
		{"not bearer", 200, `{"access_token":"x","token_type":"DPoP"}`, tokenexchange.ErrUnavailable, "not a bearer token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				fmt.Fprint(w, c.body)
			}))
			defer srv.Close()
			ex := tokenexchange.New(tokenexchange.Config{Issuer: "i", Endpoint: func(context.Context) (string, error) { return srv.URL, nil }, ClientID: "gw", ClientSecret: "s"})
			_, err := ex.Token(ctx(t), &identity.Principal{Sub: "a", Issuer: "i", Token: identity.NewSubjectToken("subject-token")})
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) || strings.Contains(err.Error(), "subject-token") {
				t.Errorf("%v", err)
			}
		})
	}
	ex := tokenexchange.New(tokenexchange.Config{Issuer: "i", Endpoint: func(context.Context) (string, error) { return "http://127.0.0.1:1/token", nil }})
	if _, err := ex.Token(ctx(t), &identity.Principal{Sub: "a", Issuer: "i", Token: identity.NewSubjectToken("t")}); !errors.Is(err, tokenexchange.ErrUnavailable) {
		t.Errorf("unreachable endpoint: %v", err)
	}
}
