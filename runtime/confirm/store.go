package confirm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/anvil-dev/anvil/runtime/store"
)

// StoreSpender records spent nonces in the gateway's state store, as a
// pending flow under "confirm:<nonce>" that expires with the state: the
// store lets at most one put of a flow state succeed across every replica
// sharing it, so an answer runs once on whichever replica it reaches.
type StoreSpender struct{ St store.Store }

// Spend records nonce, or returns ErrSpent.
func (s StoreSpender) Spend(ctx context.Context, nonce, subject string, expires time.Time) error {
	sum := sha256.Sum256([]byte(subject))
	err := s.St.PutFlow(ctx, "confirm:"+nonce, store.Flow{Sub: "confirm:" + hex.EncodeToString(sum[:16]), ExpiresAt: expires})
	if errors.Is(err, store.ErrExists) {
		return ErrSpent
	}
	return err
}
