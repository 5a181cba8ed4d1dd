package upstream

import (
	"encoding/json"
	"errors"
	"github.com/anvil-dev/anvil/runtime/air"
	"math"
	"testing"

	"github.com/anvil-dev/anvil/runtime/envelope"
)

func TestPathSegment(t *testing.T) {
	for in, want := range map[string]string{
		"":               "",
		"plain-_.!~*'()": "plain-_.!~*'()",
		".":              "%2E",
		"..":             "%2E%2E",
		"...":            "...",
		"a/b c":          "a%2Fb%20c",
		"é&=?#%":         "%C3%A9%26%3D%3F%23%25",
		"bad\xff":        "bad%FF",
	} {
		if got := PathSegment(in); got != want {
			t.Errorf("PathSegment(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScalarString(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, ""},
		{"a<b", "a<b"},
		{true, "true"},
		{1.5, "1.5"},
		{1e21, "1000000000000000000000"},
		{1e-7, "0.0000001"},
		{-0.0, "0"},
		{math.Inf(1), "null"},
		{float32(0.5), "0.5"},
		{int(-3), "-3"},
		{int64(1 << 40), "1099511627776"},
		{int32(7), "7"},
		{uint64(1 << 63), "9223372036854775808"},
		{json.Number("007"), "007"},
		{json.Number("1.50"), "1.5"},
		{json.Number("2.5e3"), "2500"},
		{json.Number("1e400"), "1e400"},
		{json.Number("abc"), "abc"},
		{[]any{"a", json.Number("1")}, `["a",1]`},
		{map[string]any{"b": "<", "a": nil}, `{"a":null,"b":"<"}`},
		{math.NaN(), "null"},
		{[]any{math.NaN()}, ""},
	} {
		if got := ScalarString(c.in); got != c.want {
			t.Errorf("ScalarString(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAppendQueryValue(t *testing.T) {
	list := []any{"a b", json.Number("1"), true}
	obj := map[string]any{"z": "1", "a": "x&y", "n": nil}
	for _, c := range []struct {
		style   string
		explode bool
		v       any
		want    string
	}{
		{"form", true, list, "p=0&k=a+b&k=1&k=true"},
		{"form", false, list, "p=0&k=a+b%2C1%2Ctrue"},
		{"spaceDelimited", true, list, "p=0&k=a+b+1+true"},
		{"pipeDelimited", true, list, "p=0&k=a+b%7C1%7Ctrue"},
		{"deepObject", true, obj, "p=0&k%5Ba%5D=x%26y&k%5Bz%5D=1"},
		{"form", true, obj, "p=0&k=%7B%22a%22%3A%22x%26y%22%2C%22n%22%3Anull%2C%22z%22%3A%221%22%7D"},
		{"", true, json.Number("1.0"), "p=0&k=1"},
		{"", true, "", "p=0&k="},
	} {
		if got := AppendQueryValue("p=0", "k", c.style, c.explode, c.v); got != c.want {
			t.Errorf("AppendQueryValue(%s, %v, %#v) = %q, want %q", c.style, c.explode, c.v, got, c.want)
		}
	}
	if got := AppendQuery("", "a b", "c&d"); got != "a+b=c%26d" {
		t.Errorf("AppendQuery = %q", got)
	}
}

func TestPathValue(t *testing.T) {
	list := []any{"a/b", json.Number("2")}
	obj := map[string]any{"y": "2", "x": ".."}
	for _, c := range []struct {
		style   string
		explode bool
		v       any
		want    string
		ok      bool
	}{
		{"", false, "..", "%2E%2E", true},
		{"simple", false, list, "a%2Fb,2", true},
		{"simple", true, obj, "x=%2E%2E,y=2", true},
		{"simple", false, obj, "x,%2E%2E,y,2", true},
		{"label", false, list, ".a%2Fb,2", true},
		{"label", true, list, ".a%2Fb.2", true},
		{"matrix", false, list, ";id%20x=a%2Fb,2", true},
		{"matrix", true, list, ";id%20x=a%2Fb;id%20x=2", true},
		{"matrix", true, obj, ";x=%2E%2E;y=2", true},
		{"", false, "", "", false},
		{"", false, nil, "", false},
		{"label", false, []any{}, "", false},
		// Issue 15, finding 8: no style renders a dot or empty segment.
		{"simple", false, []any{""}, "", false},
		{"simple", true, []any{nil}, "", false},
		{"label", false, []any{""}, "", false},
		{"label", true, []any{""}, "", false},
		{"label", true, []any{"", ""}, "", false},
		{"label", true, []any{nil, nil}, "", false},
		{"label", true, []any{".", ""}, ".%2E.", true},
		{"label", false, []any{"", ""}, ".,", true},
		{"simple", false, []any{"", ""}, ",", true},
	} {
		got, ok := PathValue(c.v, "id x", c.style, c.explode)
		if got != c.want || ok != c.ok {
			t.Errorf("PathValue(%#v, %s, %v) = %q, %v, want %q, %v", c.v, c.style, c.explode, got, ok, c.want, c.ok)
		}
	}
}

func TestHeaderCookieFormValues(t *testing.T) {
	if got := HeaderValue([]any{"a", json.Number("1.50"), nil}); got != "a,1.5," {
		t.Errorf("HeaderValue = %q", got)
	}
	if got := HeaderValue(map[string]any{"k": "<"}); got != `{"k":"<"}` {
		t.Errorf("HeaderValue = %q", got)
	}
	if got := CookieValue(`a b;c,"d\é`); got != `a%20b%3Bc%2C%22d%5C%C3%A9` {
		t.Errorf("CookieValue = %q", got)
	}
	if got := CookieValue("plain!#"); got != "plain!#" {
		t.Errorf("CookieValue = %q", got)
	}
	if got := AppendFormValue("a=1", "k", []any{"x", nil}); got != "a=1&k=x&k=" {
		t.Errorf("AppendFormValue = %q", got)
	}
	if got := AppendFormValue("a=1", "k", nil); got != "a=1" {
		t.Errorf("AppendFormValue(nil) = %q", got)
	}
}

func TestAppendJSON(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, "null"},
		{false, "false"},
		{"plain", `"plain"`},
		{"<a&b>\u2028é", `"<a&b>\u2028é"`},
		{json.Number("-12"), "-12"},
		{json.Number("1.50"), "1.50"},
		{map[string]any{"b": 1.5, "a": []any{"x"}}, `{"a":["x"],"b":1.5}`},
	} {
		got, err := AppendJSON([]byte("pre:"), c.in)
		if err != nil || string(got) != "pre:"+c.want {
			t.Errorf("AppendJSON(%#v) = %s, %v, want pre:%s", c.in, got, err, c.want)
		}
	}
	got, err := AppendJSON([]byte("pre:"), math.Inf(1))
	if err == nil || string(got) != "pre:" {
		t.Errorf("AppendJSON(+Inf) = %s, %v; want the buffer unchanged and an error", got, err)
	}
}

func TestEncodeWholeBody(t *testing.T) {
	obj := map[string]any{"b": "x y", "a": []any{json.Number("1"), json.Number("2")}}
	for _, c := range []struct {
		name, ct   string
		enc        air.BodyEncoding
		v          any
		carrierKey string
		body, want string
	}{
		{"json object", "application/merge-patch+json", air.BodyJSON, obj, "", `{"a":[1,2],"b":"x y"}`, "application/merge-patch+json"},
		{"json carrier", "application/json", air.BodyJSON, obj, "idem", `{"a":[1,2],"b":"x y","idem":"k1"}`, "application/json"},
		{"carrier on a non-object", "application/json", air.BodyJSON, "s", "idem", `"s"`, "application/json"},
		{"raw string", "text/plain", air.BodyRaw, "a<b\n", "", "a<b\n", "text/plain"},
		{"raw non-string", "text/plain", air.BodyRaw, obj, "", `{"a":[1,2],"b":"x y"}`, "application/json"},
		{"form", "application/x-www-form-urlencoded", air.BodyForm, obj, "idem", "a=1&a=2&b=x+y&idem=k1", "application/x-www-form-urlencoded"},
	} {
		body, ct, err := EncodeBody("op.id", c.enc, c.ct, c.v, c.carrierKey, "k1")
		if err != nil || string(body) != c.body || ct != c.want {
			t.Errorf("%s: EncodeWholeBody = %q, %q, %v, want %q, %q", c.name, body, ct, err, c.body, c.want)
		}
	}
	if _, ok := obj["idem"]; ok {
		t.Error("EncodeWholeBody changed the caller's object")
	}
	for _, c := range []struct {
		enc  air.BodyEncoding
		v    any
		want string
	}{
		{air.BodyForm, []any{"x"}, "A form body must be an object."},
		{air.BodyJSON, math.NaN(), "The body input cannot be encoded as JSON."},
	} {
		_, _, err := EncodeBody("op.id", c.enc, "application/json", c.v, "", nil)
		var e *envelope.Error
		if !errors.As(err, &e) || e.Code != envelope.ValidationError || e.Message != c.want || e.Operation != "op.id" || e.Details != nil {
			t.Errorf("EncodeBody(%#v) error = %#v, want validation_error %q", c.v, err, c.want)
		}
	}
}

func TestAppendJSONStringIsAppendJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "<b>&", "\u2028", "é", "tab\t", "\x00", "\xff"} {
		want, _ := AppendJSON([]byte("x"), s)
		if got := AppendJSONString([]byte("x"), s); string(got) != string(want) {
			t.Errorf("%q: %s, want %s", s, got, want)
		}
	}
}
