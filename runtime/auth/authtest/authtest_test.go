package authtest

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeyAndJWKS(t *testing.T) {
	k := NewKey("by-abcdefghijkl")
	j := k.JWK()
	if j.Kty != "OKP" || j.Crv != "Ed25519" || j.Kid != "by-abcdefghijkl" || j.Use != "sig" || j.Alg != "EdDSA" || len(j.X) != 43 {
		t.Errorf("JWK %+v", j)
	}
	b, _ := json.Marshal(j)
	if !strings.HasPrefix(string(b), `{"kty":"OKP","crv":"Ed25519","kid":"by-abcdefghijkl","use":"sig","alg":"EdDSA","x":"`) {
		t.Errorf("JWK JSON %s", b)
	}
	if again := KeyFromSeed("by-abcdefghijkl", k.Private.Seed()); !again.Private.Equal(k.Private) || again.JWK() != j {
		t.Error("KeyFromSeed does not give back the key of its seed")
	}
	if b, _ := json.Marshal(NewKey("").JWK()); strings.Contains(string(b), "kid") {
		t.Errorf("a key without a kid has a kid member: %s", b)
	}

	path := filepath.Join(t.TempDir(), "jwks.json")
	k2 := NewKey("by-second")
	if err := WriteJWKS(path, k, k2); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var set struct{ Keys []JWK }
	if err := json.Unmarshal(raw, &set); err != nil || len(set.Keys) != 2 || set.Keys[0] != k.JWK() || set.Keys[1] != k2.JWK() {
		t.Errorf("JWKS %s: %v", raw, err)
	}
	if !strings.Contains(string(raw), "\n  \"keys\"") || strings.Contains(string(raw), `"d"`) {
		t.Errorf("JWKS not pretty-printed or holds a private member: %s", raw)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestMint(t *testing.T) {
	k := NewKey("by-abcdefghijkl")
	tok := Mint(k, map[string]any{"sub": "s", "exp": 5})
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q", tok)
	}
	hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var h map[string]any
	if err := json.Unmarshal(hdr, &h); err != nil || h["alg"] != "EdDSA" || h["typ"] != "JWT" || h["kid"] != "by-abcdefghijkl" || len(h) != 3 {
		t.Errorf("header %s", hdr)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if string(payload) != `{"exp":5,"sub":"s"}` {
		t.Errorf("payload %s", payload)
	}
	if Mint(k, map[string]any{"bad": make(chan int)}) != "" {
		t.Error("unencodable claims minted")
	}
	noKid := Mint(NewKey(""), map[string]any{})
	hdr, _ = base64.RawURLEncoding.DecodeString(strings.Split(noKid, ".")[0])
	if strings.Contains(string(hdr), "kid") {
		t.Errorf("empty kid written: %s", hdr)
	}
	raw := SignRaw(k, []byte(`{"alg":"none"}`), []byte(`[]`))
	if !strings.HasPrefix(raw, "eyJhbGciOiJub25lIn0.W10.") {
		t.Errorf("SignRaw %q", raw)
	}
}
