package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/anvil-dev/anvil/runtime/jsstring"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Redacted is the value that replaces a sensitive key's value before hashing.
const Redacted = "***"

// sensitiveParts are the lowercase substrings of
// /pass(word|phrase)?|secret|token|authori[sz]ation|api[_-]?key|cookie|credential|private[_-]?key|session/i.
// JavaScript's non-Unicode /i folds only ASCII letters onto these, so an
// ASCII-lowercased substring test is the same predicate as RegExp.test.
var sensitiveParts = []string{
	"pass", "secret", "token", "authorization", "authorisation",
	"apikey", "api_key", "api-key", "cookie", "credential",
	"privatekey", "private_key", "private-key", "session",
}

// SensitiveKey reports whether an input key's value is redacted before
// hashing: whether the key contains (ASCII case-insensitively) password,
// passphrase, pass, secret, token, authorization/authorisation, api key,
// cookie, credential, private key or session.
func SensitiveKey(key string) bool {
	var buf [64]byte
	lower := buf[:0]
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	for _, p := range sensitiveParts {
		if bytes.Contains(lower, []byte(p)) {
			return true
		}
	}
	return false
}

// InputSHA256 returns "sha256:<hex>" of the canonical JSON (CanonicalJSON) of
// input after redaction: at any depth, the value of every object key for
// which SensitiveKey holds is replaced by "***".
func InputSHA256(input any) string {
	b := appendCanonical(nil, input, true)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// CanonicalJSON returns the canonical JSON of v as the earlier gateway wrote
// it with JSON.stringify over sorted keys: compact, object keys sorted by
// UTF-16 code units (JavaScript's default sort), strings escaped as
// JSON.stringify escapes them (no HTML escaping), numbers as JavaScript
// prints them (1.0 → 1, 1e21 → 1e+21, NaN and ±Inf → null).
//
// v is a decoded JSON value (map[string]any, []any, string, bool, nil,
// float64 or json.Number, json.RawMessage); any other value is converted
// through encoding/json first.
func CanonicalJSON(v any) []byte {
	return appendCanonical(nil, v, false)
}

func appendCanonical(b []byte, v any, redact bool) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return jsstring.Append(b, x)
	case float64:
		return appendJSNumber(b, x)
	case float32:
		return appendJSNumber(b, float64(x))
	case int:
		return appendJSNumber(b, float64(x))
	case int64:
		return appendJSNumber(b, float64(x))
	case int32:
		return appendJSNumber(b, float64(x))
	case uint64:
		return appendJSNumber(b, float64(x))
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return append(b, "null"...)
		}
		return appendJSNumber(b, f)
	case json.RawMessage:
		return appendCanonical(b, decodeJSON(x), redact)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsstring.Append(b, k)
			b = append(b, ':')
			if redact && SensitiveKey(k) {
				b = jsstring.Append(b, Redacted)
			} else {
				b = appendCanonical(b, x[k], redact)
			}
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCanonical(b, e, redact)
		}
		return append(b, ']')
	}
	// Any other Go value: through encoding/json, then canonicalised.
	if rv := reflect.ValueOf(v); (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Map ||
		rv.Kind() == reflect.Slice || rv.Kind() == reflect.Interface) && rv.IsNil() {
		return append(b, "null"...)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return appendCanonical(b, decodeJSON(raw), redact)
}

func decodeJSON(raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil
	}
	return out
}

// appendJSNumber writes f as JavaScript's Number.prototype.toString and
// JSON.stringify do. encoding/json's float formatting follows the same
// ECMAScript rules; NaN and infinities become null and -0 becomes 0.
func appendJSNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0')
	}
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// compareUTF16 orders strings by their UTF-16 code units, as JavaScript's
// Array.prototype.sort does by default.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua != ub {
				return int(ua) - int(ub)
			}
			return int(ra) - int(rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

// firstUnit is the first UTF-16 code unit of r.
func firstUnit(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}
