package idptest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/anvil-dev/anvil/internal/idptest"
)

// A provider with an MCP host (a public client) and one user; the host
// logs the user in with code + PKCE, asking for the gateway as its
// resource, and a resource server verifies the access token against the
// JWKS.
func Example() {
	p, err := idptest.New(idptest.Options{
		Clients: []idptest.Client{{
			ID:           "mcp-host",
			RedirectURIs: []string{"http://127.0.0.1:7777/callback"},
			Resources:    []string{"http://127.0.0.1:9/mcp"},
		}},
		Users: []idptest.User{{Subject: "u-1", Username: "ada", Groups: []string{"eng"}}},
	})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	tok, err := p.AuthCode(context.Background(), idptest.AuthCodeRequest{
		ClientID:  "mcp-host",
		Username:  "ada",
		Scopes:    []string{"tools:read"},
		Resources: []string{"http://127.0.0.1:9/mcp"},
	})
	if err != nil {
		panic(err)
	}

	resp, err := http.Get(p.JWKSURL())
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var jwks jose.JSONWebKeySet
	if err := json.NewDecoder(resp.Body).Decode(&jwks); err != nil {
		panic(err)
	}
	jws, err := jose.ParseSigned(tok.AccessToken, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		panic(err)
	}
	payload, err := jws.Verify(jwks.Key(jws.Signatures[0].Header.KeyID)[0])
	if err != nil {
		panic(err)
	}
	var claims struct {
		Sub    string   `json:"sub"`
		Aud    []string `json:"aud"`
		Scope  string   `json:"scope"`
		Groups []string `json:"groups"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		panic(err)
	}
	fmt.Println(claims.Sub, claims.Aud, claims.Scope, claims.Groups)
	// Output: u-1 [http://127.0.0.1:9/mcp] tools:read [eng]
}
