// Package vault stores a person's upstream connections (OAuth tokens and
// static secrets) encrypted on disk, one file per (sub, connector, account).
//
// The on-disk format is the contract's (anvil-reference §e "Vault") so a
// directory written by the earlier TypeScript gateway stays readable:
//
//   - the file name is sha256hex(coords) + ".json", where coords is
//     JSON.stringify([sub, connector, account]) (see Coordinates);
//   - the content is {"v":1,"iv":<base64 12 bytes>,"tag":<base64 16 bytes>,"ct":<base64>},
//     AES-256-GCM with coords as additional authenticated data;
//   - the plaintext is the JSON of a Connection.
//
// Records are written to a temporary 0600 file in the vault directory and
// renamed into place, so a reader sees the old record or the new one, never a
// partial one; Open removes temporary files a crash left behind (older than
// StaleTempAge). Only regular files are read, without blocking (a FIFO or
// device in the directory is refused, never waited on). A Store is safe for
// concurrent use by many goroutines; it does
// not coordinate with other processes writing the same directory beyond the
// atomic rename.
package vault

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/anvil-dev/anvil/runtime/canon"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Sentinel errors. Every error the package returns wraps one of them.
var (
	// ErrNotFound: no record exists for the coordinates.
	ErrNotFound = errors.New("vault: no connection stored")
	// ErrUnreadable: a record exists but will not decrypt, is not valid JSON,
	// has an unknown version, or names other coordinates.
	ErrUnreadable = errors.New("vault: connection record is unreadable")
	// ErrKey: the vault key is missing, malformed or too widely readable.
	ErrKey = errors.New("vault: bad key")
	// ErrInvalid: a connection passed to Put is incomplete or malformed.
	ErrInvalid = errors.New("vault: invalid connection")
	// ErrStorage: the vault directory or a record could not be created or written.
	ErrStorage = errors.New("vault: storage error")
)

// Connection kinds.
const (
	KindOAuth  = "oauth"
	KindStatic = "static"
)

// Connection statuses.
const (
	StatusActive         = "active"
	StatusNeedsReconnect = "needs_reconnect"
)

// RefreshSkew is how close to its expiry an OAuth access token is refreshed.
const RefreshSkew = 60 * time.Second

// recordVersion is the only record format version.
const recordVersion = 1

// maxRecordSize bounds how much of a record file is read.
const maxRecordSize = 1 << 20

// Connection is one stored connection: the plaintext of a vault record. Its
// JSON names and key order are the contract's. Timestamps are ISO 8601 UTC
// strings with milliseconds (FormatTime); ExpiresAt is epoch milliseconds.
//
// String and GoString leave the secrets out, so a Connection printed with
// fmt never shows them.
type Connection struct {
	Sub          string `json:"sub"`
	Connector    string `json:"connector"`
	Account      string `json:"account"`
	Kind         string `json:"kind"`   // KindOAuth or KindStatic
	Status       string `json:"status"` // StatusActive or StatusNeedsReconnect
	Secret       string `json:"secret,omitempty"`
	AccessToken  string `json:"accessToken,omitempty"`
	RefreshToken string `json:"refreshToken,omitempty"`
	ExpiresAt    *int64 `json:"expiresAt,omitempty"`
	Scope        string `json:"scope,omitempty"`
	CreatedAt    string `json:"createdAt"`
	UpdatedAt    string `json:"updatedAt"`
}

// String describes the connection without its secrets.
func (c Connection) String() string {
	return fmt.Sprintf("vault.Connection{sub=%q connector=%q account=%q kind=%q status=%q}",
		c.Sub, c.Connector, c.Account, c.Kind, c.Status)
}

// GoString describes the connection without its secrets.
func (c Connection) GoString() string { return c.String() }

// Active reports whether the connection may be used (status active).
func (c *Connection) Active() bool { return c != nil && c.Status == StatusActive }

// Expiry returns the access token's expiry and whether one is recorded.
func (c *Connection) Expiry() (time.Time, bool) {
	if c == nil || c.ExpiresAt == nil {
		return time.Time{}, false
	}
	return time.UnixMilli(*c.ExpiresAt), true
}

// NeedsRefresh reports whether an OAuth connection's access token expires
// within RefreshSkew of now (or has no access token). Static connections and
// tokens without an expiry never need a refresh.
func (c *Connection) NeedsRefresh(now time.Time) bool {
	if c == nil || c.Kind != KindOAuth {
		return false
	}
	if c.AccessToken == "" {
		return true
	}
	exp, ok := c.Expiry()
	if !ok {
		return false
	}
	return !now.Add(RefreshSkew).Before(exp)
}

