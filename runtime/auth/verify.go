// Package auth verifies the Branchyard tokens the fleet gateway takes as
// bearers (ANVIL_INBOUND_AUTH_MODE=branchyard): compact EdDSA JWTs signed by
// the yard, checked against its JWKS, carrying the branch's grant.
//
// Build a [Config] with [ConfigFromEnv], a [Verifier] with [NewVerifier], and
// call [Verifier.Verify] with each request's Authorization header. Every
// failure is an [*Error] (401, invalid_token or invalid_request), answered
// with its [Error.WWWAuthenticate] challenge (runtime/identity/branchyard).
//
// Verified tokens are remembered (by the SHA-256 of the token, bounded) along
// with the exact key that verified them. A remembered token is reused only
// while its kid still selects identical key material in the current key set
// (a file: JWKS is re-read on every call), and its exp, nbf and iat are
// checked again on every call, so a removed or rotated key and an expiry take
// effect on the very next request.
package auth

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/anvil-dev/anvil/runtime/canon"
	"github.com/anvil-dev/anvil/runtime/fswatch"
	"github.com/anvil-dev/anvil/runtime/grant"
	"github.com/anvil-dev/anvil/runtime/jsonscan"
	"github.com/anvil-dev/anvil/runtime/tokencache"
)

// Limits on tokens and claims.
const (
	// MaxTokenBytes is the longest token accepted.
	MaxTokenBytes = 64 << 10
	// MaxClaimChars is the longest sub, jti, by_tenant, by_branch or by_turn,
	// in characters (UTF-16 code units, as the contract counts them).
	MaxClaimChars = 256
	// MaxTokenLifetime is how far ahead exp may be (plus leeway).
	MaxTokenLifetime = time.Hour
	// MaxConnectLifetime is how long a connect token may live: exp − iat,
	// without leeway (with no iat, exp − now, plus leeway).
	MaxConnectLifetime = 10 * time.Minute
	// DefaultCacheSize is how many verified tokens a Verifier remembers.
	DefaultCacheSize = 1024
)

const algEdDSA = "EdDSA"

// Messages callers and tests rely on.
const (
	msgNoBearer      = "No bearer token was presented."
	msgBadSignature  = "Token signature is invalid."
	msgMalformed     = "Token is not a well-formed compact JWT."
	msgKeysUnread    = "Token signing keys could not be read."
	msgNotObject     = "Token payload is not a JSON object."
	msgTooLarge      = "Token is too large."
	msgAlgorithm     = "Token algorithm must be EdDSA."
	msgIssuer        = "Token issuer is not accepted."
	msgAudience      = "Token audience does not name this gateway."
	msgNoExpiration  = "Token has no expiration (exp)."
	msgExpired       = "Token has expired."
	msgNotYetValid   = "Token is not yet valid."
	msgSubject       = "Token subject (sub) must be a non-empty string of at most 256 characters."
	msgOneHour       = "Token expiration is more than one hour away."
	msgFuture        = "Token was issued in the future (iat)."
	msgNoGrants      = "Token has no by_grants claim."
	msgPurpose       = "Token by_purpose must be absent or connect."
	msgConnectExpiry = "A connect token may live at most ten minutes."
	msgEmptyKid      = "Token kid must not be empty."
)

// VerifierOptions are optional settings of a [Verifier]; nil means defaults.
type VerifierOptions struct {
	// HTTPClient fetches an https: JWKS. Default: a client with a 10 s
	// timeout that follows redirects only to https.
	HTTPClient *http.Client
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// CacheSize bounds the verified-token cache. 0 means DefaultCacheSize;
	// a negative value turns the cache off.
	CacheSize int
	// RefreshInterval is the shortest time between two https JWKS fetches
	// forced by an unknown kid (and between retries after a failed fetch).
	// 0 means DefaultRefreshInterval; a negative value means no limit.
	RefreshInterval time.Duration
	// Watcher, when set, tells a file: JWKS's changes: Verify then reads the
	// file again only after a change notification rather than stat-ing it on
	// every call. Its owner must Poll it before each Verify (the gateway
	// does once per request); an unwatchable path falls back to the stat.
	Watcher *fswatch.Watcher
}

// Verifier verifies bearer tokens for one configuration. It is safe for
// concurrent use.
type Verifier struct {
	cfg    Config
	leeway float64 // seconds
	now    func() time.Time
	keys   keySource
	cache  *tokencache.Cache[*cacheEntry]
}

