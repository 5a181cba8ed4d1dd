package openapi

import "testing"

// TestParseJSONStringErrors: a bad string literal is reported at its fault
// (line:col) with the parser's own words, whatever canon.Unquote found.
func TestParseJSONStringErrors(t *testing.T) {
	for in, want := range map[string]string{
		"{\n  \"a\": \"x\ty\"}": `2:10: invalid control character '\t' in a string`,
		"{\"a\": \"x\\qy\"}":    `1:9: invalid escape "\\q" in a string`,
		"{\"a\": \"\\u12x4\"}":  `1:10: invalid \u escape in a string`,
		"{\"a\": \"abc":         `1:11: unexpected end of input inside a string (the file is truncated?)`,
		"{\"a\": \"ab\\":        `1:10: unexpected end of input inside a string (the file is truncated?)`,
	} {
		_, err := parseJSON(in)
		if err == nil || err.Error() != want {
			t.Errorf("parseJSON(%q) = %v, want %s", in, err, want)
		}
	}
	if _, err := parseJSON(`{"k\u00e9y": "v\ud83d\ude00\n"}`); err != nil {
		t.Fatal(err)
	}
}
