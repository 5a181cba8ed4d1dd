package gateway

// CompiledGrants reports how many tokens' grants a compiled gateway holds
// compiled over its operation table (for the external tests), or -1 for a
// gateway that decides each call's grant alone.
func CompiledGrants(g *Gateway) int {
	if g.fleet.grants == nil {
		return -1
	}
	return g.fleet.grants.cachedGrants()
}
