package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/grant"
)

// Verify a turn token against a file JWKS and apply its grant.
func Example() {
	dir, err := os.MkdirTemp("", "yard")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	key := authtest.NewKey("by-example0000")
	jwks := filepath.Join(dir, "jwks.json")
	if err := authtest.WriteJWKS(jwks, key); err != nil {
		panic(err)
	}

	env := map[string]string{
		"ANVIL_INBOUND_AUTH_MODE": "branchyard",
		"ANVIL_INBOUND_ISSUER":    "branchyard:local:e2e",
		"ANVIL_INBOUND_AUDIENCE":  "http://127.0.0.1:8080/mcp",
		"ANVIL_INBOUND_JWKS_URI":  "file://" + jwks,
	}
	cfg, err := auth.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		panic(err)
	}
	v, err := auth.NewVerifier(cfg, nil)
	if err != nil {
		panic(err)
	}

	now := time.Now().Unix()
	token := authtest.Mint(key, map[string]any{
		"iss": "branchyard:local:e2e", "aud": "http://127.0.0.1:8080/mcp", "sub": "local:e2e-person",
		"iat": now, "exp": now + 600, "by_turn": "1",
		"by_grants": []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read"}},
	})
	claims, err := v.Verify(context.Background(), "Bearer "+token)
	if err != nil {
		panic(err)
	}
	fmt.Println(claims.Subject, claims.Turn, claims.IsConnect())

	d := claims.Grants.Decide(grant.Op{Connector: "github", ID: "github.issues.create", ServiceID: "github", Mutation: true})
	fmt.Println(d.Outcome, d.Code, string(d.Rule()))
	// Output:
	// local:e2e-person 1 false
	// denied policy/grant_denied {"index":0,"connector":"github","operations":["*"],"mode":"read"}
}

// Refuse a request whose token does not verify.
func ExampleWriteError() {
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
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := v.Verify(r.Context(), r.Header.Get("Authorization"))
		if err != nil {
			auth.WriteError(w, err, cfg.Audience)
			return
		}
		fmt.Fprintln(w, "hello", claims.Subject)
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
