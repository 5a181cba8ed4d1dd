package main

import "testing"

// TestOperatorDoc runs docs/operator.md as written (see walkthrough): make
// build, the mock upstream, keys, the Branchyard-mode gateway, a minted
// token, connect, a first confirmed write, metrics and a reload, all on
// loopback, with only PORT, UPSTREAM_PORT and METRICS_PORT set to free
// ports.
func TestOperatorDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds anvil and runs a gateway")
	}
	walkthrough{doc: "../../docs/operator.md", tools: []string{"curl"}, ports: []string{"PORT", "UPSTREAM_PORT", "METRICS_PORT"}}.run(t)
}
