package main

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/anvil-dev/anvil/runtime/policy"
)

const identityDoc = "../../docs/identity.md"

// TestIdentityDoc runs docs/identity.md as written (walkthrough): a real OpenID
// provider (cmd/idp), the mock upstream, a gateway in auth mode oidc with
// the page's policy, anvil policy check, the connect route with the
// person's own token, and a scripted MCP host (internal/mcphost, the MCP Go
// SDK's OAuth client) that discovers the provider from the 401, signs in
// with code and PKCE, calls a tool and steps up for a write.
func TestIdentityDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds anvil and the provider, runs a gateway")
	}
	walkthrough{doc: identityDoc, tools: []string{"curl"}, ports: []string{"PORT", "UPSTREAM_PORT", "IDP_PORT"}}.run(t)
}

// TestIdentityDocPolicies: every ```yaml example of docs/identity.md is a
// policy the gateway takes.
func TestIdentityDocPolicies(t *testing.T) {
	doc, err := os.ReadFile(identityDoc)
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 2 {
		t.Fatalf("%d yaml examples", len(blocks))
	}
	for i, b := range blocks {
		if _, err := policy.Decode(fmt.Sprintf("example %d", i+1), []byte(b[1])); err != nil {
			t.Errorf("%v", err)
		}
	}
}
