package audit

// The canonical encoder as it was before canon.Value, kept while the
// differential fuzz compares the two.

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/canon"
)

func legacyAppendCanonical(b []byte, v any, redact bool) []byte {
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
		return legacyAppendCanonical(b, legacyDecodeJSON(x), redact)
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
				b = legacyAppendCanonical(b, x[k], redact)
			}
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = legacyAppendCanonical(b, e, redact)
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
	return legacyAppendCanonical(b, legacyDecodeJSON(raw), redact)
}

func legacyDecodeJSON(raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil
	}
	return out
}

// FuzzCanonicalMatchesLegacy checks canon.Value (NumberJS, UTF-16 keys,
// redaction) against the encoder it replaced, byte for byte.
func FuzzCanonicalMatchesLegacy(f *testing.F) {
	for _, s := range []string{`{"b":1.0,"token":[null,"x",1e400]}`, `[1e21,-0,0.1,12345678901234567890,1.0e2]`, `"\u2028<&>\ud800"`, `{"\ue000":1,"\U0001F600":{"password":2}}`, `{"a" : { "b" : [ 1 , 2 ] } } 3`} {
		f.Add(s, int64(1)<<60, 0.1)
	}
	f.Fuzz(func(t *testing.T, in string, n int64, x float64) {
		vs := []any{json.RawMessage(in), json.Number(in), in, n, int32(n), uint64(n), int8(n), uint(n), float32(x), x,
			map[string]any(nil), []any(nil), map[string]string(nil), (*int)(nil),
			map[string]any{"n": n, "f": float32(x), "raw": json.RawMessage(in), "api_key": in, "m": map[string]string{in: in}}}
		if json.Valid([]byte(in)) {
			var f64, num any
			_ = json.Unmarshal([]byte(in), &f64)
			dec := json.NewDecoder(strings.NewReader(in))
			dec.UseNumber()
			_ = dec.Decode(&num)
			vs = append(vs, f64, num, []any{f64, num})
		}
		for _, v := range vs {
			for _, redact := range []bool{false, true} {
				if got, want := appendCanonical(nil, v, redact), legacyAppendCanonical(nil, v, redact); !bytes.Equal(got, want) {
					t.Fatalf("appendCanonical(%#v, %v) = %s, legacy %s", v, redact, got, want)
				}
			}
		}
	})
}
