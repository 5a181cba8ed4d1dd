package audit

import (
	"encoding/json"
	"testing"
)

// FuzzCanonicalJSON checks that the canonical form of any JSON document is
// valid JSON, is a fixed point, and hashes the same however it was decoded.
func FuzzCanonicalJSON(f *testing.F) {
	for _, tt := range nodeHashes {
		f.Add(tt.in)
	}
	f.Add(`{"a":{"token":[1,{"b":"\u2028"}]},"z":-0.0}`)
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		c := CanonicalJSON(json.RawMessage(in))
		if !json.Valid(c) {
			t.Fatalf("canonical form of %q is not JSON: %s", in, c)
		}
		if again := CanonicalJSON(json.RawMessage(c)); string(again) != string(c) {
			t.Fatalf("not a fixed point: %s then %s", c, again)
		}
		var f64 any
		if err := json.Unmarshal([]byte(in), &f64); err == nil {
			if InputSHA256(f64) != InputSHA256(json.RawMessage(in)) {
				t.Fatalf("float64 and json.Number decodings hash differently for %q", in)
			}
		}
	})
}
