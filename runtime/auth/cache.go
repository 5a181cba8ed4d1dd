package auth

import (
	"crypto/sha256"
	"sync"
)

// cacheEntry is a verified token: its claims, and the kid and exact key
// material that verified it.
type cacheEntry struct {
	claims *Claims
	kid    string
	key    jwk
	times  tokenTimes
}

// tokenCache remembers verified tokens by the SHA-256 of the token. It never
// holds more than max entries.
type tokenCache struct {
	mu  sync.Mutex
	max int
	m   map[[sha256.Size]byte]*cacheEntry
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, m: make(map[[sha256.Size]byte]*cacheEntry)}
}

func (c *tokenCache) get(sum [sha256.Size]byte) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[sum]
}

func (c *tokenCache) remove(sum [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, sum)
}

// put stores an entry. When the cache is full it first drops expired
// tokens, then, if still full, an arbitrary eighth of the entries.
func (c *tokenCache) put(sum [sha256.Size]byte, ent *cacheEntry, now, leeway float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[sum]; !ok && len(c.m) >= c.max {
		for k, e := range c.m {
			if now >= e.times.exp+leeway {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < c.max-c.max/8 {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[sum] = ent
}

// len is the number of remembered tokens.
func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
