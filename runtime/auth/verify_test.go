package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"github.com/anvil-dev/anvil/runtime/fswatch"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth/authtest"
	"github.com/anvil-dev/anvil/runtime/grant"
	"github.com/anvil-dev/anvil/runtime/tokencache"
)

const (
	testIssuer   = "branchyard:local:e2e"
	testAudience = "http://127.0.0.1:8080/mcp"
	testNow      = 1_750_000_000
)

// fixture is a verifier over a JWKS file holding one key, with a settable
// clock.
type fixture struct {
	t    testing.TB
	dir  string
	jwks string
	key  authtest.Key
	v    *Verifier
	// watch is the verifier's watcher, when the test gave one.
	watch *fswatch.Watcher

	mu  sync.Mutex
	now time.Time
}

func newFixture(t testing.TB, opts *VerifierOptions) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), key: authtest.NewKey("by-primary000"), now: time.Unix(testNow, 0)}
	f.jwks = filepath.Join(f.dir, "jwks.json")
	if err := authtest.WriteJWKS(f.jwks, f.key); err != nil {
		t.Fatal(err)
	}
	var o VerifierOptions
	if opts != nil {
		o = *opts
	}
	o.Now = f.clock
	f.watch = o.Watcher
	v, err := NewVerifier(f.config(), &o)
	if err != nil {
		t.Fatal(err)
	}
	f.v = v
	return f
}

func (f *fixture) config() Config {
	return Config{Mode: ModeBranchyard, Issuer: testIssuer, Audience: testAudience, JWKSURI: "file://" + f.jwks, Leeway: 60 * time.Second}
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// claims are a valid turn token's claims.
func turnClaims() map[string]any {
	return map[string]any{
		"iss":       testIssuer,
		"aud":       testAudience,
		"sub":       "local:e2e-person",
		"iat":       testNow,
		"exp":       testNow + 600,
		"jti":       "jti-0000000000000000001",
		"by_tenant": "e2e",
		"by_branch": "main",
		"by_turn":   "1",
		"by_grants": []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read"}},
	}
}

func connectClaims() map[string]any {
	c := turnClaims()
	c["by_purpose"] = "connect"
	c["by_grants"] = []any{}
	c["by_branch"] = ""
	c["by_turn"] = ""
	return c
}

func without(c map[string]any, keys ...string) map[string]any {
	out := with(c)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func with(c map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(c))
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// deleted marks a claim to remove in with.
var deleted any = nil

func (f *fixture) verify(token string) (*Claims, error) {
	if f.watch != nil {
		f.watch.Poll() // as the gateway does at the start of each request
	}
	return f.v.Verify(context.Background(), "Bearer "+token)
}

// wantAuthError checks err is a 401 *Error with code and a message holding
// want.
func wantAuthError(t testing.TB, err error, code, want string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *auth.Error", err, err)
	}
	if e.Status != http.StatusUnauthorized || e.Code != code {
		t.Errorf("status %d code %s, want 401 %s (message %q)", e.Status, e.Code, code, e.Message)
	}
	if !strings.Contains(e.Message, want) {
		t.Errorf("message %q does not contain %q", e.Message, want)
	}
	return e
}

func TestVerifyValid(t *testing.T) {
	f := newFixture(t, nil)
	tok := authtest.Mint(f.key, with(turnClaims(), "by_models", []any{"m"}, "by_network", map[string]any{"x": 1}, "by_delegation", map[string]any{"depth": 1}, "anything", true))
	c, err := f.verify(tok)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if c.Issuer != testIssuer || c.Subject != "local:e2e-person" || c.Audience != testAudience || c.JTI != "jti-0000000000000000001" ||
		c.Tenant != "e2e" || c.Branch != "main" || c.Turn != "1" || c.Purpose != "" || c.IsConnect() {
		t.Errorf("claims %+v", c)
	}
	if !c.Expiry.Equal(time.Unix(testNow+600, 0)) || !c.IssuedAt.Equal(time.Unix(testNow, 0)) || !c.NotBefore.IsZero() {
		t.Errorf("times exp %v iat %v nbf %v", c.Expiry, c.IssuedAt, c.NotBefore)
	}
	if len(c.Grants) != 1 || c.Grants[0].Connector != "github" || string(c.RawGrants) != `[{"connector":"github","mode":"read","operations":["*"]}]` {
		t.Errorf("grants %v raw %s", c.Grants, c.RawGrants)
	}
	// Each call gets its own copy.
	c.Subject = "changed"
	c2, err := f.verify(tok)
	if err != nil || c2.Subject != "local:e2e-person" {
		t.Errorf("second verify: %v %+v", err, c2)
	}
}

func TestVerifyAccepts(t *testing.T) {
	tests := []struct {
		name   string
		claims map[string]any
	}{
		{"aud list", with(turnClaims(), "aud", []any{"https://other.example/mcp", testAudience})},
		{"no optional strings", with(turnClaims(), "jti", deleted, "by_tenant", deleted, "by_branch", deleted, "by_turn", deleted, "iat", deleted)},
		{"empty branch and turn (person token)", with(turnClaims(), "by_branch", "", "by_turn", "")},
		{"empty grant", with(turnClaims(), "by_grants", []any{})},
		{"expired within leeway", with(turnClaims(), "exp", testNow-59)},
		{"nbf within leeway", with(turnClaims(), "nbf", testNow+59)},
		{"nbf passed", with(turnClaims(), "nbf", testNow-10)},
		{"exactly one hour plus leeway", with(turnClaims(), "exp", testNow+3600+60)},
		{"iat within leeway", with(turnClaims(), "iat", testNow+60)},
		{"fractional times", with(turnClaims(), "exp", float64(testNow)+600.5, "iat", float64(testNow)-0.25)},
		{"256-char strings", with(turnClaims(), "sub", strings.Repeat("s", 256), "jti", strings.Repeat("j", 256), "by_turn", strings.Repeat("1", 256))},
		{"connect token", connectClaims()},
		{"connect token exactly ten minutes", with(connectClaims(), "exp", testNow+600)},
		{"connect token without iat, ten minutes plus leeway", without(with(connectClaims(), "exp", testNow+660), "iat")},
		{"connect token iat within leeway ahead", with(connectClaims(), "iat", testNow+30, "exp", testNow+630)},
		{"connect token with grant", with(connectClaims(), "by_grants", turnClaims()["by_grants"])},
		{"connect token old iat", with(connectClaims(), "iat", testNow-300, "exp", testNow+300)},
		{"scope and email strings", with(turnClaims(), "scope", "a b", "email", "a@b")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			c, err := f.verify(authtest.Mint(f.key, tt.claims))
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if c.IsConnect() != (tt.claims["by_purpose"] == "connect") {
				t.Errorf("IsConnect = %v", c.IsConnect())
			}
		})
	}
}

