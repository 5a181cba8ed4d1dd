package vault

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// KeySize is the length in bytes of a vault key (AES-256).
const KeySize = 32

// KeyFileEnv names the environment variable that points at the key file. It
// appears in LoadKey's error messages so an operator knows what to fix.
const KeyFileEnv = "ANVIL_VAULT_KEY_FILE"

// LoadKey reads the vault key from path.
//
// The file must be a regular file that neither its group nor others can
// access (mode & 0o077 == 0). It holds 32 raw bytes, 64 hexadecimal
// characters, or the base64 encoding (standard or URL alphabet, padded or
// not) of 32 bytes; whitespace around the text forms is ignored. Errors wrap
// ErrKey, name ANVIL_VAULT_KEY_FILE and never include the file's content.
func LoadKey(path string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: %s is not set", ErrKey, KeyFileEnv)
	}
	f, fi, err := openRegular(path)
	if errors.Is(err, errNotRegular) {
		return nil, fmt.Errorf("%w: %s %s is not a regular file", ErrKey, KeyFileEnv, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s cannot be opened: %w", ErrKey, KeyFileEnv, path, err)
	}
	defer f.Close()
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s %s must not be readable by group or others (mode %04o); run chmod 600 on it",
			ErrKey, KeyFileEnv, path, perm)
	}
	// A key file is tiny; refuse anything large without reading it all.
	if fi.Size() > 4096 {
		return nil, fmt.Errorf("%w: %s %s must hold a 32-byte key (32 raw bytes, 64 hex characters, or base64); the file is too large",
			ErrKey, KeyFileEnv, path)
	}
	raw, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s cannot be read: %w", ErrKey, KeyFileEnv, path, err)
	}
	defer clear(raw)
	key, ok := ParseKey(raw)
	if !ok {
		return nil, fmt.Errorf("%w: %s %s must hold a 32-byte key (32 raw bytes, 64 hex characters, or base64)",
			ErrKey, KeyFileEnv, path)
	}
	return key, nil
}

// ParseKey decodes a key file's content: exactly 32 raw bytes, or (after
// trimming surrounding whitespace) 32 raw bytes, 64 hexadecimal characters or
// base64 (standard or URL alphabet, padded or not) of 32 bytes. It reports
// false for anything else.
func ParseKey(content []byte) ([]byte, bool) {
	if len(content) == KeySize {
		return bytes.Clone(content), true
	}
	t := bytes.TrimSpace(content)
	if len(t) == KeySize {
		return bytes.Clone(t), true
	}
	if len(t) == 2*KeySize {
		k := make([]byte, KeySize)
		if _, err := hex.Decode(k, t); err == nil {
			return k, true
		}
	}
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding,
	} {
		if enc.DecodedLen(len(t)) < KeySize || enc.DecodedLen(len(t)) > KeySize+2 {
			continue
		}
		k := make([]byte, enc.DecodedLen(len(t)))
		n, err := enc.Decode(k, t)
		if err == nil && n == KeySize {
			return k[:n], true
		}
		clear(k)
	}
	return nil, false
}

// WriteNewKey writes a new vault key to path: 32 bytes from crypto/rand as
// 64 hexadecimal characters and a newline (a form LoadKey reads, and one
// that survives copy and paste), mode 0600. The bytes go to a synced
// temporary sibling first, which is then linked into place, so path never
// holds a partial key, and an existing path is never replaced, even one
// created meanwhile: the error then wraps fs.ErrExist. The parent
// directory is created 0700 when missing.
func WriteNewKey(path string) error {
	var key [KeySize]byte
	if _, err := rand.Read(key[:]); err != nil {
		return err
	}
	text := []byte(hex.EncodeToString(key[:]) + "\n")
	clear(key[:])
	defer clear(text)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after the link: removes the spare name only
	_, werr := f.Write(text)
	if err := errors.Join(werr, f.Chmod(0o600), f.Sync(), f.Close()); err != nil { // Chmod: whatever the umask
		return err
	}
	return os.Link(tmp, path) // fails when path exists
}

// DevKeyFile is the development vault key a gateway in auth mode none
// creates when no key file is configured: vault.key beside the vault
// directory dir (~/.anvil/gateway/vault.key for the default directory).
func DevKeyFile(dir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(dir)), "vault.key")
}

// EnsureKey loads the key at path (LoadKey's checks apply: a file others
// may read is refused), first writing a new one there with WriteNewKey
// when no file exists. It reports whether it created the key.
func EnsureKey(path string) ([]byte, bool, error) {
	created := false
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := WriteNewKey(path); err == nil {
			created = true
		} else if !errors.Is(err, fs.ErrExist) { // another process made it meanwhile: read that one
			return nil, false, fmt.Errorf("%w: creating the development key %s: %w", ErrKey, path, err)
		}
	}
	key, err := LoadKey(path)
	return key, created, err
}
