package auth

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anvil-dev/anvil/runtime/auth/authtest"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func branchyardEnv(kv ...string) map[string]string {
	m := map[string]string{
		EnvMode:     "branchyard",
		EnvIssuer:   "branchyard:local:e2e",
		EnvAudience: "http://127.0.0.1:8080/mcp",
		EnvJWKSURI:  "file:///tmp/yard/jwks.json",
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(m, kv[i])
		} else {
			m[kv[i]] = kv[i+1]
		}
	}
	return m
}

func TestConfigFromEnv(t *testing.T) {
	c, err := ConfigFromEnv(env(nil))
	if err != nil || c.Mode != ModeNone || c.Enabled() {
		t.Fatalf("default: %+v %v", c, err)
	}
	c, err = ConfigFromEnv(env(map[string]string{EnvMode: "none", EnvAudience: "ftp://x"}))
	if err != nil || c.Mode != ModeNone {
		t.Fatalf("none ignores the rest: %+v %v", c, err)
	}
	c, err = ConfigFromEnv(env(branchyardEnv()))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Mode: ModeBranchyard, Issuer: "branchyard:local:e2e", Audience: "http://127.0.0.1:8080/mcp", JWKSURI: "file:///tmp/yard/jwks.json", Leeway: 60 * time.Second}
	if c != want || !c.Enabled() {
		t.Errorf("got %+v, want %+v", c, want)
	}
	accepted := []map[string]string{
		branchyardEnv(EnvAudience, "https://gw.example/mcp", EnvJWKSURI, "https://yard.example/.well-known/jwks.json"),
		branchyardEnv(EnvAudience, "http://localhost:3000/mcp"),
		branchyardEnv(EnvAudience, "http://[::1]:3000/mcp"),
		branchyardEnv(EnvAudience, "HTTPS://GW.EXAMPLE/mcp"),
		branchyardEnv(EnvLeeway, "0"),
		branchyardEnv(EnvLeeway, "300"),
	}
	for _, m := range accepted {
		if _, err := ConfigFromEnv(env(m)); err != nil {
			t.Errorf("%v: %v", m, err)
		}
	}
	if c, _ := ConfigFromEnv(env(branchyardEnv(EnvLeeway, "15"))); c.Leeway != 15*time.Second {
		t.Errorf("leeway %v", c.Leeway)
	}
}

func TestConfigRefusals(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string // the variable named
	}{
		{"oidc mode", map[string]string{EnvMode: "oidc"}, EnvMode},
		{"unknown mode", map[string]string{EnvMode: "Branchyard"}, EnvMode},
		{"no issuer", branchyardEnv(EnvIssuer, ""), EnvIssuer},
		{"no audience", branchyardEnv(EnvAudience, ""), EnvAudience},
		{"no JWKS", branchyardEnv(EnvJWKSURI, ""), EnvJWKSURI},
		{"http audience not loopback", branchyardEnv(EnvAudience, "http://gw.example/mcp"), EnvAudience},
		{"http audience 10.0.0.1", branchyardEnv(EnvAudience, "http://10.0.0.1/mcp"), EnvAudience},
		{"http audience 127.0.0.2", branchyardEnv(EnvAudience, "http://127.0.0.2/mcp"), EnvAudience},
		{"http audience localhost suffix", branchyardEnv(EnvAudience, "http://localhost.evil.example/mcp"), EnvAudience},
		{"audience userinfo", branchyardEnv(EnvAudience, "https://user:pw@gw.example/mcp"), EnvAudience},
		{"audience fragment", branchyardEnv(EnvAudience, "https://gw.example/mcp#x"), EnvAudience},
		{"audience empty fragment", branchyardEnv(EnvAudience, "https://gw.example/mcp#"), EnvAudience},
		{"audience relative", branchyardEnv(EnvAudience, "/mcp"), EnvAudience},
		{"audience ws", branchyardEnv(EnvAudience, "ws://127.0.0.1/mcp"), EnvAudience},
		{"http JWKS", branchyardEnv(EnvJWKSURI, "http://127.0.0.1/jwks.json"), EnvJWKSURI},
		{"relative JWKS file", branchyardEnv(EnvJWKSURI, "file:jwks.json"), EnvJWKSURI},
		{"JWKS file on a host", branchyardEnv(EnvJWKSURI, "file://yard.example/jwks.json"), EnvJWKSURI},
		{"JWKS path", branchyardEnv(EnvJWKSURI, "/tmp/jwks.json"), EnvJWKSURI},
		{"leeway negative", branchyardEnv(EnvLeeway, "-1"), EnvLeeway},
		{"leeway too big", branchyardEnv(EnvLeeway, "301"), EnvLeeway},
		{"leeway fraction", branchyardEnv(EnvLeeway, "1.5"), EnvLeeway},
		{"leeway word", branchyardEnv(EnvLeeway, "sixty"), EnvLeeway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ConfigFromEnv(env(tt.env))
			if err == nil {
				t.Fatalf("accepted: %+v", c)
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q: want ErrConfig naming %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "pw@") {
				t.Errorf("error leaks userinfo: %q", err)
			}
		})
	}
}

