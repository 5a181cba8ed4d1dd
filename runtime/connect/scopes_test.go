package connect_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/internal/idptest"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/connect"
)

func TestMissingScopes(t *testing.T) {
	for _, c := range []struct {
		granted string
		needed  []string
		want    []string
	}{
		{"", []string{"a"}, nil}, // unknown grant: nothing is judged missing
		{"a b", []string{"a", "b"}, nil},
		{"a", []string{"a", "b", "c", "b"}, []string{"b", "c"}},
		{"A", []string{"a"}, []string{"a"}}, // case-sensitive (RFC 6749 §3.3)
		{"read", []string{"openid", "offline_access", "profile", "email", "read"}, nil},
		// Entra ID answers the scope without its resource URI, and
		// .default stands for whatever was consented.
		{"Mail.Read User.Read", []string{"https://graph.microsoft.com/Mail.Read", "https://graph.microsoft.com/.default"}, nil},
		{"User.Read", []string{"https://graph.microsoft.com/Mail.Read"}, []string{"https://graph.microsoft.com/Mail.Read"}},
		// A last segment counts only for URIs: a path-like scope does not.
		{"read", []string{"repo/read"}, []string{"repo/read"}},
	} {
		if got := connect.MissingScopes(c.granted, c.needed); !reflect.DeepEqual(got, c.want) {
			t.Errorf("MissingScopes(%q, %q) = %q, want %q", c.granted, c.needed, got, c.want)
		}
	}
}

func TestIncrementAndOperationScopes(t *testing.T) {
	cfg := connect.Config{Scopes: []string{"openid", "music.read", "playlists.write", "offline_access"}}
	if got := connect.Increment(cfg, "music.read"); !reflect.DeepEqual(got, cfg.Scopes) {
		t.Errorf("not incremental: %q", got)
	}
	cfg.Incremental = true
	for granted, want := range map[string][]string{
		"music.read":                 {"openid", "playlists.write", "offline_access"},
		"music.read playlists.write": cfg.Scopes, // nothing missing: a full login
		"":                           cfg.Scopes, // unknown grant
	} {
		if got := connect.Increment(cfg, granted); !reflect.DeepEqual(got, want) {
			t.Errorf("Increment(%q) = %q, want %q", granted, got, want)
		}
	}
	op := &air.Auth{Type: air.AuthOAuth2AuthorizationCode, Scopes: []string{"playlists.write"}}
	if got := connect.OperationScopes(cfg, op); !reflect.DeepEqual(got, []string{"playlists.write"}) {
		t.Errorf("declared: %q", got)
	}
	if got := connect.OperationScopes(connect.Config{Scopes: []string{"x"}, ScopesFromOperator: true}, op); !reflect.DeepEqual(got, []string{"x"}) {
		t.Errorf("operator's: %q", got)
	}
	if got := connect.OperationScopes(connect.Config{NoScopeCheck: true}, op); got != nil {
		t.Errorf("check off: %q", got)
	}
}

