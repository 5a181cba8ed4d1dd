package jsstring

import "testing"

func TestAppend(t *testing.T) {
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
		if got := string(Append(nil, in)); got != want {
			t.Errorf("Append(%q) = %s, want %s", in, got, want)
		}
	}
}