// Summary is the secret-free view of a connection that GET /connect/status
// lists. Its keys are camelCase, in the contract's order.
type Summary struct {
	Connector string `json:"connector"`
	Account   string `json:"account"`
	Kind      string `json:"kind"`
	Status    string `json:"status"`
	ExpiresAt *int64 `json:"expiresAt,omitempty"`
	Scope     string `json:"scope,omitempty"`
	UpdatedAt string `json:"updatedAt"`
}

// Summary returns the connection without its secrets.
func (c *Connection) Summary() Summary {
	return Summary{
		Connector: c.Connector, Account: c.Account, Kind: c.Kind, Status: c.Status,
		ExpiresAt: c.ExpiresAt, Scope: c.Scope, UpdatedAt: c.UpdatedAt,
	}
}

// FormatTime renders t as JavaScript's Date.prototype.toISOString does:
// UTC, milliseconds, "Z".
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// Coordinates returns JSON.stringify([sub, connector, account]): the AAD of
// the record and the input of its file name.
func Coordinates(sub, connector, account string) string {
	b := make([]byte, 0, len(sub)+len(connector)+len(account)+10)
	b = append(b, '[')
	b = canon.AppendString(b, sub)
	b = append(b, ',')
	b = canon.AppendString(b, connector)
	b = append(b, ',')
	b = canon.AppendString(b, account)
	b = append(b, ']')
	return string(b)
}

// FileName returns the record file name for the coordinates:
// sha256hex(Coordinates(...)) + ".json".
func FileName(sub, connector, account string) string {
	sum := sha256.Sum256([]byte(Coordinates(sub, connector, account)))
	return hex.EncodeToString(sum[:]) + ".json"
}

// record is the on-disk envelope of one connection.
type record struct {
	V   int    `json:"v"`
	IV  string `json:"iv"`
	Tag string `json:"tag"`
	CT  string `json:"ct"`
}

// Store is an encrypted connection store in one directory.
type Store struct {
	dir  string
	aead cipher.AEAD
	blk  cipher.Block
	now  func() time.Time

	mu    sync.Mutex // serialises writers (Put, Delete, SetStatus)
	locks keyedMutex // per-connection locks for callers (Lock)
}

// DefaultDir returns the default vault directory, ~/.anvil/gateway/vault, or
// "" when the home directory is unknown (Open then refuses the empty path).
func DefaultDir() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".anvil", "gateway", "vault")
}

// Open returns the store in dir, creating the directory with mode 0700 (and
// tightening an existing directory that group or others can access). key
// must be KeySize bytes, as LoadKey returns; Open keeps its own copy.
func Open(dir string, key []byte) (*Store, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: the vault key must be %d bytes", ErrKey, KeySize)
	}
	if dir == "" {
		return nil, fmt.Errorf("%w: no vault directory (set ANVIL_VAULT_DIR)", ErrStorage)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: creating vault directory %s: %w", ErrStorage, dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: vault directory %s: %w", ErrStorage, dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: vault directory %s is not a directory", ErrStorage, dir)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("%w: vault directory %s has mode %04o and cannot be set to 0700: %w",
				ErrStorage, dir, fi.Mode().Perm(), err)
		}
	}
	removeStaleTemps(dir, time.Now())
	blk, err := aes.NewCipher(bytes.Clone(key))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	aead, err := cipher.NewGCM(blk)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	return &Store{dir: dir, aead: aead, blk: blk, now: time.Now}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Get returns the connection stored for the coordinates. It returns an error
// wrapping ErrNotFound when there is no record and ErrUnreadable when the
// record cannot be decrypted or decoded or names other coordinates.
func (s *Store) Get(sub, connector, account string) (*Connection, error) {
	path := filepath.Join(s.dir, FileName(sub, connector, account))
	data, err := readLimited(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: connector %s, account %s", ErrNotFound, connector, account)
		}
		return nil, fmt.Errorf("%w: connector %s, account %s: %w", ErrUnreadable, connector, account, err)
	}
	coords := Coordinates(sub, connector, account)
	c, err := s.open(data, &coords)
	if err != nil {
		return nil, fmt.Errorf("%w: connector %s, account %s: %s", ErrUnreadable, connector, account, err)
	}
	return c, nil
}