func TestConfigForProviderQuirks(t *testing.T) {
	a := &air.Auth{Type: air.AuthOAuth2AuthorizationCode, Scopes: []string{"music.read"}, Provider: &air.Provider{
		AuthorizationEndpoint: "https://login.example/authorize", TokenEndpoint: "https://login.example/token", Resource: "https://api.example/"}}
	base := map[string]string{"ANVIL_CONNECT_MUSIC_CLIENT_ID": "id"}
	env := func(extra map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return base[k]
		}
	}
	cfg := connect.ConfigFor("music", a, env(nil))
	if cfg.Resource != "https://api.example/" || cfg.Incremental || cfg.NoScopeCheck || cfg.ScopesFromOperator || cfg.Validate() != nil {
		t.Errorf("declared: %v (%v)", cfg, cfg.Validate())
	}
	cfg = connect.ConfigFor("music", a, env(map[string]string{
		"ANVIL_CONNECT_MUSIC_OMIT_RESOURCE": "1",
		"ANVIL_CONNECT_MUSIC_EXTRA_SCOPES":  "offline_access music.read",
		"ANVIL_CONNECT_MUSIC_AUTH_PARAMS":   "prompt=consent&access_type=offline",
		"ANVIL_CONNECT_MUSIC_INCREMENTAL":   "true",
		"ANVIL_CONNECT_MUSIC_SCOPE_CHECK":   "off",
	}))
	if cfg.Resource != "" || !reflect.DeepEqual(cfg.Scopes, []string{"music.read", "offline_access"}) || cfg.AuthParams.Get("access_type") != "offline" ||
		!cfg.Incremental || !cfg.NoScopeCheck || cfg.Validate() != nil {
		t.Errorf("quirks: %v (%v)", cfg, cfg.Validate())
	}
	cfg = connect.ConfigFor("music", a, env(map[string]string{"ANVIL_CONNECT_MUSIC_SCOPES": "a,b", "ANVIL_CONNECT_MUSIC_RESOURCE": "urn:example:api"}))
	if !reflect.DeepEqual(cfg.Scopes, []string{"a", "b"}) || !cfg.ScopesFromOperator || cfg.Resource != "urn:example:api" || cfg.Validate() != nil {
		t.Errorf("operator scopes and resource: %v (%v)", cfg, cfg.Validate())
	}
	for name, c := range map[string]struct{ k, v, want string }{
		"a reserved parameter": {"ANVIL_CONNECT_MUSIC_AUTH_PARAMS", "prompt=consent&redirect_uri=https://evil.example/", "AUTH_PARAMS sets redirect_uri, which the gateway sets itself"},
		"not a query string":   {"ANVIL_CONNECT_MUSIC_AUTH_PARAMS", "a=%zz", "AUTH_PARAMS is not a query string"},
		"a flag that is not":   {"ANVIL_CONNECT_MUSIC_INCREMENTAL", "maybe", `INCREMENTAL is "maybe", not 1 or 0`},
		"a scope check value":  {"ANVIL_CONNECT_MUSIC_SCOPE_CHECK", "sometimes", `SCOPE_CHECK is "sometimes", not on or off`},
		"a relative resource":  {"ANVIL_CONNECT_MUSIC_RESOURCE", "api", "its resource indicator is not an absolute URI without a fragment"},
		"a resource fragment":  {"ANVIL_CONNECT_MUSIC_RESOURCE", "https://api.example/#x", "its resource indicator is not an absolute URI without a fragment"},
	} {
		err := connect.ConfigFor("music", a, env(map[string]string{c.k: c.v})).Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "evil.example") {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// TestLoginWithQuirksAgainstZitadel runs the flow against a real
// authorization server (zitadel's, internal/idptest): the resource
// indicator goes on the authorization request and the code exchange, and
// the access token is issued for it (its aud); the extra parameters reach
// the authorization request; the stored scope is what the provider granted.
// A second, incremental login asks only for the increment.
func TestLoginWithQuirksAgainstZitadel(t *testing.T) {
	const resource = "https://music.example/api"
	p := idptest.Start(t, idptest.Options{
		Clients: []idptest.Client{{ID: "gateway", Secret: "gateway-secret", RedirectURIs: []string{redirectURI}, Resources: []string{resource}}},
		Users:   []idptest.User{{Subject: "u-ada", Username: "ada"}},
	})
	v := newVault(t)
	svc := connect.New(v, nil)
	cfg := connect.Config{ClientID: "gateway", ClientSecret: "gateway-secret",
		AuthorizationEndpoint: p.Issuer() + "/authorize", TokenEndpoint: p.Issuer() + "/oauth/token",
		Scopes: []string{"music.read", "offline_access"}, Resource: resource, AuthParams: url.Values{"ui_locales": {"en"}}}
	login := func(req connect.StartRequest) (*url.URL, string) {
		t.Helper()
		st, err := svc.Start(req)
		if err != nil {
			t.Fatal(err)
		}
		authURL, _ := url.Parse(st.URL)
		r, err := p.Login(context.Background(), st.URL, "ada")
		if err != nil {
			t.Fatalf("login: %v", err)
		}
		conn, err := svc.Callback(context.Background(), url.Values{"state": {r.State}, "code": {r.Code}})
		if err != nil {
			t.Fatalf("callback: %v", err)
		}
		return authURL, conn.Scope
	}
	req := startReq(cfg)
	authURL, scope := login(req)
	q := authURL.Query()
	if q.Get("resource") != resource || q.Get("ui_locales") != "en" || q.Get("scope") != "music.read offline_access" {
		t.Errorf("authorization URL %s", authURL)
	}
	if scope != "music.read offline_access" {
		t.Errorf("stored scope %q", scope)
	}
	conn, err := v.Get("local:ada", "tracker", "default")
	if err != nil {
		t.Fatal(err)
	}
	if aud := tokenAudience(t, conn.AccessToken); !reflect.DeepEqual(aud, []string{resource}) {
		t.Errorf("aud %q, want the resource", aud)
	}

	// Omitting the resource (the Entra ID switch) sends none: zitadel then
	// issues the token for the client.
	noRes := cfg
	noRes.Resource = ""
	if authURL, _ := login(startReq(noRes)); authURL.Query().Has("resource") {
		t.Errorf("resource sent: %s", authURL)
	}

	// An incremental provider is asked only for what the grant lacks.
	inc := cfg
	inc.Incremental = true
	inc.Scopes = []string{"music.read", "playlists.write", "offline_access"}
	req = startReq(inc)
	req.Granted = "music.read offline_access"
	authURL, scope = login(req)
	if got := authURL.Query().Get("scope"); got != "playlists.write offline_access" {
		t.Errorf("incremental scope %q", got)
	}
	// zitadel names what it granted, which is what is stored: it does not
	// keep the earlier grant, so it is not a provider for INCREMENTAL.
	if scope != "playlists.write offline_access" {
		t.Errorf("stored scope after an incremental login: %q", scope)
	}
}

// TestIncrementalGrantKeepsEarlierScopes: a token response that names no
// scope after an incremental login stores the earlier grant with the
// increment.
func TestIncrementalGrantKeepsEarlierScopes(t *testing.T) {
	tokens := newCounter(t, 200, `{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt"}`)
	svc := connect.New(newVault(t), nil)
	cfg := connect.Config{ClientID: "c", AuthorizationEndpoint: tokens.URL + "/authorize", TokenEndpoint: tokens.URL,
		Scopes: []string{"a", "b", "c"}, Incremental: true, Resource: "https://api.example/"}
	req := connect.StartRequest{Sub: "local:ada", Connector: "tracker", Account: "default", Config: cfg, RedirectURI: redirectURI, Granted: "a"}
	st, err := svc.Start(req)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(st.URL)
	if u.Query().Get("scope") != "b c" {
		t.Errorf("scope %q", u.Query().Get("scope"))
	}
	conn, err := svc.Callback(context.Background(), url.Values{"state": {u.Query().Get("state")}, "code": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if conn.Scope != "a b c" {
		t.Errorf("stored scope %q, want the earlier grant and the increment", conn.Scope)
	}
	if form, _ := tokens.last(); form.Get("resource") != "https://api.example/" {
		t.Errorf("the code exchange carries no resource: %v", form)
	}
}

// tokenAudience reads a JWT's aud (unverified: the test checks what the
// provider issued, not who signed it).
func tokenAudience(t *testing.T, jwt string) []string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Aud any `json:"aud"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	switch a := c.Aud.(type) {
	case string:
		return []string{a}
	case []any:
		var out []string
		for _, s := range a {
			out = append(out, s.(string))
		}
		return out
	}
	return nil
}