// NewVerifier returns a verifier for a branchyard configuration (validated
// with [Config.Validate]; a none configuration is refused, as it has nothing
// to verify). Errors wrap [ErrConfig].
func NewVerifier(cfg Config, opts *VerifierOptions) (*Verifier, error) {
	if cfg.Mode != ModeBranchyard {
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		return nil, errors.Join(ErrConfig, errors.New("a verifier needs "+EnvMode+"=branchyard"))
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var o VerifierOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HTTPClient == nil {
		o.HTTPClient = defaultHTTPClient()
	}
	switch {
	case o.RefreshInterval == 0:
		o.RefreshInterval = DefaultRefreshInterval
	case o.RefreshInterval < 0:
		o.RefreshInterval = 0
	}
	src, _ := parseJWKSURI(cfg.JWKSURI) // validated above
	v := &Verifier{cfg: cfg, leeway: cfg.Leeway.Seconds(), now: o.Now}
	if src.path != "" {
		v.keys = &fileSource{path: src.path, watch: o.Watcher.File(src.path, true)}
	} else {
		v.keys = &httpsSource{url: src.url, client: o.HTTPClient, now: o.Now, interval: o.RefreshInterval}
	}
	switch {
	case o.CacheSize == 0:
		v.cache = newTokenCache(DefaultCacheSize, v.leeway)
	case o.CacheSize > 0:
		v.cache = newTokenCache(o.CacheSize, v.leeway)
	}
	return v, nil
}

// Config returns the verifier's configuration.
func (v *Verifier) Config() Config { return v.cfg }

// Verify checks an Authorization header value and returns the token's
// claims. Any failure is an [*Error]: 401 invalid_request "No bearer token was
// presented." when the header is not "Bearer <token>" (scheme matched
// case-insensitively), else 401 invalid_token. The checks, in order:
//
//   - a compact JWS (three base64url parts, no padding) whose header is a JSON
//     object with alg EdDSA (go-jose, with EdDSA as the only allowed
//     algorithm);
//   - the key: chosen by kid, or with no kid the only key of the set; an
//     unknown kid refreshes an https set once; the key's alg, if present, must
//     be EdDSA and it must be kty OKP, crv Ed25519;
//   - the Ed25519 signature ("Token signature is invalid.");
//   - a payload that is a JSON object, with iss, sub, scope and email strings,
//     exp, nbf and iat numbers, and aud a string or a list of strings;
//   - iss equal to the issuer; aud equal to the audience or a list holding it;
//     exp present; not expired (now < exp + leeway); nbf passed (now ≥ nbf −
//     leeway);
//   - sub a non-empty string of at most 256 characters; exp at most one hour
//     (plus leeway) away; iat not in the future (beyond leeway); jti,
//     by_tenant, by_branch and by_turn strings of at most 256 characters when
//     present; by_grants present and a valid grant list; by_purpose absent or
//     "connect"; and a connect token's exp − min(iat, now) at most ten minutes
//     (plus leeway).
//
// Other claims (by_models, by_network, by_delegation, …) are ignored. ctx
// bounds an https key-set fetch.
func (v *Verifier) Verify(ctx context.Context, authorization string) (*Claims, error) {
	token, e := bearerToken(authorization)
	if e != nil {
		return nil, e
	}
	if len(token) > MaxTokenBytes {
		return nil, invalidToken(msgTooLarge)
	}
	if !compactCharset(token) {
		return nil, invalidToken(msgMalformed)
	}
	now := unixSeconds(v.now())
	var sum string
	if v.cache != nil {
		sum = tokencache.Key(token)
		if ent, ok := v.cache.Get(sum); ok {
			set, err := v.keys.current(ctx)
			if err != nil {
				return nil, invalidToken(msgKeysUnread)
			}
			if k, err := set.lookup(ent.kid); err == nil && k == ent.key {
				if e := ent.times.check(now, v.leeway); e != nil {
					return nil, e
				}
				c := *ent.claims
				return &c, nil
			}
			// The key changed or went away: forget the token and verify it
			// from scratch against the current set.
			v.cache.Remove(sum)
		}
	}
	ent, e := v.verify(ctx, token, now)
	if e != nil {
		return nil, e
	}
	if v.cache != nil {
		v.cache.Put(sum, ent, now)
	}
	c := *ent.claims
	return &c, nil
}

// bearerToken extracts the token from "Bearer <token>".
func bearerToken(h string) (string, *Error) {
	h = strings.Trim(h, " \t")
	if len(h) < 7 || !strings.EqualFold(h[:6], "bearer") || (h[6] != ' ' && h[6] != '\t') {
		return "", &Error{Status: http.StatusUnauthorized, Code: CodeInvalidRequest, Message: msgNoBearer}
	}
	tok := strings.TrimLeft(h[7:], " \t")
	if tok == "" {
		return "", &Error{Status: http.StatusUnauthorized, Code: CodeInvalidRequest, Message: msgNoBearer}
	}
	return tok, nil
}

// compactCharset reports whether s holds only base64url characters and dots
// (the decoder would otherwise skip line breaks).
func compactCharset(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// canonicalSegments reports whether every dot-separated segment of a
// token (already known to hold only base64url characters and dots) is
// canonical unpadded base64url: no length of 1 mod 4, and zero bits where the
// last character holds more bits than remain. The decoder go-jose uses
// ignores those bits, so without this check a token whose last character is
// changed within them (a common way to tamper with a signature) would still
// verify, and one token would have several spellings.
func canonicalSegments(token string) bool {
	for seg := range strings.SplitSeq(token, ".") {
		if len(seg) == 0 {
			continue // go-jose decides about empty segments
		}
		last := base64URLValue(seg[len(seg)-1])
		switch len(seg) % 4 {
		case 1:
			return false
		case 2: // the last character carries 2 bits of the final byte
			if last&0x0F != 0 {
				return false
			}
		case 3: // 4 bits
			if last&0x03 != 0 {
				return false
			}
		}
	}
	return true
}

// base64URLValue is the 6-bit value of a base64url character.
func base64URLValue(c byte) byte {
	switch {
	case 'A' <= c && c <= 'Z':
		return c - 'A'
	case 'a' <= c && c <= 'z':
		return c - 'a' + 26
	case '0' <= c && c <= '9':
		return c - '0' + 52
	case c == '-':
		return 62
	default: // '_' (compactCharset admits nothing else)
		return 63
	}
}

func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// verify is the full, uncached verification.
func (v *Verifier) verify(ctx context.Context, token string, now float64) (*cacheEntry, *Error) {
	if !canonicalSegments(token) {
		return nil, invalidToken(msgMalformed)
	}
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		var alg *jose.ErrUnexpectedSignatureAlgorithm
		if errors.As(err, &alg) {
			return nil, invalidToken(msgAlgorithm)
		}
		return nil, invalidToken(msgMalformed)
	}
	if len(jws.Signatures) != 1 || jws.Signatures[0].Header.Algorithm != algEdDSA {
		return nil, invalidToken(msgMalformed)
	}
	kid := jws.Signatures[0].Header.KeyID
	if kid == "" && headerHasKid(token) {
		// An empty kid is not "no kid": it would pick the set's only key.
		return nil, invalidToken(msgEmptyKid)
	}

	// The key.
	set, err := v.keys.current(ctx)
	if err != nil {
		return nil, invalidToken(msgKeysUnread)
	}
	key, err := set.lookup(kid)
	if errors.Is(err, errUnknownKid) {
		fresh, ferr := v.keys.refresh(ctx)
		if ferr != nil {
			return nil, invalidToken(msgKeysUnread)
		}
		if fresh != nil {
			key, err = fresh.lookup(kid)
		}
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, invalidToken(msgBadSignature) // no key for this kid
	}
	pub, e := key.publicKey()
	if e != nil {
		return nil, e
	}

	// The signature.
	payload, err := jws.Verify(ed25519.PublicKey(pub))
	if err != nil {
		return nil, invalidToken(msgBadSignature)
	}

	// The claims.
	p := bytes.TrimLeft(payload, " \t\r\n")
	if len(p) == 0 || p[0] != '{' {
		return nil, invalidToken(msgNotObject)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(payload, &raw); err != nil {
		return nil, invalidToken(msgNotObject)
	}
	c, t, e := v.checkClaims(raw, now)
	if e != nil {
		return nil, e
	}
	c.fingerprint = fingerprint(c)
	return &cacheEntry{claims: c, kid: kid, key: key, times: t}, nil
}

// checkClaims applies the claim checks in the contract's order.
func (v *Verifier) checkClaims(raw map[string]json.RawMessage, now float64) (*Claims, tokenTimes, *Error) {
	var t tokenTimes
	c := &Claims{Audience: v.cfg.Audience}

	// Types.
	iss, hasIss, ok := stringClaim(raw, "iss")
	if !ok {
		return nil, t, invalidToken("Token issuer (iss) must be a string.")
	}
	sub, hasSub, ok := stringClaim(raw, "sub")
	if !ok {
		return nil, t, invalidToken("Token subject (sub) must be a string.")
	}
	for _, name := range []string{"scope", "email"} {
		if _, _, ok := stringClaim(raw, name); !ok {
			return nil, t, invalidToken("Token claim " + name + " must be a string.")
		}
	}
	exp, expRaw, hasExp, ok := numberClaim(raw, "exp")
	if !ok {
		return nil, t, invalidToken("Token expiration (exp) must be a number.")
	}
	nbf, _, hasNbf, ok := numberClaim(raw, "nbf")
	if !ok {
		return nil, t, invalidToken("Token claim nbf must be a number.")
	}
	iat, _, hasIat, ok := numberClaim(raw, "iat")
	if !ok {
		return nil, t, invalidToken("Token claim iat must be a finite number.")
	}
	audOK, ok := v.audienceMatches(raw["aud"])
	if !ok {
		return nil, t, invalidToken("Token audience (aud) must be a string or a list of strings.")
	}

	// Standard claims.
	if !hasIss || iss != v.cfg.Issuer {
		return nil, t, invalidToken(msgIssuer)
	}
	if !audOK {
		return nil, t, invalidToken(msgAudience)
	}
	if !hasExp {
		return nil, t, invalidToken(msgNoExpiration)
	}
	t = tokenTimes{exp: exp, nbf: nbf, iat: iat, hasNbf: hasNbf, hasIat: hasIat}
	if e := t.expired(now, v.leeway); e != nil {
		return nil, t, e
	}
	if e := t.notYetValid(now, v.leeway); e != nil {
		return nil, t, e
	}

	// Branchyard claims.
	if !hasSub || sub == "" || canon.UTF16Len(sub) > MaxClaimChars {
		return nil, t, invalidToken(msgSubject)
	}
	if e := t.tooLong(now, v.leeway); e != nil {
		return nil, t, e
	}
	if e := t.future(now, v.leeway); e != nil {
		return nil, t, e
	}
	for _, s := range []struct {
		name string
		dst  *string
	}{{"jti", &c.JTI}, {"by_tenant", &c.Tenant}, {"by_branch", &c.Branch}, {"by_turn", &c.Turn}} {
		val, _, ok := stringClaim(raw, s.name)
		if !ok || canon.UTF16Len(val) > MaxClaimChars {
			return nil, t, invalidToken("Token claim " + s.name + " must be a string of at most 256 characters.")
		}
		*s.dst = val
	}
	rawGrants, ok := raw["by_grants"]
	if !ok {
		return nil, t, invalidToken(msgNoGrants)
	}
	grants, err := grant.Parse(rawGrants)
	if err != nil {
		return nil, t, &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, Message: "Token by_grants is " + err.Error() + ".", cause: err}
	}
	if purpose, present, ok := stringClaim(raw, "by_purpose"); present {
		if !ok || purpose != PurposeConnect {
			return nil, t, invalidToken(msgPurpose)
		}
		c.Purpose = purpose
		t.connect = true
	}
	if e := t.connectTooLong(now, v.leeway); e != nil {
		return nil, t, e
	}

	var compact bytes.Buffer
	if err := json.Compact(&compact, rawGrants); err != nil { // valid: it parsed
		return nil, t, invalidToken(msgMalformed)
	}
	c.Issuer, c.Subject = iss, sub
	c.Grants, c.RawGrants = grants, compact.Bytes()
	c.Expiry = secondsToTime(exp)
	if hasIat {
		c.IssuedAt = secondsToTime(iat)
	}
	if hasNbf {
		c.NotBefore = secondsToTime(nbf)
	}
	c.expRaw = expRaw
	return c, t, nil
}

// audienceMatches checks aud's type (ok) and whether it names the audience.
// A missing aud has the right type and does not match.
func (v *Verifier) audienceMatches(raw json.RawMessage) (match, ok bool) {
	if raw == nil {
		return false, true
	}
	switch jsonscan.Kind(raw) {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return false, false
		}
		return s == v.cfg.Audience, true
	case '[':
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			return false, false
		}
		for _, item := range list {
			var s string
			if jsonscan.Kind(item) != '"' || json.Unmarshal(item, &s) != nil {
				return false, false
			}
			if s == v.cfg.Audience {
				match = true
			}
		}
		return match, true
	}
	return false, false
}

