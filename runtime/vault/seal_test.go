package vault

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A record sealed without a directory is byte-for-byte a record file: the
// directory store reads it, and the Sealer reads what the store wrote.
func TestSealerRoundTripsWithStore(t *testing.T) {
	key := make([]byte, KeySize)
	for i := range key {
		key[i] = byte(i)
	}
	dir := t.TempDir()
	st, err := Open(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	x, err := NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	c := &Connection{Sub: "u", Connector: "gh", Account: "default", Kind: KindStatic, Secret: "s3cret"}
	if err := c.Normalize(); err != nil {
		t.Fatal(err)
	}
	data, err := x.Seal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName("u", "gh", "default")), data, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get("u", "gh", "default")
	if err != nil || got.Secret != "s3cret" || got.Status != StatusActive {
		t.Fatalf("store read of sealed record: %v %v", got, err)
	}
	if err := st.Put(&Connection{Sub: "u", Connector: "gh", Account: "b", Kind: KindStatic, Secret: "two"}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, FileName("u", "gh", "b")))
	if err != nil {
		t.Fatal(err)
	}
	back, err := x.Open(raw, "u", "gh", "b")
	if err != nil || back.Secret != "two" {
		t.Fatalf("sealer read of store record: %v %v", back, err)
	}
	// The coordinates are the AAD: the same bytes under others do not open.
	if _, err := x.Open(raw, "u", "gh", "a"); !errors.Is(err, ErrUnreadable) {
		t.Fatalf("foreign coordinates: %v", err)
	}
	if _, err := NewSealer(key[:5]); !errors.Is(err, ErrKey) {
		t.Fatalf("short key: %v", err)
	}
	if err := (&Connection{Sub: "u", Connector: "gh", Account: "a", Kind: "x"}).Normalize(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad kind: %v", err)
	}
}
