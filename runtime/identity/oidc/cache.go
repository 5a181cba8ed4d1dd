package oidc

import (
	"crypto/sha256"
	"sync"
)

// tokenCache remembers verified tokens; it never holds more than max.
type tokenCache struct {
	mu  sync.Mutex
	max int
	m   map[string]*verified
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, m: make(map[string]*verified)}
}

// cacheKey is a token itself when short, else its SHA-256 (after a NUL no
// token holds), so the cache's memory stays bounded.
func cacheKey(tok string) string {
	if len(tok) <= 4096 {
		return tok
	}
	sum := sha256.Sum256([]byte(tok))
	return "\x00" + string(sum[:])
}

func (c *tokenCache) get(tok string) *verified {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[cacheKey(tok)]
}

func (c *tokenCache) remove(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, cacheKey(tok))
}

// put remembers v. A full cache first drops the tokens expired at now,
// then, if still full, an arbitrary eighth of its entries.
func (c *tokenCache) put(tok string, v *verified, now float64) {
	k := cacheKey(tok)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok && len(c.m) >= c.max {
		for key, e := range c.m {
			if now >= e.claims.exp {
				delete(c.m, key)
			}
		}
		for key := range c.m {
			if len(c.m) < c.max-c.max/8 {
				break
			}
			delete(c.m, key)
		}
	}
	c.m[k] = v
}
