package canon

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":          `"plain"`,
		`q"b\`:           `"q\"b\\"`,
		"<a&b>":          `"<a&b>"`,
		"\b\f\n\r\t\x01": `"\b\f\n\r\t\u0001"`,
		"\x1f\x7f":       "\"\\u001f\x7f\"",
		"øcto \u2028 😀":  "\"øcto \u2028 😀\"",
		"bad\xffbyte":    "\"bad\ufffdbyte\"",
		"":               `""`,
	} {
		if got := string(AppendString(nil, in)); got != want {
			t.Errorf("Append(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestAppendStringHTML(t *testing.T) {
	for in, want := range map[string]string{
		"plain":               `"plain"`,
		`q"b\`:                `"q\"b\\"`,
		"<a&b>":               `"\u003ca\u0026b\u003e"`,
		"\b\f\n\r\t\x01":      `"\b\f\n\r\t\u0001"`,
		"\x1f\x7f":            "\"\\u001f\x7f\"",
		"øcto \u2028\u2029 😀": `"øcto \u2028\u2029 😀"`,
		"bad\xffbyte":         `"bad\ufffdbyte"`,
		"\xe2\x80":            `"\ufffd\ufffd"`,
		"":                    `""`,
	} {
		if got := string(AppendStringHTML(nil, in)); got != want {
			t.Errorf("AppendStringHTML(%q) = %s, want %s", in, got, want)
		}
	}
	if got := string(AppendStringHTML([]byte("x:"), "<")); got != `x:"\u003c"` {
		t.Errorf("AppendHTML does not append: %s", got)
	}
}

var fuzzSeeds = []string{"", "plain", "<a&b>", "\u2028\u2029", "bad\xffbyte", "\xe2\x80\xa8\xe2\x80", "\x00\x1f\x7f\"\\", "øcto 😀", `\u2028`}

// FuzzAppendStringHTML checks AppendHTML against encoding/json.Marshal.
func FuzzAppendStringHTML(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendStringHTML(nil, s); string(got) != string(want) {
			t.Fatalf("AppendStringHTML(%q) = %s, encoding/json writes %s", s, got, want)
		}
	})
}

// FuzzAppendString checks that Append writes valid JSON holding s (each invalid
// byte as U+FFFD) and escapes nothing but '"', '\\' and control characters.
func FuzzAppendString(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		if !utf8.Valid(got) {
			t.Fatalf("Append(%q) = %q is not valid UTF-8", s, got)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("Append(%q) = %s: %v", s, got, err)
		}
		var want strings.Builder
		for _, r := range s {
			want.WriteRune(r)
		}
		if back != want.String() {
			t.Fatalf("Append(%q) = %s reads back as %q", s, got, back)
		}
		inner := string(got[1 : len(got)-1])
		for i := 0; i < len(inner); i++ {
			if inner[i] == '\\' {
				i++
				if inner[i] == 'u' && inner[i+1:i+3] != "00" {
					t.Fatalf("Append(%q) = %s escapes a non-control character", s, got)
				}
			}
		}
	})
}
