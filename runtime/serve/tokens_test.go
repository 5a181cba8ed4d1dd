package serve

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth/authtest"
)

// expectUnauthorized checks a 401 with the WWW-Authenticate challenge and an
// error envelope whose message contains word.
func expectUnauthorized(t *testing.T, a answer, code, word string) {
	t.Helper()
	if a.status != 401 {
		t.Fatalf("status %d, want 401: %s", a.status, a.body)
	}
	m := a.json(t)
	e, _ := m["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if e["code"] != code || !strings.Contains(msg, word) {
		t.Errorf("body %s: want code %s and a message containing %q", a.body, code, word)
	}
	www := a.header.Get("WWW-Authenticate")
	wantPrefix := `Bearer realm="mcp", error="` + code + `", error_description="`
	if !strings.HasPrefix(www, wantPrefix) || !strings.Contains(www, word) {
		t.Errorf("WWW-Authenticate %q: want prefix %q and %q", www, wantPrefix, word)
	}
	if strings.Contains(www, "resource_metadata") {
		t.Errorf("an http resource gets no resource_metadata: %q", www)
	}
}

// initialize posts an MCP initialize with bearer (none when empty).
func (f *fleetFixture) initialize(bearer string) answer {
	f.t.Helper()
	return f.do("POST", "/mcp", bearer, "application/json", initializeBody, mcpHeaders(bearer, ""))
}

