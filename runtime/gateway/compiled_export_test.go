package gateway

// CompiledGrants reports how many tokens' grants a compiled gateway holds
// compiled over its operation table (for the external tests).
func CompiledGrants(g *Gateway) int {
	for _, t := range g.fleet.Tools {
		if t.compiled != nil {
			return t.compiled.table.cachedGrants()
		}
	}
	return -1
}
