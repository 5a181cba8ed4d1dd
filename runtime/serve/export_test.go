package serve

import (
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/handler"
)

// CompiledGrants reports how many tokens' grants a gateway holds compiled
// over its operation table (for the external tests), or -1 for a gateway
// that decides each call's grant alone.
func CompiledGrants(g *Gateway) int { return g.Fleet().CompiledGrants() }

// NewFromDir serves the workspace directory ws, as anvil serve mcp does
// (tests).
func NewFromDir(cfg Config, ws string, o *GatewayOptions) (*Gateway, error) {
	f, err := fleet.Load(ws)
	if err != nil {
		return nil, err
	}
	return NewGateway(cfg, f, o)
}

// NewGenerated serves a generated workspace, as a generated gateway does
// (tests).
func NewGenerated(cfg Config, ws *handler.Workspace, o *GatewayOptions) (*Gateway, error) {
	f, err := fleet.FromWorkspace(ws)
	if err != nil {
		return nil, err
	}
	return NewGateway(cfg, f, o)
}
