package connect_test

import (
	"testing"

	"github.com/anvil-dev/anvil/internal/oauthtest"
)

// authServer is the loopback OAuth 2.0 authorization server
// (internal/oauthtest).
type authServer = oauthtest.Server

const (
	testClientID     = "anvil-gateway"
	testClientSecret = "s3cret-client-value"
)

// newAuthServer starts the server. redirectBase is the client's registered
// redirect origin; with issuer, the server names itself as iss on every
// authorization response.
func newAuthServer(t *testing.T, redirectBase string, issuer bool) *authServer {
	t.Helper()
	a := oauthtest.New(t, oauthtest.Client{ID: testClientID, Secret: testClientSecret, RedirectBase: redirectBase, User: "person-1"})
	if issuer {
		a.SetIssuer(a.URL)
	}
	return a
}
