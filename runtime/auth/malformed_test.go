package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/auth/authtest"
)

func b64s(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestMalformedTokens: each malformed header or token is a 401 with the right
// code, and nothing panics.
func TestMalformedTokens(t *testing.T) {
	f := newFixture(t, nil)
	key := f.key
	second := authtest.NewKey("by-second0000")
	payload, _ := json.Marshal(turnClaims())
	hdr := `{"alg":"EdDSA","typ":"JWT","kid":"` + key.Kid + `"}`
	good := authtest.SignRaw(key, []byte(hdr), payload)
	if _, err := f.verify(good); err != nil {
		t.Fatalf("SignRaw baseline: %v", err)
	}
	parts := strings.Split(good, ".")

	tests := []struct {
		name   string
		header string // the whole Authorization value
		code   string
	}{
		// The Authorization header.
		{"empty header", "", CodeInvalidRequest},
		{"scheme only", "Bearer", CodeInvalidRequest},
		{"scheme and spaces", "Bearer   ", CodeInvalidRequest},
		{"basic scheme", "Basic dXNlcjpwYXNz", CodeInvalidRequest},
		{"no scheme", good, CodeInvalidRequest},
		{"scheme glued", "Bearer" + good, CodeInvalidRequest},
		{"token type prefix", "Token " + good, CodeInvalidRequest},
		// Token shape.
		{"one part", "Bearer " + parts[0], CodeInvalidToken},
		{"two parts", "Bearer " + parts[0] + "." + parts[1], CodeInvalidToken},
		{"four parts", "Bearer " + good + ".x", CodeInvalidToken},
		{"empty parts", "Bearer ..", CodeInvalidToken},
		{"padded base64", "Bearer " + parts[0] + "=." + parts[1] + "." + parts[2], CodeInvalidToken},
		{"standard base64 alphabet", "Bearer " + parts[0] + "." + parts[1] + ".+" + parts[2][1:], CodeInvalidToken},
		{"base64 slash", "Bearer " + parts[0] + "." + parts[1] + "./" + parts[2][1:], CodeInvalidToken},
		{"bad base64 header", "Bearer !!!." + parts[1] + "." + parts[2], CodeInvalidToken},
		{"bad base64 signature", "Bearer " + parts[0] + "." + parts[1] + ".%%%", CodeInvalidToken},
		{"space inside", "Bearer " + parts[0] + ". " + parts[1] + "." + parts[2], CodeInvalidToken},
		{"line break inside", "Bearer " + parts[0] + ".\n" + parts[1] + "." + parts[2], CodeInvalidToken},
		{"empty signature", "Bearer " + parts[0] + "." + parts[1] + ".", CodeInvalidToken},
		{"truncated signature", "Bearer " + parts[0] + "." + parts[1] + "." + parts[2][:20], CodeInvalidToken},
		{"huge token", "Bearer " + parts[0] + "." + strings.Repeat("A", MaxTokenBytes) + "." + parts[2], CodeInvalidToken},
		// Headers.
		{"header not JSON", "Bearer " + authtest.SignRaw(key, []byte(`{alg:EdDSA}`), payload), CodeInvalidToken},
		{"header an array", "Bearer " + authtest.SignRaw(key, []byte(`["EdDSA"]`), payload), CodeInvalidToken},
		{"header a string", "Bearer " + authtest.SignRaw(key, []byte(`"EdDSA"`), payload), CodeInvalidToken},
		{"header null", "Bearer " + authtest.SignRaw(key, []byte(`null`), payload), CodeInvalidToken},
		{"header empty", "Bearer " + authtest.SignRaw(key, []byte(``), payload), CodeInvalidToken},
		{"alg none", "Bearer " + b64s(`{"alg":"none","typ":"JWT","kid":"`+key.Kid+`"}`) + "." + parts[1] + ".", CodeInvalidToken},
		{"alg none signed", "Bearer " + authtest.SignRaw(key, []byte(`{"alg":"none","kid":"`+key.Kid+`"}`), payload), CodeInvalidToken},
		{"alg HS256", "Bearer " + authtest.SignRaw(key, []byte(`{"alg":"HS256","kid":"`+key.Kid+`"}`), payload), CodeInvalidToken},
		{"alg ES256", "Bearer " + authtest.SignRaw(key, []byte(`{"alg":"ES256","kid":"`+key.Kid+`"}`), payload), CodeInvalidToken},
		{"alg lower case", "Bearer " + authtest.SignRaw(key, []byte(`{"alg":"eddsa","kid":"`+key.Kid+`"}`), payload), CodeInvalidToken},
		{"alg missing", "Bearer " + authtest.SignRaw(key, []byte(`{"kid":"`+key.Kid+`"}`), payload), CodeInvalidToken},
		{"alg a number", "Bearer " + authtest.SignRaw(key, []byte(`{"alg":1,"kid":"`+key.Kid+`"}`), payload), CodeInvalidToken},
		// Issue 15, finding 10: an empty kid is not "no kid" (it picked the set's only key).
		{"kid empty", "Bearer " + authtest.SignRaw(key, []byte(`{"alg":"EdDSA","typ":"JWT","kid":""}`), payload), CodeInvalidToken},
		{"kid a number", "Bearer " + authtest.SignRaw(key, []byte(`{"alg":"EdDSA","kid":7}`), payload), CodeInvalidToken},
		{"unknown crit", "Bearer " + authtest.SignRaw(key, []byte(`{"alg":"EdDSA","kid":"`+key.Kid+`","crit":["exp"],"exp":1}`), payload), CodeInvalidToken},
		{"unknown kid", "Bearer " + authtest.SignRaw(second, []byte(`{"alg":"EdDSA","kid":"by-second0000"}`), payload), CodeInvalidToken},
		// Payloads.
		{"payload an array", "Bearer " + authtest.SignRaw(key, []byte(hdr), []byte(`[1,2]`)), CodeInvalidToken},
		{"payload a string", "Bearer " + authtest.SignRaw(key, []byte(hdr), []byte(`"claims"`)), CodeInvalidToken},
		{"payload null", "Bearer " + authtest.SignRaw(key, []byte(hdr), []byte(`null`)), CodeInvalidToken},
		{"payload a number", "Bearer " + authtest.SignRaw(key, []byte(hdr), []byte(`42`)), CodeInvalidToken},
		{"payload empty", "Bearer " + authtest.SignRaw(key, []byte(hdr), []byte(``)), CodeInvalidToken},
		{"payload truncated JSON", "Bearer " + authtest.SignRaw(key, []byte(hdr), payload[:len(payload)-1]), CodeInvalidToken},
		{"payload trailing data", "Bearer " + authtest.SignRaw(key, []byte(hdr), append(append([]byte{}, payload...), "{}"...)), CodeInvalidToken},
		{"payload empty object", "Bearer " + authtest.SignRaw(key, []byte(hdr), []byte(`{}`)), CodeInvalidToken},
		{"exp infinite", "Bearer " + authtest.SignRaw(key, []byte(hdr), []byte(`{"iss":"`+testIssuer+`","aud":"`+testAudience+`","sub":"s","by_grants":[],"exp":1e999}`)), CodeInvalidToken},
		{"iat infinite", "Bearer " + authtest.SignRaw(key, []byte(hdr), []byte(`{"iss":"`+testIssuer+`","aud":"`+testAudience+`","sub":"s","by_grants":[],"exp":1750000600,"iat":-1e999}`)), CodeInvalidToken},
		{"exp null", "Bearer " + authtest.SignRaw(key, []byte(hdr), []byte(`{"iss":"`+testIssuer+`","aud":"`+testAudience+`","sub":"s","by_grants":[],"exp":null}`)), CodeInvalidToken},
		{"sub null", "Bearer " + authtest.SignRaw(key, []byte(hdr), []byte(`{"iss":"`+testIssuer+`","aud":"`+testAudience+`","sub":null,"by_grants":[],"exp":1750000600}`)), CodeInvalidToken},
		{"duplicate sub, last empty", "Bearer " + authtest.SignRaw(key, []byte(hdr), []byte(`{"iss":"`+testIssuer+`","aud":"`+testAudience+`","sub":"s","sub":"","by_grants":[],"exp":1750000600}`)), CodeInvalidToken},
	}
	if len(tests) < 20 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := f.v.Verify(context.Background(), tt.header)
			if err == nil {
				t.Fatalf("accepted: %+v", c)
			}
			e := wantAuthError(t, err, tt.code, "")
			if tt.code == CodeInvalidRequest && e.Message != "No bearer token was presented." {
				t.Errorf("message %q", e.Message)
			}
			if strings.Contains(e.Message, parts[2]) || strings.Contains(e.Message, parts[1]) {
				t.Errorf("message leaks the token: %q", e.Message)
			}
		})
	}
}

func TestBearerScheme(t *testing.T) {
	f := newFixture(t, nil)
	tok := authtest.Mint(f.key, turnClaims())
	for _, h := range []string{"Bearer " + tok, "bearer " + tok, "BEARER " + tok, "BeArEr  " + tok, "Bearer\t" + tok, "  Bearer " + tok + "  "} {
		if _, err := f.v.Verify(context.Background(), h); err != nil {
			t.Errorf("%q: %v", h[:10], err)
		}
	}
}
