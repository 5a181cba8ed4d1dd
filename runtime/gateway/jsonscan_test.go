package gateway

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestParseCallBodyFastPath: the member scanner and the encoding/json
// fallback agree on every body shape, escapes, repeats and nesting included.
func TestParseCallBodyFastPath(t *testing.T) {
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
			got[m.key] = m.value
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
	// Whatever path a body takes, the answer is the same one.
	for _, body := range bodies {
		fast, ferr := parseCallBody([]byte(body))
		if ferr != nil {
			continue
		}
		var m map[string]json.RawMessage
		if len(bytes.TrimSpace([]byte(body))) > 0 && json.Unmarshal([]byte(body), &m) != nil {
			t.Errorf("%q: accepted a body that is not JSON", body)
		}
		if a, ok := m["arguments"]; ok && !bytes.Equal(a, []byte("null")) && !bytes.Equal(fast.Arguments, bytes.TrimSpace(a)) {
			t.Errorf("%q: arguments %s, want %s", body, fast.Arguments, a)
		}
	}
}

func TestJSONString(t *testing.T) {
	for _, lit := range []string{`"tools/call"`, `""`, `"a\"b"`, `"\u0041"`, `"é"`, "\"\xff\"", `"a\\b"`, ` "x" `, `null`} {
		var want string
		werr := json.Unmarshal([]byte(lit), &want)
		got, ok := jsonString([]byte(lit))
		if ok != (werr == nil) || got != want {
			t.Errorf("%q: got %q %v, want %q %v", lit, got, ok, want, werr)
		}
	}
	for _, bad := range []string{`x`, `1`, `"`, `"a`} {
		if _, ok := jsonString([]byte(bad)); ok {
			t.Errorf("%q decoded as a string", bad)
		}
	}
}

func TestAcceptsJSONAndStream(t *testing.T) {
	for _, tt := range []struct {
		values           []string
		jsonOK, streamOK bool
	}{
		{nil, false, false},
		{[]string{""}, false, false},
		{[]string{"application/json, text/event-stream"}, true, true},
		{[]string{"application/json", "text/event-stream"}, true, true},
		{[]string{"APPLICATION/JSON;q=0.9 ,  Text/Event-Stream ; q=1"}, true, true},
		{[]string{"application/*, text/*"}, true, true},
		{[]string{"*/*"}, true, true},
		{[]string{"application/json"}, true, false},
		{[]string{"text/event-stream,"}, false, true},
		{[]string{",,application/json,,"}, true, false},
		{[]string{"application/jsonx, text/event-streams"}, false, false},
		{[]string{"application/json-seq"}, false, false},
	} {
		j, s := acceptsJSONAndStream(tt.values)
		if j != tt.jsonOK || s != tt.streamOK {
			t.Errorf("%q: %v %v, want %v %v", tt.values, j, s, tt.jsonOK, tt.streamOK)
		}
	}
}