// stringClaim reads a claim that must be a string when present.
func stringClaim(raw map[string]json.RawMessage, name string) (val string, present, ok bool) {
	v, present := raw[name]
	if !present {
		return "", false, true
	}
	if jsonscan.Kind(v) != '"' || json.Unmarshal(v, &val) != nil {
		return "", true, false
	}
	return val, true, true
}

// numberClaim reads a claim that must be a finite number when present.
func numberClaim(raw map[string]json.RawMessage, name string) (val float64, text string, present, ok bool) {
	v, present := raw[name]
	if !present {
		return 0, "", false, true
	}
	if jsonscan.Kind(v) != '0' {
		return 0, "", true, false
	}
	text = string(bytes.TrimSpace(v))
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, "", true, false
	}
	return f, text, true, true
}

// tokenTimes are the time claims, checked again on every use of a
// remembered token.
type tokenTimes struct {
	exp, nbf, iat  float64
	hasNbf, hasIat bool
	connect        bool
}

func (t *tokenTimes) expired(now, leeway float64) *Error {
	if now >= t.exp+leeway {
		return invalidToken(msgExpired)
	}
	return nil
}

func (t *tokenTimes) notYetValid(now, leeway float64) *Error {
	if t.hasNbf && now < t.nbf-leeway {
		return invalidToken(msgNotYetValid)
	}
	return nil
}

