package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/anvil-dev/anvil/internal/idptest"
	"github.com/anvil-dev/anvil/runtime/auth"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/serve"
)

// The OIDC rows: the generic gateway in inbound auth mode oidc, beside the
// same gateway in branchyard mode. A real OpenID provider (internal/idptest)
// runs in this process and issues each person an RS256 access token for the
// gateway's resource (an hour long, so none expires during the run); the
// gateway verifies them against its JWKS and gives them the policy's read
// grant. Everything else is as for the branchyard gateway — the workspace,
// the mock, a vault (its own directory, so its own state store) and an
// audit log — so the difference between the rows is the cost of the OIDC
// identity per call.

// oidcResource is the OIDC gateway's resource URI (its tokens' aud).
const oidcResource = "http://127.0.0.1/oidc/mcp"

// startOIDC starts the provider and the OIDC gateway (a process with
// -procs), connects people persons' github and returns the gateway's base
// URL and one access token per person.
func startOIDC(st *stack, procs *procOptions, cfg serve.Config, ws, dir string, people int, client *http.Client) (string, []string, error) {
	users := make([]idptest.User, people)
	for i := range users {
		users[i] = idptest.User{Subject: fmt.Sprintf("loadgen-%d", i), Groups: []string{"eng"}}
	}
	p, err := idptest.New(idptest.Options{
		AccessTokenTTL: time.Hour,
		Scopes:         []string{"tools:read"},
		Clients:        []idptest.Client{{ID: "loadgen-host", RedirectURIs: []string{"http://127.0.0.1:7777/cb"}, Resources: []string{oidcResource}}},
		Users:          users,
	})
	if err != nil {
		return "", nil, err
	}
	st.onStop(func() { _ = p.Close() })
	policy := filepath.Join(dir, "policy.yaml")
	doc := fmt.Sprintf(`version: 1
issuers: [{issuer: %q}]
rules:
  - name: readers
    match: {groups: [eng], scopes: ["tools:read"]}
    grants: [{connector: github, operations: ["*"], mode: read}]
    connect: true
`, p.Issuer())
	if err := os.WriteFile(policy, []byte(doc), 0o644); err != nil {
		return "", nil, err
	}
	cfg.Auth = auth.Config{Mode: auth.ModeOIDC, Audience: oidcResource, PolicyFile: policy, Leeway: auth.DefaultLeeway}
	cfg.AuditFile = filepath.Join(dir, "audit-oidc.jsonl")
	// Its own vault directory in a directory of its own, so it has its own
	// state store and ledger (state.db sits beside the vault directory), as
	// the branchyard gateway has.
	cfg.VaultDir = filepath.Join(dir, "oidc", "vault")
	var base string
	if procs != nil {
		env := []string{
			"ANVIL_INBOUND_AUTH_MODE=oidc", "ANVIL_INBOUND_AUDIENCE=" + oidcResource, "ANVIL_INBOUND_POLICY_FILE=" + policy,
			"ANVIL_VAULT_KEY_FILE=" + cfg.VaultKeyFile, "ANVIL_VAULT_DIR=" + cfg.VaultDir,
			"ANVIL_ALLOWED_HOSTS=" + cfg.AllowedHosts, "ANVIL_AUDIT_FILE=" + cfg.AuditFile,
		}
		if base, err = startGateway(st, procs.anvil, ws, env); err != nil { // procs.go
			return "", nil, fmt.Errorf("%s in oidc mode: %w", procs.anvil, err)
		}
	} else {
		f, err := fleet.Load(ws)
		if err != nil {
			return "", nil, err
		}
		var stop func()
		if base, stop, err = serveGateway(cfg, f); err != nil { // procs.go
			return "", nil, fmt.Errorf("the oidc gateway: %w", err)
		}
		st.onStop(stop)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tokens := make([]string, people)
	for i, u := range users {
		tok, err := p.AuthCode(ctx, idptest.AuthCodeRequest{ClientID: "loadgen-host", Username: u.Subject, Scopes: []string{"tools:read"}, Resources: []string{oidcResource}})
		if err != nil {
			return "", nil, fmt.Errorf("a token for %s: %w", u.Subject, err)
		}
		tokens[i] = tok.AccessToken
		if err := expect200(client, "POST", base+"/connect/api-key", http.Header{"Authorization": {"Bearer " + tok.AccessToken},
			"Content-Type": {"application/json"}}, `{"connector":"github","api_key":"`+upstreamPAT+`"}`, nil); err != nil {
			return "", nil, fmt.Errorf("connecting %s: %w", u.Subject, err)
		}
	}
	return base, tokens, nil
}

// printOIDC sets the OIDC rows beside the branchyard gateway's: the
// throughput ratio, and what one call costs more (p50 and p99, single
// client).
func printOIDC(targets []target, results []result) {
	idx := map[string]int{}
	for i, t := range targets {
		idx[t.name] = i
	}
	fmt.Println("\noidc mode beside branchyard mode (the same gateway and workspace, each with its own vault and audit log):")
	for _, pair := range [][2]string{{"oidc /call", "gateway /call"}, {"oidc MCP", "gateway MCP"}} {
		oi, ok1 := idx[pair[0]]
		bi, ok2 := idx[pair[1]]
		if !ok1 || !ok2 {
			continue
		}
		o, b := results[oi], results[bi]
		fmt.Printf("%-15s throughput %.2fx branchyard's; p50 %s vs %s (%+.0fµs per call), p99 %s vs %s\n",
			pair[0], o.rps/b.rps, fmtDur(o.p50), fmtDur(b.p50), float64(o.p50-b.p50)/float64(time.Microsecond), fmtDur(o.p99), fmtDur(b.p99))
	}
}
