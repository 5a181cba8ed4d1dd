package effect

// The value encoder as it was before canon.Value, kept while the
// differential fuzz (FuzzValueMatchesLegacy) compares the two.

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/canon"
)

// maxDepth bounds how deep legacyAppendValue descends into a value: anything
// deeper (or a cyclic value built by hand) is written as null, so the
// report always stays well inside encoding/json's nesting limit (10000),
// which the MCP SDK applies when it re-reads MarshalJSON output.
const legacyMaxDepth = 1000

// legacyAppendValue appends the JSON of a decoded JSON value. The common decoded
// types are written directly, as JavaScript's JSON.stringify writes them
// (the earlier implementation's wire form): float64 in shortest form (100,
// not 1e+02), json.Number verbatim, json.RawMessage compacted, objects with
// sorted keys. Any other type goes through encoding/json; a value that
// cannot be encoded (a channel, NaN) is written as null. It never panics.
func legacyAppendValue(b []byte, v any, depth int) []byte {
	if depth > legacyMaxDepth {
		return append(b, "null"...)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return canon.AppendString(b, x)
	case bool:
		return strconv.AppendBool(b, x)
	case float64:
		return canon.AppendNumber(b, x, 64)
	case float32:
		return canon.AppendNumber(b, float64(x), 32)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int8:
		return strconv.AppendInt(b, int64(x), 10)
	case int16:
		return strconv.AppendInt(b, int64(x), 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case uint:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case json.Number:
		if canon.IsNumber(string(x)) {
			return append(b, x...)
		}
		return canon.AppendString(b, string(x))
	case json.RawMessage:
		return legacyAppendRaw(b, x)
	case map[string]any:
		if x == nil {
			return append(b, "null"...)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = canon.AppendString(b, k)
			b = append(b, ':')
			b = legacyAppendValue(b, x[k], depth+1)
		}
		return append(b, '}')
	case []any:
		if x == nil {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = legacyAppendValue(b, e, depth+1)
		}
		return append(b, ']')
	case Args:
		b = append(b, '{')
		for i, a := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = canon.AppendString(b, a.Name)
			b = append(b, ':')
			b = legacyAppendValue(b, a.Value, depth+2)
		}
		return append(b, '}')
	}
	return legacyAppendFallback(b, v)
}

// legacyAppendFallback encodes v with encoding/json, without HTML escaping.
func legacyAppendFallback(b []byte, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...)
	}
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}

// legacyAppendRaw appends raw JSON compacted, or null when it is not valid JSON.
func legacyAppendRaw(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 || !json.Valid(raw) {
		return append(b, "null"...)
	}
	if !legacyHasJSONSpace(raw) {
		return append(b, raw...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(b, "null"...)
	}
	return append(b, buf.Bytes()...)
}

func legacyHasJSONSpace(raw []byte) bool {
	for _, c := range raw {
		if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
			return true
		}
	}
	return false
}

// FuzzValueMatchesLegacy checks canon.Value (NumberExact) against the
// encoder it replaced, byte for byte, on decoded JSON of every flavour.
func FuzzValueMatchesLegacy(f *testing.F) {
	for _, s := range []string{`{"b":1.0,"a":[null,"x",1e400]}`, `[1e21,-0,0.1,12345678901234567890]`, `"\u2028<&>\ud800"`, `{"\ue000":1,"\U0001F600":2}`, `{"a" : { "b" : [ 1 , 2 ] } }`} {
		f.Add(s, int64(1)<<60, 0.1)
	}
	f.Fuzz(func(t *testing.T, in string, n int64, x float64) {
		vs := []any{json.RawMessage(in), json.Number(in), in, n, int32(n), uint64(n), float32(x), x,
			map[string]any{"n": n, "f": float32(x), "raw": json.RawMessage(in), "args": Args{{Name: "z", Value: json.Number(in)}}}}
		if json.Valid([]byte(in)) {
			var f64, num any
			_ = json.Unmarshal([]byte(in), &f64)
			dec := json.NewDecoder(strings.NewReader(in))
			dec.UseNumber()
			_ = dec.Decode(&num)
			vs = append(vs, f64, num, []any{f64, num})
		}
		for _, v := range vs {
			if got, want := appendValue(nil, v, 0), legacyAppendValue(nil, v, 0); !bytes.Equal(got, want) {
				t.Fatalf("appendValue(%#v) = %s, legacy %s", v, got, want)
			}
		}
	})
}