func (t *tokenTimes) tooLong(now, leeway float64) *Error {
	if t.exp-now > MaxTokenLifetime.Seconds()+leeway {
		return invalidToken(msgOneHour)
	}
	return nil
}

func (t *tokenTimes) future(now, leeway float64) *Error {
	if t.hasIat && t.iat > now+leeway {
		return invalidToken(msgFuture)
	}
	return nil
}

// connectTooLong refuses a connect token that lives longer than
// MaxConnectLifetime. With iat its lifetime is exp − iat, a difference of two
// issuer timestamps that clock skew does not touch, so no leeway is added
// (the seed: "at most ten minutes (exp - iat; a longer one is a 401)").
// Without iat, exp is compared with the gateway's clock, and only then the
// leeway applies.
func (t *tokenTimes) connectTooLong(now, leeway float64) *Error {
	if !t.connect {
		return nil
	}
	lifetime, limit := t.exp-now, MaxConnectLifetime.Seconds()+leeway
	if t.hasIat {
		lifetime, limit = t.exp-t.iat, MaxConnectLifetime.Seconds()
	}
	if lifetime > limit {
		return invalidToken(msgConnectExpiry)
	}
	return nil
}

// headerHasKid reports whether the compact token's protected header has a
// "kid" member (of any value). The token's segments are canonical base64url
// (canonicalSegments) and go-jose parsed the header already.
func headerHasKid(token string) bool {
	seg, _, _ := strings.Cut(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return false
	}
	var h map[string]json.RawMessage
	if json.Unmarshal(raw, &h) != nil {
		return false
	}
	_, ok := h["kid"]
	return ok
}

