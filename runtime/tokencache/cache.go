// Package tokencache remembers what verifying a bearer token found, so a
// token presented again is not verified again (both inbound identities use
// it: Branchyard's verifier and the OIDC identity). Its memory is bounded:
// at most the given number of entries, each keyed by the token itself when
// short, else by its SHA-256. It imports nothing of Anvil.
package tokencache

import (
	"crypto/sha256"
	"sync"
)

// MaxKeyedToken is the longest token used as its own key; a longer one is
// keyed by its SHA-256 after a NUL, which no compact JWT or opaque token
// the identities accept contains, so the two kinds of key never meet.
const MaxKeyedToken = 4096

// Key is a token's key in a Cache.
func Key(token string) string {
	if len(token) <= MaxKeyedToken {
		return token
	}
	sum := sha256.Sum256([]byte(token))
	return "\x00" + string(sum[:])
}

// Cache maps token keys to V; it never holds more than its max entries.
type Cache[V any] struct {
	mu      sync.Mutex
	max     int
	expired func(v V, now float64) bool
	m       map[string]V
}

// New returns a cache of at most max entries; expired says whether an
// entry is past use at now (Unix seconds), so a full cache drops those
// first.
func New[V any](max int, expired func(v V, now float64) bool) *Cache[V] {
	return &Cache[V]{max: max, expired: expired, m: make(map[string]V)}
}

// Get returns the entry for key.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

// Remove forgets key.
func (c *Cache[V]) Remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

// Put remembers v under key. A full cache first drops the entries expired
// at now, then, if still full, an arbitrary eighth of its entries, so a
// flood of distinct tokens costs one sweep per eighth, not one per token.
func (c *Cache[V]) Put(key string, v V, now float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		for k, e := range c.m {
			if c.expired(e, now) {
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
	c.m[key] = v
}

// Len is the number of entries.
func (c *Cache[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
