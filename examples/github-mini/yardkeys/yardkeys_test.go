package yardkeys

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"
)

var kidRE = regexp.MustCompile(`^yard-[0-9a-f]{8}$`)

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestKeygenFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "yard")
	res, err := Keygen(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !kidRE.MatchString(res.Kid) {
		t.Errorf("kid %q", res.Kid)
	}
	if want := filepath.Join(dir, "jwks.json"); res.JWKSPath != want || !filepath.IsAbs(res.JWKSPath) {
		t.Errorf("JWKSPath %q, want %q", res.JWKSPath, want)
	}
	if out, _ := json.Marshal(res); !regexp.MustCompile(`^\{"kid":"yard-[0-9a-f]{8}","jwksPath":"[^"]+"\}$`).Match(out) {
		t.Errorf("Result JSON %s", out)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("dir mode %o", m)
	}
	if m := mode(t, filepath.Join(dir, SigningKeyFile)); m != 0o600 {
		t.Errorf("signing key mode %o", m)
	}
	if m := mode(t, res.JWKSPath); m != 0o644 {
		t.Errorf("jwks mode %o", m)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("dir holds %d entries (temp files left?)", len(entries))
	}

	// The private JWK: fields in order, d a 32-byte seed matching x.
	raw, _ := os.ReadFile(filepath.Join(dir, SigningKeyFile))
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token()
	for dec.More() {
		tok, _ := dec.Token()
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	if diff := cmp.Diff([]string{"kty", "crv", "x", "d", "kid", "alg", "use"}, keys); diff != "" {
		t.Errorf("signing key fields (-want +got):\n%s", diff)
	}
	var priv JWK
	if err := json.Unmarshal(raw, &priv); err != nil {
		t.Fatal(err)
	}
	seed, _ := base64.RawURLEncoding.DecodeString(priv.D)
	x, _ := base64.RawURLEncoding.DecodeString(priv.X)
	if len(seed) != 32 || !bytes.Equal(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey), x) {
		t.Error("d and x do not form a key pair")
	}
	if priv.Kty != "OKP" || priv.Crv != "Ed25519" || priv.Alg != "EdDSA" || priv.Use != "sig" || priv.Kid != res.Kid {
		t.Errorf("signing key %+v", priv)
	}

	// The JWKS: pretty-printed, one public key, no d, readable by go-jose.
	raw, _ = os.ReadFile(res.JWKSPath)
	if !strings.HasPrefix(string(raw), "{\n  \"keys\": [\n    {\n") || strings.Contains(string(raw), `"d"`) {
		t.Errorf("jwks.json:\n%s", raw)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 || set.Keys[0].KeyID != res.Kid || !set.Keys[0].IsPublic() || set.Keys[0].Algorithm != "EdDSA" || set.Keys[0].Use != "sig" {
		t.Fatalf("jwks %+v", set.Keys)
	}
	if _, ok := set.Keys[0].Key.(ed25519.PublicKey); !ok {
		t.Fatalf("jwks key is %T", set.Keys[0].Key)
	}
}

func TestKeygenReplacesKey(t *testing.T) {
	dir := t.TempDir()
	a, err := Keygen(dir)
	if err != nil {
		t.Fatal(err)
	}
	oldSet := readSet(t, a.JWKSPath)
	b, err := Keygen(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.Kid == b.Kid {
		t.Fatal("second keygen reused the kid")
	}
	tok, err := Mint(dir, map[string]any{"sub": "x"}, MintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Signed with the new key: the old JWKS does not verify it, the new one does.
	if _, err := verify(t, tok, oldSet); err == nil {
		t.Fatal("token verified against the rotated-out key")
	}
	if _, err := verify(t, tok, readSet(t, b.JWKSPath)); err != nil {
		t.Fatal(err)
	}
}

func TestKeygenError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := Keygen(filepath.Join(file, "sub")); !errors.Is(err, ErrWrite) {
		t.Fatalf("Keygen under a file: %v", err)
	}
}

func readSet(t *testing.T, path string) jose.JSONWebKeySet {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	return set
}

// verify checks tok with go-jose against the key its kid names and returns
// the decoded claims.
func verify(t *testing.T, tok string, set jose.JSONWebKeySet) (map[string]any, error) {
	t.Helper()
	jws, err := jose.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return nil, err
	}
	keys := set.Key(jws.Signatures[0].Protected.KeyID)
	if len(keys) == 0 {
		return nil, errors.New("unknown kid")
	}
	payload, err := jws.Verify(keys[0])
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&claims); err != nil {
		return nil, err
	}
	return claims, nil
}

