// Command mockupstream is a loopback stand-in for the Music API of
// examples/music/openapi.yaml, for docs/oauth.md: a resource server that
// takes only access tokens its authorization server issued for it. Each
// request's bearer must be a JWT signed by a key of the issuer's JWKS (found
// through its OpenID discovery document, fetched again for an unknown key
// id), with that iss, the API's audience among its aud, unexpired, and the
// operation's scope in its scope claim: else 401 invalid_token, or 403
// insufficient_scope naming the scope (RFC 6750 §3.1), as a real API
// answers. It serves /api/tracks (tracks.read) and /api/playlists (GET
// playlists.read, POST playlists.write), logs each request as one JSON line
// on stderr (method, path, status, the token's sub and scope), prints its
// base URL on stdout once listening, and exits on SIGTERM or SIGINT.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/anvil-dev/anvil/examples/internal/mockserve"
)

// claims are the access token claims the API checks.
type claims struct {
	jwt.Claims
	Scope string `json:"scope"`
}

type api struct {
	issuer, audience string
	client           *http.Client

	mu        sync.Mutex
	keys      *jose.JSONWebKeySet
	playlists []map[string]any
}

// jwks returns the issuer's keys, fetched again when refresh is set.
func (a *api) jwks(ctx context.Context, refresh bool) (*jose.JSONWebKeySet, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.keys != nil && !refresh {
		return a.keys, nil
	}
	var md struct {
		JWKS string `json:"jwks_uri"`
	}
	if err := a.getJSON(ctx, a.issuer+"/.well-known/openid-configuration", &md); err != nil {
		return nil, err
	}
	var set jose.JSONWebKeySet
	if err := a.getJSON(ctx, md.JWKS, &set); err != nil {
		return nil, err
	}
	a.keys = &set
	return a.keys, nil
}

func (a *api) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", u, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

var errToken = errors.New("invalid_token")

// verify checks the bearer token and returns its claims.
func (a *api) verify(ctx context.Context, header string) (*claims, error) {
	raw, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || raw == "" {
		return nil, errToken
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA})
	if err != nil || len(tok.Headers) != 1 {
		return nil, errToken
	}
	var c claims
	for _, refresh := range []bool{false, true} {
		set, err := a.jwks(ctx, refresh)
		if err != nil {
			return nil, err
		}
		if keys := set.Key(tok.Headers[0].KeyID); len(keys) == 1 {
			if err := tok.Claims(keys[0].Key, &c); err != nil {
				return nil, errToken
			}
			if err := c.ValidateWithLeeway(jwt.Expected{Issuer: a.issuer, AnyAudience: jwt.Audience{a.audience}, Time: time.Now()}, 0); err != nil {
				return nil, errToken
			}
			return &c, nil
		}
	}
	return nil, errToken
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status, c := a.serve(w, r)
	entry := map[string]any{"method": r.Method, "path": r.URL.Path, "status": status}
	if c != nil {
		entry["sub"], entry["scope"] = c.Subject, c.Scope
	}
	line, _ := json.Marshal(entry)
	fmt.Fprintln(os.Stderr, string(line))
}

// scopeOf is the scope an operation needs.
func scopeOf(r *http.Request) (string, bool) {
	switch {
	case r.URL.Path == "/api/tracks" && r.Method == http.MethodGet:
		return "tracks.read", true
	case r.URL.Path == "/api/playlists" && r.Method == http.MethodGet:
		return "playlists.read", true
	case r.URL.Path == "/api/playlists" && r.Method == http.MethodPost:
		return "playlists.write", true
	}
	return "", false
}

func (a *api) serve(w http.ResponseWriter, r *http.Request) (int, *claims) {
	need, ok := scopeOf(r)
	if !ok {
		return reply(w, http.StatusNotFound, map[string]any{"error": "not_found"}), nil
	}
	c, err := a.verify(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		return reply(w, http.StatusUnauthorized, map[string]any{"error": "invalid_token"}), nil
	}
	if !slices.Contains(strings.Fields(c.Scope), need) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q`, need))
		return reply(w, http.StatusForbidden, map[string]any{"error": "insufficient_scope", "scope": need}), c
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch need {
	case "tracks.read":
		return reply(w, http.StatusOK, []map[string]any{
			{"id": 1, "title": "So What", "artist": "Miles Davis"},
			{"id": 2, "title": "Naima", "artist": "John Coltrane"},
		}), c
	case "playlists.read":
		return reply(w, http.StatusOK, append([]map[string]any{}, a.playlists...)), c
	}
	var in struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&in); err != nil || in.Name == "" {
		return reply(w, http.StatusBadRequest, map[string]any{"error": "a playlist needs a name"}), c
	}
	p := map[string]any{"id": len(a.playlists) + 1, "name": in.Name}
	a.playlists = append(a.playlists, p)
	return reply(w, http.StatusCreated, p), c
}

func reply(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
	return status
}

func main() {
	port := flag.Int("port", 0, "loopback port (0: a free one)")
	issuer := flag.String("issuer", "", "the authorization server's issuer URL (required)")
	audience := flag.String("audience", "https://music.example/api", "the audience (RFC 8707 resource) tokens must be issued for")
	flag.Parse()
	if *issuer == "" {
		fmt.Fprintln(os.Stderr, "mockupstream: --issuer is required")
		os.Exit(2)
	}
	a := &api{issuer: strings.TrimSuffix(*issuer, "/"), audience: *audience, client: &http.Client{Timeout: 10 * time.Second}}
	mockserve.Run("mockupstream", *port, "/api", a, 3*time.Second)
}
