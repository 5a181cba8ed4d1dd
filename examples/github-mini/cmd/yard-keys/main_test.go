package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"
)

// build compiles this command into a temporary directory.
func build(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "yard-keys")
	out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// exe runs the binary and returns stdout, stderr and the exit code.
func exe(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	default:
		t.Fatal(err)
		return "", "", -1
	}
}

// claimsOf verifies tok against the JWKS file and decodes its claims.
func claimsOf(t *testing.T, tok, jwksPath string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(jwksPath)
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	jws, err := jose.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	keys := set.Key(jws.Signatures[0].Protected.KeyID)
	if len(keys) != 1 {
		t.Fatalf("kid %q not in JWKS", jws.Signatures[0].Protected.KeyID)
	}
	payload, err := jws.Verify(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBinary(t *testing.T) {
	bin := build(t)
	yard := filepath.Join(t.TempDir(), "yard")
	out, errOut, code := exe(t, bin, "keygen", yard)
	if code != 0 {
		t.Fatalf("keygen exit %d: %s", code, errOut)
	}
	var res struct {
		Kid      string `json:"kid"`
		JWKSPath string `json:"jwksPath"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || !strings.HasPrefix(res.Kid, "yard-") || !strings.HasSuffix(out, "}\n") {
		t.Fatalf("keygen printed %q", out)
	}
	if res.JWKSPath != filepath.Join(yard, "jwks.json") {
		t.Fatalf("jwksPath %q", res.JWKSPath)
	}
	if fi, err := os.Stat(filepath.Join(yard, "signing.jwk.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("signing key: %v %v", fi, err)
	}

	// Step 6 of the seed: a turn token.
	grants := `[{"connector":"github","operations":["*"],"mode":"read"}]`
	tok, errOut, code := exe(t, bin, "mint", yard,
		"--iss", "branchyard:local:e2e", "--aud", "http://127.0.0.1:4000/mcp", "--sub", "local:e2e-person",
		"--tenant", "e2e", "--branch", "main", "--turn", "1", "--grants", grants)
	if code != 0 || strings.ContainsAny(tok, " \n") {
		t.Fatalf("mint exit %d, stdout %q, stderr %s", code, tok, errOut)
	}
	c := claimsOf(t, tok, res.JWKSPath)
	if c["exp"].(float64)-c["iat"].(float64) != 600 || c["jti"] == "" {
		t.Errorf("times %v", c)
	}
	delete(c, "iat")
	delete(c, "exp")
	delete(c, "jti")
	want := map[string]any{
		"iss": "branchyard:local:e2e", "aud": "http://127.0.0.1:4000/mcp", "sub": "local:e2e-person",
		"by_tenant": "e2e", "by_branch": "main", "by_turn": "1",
		"by_grants": []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "read"}},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("turn claims (-want +got):\n%s", diff)
	}

	// Step 7: a connect token, flags before the directory, --ttl and --name=value.
	tok, errOut, code = exe(t, bin, "mint",
		"--iss=branchyard:local:e2e", "--aud", "http://127.0.0.1:4000/mcp", "--sub", "local:e2e-person",
		"--tenant", "e2e", "--purpose", "connect", "--grants", "[]", yard, "--ttl", "300")
	if code != 0 {
		t.Fatalf("connect mint exit %d: %s", code, errOut)
	}
	c = claimsOf(t, tok, res.JWKSPath)
	if c["by_purpose"] != "connect" || c["exp"].(float64)-c["iat"].(float64) != 300 {
		t.Errorf("connect claims %v", c)
	}
	for _, absent := range []string{"by_branch", "by_turn"} {
		if _, ok := c[absent]; ok {
			t.Errorf("%s set without its flag", absent)
		}
	}
	if g, ok := c["by_grants"].([]any); !ok || len(g) != 0 {
		t.Errorf("by_grants %v", c["by_grants"])
	}

	// Defaults: by_grants [] when --grants is not given.
	tok, _, _ = exe(t, bin, "mint", yard, "--iss", "i", "--aud", "a", "--sub", "s")
	header, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
	if string(header) != `{"alg":"EdDSA","typ":"JWT","kid":"`+res.Kid+`"}` {
		t.Errorf("header %s", header)
	}
	if g, ok := claimsOf(t, tok, res.JWKSPath)["by_grants"].([]any); !ok || len(g) != 0 {
		t.Errorf("default by_grants %v", g)
	}

	// Usage errors exit 2 with the usage on stderr; key errors exit 1.
	for _, args := range [][]string{
		{},
		{"frob"},
		{"keygen"},
		{"keygen", yard, "extra"},
		{"mint", yard, "--iss", "i", "--aud", "a", "--sub", "s", "--grants", "{nope"},
		{"mint", yard, "--iss", "i", "--aud", "a", "--sub", "s", "--grants", "[] []"},
		{"mint", yard, "--iss", "i", "--aud", "a"},
		{"mint", "--iss", "i", "--aud", "a", "--sub", "s"},
		{"mint", yard, yard, "--iss", "i", "--aud", "a", "--sub", "s"},
		{"mint", yard, "--iss", "i", "--aud", "a", "--sub", "s", "--ttl", "ten"},
		{"mint", yard, "--iss", "i", "--aud", "a", "--sub", "s", "--color", "red"},
		{"mint", yard, "--iss"},
	} {
		out, errOut, code := exe(t, bin, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "usage:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if _, errOut, code := exe(t, bin, "mint", t.TempDir(), "--iss", "i", "--aud", "a", "--sub", "s"); code != 1 || !strings.Contains(errOut, "signing.jwk.json") {
		t.Errorf("mint without a key: exit %d, %q", code, errOut)
	}
}

func TestRunTTLZeroAndGrantsNumbers(t *testing.T) {
	yard := t.TempDir()
	var out, errb bytes.Buffer
	if code := run([]string{"keygen", yard}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	var res struct{ JWKSPath string }
	json.Unmarshal(out.Bytes(), &res)
	out.Reset()
	if code := run([]string{"mint", yard, "--iss", "i", "--aud", "a", "--sub", "s", "--ttl", "0", "--grants", `"x"`}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	c := claimsOf(t, out.String(), res.JWKSPath)
	if c["exp"] != c["iat"] || c["by_grants"] != "x" {
		t.Fatalf("claims %v", c)
	}
	// Large integers in --grants survive unchanged.
	out.Reset()
	run([]string{"mint", yard, "--iss", "i", "--aud", "a", "--sub", "s", "--grants", `[12345678901234567890]`}, &out, &errb)
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(out.String(), ".")[1])
	if !strings.Contains(string(payload), `"by_grants":[12345678901234567890]`) {
		t.Fatalf("payload %s", payload)
	}
}
