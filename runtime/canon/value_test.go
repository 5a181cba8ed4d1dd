package canon

import (
	"encoding/json"
	"math"
	"testing"
)

// TestValueModes writes the same values by both number rules, side by
// side: the effect report's (NumberExact) and the audit hash's (NumberJS).
func TestValueModes(t *testing.T) {
	type point struct {
		B int `json:"b"`
		A int `json:"a"`
	}
	for _, tc := range []struct {
		v         any
		exact, js string
	}{
		{int64(1) << 60, `1152921504606846976`, `1152921504606847000`},
		{uint64(math.MaxUint64), `18446744073709551615`, `18446744073709552000`},
		{float32(0.1), `0.1`, `0.10000000149011612`},
		{1e21, `1e+21`, `1e+21`},
		{json.Number("1.0e2"), `1.0e2`, `100`},
		{json.Number("1e400"), `1e400`, `null`},
		{json.Number("12abc"), `"12abc"`, `null`},
		{json.RawMessage(` {"b": 1.0, "a": [2]} `), `{"b":1.0,"a":[2]}`, `{"a":[2],"b":1}`},
		{json.RawMessage(`{bad`), `null`, `null`},
		{point{B: 1, A: 2}, `{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{map[string]any(nil), `null`, `{}`},
		{[]any(nil), `null`, `[]`},
		{map[string]string(nil), `null`, `null`},
		{make(chan int), `null`, `null`},
		{"<\u2028>", "\"<\u2028>\"", "\"<\u2028>\""},
		{map[string]any{"\ue000": 1, "\U0001F600": 2}, "{\"\ue000\":1,\"\U0001F600\":2}", "{\"\U0001F600\":2,\"\ue000\":1}"},
	} {
		exact := Value{Numbers: NumberExact}
		js := Value{Numbers: NumberJS, KeysUTF16: true}
		if got := string(exact.Append(nil, tc.v)); got != tc.exact {
			t.Errorf("NumberExact %#v = %s, want %s", tc.v, got, tc.exact)
		}
		if got := string(js.Append(nil, tc.v)); got != tc.js {
			t.Errorf("NumberJS %#v = %s, want %s", tc.v, got, tc.js)
		}
	}
}

func TestValueRedactAndDepth(t *testing.T) {
	v := map[string]any{"user": map[string]any{"Password": "x", "name": "n"}, "api_key": []any{1.0}}
	if got := string(Value{Redact: true}.Append(nil, v)); got != `{"api_key":"***","user":{"Password":"***","name":"n"}}` {
		t.Errorf("redacted %s", got)
	}
	var deep any = "leaf"
	for range 3 {
		deep = []any{deep}
	}
	if got := string(Value{MaxDepth: 2}.Append(nil, deep)); got != `[[[null]]]` {
		t.Errorf("depth 2: %s", got)
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for _, mode := range []Numbers{NumberExact, NumberJS} {
		if b := (Value{Numbers: mode}).Append(nil, cyclic); !json.Valid(b) {
			t.Errorf("cyclic value under mode %d: %s", mode, b)
		}
	}
}

// FuzzValue checks that both rules write valid JSON for any decoded
// document, and that NumberJS is a fixed point of reading its output.
func FuzzValue(f *testing.F) {
	for _, s := range []string{`{"b":[1.0,-0,1e400],"a":"\u2028\ud800"}`, `[12345678901234567890,0.1]`, `"x"`, `{"\ue000":{"\ud83d\ude00":null}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		for _, e := range []Value{{Numbers: NumberExact}, {Numbers: NumberJS, KeysUTF16: true}} {
			out := e.Append(nil, json.RawMessage(in))
			if !json.Valid(out) {
				t.Fatalf("%+v wrote %s for %s", e, out, in)
			}
			if e.Numbers == NumberJS {
				if again := e.Append(nil, json.RawMessage(out)); string(again) != string(out) {
					t.Fatalf("not a fixed point: %s then %s", out, again)
				}
			}
		}
	})
}
