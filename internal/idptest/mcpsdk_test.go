package idptest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/anvil-dev/anvil/internal/idptest"
)

// The MCP Go SDK's OAuth client logs in against the provider as an MCP
// host does: from a 401's resource_metadata, through RFC 9728 protected
// resource metadata and RFC 8414 metadata, to code + PKCE with the MCP
// server as its RFC 8707 resource, a pre-registered public client, and
// Login as the AuthorizationCodeFetcher. The token it gets is addressed to
// the MCP server. (The resource server here only publishes metadata: the
// gateway's side is not this package's.)
func TestMCPGoSDKClientLogsIn(t *testing.T) {
	p := idptest.Start(t, options())
	mux := http.NewServeMux()
	rs := httptest.NewServer(mux)
	defer rs.Close()
	resource := rs.URL + "/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             resource,
		AuthorizationServers: []string{p.Issuer()},
		ScopesSupported:      []string{"tools:read"},
	}))
	if err := p.AddClient(idptest.Client{ID: "sdk-host", RedirectURIs: []string{publicRedirect}, Resources: []string{resource}}); err != nil {
		t.Fatal(err)
	}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient: &oauthex.ClientCredentials{ClientID: "sdk-host"},
		RedirectURL:         publicRedirect,
		RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			r, err := p.Login(ctx, args.URL, "alice")
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: r.Code, State: r.State}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, resource, nil)
	unauthorized := &http.Response{
		StatusCode: http.StatusUnauthorized,
		Header:     http.Header{"Www-Authenticate": {`Bearer resource_metadata="` + rs.URL + `/.well-known/oauth-protected-resource/mcp"`}},
		Body:       io.NopCloser(strings.NewReader("")),
	}
	if err := h.Authorize(ctx(t), req, unauthorized); err != nil {
		t.Fatal(err)
	}
	ts, err := h.TokenSource(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	c := mustVerify(t, p, tok.AccessToken)
	if !slices.Equal(audience(c), []string{resource}) || !sameScopes(c["scope"], "tools:read offline_access") || c["sub"] != "user-alice" || tok.RefreshToken == "" {
		t.Errorf("token from the SDK's flow: %v (refresh token %t)", c, tok.RefreshToken != "")
	}
}

// sameScopes compares a scope claim with want as sets: the SDK's client
// joins the scopes it asks for in no fixed order.
func sameScopes(claim any, want string) bool {
	got, _ := claim.(string)
	a, b := strings.Fields(got), strings.Fields(want)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