// Put stores c under its coordinates, replacing any previous record. It sets
// c.UpdatedAt to now and c.CreatedAt to the previous record's creation time
// (or now when there is none or it is unreadable); an empty Status becomes
// StatusActive.
func (s *Store) Put(c *Connection) error {
	if err := c.Normalize(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := FormatTime(s.now())
	c.CreatedAt = now
	if old, err := s.Get(c.Sub, c.Connector, c.Account); err == nil && old.CreatedAt != "" {
		c.CreatedAt = old.CreatedAt
	}
	c.UpdatedAt = now
	return s.write(c)
}

// SetStatus changes the status of a stored connection (for example to
// StatusNeedsReconnect after a provider refused a refresh) and returns it.
func (s *Store) SetStatus(sub, connector, account, status string) (*Connection, error) {
	if status != StatusActive && status != StatusNeedsReconnect {
		return nil, fmt.Errorf("%w: status must be %q or %q", ErrInvalid, StatusActive, StatusNeedsReconnect)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.Get(sub, connector, account)
	if err != nil {
		return nil, err
	}
	c.Status = status
	c.UpdatedAt = FormatTime(s.now())
	if err := s.write(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Delete removes the record for the coordinates. Deleting a missing record
// returns an error wrapping ErrNotFound.
func (s *Store) Delete(sub, connector, account string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := os.Remove(filepath.Join(s.dir, FileName(sub, connector, account)))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: connector %s, account %s", ErrNotFound, connector, account)
	}
	if err != nil {
		return fmt.Errorf("%w: deleting connection: %w", ErrStorage, err)
	}
	return nil
}

// List returns sub's connections sorted by connector, then account. Records
// that cannot be read, or that belong to someone else, are skipped.
//
// A record's coordinates are its AAD, which List does not know in advance: it
// decrypts each record's ciphertext without authentication only to read the
// coordinates it claims, then opens the record again with those coordinates
// as AAD, so every returned connection is fully authenticated.
func (s *Store) List(sub string) ([]Connection, error) {
	out, _, err := s.scan(func(c *Connection) bool { return c.Sub == sub }, 0)
	return out, err
}

// ListAll returns every readable connection of every person, as List reads
// them, sorted by connector, then account, then subject: at most max of
// them (the first max records in directory order; max <= 0 is no limit),
// and whether records were left out. It is for the gateway's own reports
// (which grants lack scopes), never for a caller.
func (s *Store) ListAll(max int) ([]Connection, bool, error) {
	return s.scan(func(*Connection) bool { return true }, max)
}

// scan reads the records keep accepts, at most max of them (<= 0: all).
func (s *Store) scan(keep func(*Connection) bool, max int) ([]Connection, bool, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, false, fmt.Errorf("%w: listing vault directory: %w", ErrStorage, err)
	}
	var out []Connection
	more := false
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !isRecordName(name) {
			continue
		}
		if max > 0 && len(out) >= max {
			more = true
			break
		}
		data, err := readLimited(filepath.Join(s.dir, name))
		if err != nil {
			continue
		}
		c, err := s.open(data, nil)
		if err != nil || !keep(c) || FileName(c.Sub, c.Connector, c.Account) != name {
			continue
		}
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Connector != out[j].Connector {
			return out[i].Connector < out[j].Connector
		}
		if out[i].Account != out[j].Account {
			return out[i].Account < out[j].Account
		}
		return out[i].Sub < out[j].Sub
	})
	return out, more, nil
}

// Lock takes the per-connection lock for the coordinates and returns its
// release function. The gateway holds it around an OAuth refresh so one
// connection is refreshed once at a time. It is independent of the store's
// own write serialisation; do not hold two connection locks at once.
func (s *Store) Lock(sub, connector, account string) (unlock func()) {
	return s.locks.lock(Coordinates(sub, connector, account))
}

