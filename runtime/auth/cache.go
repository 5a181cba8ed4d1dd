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

// tokenCache remembers verified tokens by cacheKey. It never holds more
// than max entries.
type tokenCache struct {
	mu  sync.Mutex
	max int
	m   map[string]*cacheEntry
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, m: make(map[string]*cacheEntry)}
}

// maxKeyedToken is the longest token used as its own cache key; a longer
// one is keyed by its SHA-256, so the cache's memory stays bounded.
const maxKeyedToken = 4096

// cacheKey is the key of a token (compact JWT characters only, which never
// include the NUL that starts a hashed key).
func cacheKey(token string) string {
	if len(token) <= maxKeyedToken {
		return token
	}
	sum := sha256.Sum256([]byte(token))
	return "\x00" + string(sum[:])
}

func (c *tokenCache) get(sum string) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[sum]
}

func (c *tokenCache) remove(sum string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, sum)
}

// put stores an entry. When the cache is full it first drops expired
// tokens, then, if still full, an arbitrary eighth of the entries.
func (c *tokenCache) put(sum string, ent *cacheEntry, now, leeway float64) {
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