func TestNewVerifierRefusals(t *testing.T) {
	if _, err := NewVerifier(Config{Mode: ModeNone}, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("none mode: %v", err)
	}
	if _, err := NewVerifier(Config{Mode: ModeBranchyard, Issuer: "i", Audience: "http://gw.example/mcp", JWKSURI: "file:///x"}, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("bad audience: %v", err)
	}
	if _, err := NewVerifier(Config{Mode: ModeBranchyard, Issuer: "i", Audience: "https://gw.example/mcp", JWKSURI: "file:///x", Leeway: time.Hour}, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("leeway an hour: %v", err)
	}
	v, err := NewVerifier(Config{Mode: ModeBranchyard, Issuer: "i", Audience: "https://gw.example/mcp", JWKSURI: "https://yard.example/jwks.json"}, nil)
	if err != nil || v.Config().Issuer != "i" {
		t.Errorf("https audience and JWKS: %v", err)
	}
}

func TestWWWAuthenticate(t *testing.T) {
	e := &Error{Status: 401, Code: CodeInvalidToken, Message: `Token by_purpose must be "connect".`}
	if got := e.WWWAuthenticate("http://127.0.0.1:8080/mcp"); got != `Bearer realm="mcp", error="invalid_token", error_description="Token by_purpose must be 'connect'."` {
		t.Errorf("http resource: %s", got)
	}
	if got := e.WWWAuthenticate("https://gw.example:8443/mcp?x=1"); got != `Bearer realm="mcp", error="invalid_token", error_description="Token by_purpose must be 'connect'.", resource_metadata="https://gw.example:8443/.well-known/oauth-protected-resource"` {
		t.Errorf("https resource: %s", got)
	}
	r := &Error{Status: 401, Code: CodeInvalidRequest, Message: "No bearer token was presented."}
	if got := r.WWWAuthenticate(""); got != `Bearer realm="mcp", error="invalid_request", error_description="No bearer token was presented."` {
		t.Errorf("no resource: %s", got)
	}
	if got := (&Error{Code: CodeInvalidToken, Message: "a\\b\r\nc"}).WWWAuthenticate(""); strings.ContainsAny(got, "\\\r\n") {
		t.Errorf("unsafe header value %q", got)
	}
}

func TestFingerprint(t *testing.T) {
	f := newFixture(t, &VerifierOptions{CacheSize: -1})
	fp := func(claims map[string]any) string {
		t.Helper()
		c, err := f.verify(authtest.Mint(f.key, claims))
		if err != nil {
			t.Fatal(err)
		}
		if c.Fingerprint() != fingerprint(c) {
			t.Errorf("stored and recomputed fingerprints differ")
		}
		return c.Fingerprint()
	}
	base := fp(turnClaims())
	if len(base) != 43 || strings.ContainsAny(base, "+/=") {
		t.Errorf("fingerprint %q is not unpadded base64url of 32 bytes", base)
	}
	// Same claims (even signed again, or with other claims changed): same fingerprint.
	if got := fp(turnClaims()); got != base {
		t.Error("same claims, different fingerprint")
	}
	if got := fp(with(turnClaims(), "by_tenant", "other", "iat", testNow-5, "by_models", []any{"m"})); got != base {
		t.Error("claims outside the fingerprint changed it")
	}
	for name, claims := range map[string]map[string]any{
		"jti":   with(turnClaims(), "jti", "jti-0000000000000000002"),
		"turn":  with(turnClaims(), "by_turn", "2"),
		"grant": with(turnClaims(), "by_grants", []any{map[string]any{"connector": "github", "operations": []any{"*"}, "mode": "write"}}),
		"exp":   with(turnClaims(), "exp", testNow+601),
		"sub":   with(turnClaims(), "sub", "local:other"),
	} {
		if fp(claims) == base {
			t.Errorf("a new %s kept the fingerprint", name)
		}
	}
	// A hand-built Claims value gets a fingerprint too.
	c := &Claims{Issuer: "i", Subject: "s", Expiry: time.Unix(testNow, 0)}
	if c.Fingerprint() == "" || c.Fingerprint() != (&Claims{Issuer: "i", Subject: "s", Expiry: time.Unix(testNow, 0)}).Fingerprint() {
		t.Error("hand-built fingerprint")
	}
}
