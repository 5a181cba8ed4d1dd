package jsonscan

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestJSONString(t *testing.T) {
	for _, lit := range []string{`"tools/call"`, `""`, `"a\"b"`, `"\u0041"`, `"é"`, "\"\xff\"", `"a\\b"`, ` "x" `, `null`} {
		var want string
		werr := json.Unmarshal([]byte(lit), &want)
		got, ok := String([]byte(lit))
		if ok != (werr == nil) || got != want {
			t.Errorf("%q: got %q %v, want %q %v", lit, got, ok, want, werr)
		}
	}
	for _, bad := range []string{`x`, `1`, `"`, `"a`} {
		if _, ok := String([]byte(bad)); ok {
			t.Errorf("%q decoded as a string", bad)
		}
	}
}

// TestScanMembersMatchesEncodingJSON: the member scanner and the
// encoding/json fallback agree on every body shape, escapes, repeats and
// nesting included.
func TestScanMembersMatchesEncodingJSON(t *testing.T) {
	bodies := []string{
		``, `  `, `{}`, ` { } `, `{"arguments":{}}`, `{"arguments":{"owner":"octo","repo":"hello"}}`,
		`{"arguments":null}`, `{"arguments":[1]}`, `{"arguments":"x"}`, `{"arguments":1}`,
		`{"stage":true}`, `{"stage":false,"arguments":{"a":1}}`, `{"stage":null}`, `{"stage":"true"}`, `{"stage":1}`,
		`{"arguments":{"a":1},"arguments":{"b":2}}`, `{"stage":true,"stage":false}`,
		`{"argu\u006dents":{"a":1}}`, `{"x":"\"}{","arguments":{"s":"]\\\"}"}}`,
		"{\n\t\"arguments\" :\r\n {\"a\" : [ 1 , {\"b\":[]} ]} ,\"other\": [true,false,null,-1.5e3]\n}",
		`{"arguments":{"a":1}`, `{"arguments":{"a":1}}}`, `{"arguments":{"a":1}} x`, `[]`, `"s"`, `nul`,
		`{"Arguments":{"a":1}}`, `{"arguments":{"a":` + strings.Repeat("[", 1200) + strings.Repeat("]", 1200) + `}}`,
		`{"a":{"arguments":{"x":1}},"arguments":{"y":2}}`, `{"arguments":{"deep":{"stage":true}}}`,
	}
	scanned := 0
	for _, body := range bodies {
		b := bytes.TrimSpace([]byte(body))
		var want map[string]json.RawMessage
		werr := json.Unmarshal(b, &want)
		if len(b) == 0 || b[0] != '{' {
			continue
		}
		members, ok := scanMembers(b)
		if !ok {
			continue // left to encoding/json
		}
		scanned++
		if werr != nil {
			t.Errorf("%q: scanned an object encoding/json refuses (%v)", body, werr)
			continue
		}
		got := map[string]json.RawMessage{}
		for _, m := range members {
			got[m.Key] = m.Value
		}
		if len(got) != len(want) {
			t.Errorf("%q: keys %d, want %d", body, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Errorf("%q: %s = %s, want %s", body, k, got[k], v)
			}
		}
	}
	if scanned < 15 {
		t.Fatalf("only %d bodies took the fast path", scanned)
	}
}

// TestEscapedKeysKeepOrder: a key with an escape is read by encoding/json
// in place, so the members stay in their order (a recorded effect report's
// arguments re-encode to the same bytes).
func TestEscapedKeysKeepOrder(t *testing.T) {
	m, ok := ObjectMembers([]byte(`{"z":1, "a\nb" : 2,"a\u0062\\":3,"\"":4,"y":5}`))
	if !ok {
		t.Fatal("not read")
	}
	var keys []string
	for _, x := range m {
		keys = append(keys, x.Key)
	}
	if want := []string{"z", "a\nb", "ab\\", `"`, "y"}; !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
}