// check runs every time check, in the order of the full verification.
func (t *tokenTimes) check(now, leeway float64) *Error {
	if e := t.expired(now, leeway); e != nil {
		return e
	}
	if e := t.notYetValid(now, leeway); e != nil {
		return e
	}
	if e := t.tooLong(now, leeway); e != nil {
		return e
	}
	if e := t.future(now, leeway); e != nil {
		return e
	}
	return t.connectTooLong(now, leeway)
}

// CheckKeys reports whether the key set can be had now (the JWKS file read
// and parsed, or the https set fetched or still cached): the gateway is not
// ready while it cannot.
func (v *Verifier) CheckKeys(ctx context.Context) error {
	_, err := v.keys.current(ctx)
	return err
}

// BearerToken returns the token of an Authorization header value "Bearer
// <token>" (the scheme matched case-insensitively, spaces or tabs around),
// or false: the rule every inbound identity reads a bearer by.
func BearerToken(authorization string) (string, bool) {
	tok, e := bearerToken(authorization)
	return tok, e == nil
}

// WellFormedCompact reports whether token holds only base64url characters
// and dots and every segment is canonical unpadded base64url (see
// canonicalSegments): a JWS whose spelling could be tampered with in bits
// the decoder ignores is refused before it is parsed.
func WellFormedCompact(token string) bool {
	return compactCharset(token) && canonicalSegments(token)
}
