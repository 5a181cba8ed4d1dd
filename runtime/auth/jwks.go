package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anvil-dev/anvil/runtime/fswatch"
	"github.com/anvil-dev/anvil/runtime/jsonfetch"
)

// JWKS limits and timings.
const (
	// MaxJWKSBytes is the largest key set read, from a file or over https.
	MaxJWKSBytes = 256 << 10
	// JWKSCacheTTL is how long an https key set is used before it is fetched
	// again.
	JWKSCacheTTL = 5 * time.Minute
	// DefaultRefreshInterval is the default shortest time between two fetches
	// of an https key set forced by unknown kids.
	DefaultRefreshInterval = time.Second
	// fetchTimeout bounds one https fetch of a key set (connect, headers
	// and body).
	fetchTimeout = 10 * time.Second
)

var errJWKSUnreadable = errors.New("key set unreadable")

// jwk is one key of a set, reduced to the members verification looks at.
// Two jwk values are equal exactly when they verify the same way.
type jwk struct {
	kid, kty, crv, alg, use, x string
	malformed                  bool // a member had the wrong JSON type
}

// keySet is a parsed JWKS.
type keySet struct {
	keys []jwk
}

// parseKeySet parses {"keys":[…]}. Keys that are not objects are kept as
// malformed entries (they count toward "the only key" but never verify).
func parseKeySet(b []byte) (*keySet, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil || doc == nil {
		return nil, errJWKSUnreadable
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(doc["keys"], &raws); err != nil || raws == nil {
		return nil, errJWKSUnreadable
	}
	set := &keySet{keys: make([]jwk, 0, len(raws))}
	for _, r := range raws {
		var obj map[string]json.RawMessage
		var k jwk
		if err := json.Unmarshal(r, &obj); err != nil || obj == nil {
			k.malformed = true
		}
		for _, m := range []struct {
			name string
			dst  *string
		}{{"kid", &k.kid}, {"kty", &k.kty}, {"crv", &k.crv}, {"alg", &k.alg}, {"use", &k.use}, {"x", &k.x}} {
			v, ok := obj[m.name]
			if !ok {
				continue
			}
			if !isJSONString(v) || json.Unmarshal(v, m.dst) != nil {
				k.malformed = true
				*m.dst = ""
			}
		}
		set.keys = append(set.keys, k)
	}
	return set, nil
}

func isJSONString(v json.RawMessage) bool {
	v = bytes.TrimLeft(v, " \t\r\n")
	return len(v) > 0 && v[0] == '"'
}

// errUnknownKid means the set has no key for the token's kid.
var errUnknownKid = errors.New("unknown kid")

// lookup picks the key for a token: by kid, or, with no kid, the only key
// when there is exactly one.
func (s *keySet) lookup(kid string) (jwk, error) {
	if kid == "" {
		if len(s.keys) != 1 {
			return jwk{}, invalidToken("Token has no kid and the key set does not hold exactly one key.")
		}
		return s.keys[0], nil
	}
	for _, k := range s.keys {
		if k.kid == kid && !k.malformed {
			return k, nil
		}
	}
	for _, k := range s.keys {
		if k.kid == kid {
			return k, nil
		}
	}
	return jwk{}, errUnknownKid
}

// publicKey checks a selected key against the token's algorithm and returns
// its Ed25519 public key.
func (k jwk) publicKey() ([]byte, *Error) {
	switch {
	case k.malformed:
		return nil, invalidToken("Token signing key is malformed.")
	case k.alg != "" && k.alg != algEdDSA:
		return nil, invalidToken("Token signing key is not for EdDSA.")
	case k.kty != "OKP" || k.crv != "Ed25519":
		return nil, invalidToken("Token signing key is not an Ed25519 key.")
	case k.use != "" && k.use != "sig":
		return nil, invalidToken("Token signing key is not a signature key.")
	}
	x, err := base64.RawURLEncoding.DecodeString(k.x)
	if err != nil || len(x) != 32 {
		return nil, invalidToken("Token signing key is malformed.")
	}
	return x, nil
}

// keySource yields the current key set.
type keySource interface {
	// current returns the key set to use now.
	current(ctx context.Context) (*keySet, error)
	// refresh returns a fresher set after an unknown kid, or nil when none
	// can be had (a file is always read fresh; an https set is fetched at most
	// once per refresh interval).
	refresh(ctx context.Context) (*keySet, error)
}

// fileSource reads a JWKS file. Each call stats the path once and compares
// the file's identity (device and inode), size and modification time with
// those of the bytes it parsed last: an atomic replacement (another inode),
// an in-place edit (another mtime, nanoseconds on Linux) or a removal (stat
// fails) therefore takes effect on the very next call, while an unchanged
// file costs one stat. A snapshot whose mtime was within racyWindow of the
// read is not trusted (a same-size rewrite within the file
// system's timestamp granularity could keep the mtime): such a file is read
// again on every call until it has aged, parsing skipped when the bytes are
// the same.
type fileSource struct {
	path string
	// watch reports changes to path (nil or unwatched: stat every call).
	watch *fswatch.Handle
	last  atomic.Pointer[fileSnapshot]
}

// racyWindow is how recent a file's mtime may be, when it is read, before a
// later stat showing the same identity, size and mtime is no longer proof
// that the content is unchanged: a write within the same timestamp tick
// keeps the mtime. Linux file systems with sub-second mtimes stamp with the
// kernel's coarse clock (a tick of at most 10 ms); an mtime on a whole second
// suggests a file system with 1 or 2 s granularity, which gets the wider
// window.
func racyWindow(mtime time.Time) time.Duration {
	if mtime.Nanosecond() == 0 {
		return 2 * time.Second
	}
	return 50 * time.Millisecond
}

type fileSnapshot struct {
	fi   os.FileInfo // fstat of the file the bytes were read from
	racy bool        // fi's mtime was within racyWindow of the read
	raw  []byte
	set  *keySet
	// stamp is the watch stamp taken before the file was checked: while the
	// stamp stays the same, no write, rename or removal has touched path
	// since, so the snapshot is current without a stat.
	stamp uint64
}

func (s *fileSource) current(context.Context) (*keySet, error) {
	stamp := s.watch.Stamp()
	snap := s.last.Load()
	if stamp != 0 && snap != nil && snap.stamp == stamp {
		return snap.set, nil
	}
	fi, err := os.Stat(s.path)
	if err != nil || !fi.Mode().IsRegular() { // never open a FIFO or device
		return nil, errJWKSUnreadable
	}
	// Unwatched, an unchanged stat vouches for the content (outside the racy
	// window). Watched, the stamp moved: something touched the file, maybe
	// keeping its size and mtime, so it is read again.
	if stamp == 0 && snap != nil && !snap.racy && sameFile(snap.fi, fi) {
		return snap.set, nil
	}
	raw, rfi, err := s.read()
	if err != nil {
		return nil, errJWKSUnreadable
	}
	racy := time.Since(rfi.ModTime()) < racyWindow(rfi.ModTime())
	if snap != nil && bytes.Equal(snap.raw, raw) {
		if snap.racy != racy || !sameFile(snap.fi, rfi) {
			s.last.Store(&fileSnapshot{fi: rfi, racy: racy, raw: raw, set: snap.set, stamp: stamp})
		} else if stamp != snap.stamp {
			next := *snap
			next.stamp = stamp
			s.last.Store(&next)
		}
		return snap.set, nil
	}
	set, err := parseKeySet(raw)
	if err != nil {
		return nil, err
	}
	s.last.Store(&fileSnapshot{fi: rfi, racy: racy, raw: raw, set: set, stamp: stamp})
	return set, nil
}

// sameFile reports whether two stats show the same file with the same size
// and modification time.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func (s *fileSource) refresh(context.Context) (*keySet, error) { return nil, nil }

// read returns the file's current content, a regular file of at most
// MaxJWKSBytes, with the stat of the opened file taken before reading (a
// write after it changes the mtime, so the next call reads again).
func (s *fileSource) read() ([]byte, os.FileInfo, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > MaxJWKSBytes {
		return nil, nil, errJWKSUnreadable
	}
	raw, err := io.ReadAll(io.LimitReader(f, MaxJWKSBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(raw) > MaxJWKSBytes {
		return nil, nil, errJWKSUnreadable
	}
	return raw, fi, nil
}

// httpsSource fetches a JWKS over https and caches it for JWKSCacheTTL.
type httpsSource struct {
	url      string
	client   *http.Client
	now      func() time.Time
	interval time.Duration // shortest time between forced refreshes

	mu        sync.Mutex // guards the fields below
	set       *keySet
	fetchedAt time.Time
	gen       uint64     // successful fetches so far
	failedAt  time.Time  // the last failed fetch, zero after a success
	fetchMu   sync.Mutex // serializes fetches
}

func (h *httpsSource) cached() (*keySet, time.Time, uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.set, h.fetchedAt, h.gen
}

func (h *httpsSource) current(ctx context.Context) (*keySet, error) {
	if set, at, _ := h.cached(); set != nil && h.now().Sub(at) < JWKSCacheTTL {
		return set, nil
	}
	h.fetchMu.Lock()
	defer h.fetchMu.Unlock()
	if set, at, _ := h.cached(); set != nil && h.now().Sub(at) < JWKSCacheTTL {
		return set, nil // another caller fetched it meanwhile
	}
	return h.fetch(ctx)
}

func (h *httpsSource) refresh(ctx context.Context) (*keySet, error) {
	_, _, before := h.cached()
	h.fetchMu.Lock()
	defer h.fetchMu.Unlock()
	set, at, gen := h.cached()
	if gen != before {
		return set, nil // fetched by another caller while we waited
	}
	if gen > 0 && h.now().Sub(at) < h.interval {
		return nil, nil
	}
	return h.fetch(ctx)
}

// fetch downloads and parses the set; callers hold fetchMu. A failure is
// not retried within the refresh interval, so a yard that is down is not
// asked once per request.
func (h *httpsSource) fetch(ctx context.Context) (*keySet, error) {
	h.mu.Lock()
	failedAt := h.failedAt
	h.mu.Unlock()
	if !failedAt.IsZero() && h.now().Sub(failedAt) < h.interval {
		return nil, errJWKSUnreadable
	}
	set, err := h.download(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.failedAt = h.now()
		return nil, err
	}
	h.set, h.fetchedAt, h.failedAt = set, h.now(), time.Time{}
	h.gen++
	return set, nil
}

// download GETs and parses the set.
func (h *httpsSource) download(ctx context.Context) (*keySet, error) {
	raw, err := jsonfetch.Get(ctx, h.client, h.url, MaxJWKSBytes, fetchTimeout)
	if err != nil {
		return nil, errJWKSUnreadable
	}
	return parseKeySet(raw)
}

// defaultHTTPClient fetches key sets with a timeout and follows redirects
// only to https.
func defaultHTTPClient() *http.Client {
	return jsonfetch.Client(fetchTimeout)
}
