package oidc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/fswatch"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/identity/branchyard"
	"github.com/anvil-dev/anvil/runtime/identity/oidc"
)

// BenchmarkAuthenticate is the cost of verifying one request's caller, OIDC
// beside the baseline Branchyard identity in the same run: a token seen
// before (the common case: a host reuses its token for many calls), and
// one verified from scratch (the token cache off: RS256 for OIDC, EdDSA for
// Branchyard).
func BenchmarkAuthenticate(b *testing.B) {
	f := newForge(b)
	doc := "version: 1\nissuers: [{issuer: \"" + f.srv.URL + "\"}]\n" + rules
	oidcTok := f.sign(b, "rs1", f.claims("exp", time.Now().Unix()+3600))

	key := authtest.NewKey("by-bench000001")
	jwks := filepath.Join(b.TempDir(), "jwks.json")
	if err := authtest.WriteJWKS(jwks, key); err != nil {
		b.Fatal(err)
	}
	now := time.Now().Unix()
	byTok := authtest.Mint(key, map[string]any{"iss": "branchyard:local:bench", "aud": resource, "sub": "local:ada", "iat": now, "exp": now + 3000,
		"by_grants": []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read"}}})
	// The gateway watches the JWKS file and polls the watcher once per
	// request (the front hall); so does the benchmark.
	watch := fswatch.New()
	b.Cleanup(func() { watch.Close() })
	byIdentity := func(cache int) identity.Identity {
		v, err := auth.NewVerifier(auth.Config{Mode: auth.ModeBranchyard, Issuer: "branchyard:local:bench", Audience: resource,
			JWKSURI: "file://" + jwks, Leeway: auth.DefaultLeeway}, &auth.VerifierOptions{CacheSize: cache, Watcher: watch})
		if err != nil {
			b.Fatal(err)
		}
		return branchyard.New(v, resource)
	}
	oidcIdentity := func(cache int) identity.Identity {
		return newIdentity(b, doc, func(c *oidc.Config) { c.CacheSize = cache })
	}
	for _, c := range []struct {
		name  string
		id    identity.Identity
		token string
	}{
		{"branchyard/seen", byIdentity(0), byTok},
		{"oidc/seen", oidcIdentity(0), oidcTok},
		{"branchyard/fresh", byIdentity(-1), byTok},
		{"oidc/fresh", oidcIdentity(-1), oidcTok},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Header.Set("Authorization", "Bearer "+c.token)
			ctx := context.Background()
			if _, ref := c.id.Authenticate(ctx, r); ref != nil {
				b.Fatalf("refused: %+v", ref)
			}
			b.ReportAllocs()
			for b.Loop() {
				watch.Poll()
				if _, ref := c.id.Authenticate(ctx, r); ref != nil {
					b.Fatal(ref.Message)
				}
			}
		})
	}
}