func TestMintVerifies(t *testing.T) {
	dir := t.TempDir()
	res, err := Keygen(dir)
	if err != nil {
		t.Fatal(err)
	}
	grants := []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read"}}
	now := time.Unix(1_700_000_000, 900_000_000)
	tok, err := Mint(dir, map[string]any{
		"iss": "branchyard:local:e2e", "aud": "http://127.0.0.1:1/mcp", "sub": "local:e2e-person",
		"by_tenant": "e2e", "by_turn": "1", "by_grants": grants,
	}, MintOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || strings.ContainsAny(tok, "=+/") {
		t.Fatalf("not a compact base64url token: %q", tok)
	}
	header, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if want := `{"alg":"EdDSA","typ":"JWT","kid":"` + res.Kid + `"}`; string(header) != want {
		t.Errorf("header %s, want %s", header, want)
	}
	claims, err := verify(t, tok, readSet(t, res.JWKSPath))
	if err != nil {
		t.Fatal(err)
	}
	jti, _ := claims["jti"].(string)
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(jti) {
		t.Errorf("jti %q", jti)
	}
	delete(claims, "jti")
	want := map[string]any{
		"iat": json.Number("1700000000"), "exp": json.Number("1700000600"),
		"iss": "branchyard:local:e2e", "aud": "http://127.0.0.1:1/mcp", "sub": "local:e2e-person",
		"by_tenant": "e2e", "by_turn": "1", "by_grants": grants,
	}
	if diff := cmp.Diff(want, claims); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	// Payload key order: iat, exp, jti, then the claims sorted.
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if !regexp.MustCompile(`^\{"iat":1700000000,"exp":1700000600,"jti":"[^"]+","aud":.*,"by_grants":.*,"by_tenant":.*,"by_turn":.*,"iss":.*,"sub":"local:e2e-person"\}$`).Match(payload) {
		t.Errorf("payload %s", payload)
	}

	// Tampering with the payload breaks the signature.
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"mallory"}`)) + "." + parts[2]
	if _, err := verify(t, forged, readSet(t, res.JWKSPath)); err == nil {
		t.Fatal("forged token verified")
	}
}

func TestMintTTLAndOverrides(t *testing.T) {
	dir := t.TempDir()
	res, err := Keygen(dir)
	if err != nil {
		t.Fatal(err)
	}
	set := readSet(t, res.JWKSPath)
	tests := []struct {
		name   string
		claims map[string]any
		opts   MintOptions
		check  func(c map[string]any) bool
	}{
		{"default ttl 600", nil, MintOptions{}, func(c map[string]any) bool { return num(c["exp"])-num(c["iat"]) == 600 }},
		{"iat is now", nil, MintOptions{}, func(c map[string]any) bool {
			d := time.Now().Unix() - num(c["iat"])
			return d >= 0 && d < 5
		}},
		{"ttl 30s", nil, MintOptions{TTL: 30 * time.Second}, func(c map[string]any) bool { return num(c["exp"])-num(c["iat"]) == 30 }},
		{"negative ttl", nil, MintOptions{TTL: -120 * time.Second, Now: time.Unix(1000, 0)}, func(c map[string]any) bool {
			return num(c["iat"]) == 1000 && num(c["exp"]) == 880
		}},
		{"claims override exp and jti", map[string]any{"exp": 5, "jti": "fixed"}, MintOptions{Now: time.Unix(1000, 0)}, func(c map[string]any) bool {
			return num(c["iat"]) == 1000 && num(c["exp"]) == 5 && c["jti"] == "fixed"
		}},
		{"html not escaped", map[string]any{"sub": "<a&b>"}, MintOptions{}, func(c map[string]any) bool { return c["sub"] == "<a&b>" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := Mint(dir, tt.claims, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			c, err := verify(t, tok, set)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Fatalf("claims %v", c)
			}
		})
	}
	// Two mints differ in jti.
	a, _ := Mint(dir, nil, MintOptions{Now: time.Unix(1000, 0)})
	b, _ := Mint(dir, nil, MintOptions{Now: time.Unix(1000, 0)})
	if a == b {
		t.Fatal("two tokens are identical")
	}
}

func num(v any) int64 {
	n, _ := v.(json.Number).Int64()
	return n
}

func TestMintErrors(t *testing.T) {
	empty := t.TempDir()
	if _, err := Mint(empty, nil, MintOptions{}); !errors.Is(err, ErrKey) {
		t.Fatalf("missing key: %v", err)
	}
	dir := t.TempDir()
	if _, err := Keygen(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Mint(dir, map[string]any{"bad": make(chan int)}, MintOptions{}); !errors.Is(err, ErrClaims) {
		t.Fatalf("unencodable claim: %v", err)
	}

	raw, _ := os.ReadFile(filepath.Join(dir, SigningKeyFile))
	var k JWK
	json.Unmarshal(raw, &k)
	_, other, _ := ed25519.GenerateKey(nil)
	for name, mutate := range map[string]func(k *JWK){
		"public only":  func(k *JWK) { k.D = "" },
		"wrong curve":  func(k *JWK) { k.Crv = "X25519" },
		"no kid":       func(k *JWK) { k.Kid = "" },
		"mismatched x": func(k *JWK) { k.D = base64.RawURLEncoding.EncodeToString(other.Seed()) },
	} {
		kk := k
		mutate(&kk)
		data, _ := json.Marshal(kk)
		bad := t.TempDir()
		os.WriteFile(filepath.Join(bad, SigningKeyFile), data, 0o600)
		_, err := Mint(bad, nil, MintOptions{})
		if !errors.Is(err, ErrKey) {
			t.Errorf("%s: %v", name, err)
		}
		if err != nil && strings.Contains(err.Error(), k.D) {
			t.Errorf("%s: error leaks the private key", name)
		}
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, SigningKeyFile), []byte("not json"), 0o600)
	if _, err := Mint(bad, nil, MintOptions{}); !errors.Is(err, ErrKey) {
		t.Errorf("garbage key file: %v", err)
	}
}
