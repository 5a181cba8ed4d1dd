package audit

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/anvil-dev/anvil/runtime/canon"
)

// InputSHA256 returns "sha256:<hex>" of the canonical JSON (CanonicalJSON) of
// input after redaction: at any depth, the value of every object key for
// which canon.SensitiveKey holds is replaced by "***".
func InputSHA256(input any) string {
	b := appendCanonical(nil, input, true)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// AppendRedacted appends the canonical JSON of v as InputSHA256 hashes it:
// at any depth, the value of every object key for which canon.SensitiveKey
// holds is replaced by "***". Generated hashers write a typed input's
// scalar arguments themselves and call it for an argument of any shape.
func AppendRedacted(b []byte, v any) []byte { return appendCanonical(b, v, true) }

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

// hashValues and canonicalValues are the audit hash's rules
// (canon.NumberJS, keys in JavaScript's order), with and without
// redaction. Their depth bound is encoding/json's nesting limit, so every
// decoded value is hashed whole; only a value built by hand that nests
// deeper (or a cycle) is cut off as null instead of overflowing the stack.
var (
	hashValues      = canon.Value{Numbers: canon.NumberJS, KeysUTF16: true, Redact: true, MaxDepth: 10000}
	canonicalValues = canon.Value{Numbers: canon.NumberJS, KeysUTF16: true, MaxDepth: 10000}
)

func appendCanonical(b []byte, v any, redact bool) []byte {
	if redact {
		return hashValues.Append(b, v)
	}
	return canonicalValues.Append(b, v)
}
