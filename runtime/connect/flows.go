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
	// MaxPendingPerSubject is how many of them one person (the connect
	// token's subject) may have, so that one token cannot fill the table.
	MaxPendingPerSubject = 10
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
	// Kept is the scope of the grant an incremental login adds to (its
	// Config.Scopes are then only the increment); "" otherwise.
	Kept string

	verifier string // the PKCE code verifier; never leaves the gateway except to the token endpoint
}

// flows is the table of pending flows, keyed by state.
type flows struct {
	mu        sync.Mutex
	pending   map[string]*flow
	bySub     map[string]int // pending flows per subject
	max       int
	maxPerSub int
}

func newFlows(max, maxPerSub int) *flows {
	return &flows{pending: map[string]*flow{}, bySub: map[string]int{}, max: max, maxPerSub: maxPerSub}
}

// Why add refused a flow.
const (
	addedFlow = iota
	tableFull
	subjectFull
)

// add stores f under a fresh state unless the table, or f's subject's share
// of it, is full even after dropping the flows that expired by now.
func (t *flows) add(f *flow, now time.Time) (string, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	full := func() int {
		switch {
		case t.bySub[f.Sub] >= t.maxPerSub:
			return subjectFull
		case len(t.pending) >= t.max:
			return tableFull
		}
		return addedFlow
	}
	if full() != addedFlow {
		t.sweepLocked(now)
		if why := full(); why != addedFlow {
			return "", why
		}
	}
	for {
		state := randomToken()
		if _, taken := t.pending[state]; !taken {
			t.pending[state] = f
			t.bySub[f.Sub]++
			return state, addedFlow
		}
	}
}

// removeLocked deletes the flow under state.
func (t *flows) removeLocked(state string, f *flow) {
	delete(t.pending, state)
	if t.bySub[f.Sub]--; t.bySub[f.Sub] <= 0 {
		delete(t.bySub, f.Sub)
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
	if ok {
		t.removeLocked(state, f)
	}
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
			t.removeLocked(state, f)
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
