package auth

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth/authtest"
)

// jwksServer serves a replaceable key set over TLS and counts fetches.
type jwksServer struct {
	srv     *httptest.Server
	fetches atomic.Int32
	mu      sync.Mutex
	body    []byte
	status  int
}

func newJWKSServer(t *testing.T, keys ...authtest.Key) *jwksServer {
	s := &jwksServer{body: authtest.JWKS(keys...), status: http.StatusOK}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		_, _ = w.Write(s.body)
	}))
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted-certificate test fails handshakes
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	return s
}

func (s *jwksServer) set(status int, keys ...authtest.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, authtest.JWKS(keys...)
}

func TestHTTPSJWKS(t *testing.T) {
	k1 := authtest.NewKey("by-one00000000")
	k2 := authtest.NewKey("by-two00000000")
	s := newJWKSServer(t, k1)
	f := &fixture{t: t, now: time.Unix(testNow, 0)}
	cfg := Config{Mode: ModeBranchyard, Issuer: testIssuer, Audience: testAudience, JWKSURI: s.srv.URL + "/.well-known/jwks.json", Leeway: time.Minute}
	v, err := NewVerifier(cfg, &VerifierOptions{HTTPClient: s.srv.Client(), Now: f.clock, CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(k authtest.Key, claims map[string]any) error {
		_, err := v.Verify(context.Background(), "Bearer "+authtest.Mint(k, claims))
		return err
	}

	// Fetched once, then cached.
	for i := range 3 {
		if err := verify(k1, with(turnClaims(), "by_turn", string(rune('1'+i)))); err != nil {
			t.Fatalf("verify %d: %v", i, err)
		}
	}
	if n := s.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}

	// The yard rotates: an unknown kid forces one refresh (once the refresh
	// interval since the last fetch has passed).
	s.set(http.StatusOK, k2, k1)
	f.advance(2 * time.Second)
	if err := verify(k2, turnClaims()); err != nil {
		t.Fatalf("new kid after rotation: %v", err)
	}
	if n := s.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}
	// Unknown kids right after a fetch do not hammer the yard.
	stranger := authtest.NewKey("by-stranger000")
	for range 5 {
		err := verify(stranger, turnClaims())
		wantAuthError(t, err, CodeInvalidToken, "Token signature is invalid.")
	}
	if n := s.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after unknown kids, want 2", n)
	}

	// After five minutes the set is fetched again; a failed fetch fails
	// closed.
	s.set(http.StatusInternalServerError)
	f.advance(JWKSCacheTTL)
	err = verify(k1, turnClaims())
	wantAuthError(t, err, CodeInvalidToken, "could not be read")
	if n := s.fetches.Load(); n != 3 {
		t.Fatalf("%d fetches, want 3", n)
	}
	// Failures are not retried on every request.
	_ = verify(k1, turnClaims())
	if n := s.fetches.Load(); n != 3 {
		t.Fatalf("%d fetches after a failure, want 3", n)
	}
	s.set(http.StatusOK, k1)
	f.advance(2 * time.Second)
	if err := verify(k1, turnClaims()); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
}

func TestHTTPSJWKSRefreshOnUnknownKid(t *testing.T) {
	k1 := authtest.NewKey("by-one00000000")
	k2 := authtest.NewKey("by-two00000000")
	s := newJWKSServer(t, k1)
	cfg := Config{Mode: ModeBranchyard, Issuer: testIssuer, Audience: testAudience, JWKSURI: s.srv.URL + "/jwks.json", Leeway: time.Minute}
	now := func() time.Time { return time.Unix(testNow, 0) }
	v, err := NewVerifier(cfg, &VerifierOptions{HTTPClient: s.srv.Client(), Now: now, RefreshInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), "Bearer "+authtest.Mint(k1, turnClaims())); err != nil {
		t.Fatal(err)
	}
	s.set(http.StatusOK, k1, k2)
	if _, err := v.Verify(context.Background(), "Bearer "+authtest.Mint(k2, turnClaims())); err != nil {
		t.Fatalf("refresh on unknown kid: %v", err)
	}
	if n := s.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}
}

func TestHTTPSJWKSUntrustedCertificate(t *testing.T) {
	k1 := authtest.NewKey("by-one00000000")
	s := newJWKSServer(t, k1)
	cfg := Config{Mode: ModeBranchyard, Issuer: testIssuer, Audience: testAudience, JWKSURI: s.srv.URL + "/jwks.json"}
	v, err := NewVerifier(cfg, &VerifierOptions{Now: func() time.Time { return time.Unix(testNow, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(context.Background(), "Bearer "+authtest.Mint(k1, turnClaims()))
	wantAuthError(t, err, CodeInvalidToken, "could not be read")
}
