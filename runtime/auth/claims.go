package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/anvil-dev/anvil/runtime/grant"
)

// PurposeConnect is the by_purpose of a connect token.
const PurposeConnect = "connect"

// Claims are a verified token's claims. Verify returns a fresh copy per call,
// but Grants and RawGrants may be shared between copies: treat them as
// read-only.
type Claims struct {
	// Issuer is iss (the configured issuer).
	Issuer string
	// Subject is sub: the principal (a branch's principal, or the person).
	Subject string
	// Audience is the configured audience the token names.
	Audience string
	// JTI is jti, or "".
	JTI string
	// Tenant, Branch and Turn are by_tenant, by_branch and by_turn, or "".
	Tenant, Branch, Turn string
	// Purpose is by_purpose: "" for a turn token, "connect" for a connect
	// token.
	Purpose string
	// IssuedAt is iat; zero when absent.
	IssuedAt time.Time
	// Expiry is exp.
	Expiry time.Time
	// NotBefore is nbf; zero when absent.
	NotBefore time.Time
	// Grants is by_grants, parsed.
	Grants grant.List
	// RawGrants is by_grants as the token carried it (compact JSON).
	RawGrants json.RawMessage

	expRaw      string // exp's JSON number text
	fingerprint string
}

// IsConnect reports whether this is a connect token (by_purpose "connect"):
// the only kind the connect routes take, and a kind /mcp refuses.
func (c *Claims) IsConnect() bool { return c.Purpose == PurposeConnect }

// Fingerprint identifies the token a session belongs to: the base64url
// (unpadded) SHA-256 of the JSON of {iss, sub, jti, turn: by_turn, exp,
// grants: by_grants}. The same claims give the same fingerprint; a new jti,
// turn, expiry or grant gives a new one.
func (c *Claims) Fingerprint() string {
	if c.fingerprint != "" {
		return c.fingerprint
	}
	return fingerprint(c)
}

func fingerprint(c *Claims) string {
	exp := c.expRaw
	if exp == "" {
		exp = formatSeconds(c.Expiry)
	}
	grants := c.RawGrants
	if len(grants) == 0 {
		grants, _ = c.Grants.MarshalJSON() // cannot fail
	}
	b, err := json.Marshal(struct {
		Iss    string          `json:"iss"`
		Sub    string          `json:"sub"`
		JTI    string          `json:"jti"`
		Turn   string          `json:"turn"`
		Exp    json.RawMessage `json:"exp"`
		Grants json.RawMessage `json:"grants"`
	}{c.Issuer, c.Subject, c.JTI, c.Turn, json.RawMessage(exp), grants})
	if err != nil { // only if RawGrants was set by hand to invalid JSON
		b = append([]byte(c.Issuer+"\x00"+c.Subject+"\x00"+c.JTI+"\x00"+c.Turn+"\x00"+exp+"\x00"), grants...)
	}
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// formatSeconds writes t as a JSON number of seconds.
func formatSeconds(t time.Time) string {
	if t.Nanosecond() == 0 {
		return strconv.FormatInt(t.Unix(), 10)
	}
	return strconv.FormatFloat(float64(t.Unix())+float64(t.Nanosecond())/1e9, 'f', -1, 64)
}

// secondsToTime converts a NumericDate, clamped to years 1 to 9999.
func secondsToTime(f float64) time.Time {
	const lo, hi = -62135596800, 253402300799
	f = math.Max(lo, math.Min(hi, f))
	sec := math.Floor(f)
	return time.Unix(int64(sec), int64((f-sec)*1e9)).UTC()
}