// TestTokens drives every token case of §h "Tokens" through the gateway's
// /mcp initialize (and /connect/status for the connect-token lifetime).
func TestTokens(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true})
	now := time.Now().Unix()
	turn := func(edit func(c map[string]any)) string { return f.turnWith(fxReadGrant, edit) }
	cases := []struct {
		name  string
		token string
		word  string
	}{
		{"wrong issuer", turn(func(c map[string]any) { c["iss"] = "branchyard:local:other" }), "issuer"},
		{"wrong audience", turn(func(c map[string]any) { c["aud"] = "http://127.0.0.1:1/mcp" }), "audience"},
		{"audience list without ours", turn(func(c map[string]any) { c["aud"] = []any{"http://127.0.0.1:1/mcp"} }), "audience"},
		{"expired beyond leeway", turn(func(c map[string]any) { c["exp"] = now - 120; c["iat"] = now - 700 }), "expired"},
		{"nbf in the future", turn(func(c map[string]any) { c["nbf"] = now + 300 }), "not yet valid"},
		{"no exp", turn(func(c map[string]any) { delete(c, "exp") }), "expiration"},
		{"exp more than an hour away", turn(func(c map[string]any) { c["exp"] = now + 3600 + 120 }), "one hour"},
		{"iat in the future", turn(func(c map[string]any) { c["iat"] = now + 300 }), "future"},
		{"no sub", turn(func(c map[string]any) { delete(c, "sub") }), "subject"},
		{"grant entry without operations", turn(func(c map[string]any) {
			c["by_grants"] = []any{map[string]any{"connector": "github", "mode": "read"}}
		}), "by_grants"},
		{"by_grants a string", turn(func(c map[string]any) { c["by_grants"] = `[{"connector":"github"}]` }), "by_grants"},
		{"by_grants missing", turn(func(c map[string]any) { delete(c, "by_grants") }), "by_grants"},
		{"by_turn a number", turn(func(c map[string]any) { c["by_turn"] = 1 }), "by_turn"},
		{"by_purpose admin", turn(func(c map[string]any) { c["by_purpose"] = "admin" }), "by_purpose"},
		{"signed by a key not in the JWKS", authtest.Mint(authtest.NewKey(f.key.Kid), f.claims(fxReadGrant)), "Token signature is invalid."},
		{"RS256", authtest.SignRaw(f.key, []byte(`{"alg":"RS256","typ":"JWT","kid":"`+f.key.Kid+`"}`), mustJSON(f.claims(fxReadGrant))), "EdDSA"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectUnauthorized(t, f.initialize(c.token), "invalid_token", c.word)
		})
	}

	t.Run("no token", func(t *testing.T) {
		expectUnauthorized(t, f.initialize(""), "invalid_request", "No bearer token was presented.")
	})

	t.Run("connect token living twenty minutes", func(t *testing.T) {
		tok := authtest.Mint(f.key, map[string]any{"iss": fxIssuer, "aud": f.aud, "sub": fxSub, "iat": now, "exp": now + 1200,
			"by_grants": []any{}, "by_purpose": "connect"})
		expectUnauthorized(t, f.do("GET", "/connect/status", tok, "", "", nil), "invalid_token", "ten minutes")
	})

	t.Run("unknown claims are ignored and empty attribution is accepted", func(t *testing.T) {
		tok := turn(func(c map[string]any) {
			c["by_models"] = []any{"m"}
			c["by_network"] = map[string]any{"policy": "x"}
			c["by_delegation"] = map[string]any{"depth": 1}
			c["by_branch"], c["by_turn"] = "", ""
		})
		if a := f.initialize(tok); a.status != 200 {
			t.Errorf("initialize: %d %s", a.status, a.body)
		}
	})

	t.Run("X25519 key", func(t *testing.T) {
		k := authtest.NewKey("by-x25519key01")
		jwks := `{"keys":[{"kty":"OKP","crv":"X25519","kid":"by-x25519key01","x":"` + strings.Repeat("A", 43) + `"},` +
			string(mustJSON(f.key.JWK())) + `]}`
		if err := authtest.WriteFileAtomic(f.jwks, []byte(jwks), 0o644); err != nil {
			t.Fatal(err)
		}
		defer writeJWKS(t, f.jwks, f.key)
		a := f.initialize(authtest.Mint(k, f.claims(fxReadGrant)))
		if a.status != 401 || a.errCode() != "invalid_token" {
			t.Errorf("X25519: %d %s", a.status, a.body)
		}
	})

	t.Run("rotation through the JWKS file", func(t *testing.T) {
		next := authtest.NewKey("by-testkey0002")
		tok := authtest.Mint(next, f.claims(fxReadGrant))
		expectUnauthorized(t, f.initialize(tok), "invalid_token", "signature")
		writeJWKS(t, f.jwks, next, f.key)
		if a := f.initialize(tok); a.status != 200 {
			t.Fatalf("after rotation: %d %s", a.status, a.body)
		}
		// The old key still works while it is published, and stops when dropped.
		old := f.turn(fxReadGrant)
		if a := f.initialize(old); a.status != 200 {
			t.Errorf("old key while published: %d %s", a.status, a.body)
		}
		writeJWKS(t, f.jwks, next)
		expectUnauthorized(t, f.initialize(old), "invalid_token", "signature")
		writeJWKS(t, f.jwks, f.key)
	})

	t.Run("missing JWKS file fails closed", func(t *testing.T) {
		tok := f.turn(fxReadGrant)
		if err := os.Rename(f.jwks, f.jwks+".away"); err != nil {
			t.Fatal(err)
		}
		a := f.initialize(tok)
		if err := os.Rename(f.jwks+".away", f.jwks); err != nil {
			t.Fatal(err)
		}
		expectUnauthorized(t, a, "invalid_token", "keys")
		if a := f.initialize(tok); a.status != 200 {
			t.Errorf("after the JWKS is back: %d %s", a.status, a.body)
		}
	})

	// Every refusal above is transport-level: no audit line, nothing upstream.
	if raw, _ := f.auditLines(); len(raw) != 0 {
		t.Errorf("token refusals wrote audit lines: %v", raw)
	}
	if n := f.upstreamCount(); n != 0 {
		t.Errorf("token refusals reached the upstream %d times", n)
	}
}

// TestForeignIssuerCannotConnect: a token from another yard, signed by that
// yard's key and naming its issuer, is refused everywhere.
func TestForeignIssuerCannotConnect(t *testing.T) {
	f := newFleetFixture(t, &fleetOptions{noConnect: true})
	foreign := authtest.NewKey("by-foreign00001")
	c := f.claims(fxReadGrant)
	c["iss"] = "branchyard:local:foreign"
	tok := authtest.Mint(foreign, c)
	expectUnauthorized(t, f.initialize(tok), "invalid_token", "signature")
	a := f.call(tok, "github__github_list_issue", `{"arguments":{"owner":"o","repo":"r"}}`, nil)
	if a.status != 401 || a.errCode() != "invalid_token" || a.header.Get("WWW-Authenticate") == "" {
		t.Errorf("/call: %d %s", a.status, a.body)
	}
	if n := f.upstreamCount(); n != 0 {
		t.Errorf("upstream saw %d requests", n)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func writeJWKS(t testing.TB, path string, keys ...authtest.Key) {
	t.Helper()
	if err := authtest.WriteJWKS(path, keys...); err != nil {
		t.Fatal(err)
	}
}
