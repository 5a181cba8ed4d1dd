package mint_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/auth/mint"
)

const (
	iss = "branchyard:local:e2e"
	aud = "http://127.0.0.1:8931/mcp"
)

// verifier is the gateway's own verifier over dir's jwks.json.
func verifier(t *testing.T, dir string) *auth.Verifier {
	t.Helper()
	v, err := auth.NewVerifier(auth.Config{Mode: auth.ModeBranchyard, Issuer: iss, Audience: aud,
		JWKSURI: "file://" + filepath.Join(dir, mint.JWKSFile), Leeway: auth.DefaultLeeway}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func decodePart(t *testing.T, part string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		t.Fatalf("%q is not unpadded base64url: %v", part, err)
	}
	return b
}

func TestInitWritesKeyAndJWKS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "yard")
	k, err := mint.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^by-[A-Za-z0-9_-]{12}$`).MatchString(k.Kid) {
		t.Errorf("kid %q is not by- and 12 base64url characters", k.Kid)
	}
	for name, want := range map[string]os.FileMode{mint.SigningKeyFile: 0o600, mint.JWKSFile: 0o644, ".": 0o700} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %04o, want %04o", name, got, want)
		}
	}
	jwks, _ := os.ReadFile(filepath.Join(dir, mint.JWKSFile))
	want := `{
  "keys": [
    {
      "kty": "OKP",
      "crv": "Ed25519",
      "kid": "` + k.Kid + `",
      "use": "sig",
      "alg": "EdDSA",
      "x": "` + base64.RawURLEncoding.EncodeToString(k.Public()) + `"
    }
  ]
}
`
	if string(jwks) != want {
		t.Errorf("jwks.json:\n%s\nwant:\n%s", jwks, want)
	}
	loaded, err := mint.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Kid != k.Kid || !loaded.Private.Equal(k.Private) {
		t.Error("Load does not give back the key Init made")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("the directory holds %d entries, want the two key files (no temporary left)", len(entries))
	}
}

func TestInitRefusesToReplaceAKey(t *testing.T) {
	dir := t.TempDir()
	if _, err := mint.Init(dir); err != nil {
		t.Fatal(err)
	}
	key1, _ := os.ReadFile(filepath.Join(dir, mint.SigningKeyFile))
	jwks1, _ := os.ReadFile(filepath.Join(dir, mint.JWKSFile))
	if _, err := mint.Init(dir); !errors.Is(err, mint.ErrExists) {
		t.Fatalf("second Init: %v, want ErrExists", err)
	}
	key2, _ := os.ReadFile(filepath.Join(dir, mint.SigningKeyFile))
	jwks2, _ := os.ReadFile(filepath.Join(dir, mint.JWKSFile))
	if !bytes.Equal(key1, key2) || !bytes.Equal(jwks1, jwks2) {
		t.Error("a refused Init changed the key files")
	}
}

func TestLoadRefusesBadKeyFiles(t *testing.T) {
	dir := t.TempDir()
	k, err := mint.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, mint.SigningKeyFile)
	good, _ := os.ReadFile(path)
	other, _ := mint.NewKey()
	otherJWK := other.PrivateJWK()
	mixed := k.PrivateJWK()
	mixed.X = otherJWK.X
	mixedJSON, _ := json.Marshal(mixed)
	noKid := k.PrivateJWK()
	noKid.Kid = ""
	noKidJSON, _ := json.Marshal(noKid)
	cases := []struct {
		name    string
		content []byte
		mode    os.FileMode
		want    string
	}{
		{"readable by others", good, 0o644, "chmod 600"},
		{"not JSON", []byte("not json"), 0o600, "not a JSON object"},
		{"no seed", []byte(`{"kty":"OKP","crv":"Ed25519","kid":"by-x","x":"AA"}`), 0o600, "32-byte seed"},
		{"RSA", []byte(`{"kty":"RSA","kid":"by-x"}`), 0o600, "not an Ed25519 key"},
		{"x of another key", mixedJSON, 0o600, "x does not match d"},
		{"no kid", noKidJSON, 0o600, "no kid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, c.content, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, c.mode); err != nil {
				t.Fatal(err)
			}
			_, err := mint.Load(dir)
			if !errors.Is(err, mint.ErrKey) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load: %v, want ErrKey mentioning %q", err, c.want)
			}
			if strings.Contains(err.Error(), otherJWK.D) || strings.Contains(err.Error(), k.PrivateJWK().D) {
				t.Error("the error carries key material")
			}
		})
	}
	if _, err := mint.Load(t.TempDir()); !errors.Is(err, mint.ErrKey) || !strings.Contains(err.Error(), "anvil keys init") {
		t.Errorf("Load of an empty directory: %v", err)
	}
}

// TestMintTurnToken checks the token byte for byte against Branchyard's
// contract and verifies it with the gateway's verifier.
func TestMintTurnToken(t *testing.T) {
	dir := t.TempDir()
	k, err := mint.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok, err := k.Mint(mint.Claims{Issuer: iss, Audience: aud, Subject: "local:e2e-person",
		Tenant: "e2e", Branch: "main", Turn: "1", TTL: 90 * time.Second,
		Grants: []byte(` [ {"mode":"write","operations":["issues.*"],"connector":"github","confirm":"allow","extra":1} ] `)}, now)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", tok)
	}
	if got, want := string(decodePart(t, parts[0])), `{"alg":"EdDSA","typ":"JWT","kid":"`+k.Kid+`"}`; got != want {
		t.Errorf("header %s, want %s", got, want)
	}
	payload := decodePart(t, parts[1])
	var p struct {
		JTI string `json:"jti"`
	}
	_ = json.Unmarshal(payload, &p)
	if len(p.JTI) != 22 || len(decodePart(t, p.JTI)) != 16 {
		t.Errorf("jti %q is not 16 bytes in base64url", p.JTI)
	}
	iat := now.Unix()
	want := `{"iss":"branchyard:local:e2e","aud":"http://127.0.0.1:8931/mcp","sub":"local:e2e-person",` +
		`"iat":` + itoa(iat) + `,"exp":` + itoa(iat+90) + `,"jti":"` + p.JTI + `",` +
		`"by_tenant":"e2e","by_branch":"main","by_turn":"1",` +
		`"by_grants":[{"connector":"github","operations":["issues.*"],"mode":"write","confirm":"allow"}]}`
	if string(payload) != want {
		t.Errorf("payload\n%s\nwant\n%s", payload, want)
	}

	c, err := verifier(t, dir).Verify(context.Background(), "Bearer "+tok)
	if err != nil {
		t.Fatalf("the gateway's verifier refuses the token: %v", err)
	}
	if c.Subject != "local:e2e-person" || c.Turn != "1" || c.Branch != "main" || c.Tenant != "e2e" || c.IsConnect() || len(c.Grants) != 1 || c.Grants[0].Confirm != "allow" {
		t.Errorf("verified claims %+v", c)
	}
	// Another token of the same claims has another jti.
	tok2, _ := k.Mint(mint.Claims{Issuer: iss, Audience: aud, Subject: "local:e2e-person", Grants: []byte("[]")}, now)
	if strings.Split(tok2, ".")[1] == parts[1] {
		t.Error("two tokens share a payload (jti not random)")
	}
}

func TestMintConnectToken(t *testing.T) {
	dir := t.TempDir()
	k, err := mint.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := k.Mint(mint.Claims{Issuer: iss, Audience: aud, Subject: "local:e2e-person", Purpose: auth.PurposeConnect}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	payload := string(decodePart(t, strings.Split(tok, ".")[1]))
	if !strings.HasSuffix(payload, `"by_tenant":"local","by_branch":"","by_turn":"","by_grants":[],"by_purpose":"connect"}`) {
		t.Errorf("connect payload %s", payload)
	}
	c, err := verifier(t, dir).Verify(context.Background(), "Bearer "+tok)
	if err != nil {
		t.Fatal(err)
	}
	if !c.IsConnect() || c.Expiry.Sub(c.IssuedAt) != mint.DefaultTTL {
		t.Errorf("claims %+v", c)
	}
}

func TestMintRefusesWhatTheGatewayRefuses(t *testing.T) {
	k, err := mint.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	base := mint.Claims{Issuer: iss, Audience: aud, Subject: "s", Grants: []byte("[]")}
	long := strings.Repeat("é", mint.MaxClaimLen+1)
	cases := []struct {
		name string
		edit func(*mint.Claims)
		want string
	}{
		{"no iss", func(c *mint.Claims) { c.Issuer = "" }, "iss is required"},
		{"no aud", func(c *mint.Claims) { c.Audience = "" }, "aud is required"},
		{"no sub", func(c *mint.Claims) { c.Subject = "" }, "sub is required"},
		{"turn not UTF-8", func(c *mint.Claims) { c.Turn = "\xff" }, "by_turn is not valid UTF-8"},
		{"long turn", func(c *mint.Claims) { c.Turn = long }, "by_turn is longer"},
		{"long branch", func(c *mint.Claims) { c.Branch = long }, "by_branch is longer"},
		{"long tenant", func(c *mint.Claims) { c.Tenant = long }, "by_tenant is longer"},
		{"grants not a list", func(c *mint.Claims) { c.Grants = []byte(`{"connector":"github"}`) }, "by_grants"},
		{"grant confirm deny", func(c *mint.Claims) {
			c.Grants = []byte(`[{"connector":"github","operations":["*"],"mode":"write","confirm":"deny"}]`)
		}, "confirm may only be allow"},
		{"grants not JSON", func(c *mint.Claims) { c.Grants = []byte(`[{`) }, "not valid JSON"},
		{"unknown purpose", func(c *mint.Claims) { c.Purpose = "admin" }, "by_purpose may only be"},
		{"connect with grants", func(c *mint.Claims) {
			c.Purpose = auth.PurposeConnect
			c.Grants = []byte(`[{"connector":"github","operations":["*"],"mode":"read"}]`)
		}, "no grants, branch or turn"},
		{"connect with turn", func(c *mint.Claims) { c.Purpose, c.Turn = auth.PurposeConnect, "1" }, "no grants, branch or turn"},
		{"connect too long", func(c *mint.Claims) { c.Purpose, c.TTL = auth.PurposeConnect, 11*time.Minute }, "at most 10m0s"},
		{"ttl over an hour", func(c *mint.Claims) { c.TTL = time.Hour + time.Second }, "from 1s to 1h0m0s"},
		{"ttl negative", func(c *mint.Claims) { c.TTL = -time.Minute }, "from 1s to 1h0m0s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			claims := base
			c.edit(&claims)
			tok, err := k.Mint(claims, time.Now())
			if !errors.Is(err, mint.ErrClaims) || !strings.Contains(err.Error(), c.want) || tok != "" {
				t.Fatalf("Mint: %q, %v; want ErrClaims mentioning %q", tok, err, c.want)
			}
		})
	}
	if _, err := k.Mint(base, time.Now()); err != nil {
		t.Fatalf("the base claims do not mint: %v", err)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestLimitsAreTheGateways holds mint's copies of the gateway's limits equal
// to package auth's, which mint does not import.
func TestLimitsAreTheGateways(t *testing.T) {
	if mint.PurposeConnect != auth.PurposeConnect || mint.MaxTTL != auth.MaxTokenLifetime ||
		mint.MaxConnectTTL != auth.MaxConnectLifetime || mint.MaxClaimLen != auth.MaxClaimChars {
		t.Errorf("mint's limits (%q, %v, %v, %d) are not the gateway's (%q, %v, %v, %d)",
			mint.PurposeConnect, mint.MaxTTL, mint.MaxConnectTTL, mint.MaxClaimLen,
			auth.PurposeConnect, auth.MaxTokenLifetime, auth.MaxConnectLifetime, auth.MaxClaimChars)
	}
}

func TestWriteJWKSReplacesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, mint.JWKSFile)
	if err := os.WriteFile(path, []byte(`{"keys":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	k1, _ := mint.NewKey()
	k2, _ := mint.NewKey()
	if err := mint.WriteJWKS(path, k1, k2); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, mint.JWKS(k1, k2)) || bytes.Contains(got, []byte(`"d"`)) {
		t.Errorf("jwks.json:\n%s", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %04o, want 0644", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	err := mint.WriteFileAtomic(filepath.Join(dir, "missing", mint.JWKSFile), got, 0o644)
	if !errors.Is(err, mint.ErrWrite) {
		t.Errorf("write into a missing directory: %v, want ErrWrite", err)
	}
	// A key without a kid (mint never makes one; test keys may) has no kid
	// member rather than an empty one.
	if b, _ := json.Marshal(mint.Key{Private: k1.Private}.JWK()); bytes.Contains(b, []byte("kid")) {
		t.Errorf("JWK without a kid: %s", b)
	}
}

// TestMintTakesAnyClaimStringTheGatewayTakes: by_tenant, by_branch and
// by_turn are strings of at most 256 characters to the gateway; a turn that
// is not a number, a branch with a slash and unicode are minted as given
// (cmd/anvil's TestKeysInitAndTokenMint verifies such a token with the gateway's
// verifier).
func TestMintTakesAnyClaimStringTheGatewayTakes(t *testing.T) {
	k, err := mint.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	max := strings.Repeat("é", mint.MaxClaimLen)
	for _, c := range []struct{ tenant, branch, turn string }{
		{"acme", "octo/hello:feature/x", "turn-7"},
		{"é", "main", "0"},
		{"t", "b", "01"},
		{max, max, max},
	} {
		tok, err := k.Mint(mint.Claims{Issuer: iss, Audience: aud, Subject: "s", Tenant: c.tenant, Branch: c.branch, Turn: c.turn}, time.Now())
		if err != nil {
			t.Errorf("%+v: %v", c, err)
			continue
		}
		payload := decodePart(t, strings.Split(tok, ".")[1])
		var claims struct {
			Tenant string `json:"by_tenant"`
			Branch string `json:"by_branch"`
			Turn   string `json:"by_turn"`
		}
		if err := json.Unmarshal(payload, &claims); err != nil || claims.Tenant != c.tenant || claims.Branch != c.branch || claims.Turn != c.turn {
			t.Errorf("%+v: payload %s", c, payload)
		}
	}
}
