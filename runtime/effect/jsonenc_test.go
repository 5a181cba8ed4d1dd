package effect

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendValue(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	tests := []struct {
		v    any
		want string
	}{
		{nil, `null`},
		{true, `true`},
		{float64(100), `100`},
		{1.5, `1.5`},
		{-0.0, `0`},
		{math.Copysign(0, -1), `0`},
		{1e21, `1e+21`},
		{1e20, `100000000000000000000`},
		{1e-7, `1e-7`},
		{0.000001, `0.000001`},
		{123456789012345680.0, `123456789012345680`},
		{math.NaN(), `null`},
		{math.Inf(1), `null`},
		{float32(0.1), `0.1`},
		{int(-3), `-3`},
		{int64(1) << 60, `1152921504606846976`},
		{uint8(7), `7`},
		{uint64(math.MaxUint64), `18446744073709551615`},
		{json.Number("1e2"), `1e2`},
		{json.Number("12abc"), `"12abc"`},
		{json.RawMessage(` { "a" : [1, 2] } `), `{"a":[1,2]}`},
		{json.RawMessage(`{bad`), `null`},
		{json.RawMessage(nil), `null`},
		{"a\"b\\c\n\t\r\b\f\x01\x1f\u007f<&>\u2028ø🚀", `"a\"b\\c\n\t\r\b\f\u0001\u001f` + "\u007f<&>\u2028ø🚀" + `"`},
		{"bad\xffutf8", "\"bad\ufffdutf8\""}, // U+FFFD written as is, as JSON.stringify does
		{map[string]any{"b": 1.0, "a": []any{nil, "x"}, "c": map[string]any{}}, `{"a":[null,"x"],"b":1,"c":{}}`},
		{map[string]any(nil), `null`},
		{[]any(nil), `null`},
		{[]any{}, `[]`},
		{[]string{"x", "<y>"}, `["x","<y>"]`},
		{map[string]string{"k": "v"}, `{"k":"v"}`},
		{point{X: 2}, `{"x":2}`},
		{make(chan int), `null`},
		{func() {}, `null`},
		{Args{{Name: "z", Value: 1.0}, {Name: "a", Value: "q"}}, `{"z":1,"a":"q"}`},
	}
	for _, tc := range tests {
		got := string(appendValue(nil, tc.v, 0))
		if got != tc.want {
			t.Errorf("appendValue(%#v) = %s, want %s", tc.v, got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("appendValue(%#v) = %s is not JSON", tc.v, got)
		}
	}
}

func TestAppendValueDepth(t *testing.T) {
	var v any = "leaf"
	for i := 0; i < maxDepth+5; i++ {
		v = []any{v}
	}
	b := appendValue(nil, v, 0)
	if !json.Valid(b) || !strings.Contains(string(b), "null") {
		t.Errorf("deep value not cut off")
	}
	// A cycle built by hand is cut off, not a stack overflow.
	m := map[string]any{}
	m["self"] = m
	if b := appendValue(nil, m, 0); !json.Valid(b) {
		t.Error("cyclic value")
	}
}

// FuzzHeaderValue checks that any string in a report gives a printable ASCII
// header that decodes to the same values as the report's JSON.
func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"øcto", "🚀", "\u2028", "\x00\x7f", "\xff\xfe", "plain", `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := &Report{Class: "reversible", Operation: "svc.x", IdempotencyKey: s,
			Undo: &Undo{Kind: KindInverse, FollowUp: FollowUp{Operation: "svc.y", Tool: "t", Arguments: Args{{Name: s, Value: s}}}}}
		h, cut := HeaderValueBounded(r)
		if len(h) > MaxHeaderBytes {
			t.Fatalf("header of %d bytes", len(h))
		}
		for i := 0; i < len(h); i++ {
			if h[i] < 0x20 || h[i] > 0x7e {
				t.Fatalf("byte %#x in %q", h[i], h)
			}
		}
		js, _ := r.MarshalJSON()
		if !utf8.Valid(js) {
			t.Fatalf("report JSON is not UTF-8: %q", js)
		}
		var a, b any
		if err := json.Unmarshal([]byte(h), &a); err != nil {
			t.Fatalf("header %q: %v", h, err)
		}
		if err := json.Unmarshal(js, &b); err != nil {
			t.Fatalf("json %q: %v", js, err)
		}
		if cut {
			if a.(map[string]any)["truncated"] != true {
				t.Fatalf("cut header without the marker: %s", h)
			}
			return
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("header %s\ndecodes to %s\nnot %s", h, ja, jb)
		}
		if s != "" && utf8.ValidString(s) && a.(map[string]any)["idempotency_key"] != s {
			t.Fatalf("key %q came back as %q", s, a.(map[string]any)["idempotency_key"])
		}
	})
}
