package main

import (
	"fmt"
	"path/filepath"

	"github.com/anvil-dev/anvil/gen/github-mini/workspace"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/serve"
)

// startGenerated serves the generated github-mini gateway (gen/github-mini,
// linked in through its registration table) with the generic gateway's
// configuration — the same audience, JWKS, vault and connection — on its
// own listener, audit log and state file (a gateway process holds its state
// file, so two gateways in one process cannot share one), its upstream
// pointed at the mock through ANVIL_UPSTREAM_GITHUB_URL. It returns the base
// URL and a stop function.
func startGenerated(cfg serve.Config, mockURL, auditFile string) (string, func(), error) {
	cfg.AuditFile = auditFile
	env := map[string]string{fleet.UpstreamURLEnv("github"): mockURL,
		"ANVIL_STATE_FILE": filepath.Join(filepath.Dir(auditFile), "generated-state.db")}
	cfg.Getenv = func(k string) string { return env[k] }
	f, err := fleet.FromWorkspace(workspace.Workspace())
	if err != nil {
		return "", nil, err
	}
	return serveGateway(cfg, f) // procs.go
}

// printGenerated compares the generated gateway's rows with the bare proxy
// (the targets: at least 0.8x its throughput, at most 1.15x its
// single-client p50) and with the generic gateway's rows.
func printGenerated(targets []target, results []result) {
	idx := map[string]int{}
	for i, t := range targets {
		idx[t.name] = i
	}
	bare, ok := idx["bare proxy"]
	if !ok {
		return
	}
	fmt.Println()
	for _, pair := range [][2]string{{"generated /call", "gateway /call"}, {"generated MCP", "gateway MCP"}} {
		gi, ok1 := idx[pair[0]]
		ci, ok2 := idx[pair[1]]
		if !ok1 || !ok2 {
			continue
		}
		g, c, b := results[gi], results[ci], results[bare]
		tp, lat := g.rps/b.rps, float64(g.p50)/float64(b.p50)
		fmt.Printf("%-15s vs the proxy: throughput %.2fx (issue target >= 0.80) %s, p50 %.2fx (issue target <= 1.15) %s; vs the generic gateway: throughput %.2fx, p50 %.2fx, p99 %.2fx\n",
			pair[0], tp, verdict(tp >= 0.8), lat, verdict(lat <= 1.15), g.rps/c.rps, float64(g.p50)/float64(c.p50), float64(g.p99)/float64(c.p99))
	}
}