// isRecordName reports whether name is <64 lowercase hex>.json.
func isRecordName(name string) bool {
	if len(name) != 64+len(".json") || !strings.HasSuffix(name, ".json") {
		return false
	}
	for i := 0; i < 64; i++ {
		c := name[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// errNotRegular refuses a record or key path that is not a regular file.
var errNotRegular = errors.New("not a regular file")

// readLimited reads a record file, refusing anything but a regular file
// without blocking on it (openRegular).
func readLimited(path string) ([]byte, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRecordSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRecordSize {
		return nil, errors.New("record is too large")
	}
	return data, nil
}

// open decodes and decrypts a record. With coords nil the coordinates are
// taken from the (then authenticated) plaintext. The returned error text
// never includes record content.
func (s *Store) open(data []byte, coords *string) (*Connection, error) {
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, errors.New("not a JSON record")
	}
	if rec.V != recordVersion {
		return nil, fmt.Errorf("unknown record version %d", rec.V)
	}
	iv, err1 := decodeB64(rec.IV)
	tag, err2 := decodeB64(rec.Tag)
	ct, err3 := decodeB64(rec.CT)
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, errors.New("record fields are not base64")
	}
	if len(iv) != s.aead.NonceSize() || len(tag) != s.aead.Overhead() {
		return nil, errors.New("record iv or tag has the wrong length")
	}
	var aad string
	if coords != nil {
		aad = *coords
	} else {
		// Recover the claimed coordinates from the unauthenticated
		// plaintext; the Open below authenticates them.
		var claimed Connection
		if err := json.Unmarshal(s.ctrDecrypt(iv, ct), &claimed); err != nil {
			return nil, errors.New("record does not decrypt")
		}
		aad = Coordinates(claimed.Sub, claimed.Connector, claimed.Account)
	}
	sealed := make([]byte, 0, len(ct)+len(tag))
	sealed = append(append(sealed, ct...), tag...)
	plain, err := s.aead.Open(nil, iv, sealed, []byte(aad))
	if err != nil {
		return nil, errors.New("record does not decrypt")
	}
	defer clear(plain)
	var c Connection
	if err := json.Unmarshal(plain, &c); err != nil {
		return nil, errors.New("record plaintext is not a connection")
	}
	if Coordinates(c.Sub, c.Connector, c.Account) != aad {
		return nil, errors.New("record names other coordinates")
	}
	return &c, nil
}

// ctrDecrypt decrypts a GCM ciphertext without checking its tag: GCM's
// keystream for a 96-bit IV is AES-CTR starting at counter IV||00000002.
func (s *Store) ctrDecrypt(iv, ct []byte) []byte {
	counter := make([]byte, aes.BlockSize)
	copy(counter, iv)
	counter[aes.BlockSize-1] = 2
	out := make([]byte, len(ct))
	cipher.NewCTR(s.blk, counter).XORKeyStream(out, ct)
	return out
}

func decodeB64(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// write encrypts c and renames it into place. The caller holds s.mu.
func (s *Store) write(c *Connection) error {
	data, err := s.seal(c)
	if err != nil {
		return err
	}
	return writeAtomic(s.dir, FileName(c.Sub, c.Connector, c.Account), data)
}

// seal encrypts c into the bytes of a record file.
func (s *Store) seal(c *Connection) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("%w: encoding connection: %w", ErrInvalid, err)
	}
	plain := bytes.TrimRight(buf.Bytes(), "\n")
	defer clear(buf.Bytes())
	iv := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(iv); err != nil {
		return nil, fmt.Errorf("%w: random iv: %w", ErrStorage, err)
	}
	coords := Coordinates(c.Sub, c.Connector, c.Account)
	sealed := s.aead.Seal(nil, iv, plain, []byte(coords))
	ct, tag := sealed[:len(sealed)-s.aead.Overhead()], sealed[len(sealed)-s.aead.Overhead():]
	data, err := json.Marshal(record{
		V:   recordVersion,
		IV:  base64.StdEncoding.EncodeToString(iv),
		Tag: base64.StdEncoding.EncodeToString(tag),
		CT:  base64.StdEncoding.EncodeToString(ct),
	})
	if err != nil {
		return nil, fmt.Errorf("%w: encoding record: %w", ErrStorage, err)
	}
	return data, nil
}

// tempPrefix starts the name of a record being written (writeAtomic).
const tempPrefix = ".tmp-"

// StaleTempAge is how old a temporary record file must be for Open to remove
// it as left over from a crash; a younger one may belong to another process
// writing the same directory right now.
const StaleTempAge = time.Minute

// removeStaleTemps removes the temporary record files (.tmp-*) in dir that a
// crashed writer left behind, those last modified StaleTempAge before now or
// earlier. Errors are ignored: a leftover file is only clutter, never read.
func removeStaleTemps(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) || e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err == nil && !fi.ModTime().After(now.Add(-StaleTempAge)) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// writeAtomic writes data to a 0600 temporary file in dir and renames it to name.
func writeAtomic(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("%w: creating temporary record: %w", ErrStorage, err)
	}
	tmpName := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmpName)
		return fmt.Errorf("%w: writing record: %w", ErrStorage, err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmpName)
		return fmt.Errorf("%w: writing record: %w", ErrStorage, err)
	}
	if err := os.Rename(tmpName, filepath.Join(dir, name)); err != nil {
		os.Remove(tmpName)
		return fmt.Errorf("%w: renaming record: %w", ErrStorage, err)
	}
	return nil
}

// keyedMutex hands out one mutex per key, dropping it when unused.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyedEntry{}
	}
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Unlock()
			k.mu.Lock()
			e.refs--
			if e.refs == 0 {
				delete(k.m, key)
			}
			k.mu.Unlock()
		})
	}
}
