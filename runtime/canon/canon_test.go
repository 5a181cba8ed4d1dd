package canon

import (
	"math"
	"slices"
	"testing"
	"unicode/utf16"
)

func TestCompareUTF16(t *testing.T) {
	// JavaScript: ["\uffff", "\u{1F600}", "a", "ab", "", "Z"].sort()
	got := []string{"\uffff", "\U0001F600", "a", "ab", "", "Z", "\U0001F601", "bad\xff"}
	slices.SortFunc(got, CompareUTF16)
	want := []string{"", "Z", "a", "ab", "bad\xff", "\U0001F600", "\U0001F601", "\uffff"}
	if !slices.Equal(got, want) {
		t.Errorf("sorted %q, want %q", got, want)
	}
	if CompareUTF16("x", "x") != 0 || CompareUTF16("a", "ab") >= 0 || CompareUTF16("ab", "a") <= 0 {
		t.Error("prefix order")
	}
}

// FuzzCompareUTF16 checks CompareUTF16 against comparing utf16.Encode's units.
func FuzzCompareUTF16(f *testing.F) {
	f.Add("a", "\U0001F600")
	f.Add("\uffff", "\U00010000")
	f.Fuzz(func(t *testing.T, a, b string) {
		ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
		want := slices.Compare(ua, ub)
		got := CompareUTF16(a, b)
		if (got < 0) != (want < 0) || (got > 0) != (want > 0) {
			t.Fatalf("CompareUTF16(%q, %q) = %d, code units compare %d", a, b, got, want)
		}
		if n := UTF16Len(a); n != len(ua) {
			t.Fatalf("UTF16Len(%q) = %d, want %d", a, n, len(ua))
		}
	})
}

func TestAppendNumber(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		bits int
		want string
	}{
		{1, 64, "1"}, {-0.0, 64, "0"}, {100, 64, "100"}, {1.5, 64, "1.5"},
		{1e21, 64, "1e+21"}, {1e20, 64, "100000000000000000000"}, {1e-7, 64, "1e-7"},
		{0.000001, 64, "0.000001"}, {-2.5e-10, 64, "-2.5e-10"}, {1.7976931348623157e308, 64, "1.7976931348623157e+308"},
		{math.NaN(), 64, "null"}, {math.Inf(-1), 64, "null"},
		{float64(float32(0.1)), 32, "0.1"}, {float64(float32(0.1)), 64, "0.10000000149011612"},
	} {
		if got := string(AppendNumber(nil, tc.f, tc.bits)); got != tc.want {
			t.Errorf("AppendNumber(%v, %d) = %s, want %s", tc.f, tc.bits, got, tc.want)
		}
	}
}

func TestIsNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "-12", "1.5", "1e9", "1E+9", "2.5e-3"} {
		if !IsNumber(s) {
			t.Errorf("%q should be valid", s)
		}
	}
	for _, s := range []string{"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "0x1", "1 ", "NaN"} {
		if IsNumber(s) {
			t.Errorf("%q should be invalid", s)
		}
	}
}

func TestASCII(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":"plain"}`, `{"a":"plain"}`},
		{`"ø"`, `"\u00f8"`},
		{"\"\u007f\"", `"\u007f"`},
		{`"😀x"`, `"\ud83d\ude00x"`},
		{"\"\uffff\U00010000\"", `"\uffff\ud800\udc00"`},
		{"\"\xff\"", `"\ufffd"`},
	}
	for _, tc := range tests {
		got := string(ASCII([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("ASCII(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
