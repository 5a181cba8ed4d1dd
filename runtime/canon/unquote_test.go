package canon

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"
)

func TestUnquote(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		end      int
	}{
		{`"plain" tail`, "plain", 7},
		{`""`, "", 2},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", 22},
		{`"\u00e9\u2028"`, "é\u2028", 14},
		{`"\ud83d\ude00!"`, "😀!", 15},
		{`"\ud83d x"`, "\ufffd x", 10},
		{`"\ude00\ud83d"`, "\ufffd\ufffd", 14},
		{`"\ud83d\u0041"`, "\ufffdA", 14},
		{"\"\xff\"", "\xff", 3},
	} {
		got, end, err := Unquote(tc.in, 0)
		if err != nil || got != tc.want || end != tc.end {
			t.Errorf("Unquote(%s) = %q, %d, %v; want %q, %d", tc.in, got, end, err, tc.want, tc.end)
		}
	}
	for _, tc := range []struct {
		in    string
		fault UnquoteFault
		at    int
	}{
		{"\"a\nb\"", FaultControl, 2},
		{"\"a\\x\"", FaultEscape, 2},
		{`"a\u12"`, FaultUnicode, 4},
		{`"a\u12g4"`, FaultUnicode, 4},
		{`"abc`, FaultEnd, 4},
		{`"ab\`, FaultEnd, 3},
		{`"\n\`, FaultEnd, 3},
		{"\"\\n\x01\"", FaultControl, 3},
	} {
		_, _, err := Unquote(tc.in, 0)
		var e *UnquoteError
		if !errors.As(err, &e) || e.Fault != tc.fault || e.At != tc.at {
			t.Errorf("Unquote(%q) error %v (%+v), want fault %d at %d", tc.in, err, e, tc.fault, tc.at)
		}
	}
}

// FuzzUnquote checks Unquote against encoding/json on valid UTF-8.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`plain`, `a\"b`, `\ud83d\ude00`, `\ud83d`, `\u12`, `\x`, "\x01", `\`, `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		lit := `"` + in + `"`
		var want string
		werr := json.Unmarshal([]byte(lit), &want)
		got, end, err := Unquote(lit, 0)
		switch {
		case werr == nil && utf8.ValidString(in) && (err != nil || got != want || end != len(lit)):
			t.Fatalf("Unquote(%s) = %q, %d, %v; encoding/json reads %q", lit, got, end, err, want)
		case werr != nil && err == nil && end == len(lit):
			t.Fatalf("Unquote(%s) = %q; encoding/json refuses it: %v", lit, got, werr)
		}
	})
}
