package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/anvil-dev/anvil/runtime/jsonfetch"
	"github.com/anvil-dev/anvil/runtime/policy"
)

// Bounds and timings of what the gateway fetches from an identity provider.
const (
	// MaxDocumentBytes is the largest metadata document or key set read.
	MaxDocumentBytes = 256 << 10
	// FetchTimeout bounds one fetch (connect, headers and body).
	FetchTimeout = 10 * time.Second
	// KeysTTL is how long a key set is used before it is fetched again.
	KeysTTL = 5 * time.Minute
	// MetadataTTL is how long issuer metadata is used before it is fetched
	// again.
	MetadataTTL = time.Hour
	// DefaultRefreshInterval is the shortest time between two fetches of an
	// issuer's keys forced by an unknown kid (and between retries after a
	// failed fetch), so tokens with made-up kids cannot make the gateway
	// hammer the provider.
	DefaultRefreshInterval = time.Second
	// MinRSABits is the smallest RSA key accepted.
	MinRSABits = 2048
)

// errUnreadable is every failure to get metadata or keys; the caller
// refuses the token ("Token signing keys could not be read.").
var errUnreadable = errors.New("issuer metadata or keys unreadable")

// metadata is what the gateway uses of an issuer's OpenID / RFC 8414
// metadata.
type metadata struct {
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
}

// keySet is a parsed JWKS: the public signing keys by kid.
type keySet struct {
	keys []*jose.JSONWebKey
}

// lookup picks the key for a token's kid; with no kid, the only key.
func (s *keySet) lookup(kid string) (*jose.JSONWebKey, bool) {
	if kid == "" {
		if len(s.keys) == 1 {
			return s.keys[0], true
		}
		return nil, false
	}
	for _, k := range s.keys {
		if k.KeyID == kid {
			return k, true
		}
	}
	return nil, false
}

// issuer is a trusted issuer's state: its settings, and its metadata and
// keys, fetched when first needed and cached.
type issuer struct {
	cfg      policy.Issuer
	client   *http.Client
	now      func() time.Time
	interval time.Duration

	mu         sync.Mutex // guards the fields below
	meta       *metadata
	metaAt     time.Time
	metaFailed time.Time // the last failed metadata fetch, zero after a success
	keys       *keySet
	keysAt     time.Time
	keysFailed time.Time // the last failed key set fetch, zero after a success

	// metaFetch and keysFetch serialize the fetches of each (a key set
	// fetch may read the metadata).
	metaFetch, keysFetch sync.Mutex
}

func newIssuer(cfg policy.Issuer, client *http.Client, now func() time.Time, interval time.Duration) *issuer {
	return &issuer{cfg: cfg, client: client, now: now, interval: interval}
}

// metadata returns the issuer's metadata, fetching it when absent or older
// than MetadataTTL (a stale copy is kept when the refetch fails).
func (is *issuer) metadata(ctx context.Context) (*metadata, error) {
	is.mu.Lock()
	m, at := is.meta, is.metaAt
	is.mu.Unlock()
	if m != nil && is.now().Sub(at) < MetadataTTL {
		return m, nil
	}
	is.metaFetch.Lock()
	defer is.metaFetch.Unlock()
	is.mu.Lock()
	m, at, failed := is.meta, is.metaAt, is.metaFailed
	is.mu.Unlock()
	if m != nil && is.now().Sub(at) < MetadataTTL {
		return m, nil
	}
	if !failed.IsZero() && is.now().Sub(failed) < is.interval {
		if m != nil {
			return m, nil
		}
		return nil, errUnreadable
	}
	fresh, err := is.discover(ctx)
	is.mu.Lock()
	defer is.mu.Unlock()
	if err != nil {
		is.metaFailed = is.now()
		if m != nil {
			return m, nil
		}
		return nil, err
	}
	is.meta, is.metaAt, is.metaFailed = fresh, is.now(), time.Time{}
	return fresh, nil
}

// discover reads OpenID discovery (<issuer>/.well-known/openid-configuration)
// or, failing that, RFC 8414 metadata (the well-known path inserted before
// the issuer's path). The document's issuer must be the configured one,
// exactly, and each endpoint the gateway uses must be https (or http on a
// loopback host).
func (is *issuer) discover(ctx context.Context) (*metadata, error) {
	iss := is.cfg.Issuer
	u, err := url.Parse(iss)
	if err != nil {
		return nil, errUnreadable
	}
	urls := []string{strings.TrimSuffix(iss, "/") + "/.well-known/openid-configuration"}
	rfc := *u
	rfc.Path = "/.well-known/oauth-authorization-server" + strings.TrimSuffix(u.Path, "/")
	rfc.RawPath = ""
	urls = append(urls, rfc.String())
	for _, doc := range urls {
		raw, err := fetch(ctx, is.client, doc)
		if err != nil {
			continue
		}
		var m struct {
			metadata
			Issuer string `json:"issuer"`
		}
		if json.Unmarshal(raw, &m) != nil || m.Issuer != iss {
			continue
		}
		for _, e := range []string{m.JWKSURI, m.IntrospectionEndpoint, m.TokenEndpoint} {
			if e != "" && policy.CheckEndpoint(e) != nil {
				return nil, errUnreadable
			}
		}
		return &m.metadata, nil
	}
	return nil, errUnreadable
}

