package connect

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Exclusive is what a Vault shared by several gateway replicas adds: a
// section that at most one caller per connection runs at a time across all
// of them (runtime/store's RefreshExclusive). When the Vault implements it,
// AccessToken refreshes under it instead of the process-local Lock, so 50
// concurrent calls on an expiring token across replicas cause one refresh.
type Exclusive interface {
	RefreshExclusive(ctx context.Context, sub, connector, account string, fn func(ctx context.Context) error) error
}

// SharedFlows keeps pending flows where every replica sees them, so that a
// flow started on one replica completes on another (runtime/store's
// PutFlow and TakeFlow). Put stores payload under state until expires (an
// error for a taken state or a full table); Take removes and returns it,
// at most once across replicas, and fails for an unknown or expired state.
type SharedFlows interface {
	PutFlow(ctx context.Context, state, sub string, expires time.Time, payload []byte) error
	TakeFlow(ctx context.Context, state string) ([]byte, error)
}

// ErrFlowsFull is what SharedFlows.Put wraps when the shared table is full.
var ErrFlowsFull = errors.New("connect: too many pending flows")

// sharedTimeout bounds one shared-table operation of a flow.
const sharedTimeout = 10 * time.Second

// flowRecord is a pending flow's stored form (the store seals it).
type flowRecord struct {
	Sub         string    `json:"sub"`
	Connector   string    `json:"connector"`
	Account     string    `json:"account"`
	RedirectURI string    `json:"redirect_uri"`
	Config      Config    `json:"config"`
	ExpiresAt   time.Time `json:"expires_at"`
	Verifier    string    `json:"verifier"`
	Kept        string    `json:"kept,omitempty"`
}

// putShared stores f in the shared table under a fresh state.
func (s *Service) putShared(f *flow) (string, error) {
	b, err := json.Marshal(flowRecord{Sub: f.Sub, Connector: f.Connector, Account: f.Account, RedirectURI: f.RedirectURI,
		Config: f.Config, ExpiresAt: f.ExpiresAt, Verifier: f.verifier, Kept: f.Kept})
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	state := randomToken()
	return state, s.shared.PutFlow(ctx, state, f.Sub, f.ExpiresAt, b)
}

// takeShared removes and returns the shared flow for state (nil when
// unknown, used or expired).
func (s *Service) takeShared(ctx context.Context, state string) (*flow, error) {
	if state == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, sharedTimeout)
	defer cancel()
	b, err := s.shared.TakeFlow(ctx, state)
	if err != nil {
		return nil, err
	}
	var r flowRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if !s.now().Before(r.ExpiresAt) {
		return nil, nil
	}
	return &flow{Sub: r.Sub, Connector: r.Connector, Account: r.Account, RedirectURI: r.RedirectURI,
		Config: r.Config, ExpiresAt: r.ExpiresAt, verifier: r.Verifier, Kept: r.Kept}, nil
}

// ErrFlowNotFound is what SharedFlows.Take wraps for an unknown, used or
// expired state.
var ErrFlowNotFound = errors.New("connect: no such pending flow")
