package lower

import (
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

func authSpec(security []openapi.SecurityRequirement, ops ...*openapi.Operation) *openapi.Spec {
	return &openapi.Spec{
		Kind: openapi.KindOpenAPI30, File: "api.yaml", Title: "Auth", Version: "1",
		SecuritySchemes: map[string]*openapi.SecurityScheme{
			"bearer": {Name: "bearer", Type: "http", Scheme: "bearer"},
			"basic":  {Name: "basic", Type: "http", Scheme: "basic"},
			"digest": {Name: "digest", Type: "http", Scheme: "digest"},
			"key":    {Name: "key", Type: "apiKey", In: "header", ParamName: "X-Api-Key"},
			"code": {Name: "code", Type: "oauth2", AuthorizationCode: &openapi.OAuthFlow{
				AuthorizationURL: "https://auth.example/authorize", TokenURL: "https://auth.example/token", Scopes: []string{"read", "write"}}},
			"cc":   {Name: "cc", Type: "oauth2", ClientCredentials: &openapi.OAuthFlow{TokenURL: "https://auth.example/token"}},
			"both": {Name: "both", Type: "oauth2", AuthorizationCode: &openapi.OAuthFlow{AuthorizationURL: "https://a/authorize", TokenURL: "https://a/token"}, ClientCredentials: &openapi.OAuthFlow{TokenURL: "https://a/token"}},
			"oidc": {Name: "oidc", Type: "openIdConnect", OpenIDConnectURL: "https://id.example/.well-known/openid-configuration"},
			"mtls": {Name: "mtls", Type: "mutualTLS"},
		},
		Security:   security,
		Operations: ops,
	}
}

func req(schemes ...string) openapi.SecurityRequirement {
	var r openapi.SecurityRequirement
	for _, s := range schemes {
		r = append(r, openapi.SchemeUse{Scheme: s})
	}
	return r
}

func TestServiceAuthFromSpec(t *testing.T) {
	bearer := &air.Carrier{In: "header", Name: "Authorization", Scheme: "Bearer"}
	for _, c := range []struct {
		name string
		sec  []openapi.SecurityRequirement
		want air.Auth
		code string
	}{
		{"none", nil, air.Auth{Type: "none"}, ""},
		{"empty alternative", []openapi.SecurityRequirement{{}}, air.Auth{Type: "none"}, ""},
		{"bearer", []openapi.SecurityRequirement{req("bearer")}, air.Auth{Type: "bearer", Scheme: "bearer", Carrier: bearer}, ""},
		{"basic", []openapi.SecurityRequirement{req("basic")}, air.Auth{Type: "basic", Scheme: "basic", Carrier: &air.Carrier{In: "header", Name: "Authorization", Scheme: "Basic"}}, ""},
		{"digest", []openapi.SecurityRequirement{req("digest")}, air.Auth{Type: "custom_header", Scheme: "digest", Carrier: &air.Carrier{In: "header", Name: "Authorization", Scheme: "Digest"}}, ""},
		{"api key", []openapi.SecurityRequirement{req("key")}, air.Auth{Type: "api_key", Scheme: "key", Carrier: &air.Carrier{In: "header", Name: "X-Api-Key"}}, ""},
		{"authorization code", []openapi.SecurityRequirement{{{Scheme: "code", Scopes: []string{"read"}}}}, air.Auth{Type: "oauth2_authorization_code", Scheme: "code", Carrier: bearer, Scopes: []string{"read"},
			Provider: &air.Provider{AuthorizationEndpoint: "https://auth.example/authorize", TokenEndpoint: "https://auth.example/token", Grant: "authorization_code"}}, ""},
		{"client credentials", []openapi.SecurityRequirement{req("cc")}, air.Auth{Type: "oauth2_client_credentials", Scheme: "cc", Carrier: bearer,
			Provider: &air.Provider{TokenEndpoint: "https://auth.example/token", Grant: "client_credentials"}}, ""},
		{"two flows", []openapi.SecurityRequirement{req("both")}, air.Auth{Type: "oauth2_authorization_code", Scheme: "both", Carrier: bearer,
			Provider: &air.Provider{AuthorizationEndpoint: "https://a/authorize", TokenEndpoint: "https://a/token", Grant: "authorization_code"}}, "auth/service_oauth2_ambiguous"},
		{"openid connect", []openapi.SecurityRequirement{req("oidc")}, air.Auth{Type: "oauth2_authorization_code", Scheme: "oidc", Carrier: bearer, Provider: &air.Provider{Grant: "authorization_code"}}, ""},
		{"mtls", []openapi.SecurityRequirement{req("mtls")}, air.Auth{Type: "mtls", Scheme: "mtls"}, ""},
		{"alternatives", []openapi.SecurityRequirement{req("key"), req("bearer")}, air.Auth{Type: "api_key", Scheme: "key", Carrier: &air.Carrier{In: "header", Name: "X-Api-Key"}}, "auth/alternatives_unmodeled"},
		{"combined", []openapi.SecurityRequirement{req("key", "basic")}, air.Auth{Type: "api_key", Scheme: "key", Carrier: &air.Carrier{In: "header", Name: "X-Api-Key"}}, "auth/alternatives_unmodeled"},
		{"undeclared", []openapi.SecurityRequirement{req("nope")}, air.Auth{Type: "none"}, "auth/unknown_scheme"},
	} {
		doc, ds := Lower(authSpec(c.sec), nil, nil)
		if !authEqual(doc.Service.Auth, c.want) {
			t.Errorf("%s: %+v (carrier %+v provider %+v), want %+v", c.name, doc.Service.Auth, doc.Service.Auth.Carrier, doc.Service.Auth.Provider, c.want)
		}
		var codes []string
		for _, d := range ds {
			codes = append(codes, d.Code)
		}
		if strings.Join(codes, ",") != c.code {
			t.Errorf("%s: diagnostics %v, want %q", c.name, codes, c.code)
		}
	}
}

func TestOperationAuth(t *testing.T) {
	spec := authSpec([]openapi.SecurityRequirement{req("bearer")},
		&openapi.Operation{Path: "/a", Method: "GET", OperationID: "inherits"},
		&openapi.Operation{Path: "/b", Method: "GET", OperationID: "public", HasSecurity: true},
		&openapi.Operation{Path: "/c", Method: "GET", OperationID: "sameAsService", HasSecurity: true, Security: []openapi.SecurityRequirement{req("bearer")}},
		&openapi.Operation{Path: "/d", Method: "GET", OperationID: "apiKey", HasSecurity: true, Security: []openapi.SecurityRequirement{req("key")},
			Params: []*openapi.Param{{Name: "X-Api-Key", In: "header"}, {Name: "q", In: "query"}}},
		&openapi.Operation{Path: "/e", Method: "GET", OperationID: "scoped"},
	)
	man := &manifest.Manifest{File: "anvil.yaml",
		Auth: &manifest.Auth{Type: "bearer", Principal: "user", CredentialProfile: "gh"},
		Operations: []*manifest.OperationEntry{
			{Key: "scoped", Op: &manifest.Operation{Auth: &manifest.Auth{Scopes: []string{"admin"}}}},
		}}
	doc, ds := Lower(spec, man, nil)
	if ds.HasErrors() {
		t.Fatal(text(ds))
	}
	svc := doc.Service.Auth
	if svc.Type != "bearer" || svc.Principal != "user" || svc.CredentialProfile != "gh" || svc.Carrier == nil {
		t.Errorf("service auth %+v", svc)
	}
	if doc.Operations[0].Auth != nil || doc.Operations[2].Auth != nil {
		t.Errorf("inherited auth should be nil: %+v %+v", doc.Operations[0].Auth, doc.Operations[2].Auth)
	}
	if a := doc.Operations[1].Auth; a == nil || a.Type != "none" {
		t.Errorf("public auth %+v", a)
	}
	// The top-level auth: block covers every operation that does not set
	// its own, even one whose spec names another scheme.
	d := doc.Operations[3]
	if d.Auth != nil || len(d.Input.Params) != 2 {
		t.Errorf("api key op: auth %+v params %+v; want the service's bearer auth", d.Auth, d.Input.Params)
	}
	if a := doc.Operations[4].Auth; a == nil || a.Type != "bearer" || len(a.Scopes) != 1 || a.Scopes[0] != "admin" || a.Principal != "user" {
		t.Errorf("scoped auth %+v", a)
	}
}

func TestManifestAuthBlock(t *testing.T) {
	pkce := true
	base := air.Auth{Type: "oauth2_authorization_code", Scheme: "code", Provider: &air.Provider{AuthorizationEndpoint: "https://a", TokenEndpoint: "https://t"}}
	got := applyManifestAuth(&manifest.Auth{Type: "oauth2", Scopes: []string{"repo"}, Provider: &manifest.Provider{PKCE: &pkce, RedirectURI: "https://r"}}, base)
	if got.Type != "oauth2_authorization_code" || got.Provider.AuthorizationEndpoint != "https://a" || got.Provider.PKCE == nil || got.Provider.RedirectURI != "https://r" || got.Scopes[0] != "repo" {
		t.Errorf("legacy oauth2 merge: %+v %+v", got, got.Provider)
	}
	if base.Provider.RedirectURI != "" {
		t.Error("applyManifestAuth changed its base")
	}
	got = applyManifestAuth(&manifest.Auth{Type: "oauth2"}, air.Auth{Type: "none"})
	if got.Type != "oauth2_client_credentials" {
		t.Errorf("legacy oauth2 without endpoints: %s", got.Type)
	}
	got = applyManifestAuth(&manifest.Auth{Type: "api_key", Carrier: &manifest.Carrier{In: "query", Name: "token"}}, air.Auth{Type: "bearer"})
	if got.Type != "api_key" || *got.Carrier != (air.Carrier{In: "query", Name: "token"}) {
		t.Errorf("fresh block: %+v", got)
	}
}

// flowSpec is a spec whose only scheme offers one unsupported OAuth2 flow,
// required by one operation and not by a public one.
func flowSpec(flow air.OAuthGrant) *openapi.Spec {
	s := authSpec(nil,
		&openapi.Operation{Path: "/pets", Method: "GET", OperationID: "listPets", HasSecurity: true, Security: []openapi.SecurityRequirement{req("legacy")}},
		&openapi.Operation{Path: "/pets/{id}", Method: "GET", OperationID: "getPet", HasSecurity: true, Security: []openapi.SecurityRequirement{req("legacy")}},
		&openapi.Operation{Path: "/login", Method: "GET", OperationID: "login", HasSecurity: true},
	)
	ss := &openapi.SecurityScheme{Name: "legacy", Type: "oauth2"}
	f := &openapi.OAuthFlow{AuthorizationURL: "https://auth.example/dialog", TokenURL: "https://auth.example/token"}
	if flow == "implicit" {
		ss.Implicit = f
	} else {
		ss.Password = f
	}
	s.SecuritySchemes["legacy"] = ss
	return s
}

// TestUnsupportedOAuthFlows: a scheme offering only the implicit or the
// password flow is a warning once (not one per operation) that says what
// to write; the operations that need it are blocked, even when the
// manifest approves them, and the rest of the compile stands (issue 30:
// it was an error that stopped packaging every operation). A manifest
// auth: block naming a type clears it. Before that, the implicit flow was
// lowered silently as an authorization code flow with no token endpoint.
func TestUnsupportedOAuthFlows(t *testing.T) {
	for _, flow := range []air.OAuthGrant{air.GrantImplicit, air.GrantPassword} {
		approve := &manifest.Manifest{File: "anvil.yaml", Operations: []*manifest.OperationEntry{{Key: "listPets", Op: &manifest.Operation{State: air.StateApproved}}}}
		doc, ds := Lower(flowSpec(flow), approve, nil)
		var found []string
		for _, d := range ds {
			if d.Code == CodeUnsupportedOAuthFlow {
				found = append(found, d.Message)
				if d.Level != diag.Warning {
					t.Errorf("%s: level %s", flow, d.Level)
				}
			}
		}
		if ds.HasErrors() {
			t.Errorf("%s: the compile fails:\n%s", flow, text(ds))
		}
		if len(found) != 1 || !strings.Contains(found[0], "is blocked (not served, not approvable) until anvil.yaml has an auth: block") || !strings.Contains(found[0], `"legacy"`) {
			t.Errorf("%s: diagnostics %q", flow, found)
		}
		if a := doc.Operations[0].Auth; a == nil || a.Provider == nil || a.Provider.Grant != flow {
			t.Errorf("%s: auth %+v", flow, a)
		}
		for i, want := range []air.OperationState{air.StateBlocked, air.StateBlocked, air.StateReviewRequired} {
			if got := doc.Operations[i].State; got != want {
				t.Errorf("%s: operation %s is %s, want %s", flow, doc.Operations[i].ID, got, want)
			}
		}

		man := &manifest.Manifest{File: "anvil.yaml", Auth: &manifest.Auth{Type: "oauth2_authorization_code",
			Provider: &manifest.Provider{TokenEndpoint: "https://auth.example/token", AuthorizationEndpoint: "https://auth.example/authorize"}}}
		doc, ds = Lower(flowSpec(flow), man, nil)
		if ds.HasErrors() {
			t.Errorf("%s with a manifest auth block:\n%s", flow, text(ds))
		}
		for i, op := range doc.Operations[:2] {
			a := op.Auth
			if a == nil {
				a = &doc.Service.Auth
			}
			if a.Type != "oauth2_authorization_code" || a.Provider == nil || a.Provider.Grant == flow || a.Provider.TokenEndpoint == "" {
				t.Errorf("%s: operation %d auth %+v %+v", flow, i, a, a.Provider)
			}
		}
		if a := doc.Operations[2].Auth; a == nil || a.Type != "none" {
			t.Errorf("%s: the public operation got %+v", flow, a)
		}
	}
}

// TestOperationSchemeWithoutManifest: with no top-level auth: block, an
// operation keeps the scheme its spec names.
func TestOperationSchemeWithoutManifest(t *testing.T) {
	spec := authSpec([]openapi.SecurityRequirement{req("bearer")},
		&openapi.Operation{Path: "/d", Method: "GET", OperationID: "apiKey", HasSecurity: true, Security: []openapi.SecurityRequirement{req("key")},
			Params: []*openapi.Param{{Name: "X-Api-Key", In: "header"}, {Name: "q", In: "query"}}})
	doc, ds := Lower(spec, nil, nil)
	if ds.HasErrors() {
		t.Fatal(text(ds))
	}
	d := doc.Operations[0]
	if d.Auth == nil || d.Auth.Type != "api_key" || len(d.Input.Params) != 1 || d.Input.Params[0].Name != "q" {
		t.Errorf("api key op: auth %+v params %+v", d.Auth, d.Input.Params)
	}
}

// TestApprovalNeedsReviewForPersonAuth: the contract requires reviewed_by
// and review_reason to approve an operation acting as a person; they were
// parsed and never enforced.
func TestApprovalNeedsReviewForPersonAuth(t *testing.T) {
	spec := authSpec([]openapi.SecurityRequirement{req("code")},
		&openapi.Operation{Path: "/a", Method: "GET", OperationID: "bare"},
		&openapi.Operation{Path: "/b", Method: "GET", OperationID: "reviewed"},
		&openapi.Operation{Path: "/c", Method: "GET", OperationID: "keyed", HasSecurity: true, Security: []openapi.SecurityRequirement{req("key")}},
	)
	man, md := manifest.Decode("anvil.yaml", []byte(`
operations:
  bare: {state: approved}
  reviewed: {state: approved, reviewed_by: alice, review_reason: Reads only the caller's own tickets.}
  keyed: {state: approved}
`))
	if md.HasErrors() {
		t.Fatal(text(md))
	}
	doc, ds := Lower(spec, man, nil)
	var got []string
	for _, d := range ds {
		if d.Code == "auth/review_required" {
			got = append(got, d.Pos.String()+" "+d.OperationID)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "anvil.yaml:3:") {
		t.Errorf("auth/review_required at %v", got)
	}
	if s := doc.Operations[0].State; s != "review_required" {
		t.Errorf("an unreviewed person-acting operation is %s", s)
	}
	r := doc.Operations[1]
	if r.State != "approved" || len(r.ReviewNotes) == 0 || r.ReviewNotes[len(r.ReviewNotes)-1] != "Reviewed by alice: Reads only the caller's own tickets." {
		t.Errorf("reviewed: %s %q", r.State, r.ReviewNotes)
	}
	if s := doc.Operations[2].State; s != "approved" {
		t.Errorf("an api-key operation is %s", s)
	}
}