// jwksURI is the configured jwks_uri, else the metadata's.
func (is *issuer) jwksURI(ctx context.Context) (string, error) {
	if is.cfg.JWKSURI != "" {
		return is.cfg.JWKSURI, nil
	}
	m, err := is.metadata(ctx)
	if err != nil {
		return "", err
	}
	if m.JWKSURI == "" {
		return "", errUnreadable
	}
	return m.JWKSURI, nil
}

// currentKeys returns the key set, fetched when absent or older than
// KeysTTL.
func (is *issuer) currentKeys(ctx context.Context) (*keySet, error) {
	is.mu.Lock()
	s, at := is.keys, is.keysAt
	is.mu.Unlock()
	if s != nil && is.now().Sub(at) < KeysTTL {
		return s, nil
	}
	return is.fetchKeys(ctx, false)
}

// refreshKeys fetches the key set again after an unknown kid, unless one
// was fetched within the refresh interval (then nil).
func (is *issuer) refreshKeys(ctx context.Context) (*keySet, error) {
	return is.fetchKeys(ctx, true)
}

func (is *issuer) fetchKeys(ctx context.Context, forced bool) (*keySet, error) {
	is.mu.Lock()
	before := is.keysAt
	is.mu.Unlock()
	is.keysFetch.Lock()
	defer is.keysFetch.Unlock()
	is.mu.Lock()
	s, at, failed := is.keys, is.keysAt, is.keysFailed
	is.mu.Unlock()
	switch {
	case at != before && s != nil:
		return s, nil // another caller fetched it while this one waited
	case !forced && s != nil && is.now().Sub(at) < KeysTTL:
		return s, nil
	case forced && s != nil && is.now().Sub(at) < is.interval:
		return nil, nil
	case !failed.IsZero() && is.now().Sub(failed) < is.interval:
		if s != nil && !forced {
			return s, nil // a provider that is down: the stale set serves
		}
		return nil, errUnreadable
	}
	fresh, err := is.downloadKeys(ctx)
	is.mu.Lock()
	defer is.mu.Unlock()
	if err != nil {
		is.keysFailed = is.now()
		if s != nil && !forced {
			return s, nil
		}
		return nil, err
	}
	is.keys, is.keysAt, is.keysFailed = fresh, is.now(), time.Time{}
	return fresh, nil
}

func (is *issuer) downloadKeys(ctx context.Context) (*keySet, error) {
	uri, err := is.jwksURI(ctx)
	if err != nil {
		return nil, err
	}
	raw, err := fetch(ctx, is.client, uri)
	if err != nil {
		return nil, err
	}
	return parseKeySet(raw)
}

// privateMembers are the JWK members that carry private or symmetric key
// material: a key set that publishes one is not trusted with that key.
var privateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "k", "priv"}

// parseKeySet parses {"keys":[…]}, keeping the public signature keys of
// the types the gateway verifies (RSA of at least MinRSABits, EC P-256,
// Ed25519) and skipping the others (encryption keys, private or symmetric
// material, unknown types).
func parseKeySet(raw []byte) (*keySet, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if json.Unmarshal(raw, &doc) != nil || doc.Keys == nil {
		return nil, errUnreadable
	}
	s := &keySet{}
	for _, r := range doc.Keys {
		var members map[string]json.RawMessage
		if json.Unmarshal(r, &members) != nil {
			continue
		}
		private := false
		for _, m := range privateMembers {
			if _, ok := members[m]; ok {
				private = true
			}
		}
		if private {
			continue
		}
		var k jose.JSONWebKey
		if k.UnmarshalJSON(r) != nil || !k.Valid() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		switch pub := k.Key.(type) {
		case *rsa.PublicKey:
			if pub.N.BitLen() < MinRSABits {
				continue
			}
		case *ecdsa.PublicKey:
			if pub.Curve != elliptic.P256() {
				continue
			}
		case ed25519.PublicKey:
		default:
			continue
		}
		s.keys = append(s.keys, &k)
	}
	return s, nil
}

// keyFits reports whether k may verify a signature of alg: its alg, when
// it states one, is alg, and its type is alg's.
func keyFits(k *jose.JSONWebKey, alg string) bool {
	if k.Algorithm != "" && k.Algorithm != alg {
		return false
	}
	switch k.Key.(type) {
	case *rsa.PublicKey:
		return alg == policy.AlgRS256
	case *ecdsa.PublicKey:
		return alg == policy.AlgES256
	case ed25519.PublicKey:
		return alg == policy.AlgEdDSA
	}
	return false
}

// fetch GETs a JSON document of at most MaxDocumentBytes within
// FetchTimeout, wanting a 200.
func fetch(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	raw, err := jsonfetch.Get(ctx, client, u, MaxDocumentBytes, FetchTimeout)
	if err != nil {
		return nil, errUnreadable
	}
	return raw, nil
}

// DefaultHTTPClient is the client an Identity fetches and posts with when
// none is given: FetchTimeout, and no redirect except to https (a
// provider's metadata, keys, introspection and token endpoints are named
// exactly; a redirect elsewhere is refused).
func DefaultHTTPClient() *http.Client {
	return jsonfetch.Client(FetchTimeout)
}