// TestVerifyRefusals covers every token case the reference pins, plus the
// claim type checks.
func TestVerifyRefusals(t *testing.T) {
	tests := []struct {
		name   string
		claims map[string]any
		want   string
	}{
		{"wrong issuer", with(turnClaims(), "iss", "branchyard:local:other"), "issuer"},
		{"no issuer", with(turnClaims(), "iss", deleted), "issuer"},
		{"wrong audience", with(turnClaims(), "aud", "http://127.0.0.1:9999/mcp"), "audience"},
		{"audience list without it", with(turnClaims(), "aud", []any{"a", "b"}), "audience"},
		{"no audience", with(turnClaims(), "aud", deleted), "audience"},
		{"expired beyond leeway", with(turnClaims(), "exp", testNow-120), "expired"},
		{"expired at exp plus leeway", with(turnClaims(), "exp", testNow-60), "expired"},
		{"nbf in the future", with(turnClaims(), "nbf", testNow+120), "not yet valid"},
		{"no exp", with(turnClaims(), "exp", deleted), "expiration"},
		{"exp more than an hour away", with(turnClaims(), "exp", testNow+3600+61), "one hour"},
		{"iat in the future", with(turnClaims(), "iat", testNow+120), "future"},
		{"no sub", with(turnClaims(), "sub", deleted), "subject"},
		{"empty sub", with(turnClaims(), "sub", ""), "subject"},
		{"sub too long", with(turnClaims(), "sub", strings.Repeat("s", 257)), "subject"},
		{"grant entry without operations", with(turnClaims(), "by_grants", []any{map[string]any{"connector": "github", "mode": "read"}}), "by_grants"},
		{"by_grants a string", with(turnClaims(), "by_grants", `[{"connector":"github","operations":["*"],"mode":"read"}]`), "by_grants"},
		{"by_grants missing", with(turnClaims(), "by_grants", deleted), "by_grants"},
		{"by_grants null", with(turnClaims(), "by_grants", map[string]any(nil)), "by_grants"},
		{"by_grants bad confirm", with(turnClaims(), "by_grants", []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read", "confirm": "deny"}}), "by_grants"},
		{"by_turn a number", with(turnClaims(), "by_turn", 1), "by_turn"},
		{"by_turn too long", with(turnClaims(), "by_turn", strings.Repeat("1", 257)), "by_turn"},
		{"by_tenant a list", with(turnClaims(), "by_tenant", []any{"e2e"}), "by_tenant"},
		{"by_branch a bool", with(turnClaims(), "by_branch", true), "by_branch"},
		{"jti a number", with(turnClaims(), "jti", 5), "jti"},
		{"by_purpose admin", with(turnClaims(), "by_purpose", "admin"), "by_purpose"},
		{"by_purpose empty", with(turnClaims(), "by_purpose", ""), "by_purpose"},
		{"by_purpose a number", with(turnClaims(), "by_purpose", 1), "by_purpose"},
		{"connect token 20 minutes", with(connectClaims(), "exp", testNow+1200), "ten minutes"},
		// Issue 15: leeway never stretches exp − iat (601–660 s passed).
		{"connect token ten minutes and one second", with(connectClaims(), "exp", testNow+601), "ten minutes"},
		{"connect token ten minutes plus leeway", with(connectClaims(), "exp", testNow+660), "ten minutes"},
		{"connect token without iat, beyond leeway", without(with(connectClaims(), "exp", testNow+661), "iat"), "ten minutes"},
		{"connect token 20 minutes, iat in the past", with(connectClaims(), "iat", testNow-900, "exp", testNow+300), "ten minutes"},
		{"sub a number", with(turnClaims(), "sub", 42), "subject"},
		{"iss a number", with(turnClaims(), "iss", 42), "issuer"},
		{"aud a number", with(turnClaims(), "aud", 42), "audience"},
		{"aud list with a number", with(turnClaims(), "aud", []any{testAudience, 1}), "audience"},
		{"exp a string", with(turnClaims(), "exp", "1750000600"), "expiration"},
		{"nbf a string", with(turnClaims(), "nbf", "0"), "nbf"},
		{"iat a string", with(turnClaims(), "iat", "0"), "iat"},
		{"scope a list", with(turnClaims(), "scope", []any{"a"}), "scope"},
		{"email a number", with(turnClaims(), "email", 1), "email"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			_, err := f.verify(authtest.Mint(f.key, tt.claims))
			wantAuthError(t, err, CodeInvalidToken, tt.want)
		})
	}
}

func TestGrantErrorIsWrapped(t *testing.T) {
	f := newFixture(t, nil)
	_, err := f.verify(authtest.Mint(f.key, with(turnClaims(), "by_grants", "x")))
	if !errors.Is(err, grant.ErrInvalidGrant) || !errors.Is(err, ErrInvalidToken) || errors.Is(err, ErrInvalidRequest) {
		t.Errorf("errors.Is on %v", err)
	}
}

func TestVerifyWrongKey(t *testing.T) {
	f := newFixture(t, nil)
	for _, kid := range []string{f.key.Kid, "by-otherkey000"} {
		other := authtest.NewKey(kid)
		_, err := f.verify(authtest.Mint(other, turnClaims()))
		if e := wantAuthError(t, err, CodeInvalidToken, ""); e.Message != "Token signature is invalid." {
			t.Errorf("kid %s: message %q", kid, e.Message)
		}
	}
	// A tampered payload under the right key.
	tok := authtest.Mint(f.key, turnClaims())
	parts := strings.Split(tok, ".")
	evil := authtest.Mint(f.key, with(turnClaims(), "sub", "local:mallory"))
	parts[1] = strings.Split(evil, ".")[1]
	_, err := f.verify(strings.Join(parts, "."))
	if e := wantAuthError(t, err, CodeInvalidToken, ""); e.Message != "Token signature is invalid." {
		t.Errorf("tampered: message %q", e.Message)
	}
}

func TestVerifyRS256Refused(t *testing.T) {
	f := newFixture(t, nil)
	// The algorithm is refused before any key is looked at, so the signature
	// bytes do not matter; a real RS256 signature would be refused the same way.
	payload, _ := json.Marshal(turnClaims())
	for _, alg := range []string{"RS256", "ES256", "PS256", "HS256"} {
		tok := authtest.SignRaw(f.key, []byte(`{"alg":"`+alg+`","typ":"JWT","kid":"`+f.key.Kid+`"}`), payload)
		_, err := f.verify(tok)
		wantAuthError(t, err, CodeInvalidToken, "EdDSA")
	}
}

func TestVerifyKeyChecks(t *testing.T) {
	x := base64.RawURLEncoding.EncodeToString(make([]byte, 32))
	tests := []struct {
		name string
		jwks string
		want string
	}{
		{"X25519", `{"keys":[{"kty":"OKP","crv":"X25519","kid":"K","x":"` + x + `"}]}`, "Ed25519"},
		{"EC key", `{"keys":[{"kty":"EC","crv":"P-256","kid":"K","x":"` + x + `","y":"` + x + `"}]}`, "Ed25519"},
		{"key alg RS256", `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"K","alg":"RS256","x":"` + x + `"}]}`, "EdDSA"},
		{"key use enc", `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"K","use":"enc","x":"` + x + `"}]}`, "signature key"},
		{"short x", `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"K","x":"AAAA"}]}`, "malformed"},
		{"x not base64url", `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"K","x":"` + strings.Repeat("+", 43) + `"}]}`, "malformed"},
		{"x a number", `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"K","x":5}]}`, "malformed"},
		{"keys not a list", `{"keys":{"kid":"K"}}`, "could not be read"},
		{"not JSON", `{"keys":[`, "could not be read"},
		{"no keys", `{}`, "could not be read"},
		{"null", `null`, "could not be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			if err := os.WriteFile(f.jwks, []byte(tt.jwks), 0o644); err != nil {
				t.Fatal(err)
			}
			k := authtest.NewKey("K")
			_, err := f.verify(authtest.Mint(k, turnClaims()))
			wantAuthError(t, err, CodeInvalidToken, tt.want)
		})
	}
}

