package oidc

import "github.com/anvil-dev/anvil/runtime/tokencache"

// newTokenCache remembers at most max verified tokens; a full one drops
// first the tokens past their exp.
func newTokenCache(max int) *tokencache.Cache[*verified] {
	return tokencache.New(max, func(v *verified, now float64) bool { return now >= v.claims.exp })
}
