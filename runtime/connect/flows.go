package connect

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"
)

// Pending-flow limits (anvil-reference §h "Limits and redirects").
const (
	// MaxPending is how many authorization-code flows may be in progress.
	MaxPending = 1000
	// FlowTTL is how long a started flow's state stays valid.
	FlowTTL = 10 * time.Minute
)

// flow is a started authorization-code flow waiting for its callback. It
// binds the state to the person who started it.
type flow struct {
	Sub       string
	Connector string
	Account   string
	// RedirectURI is the exact redirect_uri the authorization URL carried;
	// the token request repeats it.
	RedirectURI string
	// Config is the connector's OAuth client when the flow started.
	Config Config
	// ExpiresAt is when the state stops being accepted.
	ExpiresAt time.Time

	verifier string // the PKCE code verifier; never leaves the gateway except to the token endpoint
}

// flows is the table of pending flows, keyed by state.
type flows struct {
	mu      sync.Mutex
	pending map[string]*flow
	max     int
}

func newFlows(max int) *flows {
	return &flows{pending: map[string]*flow{}, max: max}
}

// add stores f under a fresh state unless the table is full even after
// dropping the flows that expired by now.
func (t *flows) add(f *flow, now time.Time) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) >= t.max {
		t.sweepLocked(now)
		if len(t.pending) >= t.max {
			return "", false
		}
	}
	for {
		state := randomToken()
		if _, taken := t.pending[state]; !taken {
			t.pending[state] = f
			return state, true
		}
	}
}

// take removes and returns the flow for state: a state is deleted on first
// sight, whether or not it is still valid. It returns nil for an unknown or
// expired state.
func (t *flows) take(state string, now time.Time) *flow {
	if state == "" {
		return nil
	}
	t.mu.Lock()
	f, ok := t.pending[state]
	delete(t.pending, state)
	t.mu.Unlock()
	if !ok || !now.Before(f.ExpiresAt) {
		return nil
	}
	return f
}

// sweep drops expired flows and returns how many it dropped.
func (t *flows) sweep(now time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sweepLocked(now)
}

func (t *flows) sweepLocked(now time.Time) int {
	n := 0
	for state, f := range t.pending {
		if !now.Before(f.ExpiresAt) {
			delete(t.pending, state)
			n++
		}
	}
	return n
}

func (t *flows) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending)
}

// randomToken returns 32 random bytes, base64url without padding: the form
// of both state and the PKCE verifier. crypto/rand.Read does not fail.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
