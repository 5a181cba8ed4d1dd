package auth

import "github.com/anvil-dev/anvil/runtime/tokencache"

// cacheEntry is a verified token: its claims, and the kid and exact key
// material that verified it.
type cacheEntry struct {
	claims *Claims
	kid    string
	key    jwk
	times  tokenTimes
}

// maxKeyedToken is the longest token used as its own cache key.
const maxKeyedToken = tokencache.MaxKeyedToken

// newTokenCache remembers at most max verified tokens; a full one drops
// first the tokens past exp and the leeway (seconds).
func newTokenCache(max int, leeway float64) *tokencache.Cache[*cacheEntry] {
	return tokencache.New(max, func(e *cacheEntry, now float64) bool { return now >= e.times.exp+leeway })
}
