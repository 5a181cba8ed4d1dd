package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"
)

// Normalize checks that c may be stored (coordinates present, a known kind
// and status) and sets an empty Status to StatusActive. Errors wrap
// ErrInvalid. Put calls it; so does every other backend that stores
// connections (runtime/store), so all of them accept the same records.
func (c *Connection) Normalize() error {
	if c == nil {
		return fmt.Errorf("%w: nil connection", ErrInvalid)
	}
	if c.Sub == "" || c.Connector == "" || c.Account == "" {
		return fmt.Errorf("%w: sub, connector and account are required", ErrInvalid)
	}
	if c.Kind != KindOAuth && c.Kind != KindStatic {
		return fmt.Errorf("%w: kind must be %q or %q", ErrInvalid, KindOAuth, KindStatic)
	}
	if c.Status == "" {
		c.Status = StatusActive
	}
	if c.Status != StatusActive && c.Status != StatusNeedsReconnect {
		return fmt.Errorf("%w: status must be %q or %q", ErrInvalid, StatusActive, StatusNeedsReconnect)
	}
	return nil
}

// Sealer turns connections into vault record bytes and back with a vault
// key, without a directory: the bytes are exactly a record file's content
// (AES-256-GCM, the coordinates as additional authenticated data), so a
// database backend that keeps them holds only ciphertext, and a record can
// move between a directory and a database unchanged. Safe for concurrent use.
type Sealer struct {
	s *Store // only aead and blk are set
}

// NewSealer returns a Sealer for key, which must be KeySize bytes (LoadKey).
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: the vault key must be %d bytes", ErrKey, KeySize)
	}
	blk, err := aes.NewCipher(key) // copies the key into its schedule
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	aead, err := cipher.NewGCM(blk)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	return &Sealer{s: &Store{aead: aead, blk: blk}}, nil
}

// Seal encrypts c (which the caller has normalised) into record bytes.
// Errors wrap ErrInvalid or ErrStorage and never hold a secret.
func (x *Sealer) Seal(c *Connection) ([]byte, error) { return x.s.seal(c) }

// Open decrypts record bytes that must belong to the coordinates; like
// Store.Get, it fails with an error wrapping ErrUnreadable when they do not
// decrypt, do not decode, or name other coordinates.
func (x *Sealer) Open(data []byte, sub, connector, account string) (*Connection, error) {
	coords := Coordinates(sub, connector, account)
	c, err := x.s.open(data, &coords)
	if err != nil {
		return nil, fmt.Errorf("%w: connector %s, account %s: %s", ErrUnreadable, connector, account, err)
	}
	return c, nil
}
