package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/anvil-dev/anvil/runtime/canon"
)

// benchInput is a tool call's decoded arguments as the audit hash gets
// them (float64 numbers, ASCII keys, one sensitive key).
const benchInput = `{"owner":"octo","repo":"hello-world","title":"Found a bug","body":"It fails when the input is empty.\nSteps: run it.","labels":["bug","p1"],"assignees":[],"milestone":3,"draft":false,"meta":{"weight":1.5,"score":-0.25,"refs":[1,2,3]},"access_token":"ghp_secret"}`

func benchValue(t testing.TB) any {
	var v any
	if err := json.Unmarshal([]byte(benchInput), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// redactCopy is the audit redaction as a copy, for encoding/json to write.
func redactCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			if canon.SensitiveKey(k) {
				m[k] = canon.Redacted
			} else {
				m[k] = redactCopy(e)
			}
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = redactCopy(e)
		}
		return a
	}
	return v
}

// hashStd is InputSHA256 with encoding/json writing the redacted copy.
func hashStd(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(redactCopy(v)); err != nil {
		return ""
	}
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestHashBaseline: on the benchmark's input encoding/json gives the same
// hash, so BenchmarkInputHash compares like with like. (It does not in
// general: encoding/json sorts keys by bytes, not UTF-16 units, escapes
// U+2028, U+2029 and invalid UTF-8, and writes a json.Number's text as it
// is where JavaScript reads and rewrites it: 1.0 hashes as 1.)
func TestHashBaseline(t *testing.T) {
	v := benchValue(t)
	if got, want := hashStd(v), InputSHA256(v); got != want {
		t.Fatalf("encoding/json hashes %s, InputSHA256 %s", got, want)
	}
	if hashStd(map[string]any{"\ue000": 1, "\U0001F600": 2}) == InputSHA256(map[string]any{"\ue000": 1, "\U0001F600": 2}) {
		t.Fatal("encoding/json now sorts keys by UTF-16 units: revisit the hand-written encoder")
	}
}

// BenchmarkInputHash compares InputSHA256 (canon.Value) with encoding/json
// writing the same bytes (after a redacting copy). Compare the two with
// benchstat over -count 5 or more.
func BenchmarkInputHash(b *testing.B) {
	v := benchValue(b)
	b.Run("impl=canon", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = InputSHA256(v)
		}
	})
	b.Run("impl=encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = hashStd(v)
		}
	})
}
