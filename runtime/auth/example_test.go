package auth_test

import (
	"context"
	"fmt"
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
