package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"

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

func appendCanonical(b []byte, v any, redact bool) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return canon.AppendString(b, x)
	case float64:
		return canon.AppendNumber(b, x, 64)
	case float32:
		return canon.AppendNumber(b, float64(x), 64)
	case int:
		return canon.AppendNumber(b, float64(x), 64)
	case int64:
		return canon.AppendNumber(b, float64(x), 64)
	case int32:
		return canon.AppendNumber(b, float64(x), 64)
	case uint64:
		return canon.AppendNumber(b, float64(x), 64)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return append(b, "null"...)
		}
		return canon.AppendNumber(b, f, 64)
	case json.RawMessage:
		return appendCanonical(b, decodeJSON(x), redact)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, canon.CompareUTF16)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = canon.AppendString(b, k)
			b = append(b, ':')
			if redact && canon.SensitiveKey(k) {
				b = canon.AppendString(b, canon.Redacted)
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
