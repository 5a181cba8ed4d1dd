package branchyard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/identity/branchyard"
)

const (
	issuer   = "branchyard:local:identity-test"
	audience = "https://gw.example/mcp"
)

// newIdentity verifies tokens of a fresh key against a file JWKS.
func newIdentity(t *testing.T, resource string) (*branchyard.Identity, authtest.Key) {
	t.Helper()
	key := authtest.NewKey("identity-test0")
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	if err := authtest.WriteJWKS(jwks, key); err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(auth.Config{Mode: auth.ModeBranchyard, Issuer: issuer, Audience: audience,
		JWKSURI: "file://" + jwks, Leeway: auth.DefaultLeeway}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return branchyard.New(v, resource), key
}

func claims(kv ...any) map[string]any {
	now := time.Now().Unix()
	c := map[string]any{"iss": issuer, "aud": audience, "sub": "local:ada", "jti": "j1", "iat": now, "exp": now + 300,
		"by_tenant": "t1", "by_branch": "b1", "by_turn": "7",
		"by_grants": []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read"}}}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

func request(authorization string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	return r
}

// TestCallers: a turn token is a turn caller carrying the token's
// principal and grants; a connect token is a connect caller of the person;
// the fingerprint is the token's.
func TestCallers(t *testing.T) {
	id, key := newIdentity(t, audience)
	c, ref := id.Authenticate(context.Background(), request("Bearer "+authtest.Mint(key, claims())))
	if ref != nil {
		t.Fatalf("turn token refused: %+v", ref)
	}
	p := c.Principal
	if !c.May(identity.ForTurn) || c.May(identity.ForConnect) || p.Sub != "local:ada" || p.Tenant != "t1" || p.Branch != "b1" || p.Turn != "7" ||
		p.Unrestricted || len(p.Grants) != 1 || p.Grants[0].Connector != "github" || c.Fingerprint == "" {
		t.Errorf("turn caller %+v, principal %+v", c, p)
	}
	again, _ := id.Authenticate(context.Background(), request("Bearer "+authtest.Mint(key, claims())))
	other, _ := id.Authenticate(context.Background(), request("Bearer "+authtest.Mint(key, claims("jti", "j2"))))
	if again.Fingerprint != c.Fingerprint || other.Fingerprint == c.Fingerprint {
		t.Errorf("fingerprints: same claims %q/%q, new jti %q", c.Fingerprint, again.Fingerprint, other.Fingerprint)
	}

	c, ref = id.Authenticate(context.Background(), request("Bearer "+authtest.Mint(key, claims("by_purpose", "connect", "by_grants", []any{}, "by_turn", "", "by_branch", ""))))
	if ref != nil {
		t.Fatalf("connect token refused: %+v", ref)
	}
	if !c.May(identity.ForConnect) || c.May(identity.ForTurn) || c.Principal.Sub != "local:ada" || c.Principal.Unrestricted {
		t.Errorf("connect caller %+v, principal %+v", c, c.Principal)
	}
}

// TestRefusals: every failure is a 401 with the token's code, a
// WWW-Authenticate challenge that names the resource metadata only for an
// https resource, and the error envelope.
func TestRefusals(t *testing.T) {
	id, key := newIdentity(t, audience)
	_, ref := id.Authenticate(context.Background(), request("Bearer "+authtest.Mint(key, claims("iss", "elsewhere"))))
	if ref == nil {
		t.Fatal("a foreign issuer was accepted")
	}
	rec := httptest.NewRecorder()
	ref.Write(rec)
	if rec.Code != http.StatusUnauthorized || ref.Code != auth.CodeInvalidToken {
		t.Errorf("status %d, code %s", rec.Code, ref.Code)
	}
	if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer realm="mcp", error="invalid_token", error_description="Token issuer is not accepted.", resource_metadata="https://gw.example/.well-known/oauth-protected-resource"` {
		t.Errorf("WWW-Authenticate %s", got)
	}
	if got := rec.Header().Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %s", got)
	}
	if got := rec.Body.String(); got != `{"error":{"code":"invalid_token","message":"Token issuer is not accepted."}}` {
		t.Errorf("body %s", got)
	}

	plain, _ := newIdentity(t, "http://127.0.0.1/mcp")
	_, ref = plain.Authenticate(context.Background(), request(""))
	rec = httptest.NewRecorder()
	ref.Write(rec)
	if rec.Code != 401 || ref.Code != auth.CodeInvalidRequest || rec.Body.String() != `{"error":{"code":"invalid_request","message":"No bearer token was presented."}}` ||
		rec.Header().Get("WWW-Authenticate") != `Bearer realm="mcp", error="invalid_request", error_description="No bearer token was presented."` {
		t.Errorf("invalid_request: %d %s %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
	}
	tok := authtest.Mint(key, claims("exp", time.Now().Unix()-3600))
	_, ref = id.Authenticate(context.Background(), request("Bearer "+tok))
	if ref == nil || strings.Contains(ref.Message+ref.Challenge, tok) {
		t.Errorf("expired token: %+v", ref)
	}
}

// TestCheckKeys: the JWKS's state is what /readyz reports.
func TestCheckKeys(t *testing.T) {
	dir := t.TempDir()
	jwks := filepath.Join(dir, "jwks.json")
	if err := authtest.WriteJWKS(jwks, authtest.NewKey("identity-test0")); err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(auth.Config{Mode: auth.ModeBranchyard, Issuer: issuer, Audience: audience,
		JWKSURI: "file://" + jwks, Leeway: auth.DefaultLeeway}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kc identity.KeyChecker = branchyard.New(v, audience)
	if err := kc.CheckKeys(context.Background()); err != nil {
		t.Fatalf("readable JWKS: %v", err)
	}
	if err := os.Remove(jwks); err != nil {
		t.Fatal(err)
	}
	if err := kc.CheckKeys(context.Background()); err == nil {
		t.Error("a removed JWKS checks out")
	}
}

// Refuse a request whose token does not verify.
func ExampleIdentity_Authenticate() {
	dir, err := os.MkdirTemp("", "yard")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	jwks := filepath.Join(dir, "jwks.json")
	if err := authtest.WriteJWKS(jwks, authtest.NewKey("by-example0000")); err != nil {
		panic(err)
	}
	cfg := auth.Config{Mode: auth.ModeBranchyard, Issuer: "branchyard:local:e2e",
		Audience: "https://gw.example/mcp", JWKSURI: "file://" + jwks, Leeway: auth.DefaultLeeway}
	v, err := auth.NewVerifier(cfg, nil)
	if err != nil {
		panic(err)
	}
	var id identity.Identity = branchyard.New(v, cfg.Audience)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, refused := id.Authenticate(r.Context(), r)
		if refused != nil {
			refused.Write(w)
			return
		}
		fmt.Fprintln(w, "hello", c.Principal.Sub)
	})

	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	fmt.Println(rec.Code)
	fmt.Println(rec.Header().Get("WWW-Authenticate"))
	fmt.Println(rec.Body.String())
	// Output:
	// 401
	// Bearer realm="mcp", error="invalid_request", error_description="No bearer token was presented.", resource_metadata="https://gw.example/.well-known/oauth-protected-resource"
	// {"error":{"code":"invalid_request","message":"No bearer token was presented."}}
}