func TestVerifyKidSelection(t *testing.T) {
	f := newFixture(t, nil)
	second := authtest.NewKey("by-second0000")
	noKid := authtest.NewKey("")

	// No kid, one key: that key is used.
	if err := authtest.WriteJWKS(f.jwks, noKid); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(authtest.Mint(noKid, turnClaims())); err != nil {
		t.Fatalf("no kid, one key: %v", err)
	}
	// No kid, two keys: refused.
	if err := authtest.WriteJWKS(f.jwks, noKid, second); err != nil {
		t.Fatal(err)
	}
	_, err := f.verify(authtest.Mint(noKid, turnClaims()))
	wantAuthError(t, err, CodeInvalidToken, "kid")
	// A kid picks its key among several.
	if err := authtest.WriteJWKS(f.jwks, f.key, second); err != nil {
		t.Fatal(err)
	}
	for _, k := range []authtest.Key{f.key, second} {
		if _, err := f.verify(authtest.Mint(k, turnClaims())); err != nil {
			t.Errorf("kid %s: %v", k.Kid, err)
		}
	}
	// A key with a kid verifies a token without one only when it is alone.
	if err := authtest.WriteJWKS(f.jwks, f.key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(authtest.Mint(authtest.Key{Private: f.key.Private}, turnClaims())); err != nil {
		t.Errorf("no kid, the only key: %v", err)
	}
}

func TestVerifyRotation(t *testing.T) {
	f := newFixture(t, nil)
	old := f.key
	next := authtest.NewKey("by-nextkey0000")
	tok := authtest.Mint(next, turnClaims())
	if _, err := f.verify(tok); err == nil {
		t.Fatal("token with a new kid accepted before its key was published")
	}
	if err := authtest.WriteJWKS(f.jwks, next, old); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(tok); err != nil {
		t.Fatalf("after publishing the new key: %v", err)
	}
	oldTok := authtest.Mint(old, turnClaims())
	if _, err := f.verify(oldTok); err != nil {
		t.Fatalf("old key still published: %v", err)
	}
	// Drop the old key: its (cached) token fails on the very next request.
	if err := authtest.WriteJWKS(f.jwks, next); err != nil {
		t.Fatal(err)
	}
	_, err := f.verify(oldTok)
	wantAuthError(t, err, CodeInvalidToken, "signature")
	if _, err := f.verify(tok); err != nil {
		t.Fatalf("new key: %v", err)
	}
}

// TestCacheHonoursKeyChanges: a remembered token is reused only while its kid
// maps to the same key material, and time checks run on every call.
func TestCacheHonoursKeyChanges(t *testing.T) {
	f := newFixture(t, nil)
	tok := authtest.Mint(f.key, turnClaims())
	for range 3 {
		if _, err := f.verify(tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.v.cache.Len(); n != 1 {
		t.Fatalf("cache holds %d tokens", n)
	}

	// Same kid, different key material: refused at once.
	impostor := authtest.NewKey(f.key.Kid)
	if err := authtest.WriteJWKS(f.jwks, impostor); err != nil {
		t.Fatal(err)
	}
	_, err := f.verify(tok)
	wantAuthError(t, err, CodeInvalidToken, "Token signature is invalid.")
	if n := f.v.cache.Len(); n != 0 {
		t.Errorf("refused token still cached (%d)", n)
	}

	// Back to the right key: accepted again.
	if err := authtest.WriteJWKS(f.jwks, f.key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(tok); err != nil {
		t.Fatal(err)
	}
	// The key gains a restriction (alg): re-verified, refused.
	if err := os.WriteFile(f.jwks, []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"`+f.key.Kid+`","alg":"ES256","x":"`+f.key.JWK().X+`"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = f.verify(tok)
	wantAuthError(t, err, CodeInvalidToken, "EdDSA")

	// The file disappears: fail closed even for a remembered token.
	if err := authtest.WriteJWKS(f.jwks, f.key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(tok); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(f.jwks); err != nil {
		t.Fatal(err)
	}
	_, err = f.verify(tok)
	wantAuthError(t, err, CodeInvalidToken, "could not be read")

	// Expiry is checked on every call.
	if err := authtest.WriteJWKS(f.jwks, f.key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.verify(tok); err != nil {
		t.Fatal(err)
	}
	f.advance(600*time.Second + 59*time.Second)
	if _, err := f.verify(tok); err != nil {
		t.Fatalf("within leeway: %v", err)
	}
	f.advance(time.Second)
	_, err = f.verify(tok)
	wantAuthError(t, err, CodeInvalidToken, "expired")
}

func TestCacheNotBefore(t *testing.T) {
	f := newFixture(t, nil)
	tok := authtest.Mint(f.key, with(turnClaims(), "nbf", testNow+30))
	if _, err := f.verify(tok); err != nil {
		t.Fatal(err)
	}
	f.advance(-31 * time.Second) // the clock steps back: nbf − leeway is now in the future
	_, err := f.verify(tok)
	wantAuthError(t, err, CodeInvalidToken, "not yet valid")
}

func TestCacheBounded(t *testing.T) {
	f := newFixture(t, &VerifierOptions{CacheSize: 8})
	for i := range 50 {
		tok := authtest.Mint(f.key, with(turnClaims(), "jti", strings.Repeat("x", i+1)))
		if _, err := f.verify(tok); err != nil {
			t.Fatal(err)
		}
		if n := f.v.cache.Len(); n > 8 {
			t.Fatalf("cache holds %d tokens", n)
		}
	}
	off := newFixture(t, &VerifierOptions{CacheSize: -1})
	if off.v.cache != nil {
		t.Fatal("negative CacheSize did not turn the cache off")
	}
	tok := authtest.Mint(off.key, turnClaims())
	for range 2 {
		if _, err := off.verify(tok); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMissingJWKSFile(t *testing.T) {
	f := newFixture(t, nil)
	if err := os.Remove(f.jwks); err != nil {
		t.Fatal(err)
	}
	_, err := f.verify(authtest.Mint(f.key, turnClaims()))
	wantAuthError(t, err, CodeInvalidToken, "")
	// A directory, or a file over 256 KiB, fails closed too.
	if err := os.Mkdir(f.jwks, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = f.verify(authtest.Mint(f.key, turnClaims()))
	wantAuthError(t, err, CodeInvalidToken, "")
	if err := os.Remove(f.jwks); err != nil {
		t.Fatal(err)
	}
	big := append(authtest.JWKS(f.key)[:0:0], authtest.JWKS(f.key)...)
	big = append(big, strings.Repeat(" ", MaxJWKSBytes)...)
	if err := os.WriteFile(f.jwks, big, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = f.verify(authtest.Mint(f.key, turnClaims()))
	wantAuthError(t, err, CodeInvalidToken, "")
}

func TestConcurrentVerify(t *testing.T) {
	f := newFixture(t, &VerifierOptions{CacheSize: 4})
	toks := make([]string, 8)
	for i := range toks {
		toks[i] = authtest.Mint(f.key, with(turnClaims(), "by_turn", strings.Repeat("7", i+1)))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				c, err := f.verify(toks[(g+i)%len(toks)])
				if err != nil || c.Subject != "local:e2e-person" {
					t.Errorf("verify: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestCacheLongTokens: a token longer than maxKeyedToken is cached under
// its hash, and two such tokens never share an entry.
func TestCacheLongTokens(t *testing.T) {
	f := newFixture(t, nil)
	long := func(jti string) string {
		return authtest.Mint(f.key, with(with(turnClaims(), "jti", jti), "by_models", strings.Repeat("x", maxKeyedToken)))
	}
	a, b := long("a"), long("b")
	if len(a) <= maxKeyedToken {
		t.Fatalf("fixture: token of %d bytes", len(a))
	}
	for _, tok := range []string{a, a, b, b} {
		c, err := f.verify(tok)
		if err != nil {
			t.Fatal(err)
		}
		if (tok == a) != strings.HasPrefix(c.JTI, "a") {
			t.Fatalf("claims of the wrong token (jti %.3q…)", c.JTI)
		}
	}
	if n := f.v.cache.Len(); n != 2 {
		t.Fatalf("cache holds %d tokens, want 2", n)
	}
	for _, tok := range []string{a, b} {
		k := tokencache.Key(tok)
		if _, ok := f.v.cache.Get(k); !ok || len(k) != 1+32 || k[0] != 0 {
			t.Fatalf("a long token is not cached under its hash (a %d-byte key)", len(k))
		}
	}
}

// TestNonCanonicalSignatureRefused: changing the last character of the
// signature within the bits base64url leaves unused decodes to the same
// signature; such a token is refused, as any other change is.
func TestNonCanonicalSignatureRefused(t *testing.T) {
	f := newFixture(t, nil)
	tok := authtest.Mint(f.key, turnClaims())
	if _, err := f.verify(tok); err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndexByte(tok, '.')
	sig := tok[i+1:]
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	want, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		t.Fatal(err)
	}
	variants := 0
	for _, c := range alphabet {
		alt := sig[:len(sig)-1] + string(c)
		if alt == sig {
			continue
		}
		if got, err := base64.RawURLEncoding.DecodeString(alt); err != nil || !bytes.Equal(got, want) {
			continue // a real change of the signature bytes
		}
		variants++
		_, err := f.verify(tok[:i+1] + alt) // another string: not in the cache

		wantAuthError(t, err, CodeInvalidToken, "")
	}
	if variants == 0 {
		t.Fatal("no non-canonical spelling of the signature found")
	}
}

// TestCanonicalSegments agrees with the strict decoder on every length and
// final character.
func TestCanonicalSegments(t *testing.T) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	strict := base64.RawURLEncoding.Strict()
	for n := 1; n <= 9; n++ {
		for _, c := range alphabet {
			seg := strings.Repeat("Q", n-1) + string(c)
			_, err := strict.DecodeString(seg)
			if got := canonicalSegments("e30." + seg + ".e30"); got != (err == nil) {
				t.Errorf("segment %q: canonical = %v, strict decoder error %v", seg, got, err)
			}
		}
	}
}
