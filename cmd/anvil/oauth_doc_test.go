package main

import "testing"

// TestOAuthDoc runs docs/oauth.md as written (see walkthrough): the real
// authorization server of internal/idptest/cmd/idp, the music API's
// resource server, compile, approve, a gateway, a login, a call on a
// refreshed token, a newly approved operation refused as
// reconnect_required, a second login and the call going through, with only
// PORT, IDP_PORT and UPSTREAM_PORT set to free ports and no ANVIL_*
// variable but those the doc sets.
func TestOAuthDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds anvil and the provider, runs a gateway")
	}
	walkthrough{doc: "../../docs/oauth.md", tools: []string{"curl", "python3"}, ports: []string{"PORT", "IDP_PORT", "UPSTREAM_PORT"},
		minOutput: 8, dropAnvilEnv: true}.run(t)
}
