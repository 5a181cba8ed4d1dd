package frontdoor

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestParseCallBodyFastPath: whatever path a body takes through the
// member scanner, parseCallBody's answer is encoding/json's.
func TestParseCallBodyFastPath(t *testing.T) {
	// The shapes parseCallBody reads; the scanner's own edge cases are
	// jsonscan's tests.
	bodies := []string{
		``, `  `, `{}`, `{"arguments":{}}`, `{"arguments":{"owner":"octo","repo":"hello"}}`,
		`{"arguments":null}`, `{"arguments":[1]}`, `{"arguments":"x"}`, `{"arguments":1}`,
		`{"stage":true}`, `{"stage":false,"arguments":{"a":1}}`, `{"stage":null}`, `{"stage":"true"}`,
		`{"arguments":{"a":1},"arguments":{"b":2}}`, `{"argu\u006dents":{"a":1}}`, `{"arguments":{"a":1}`,
		`{"Arguments":{"a":1}}`, `{"a":{"arguments":{"x":1}},"arguments":{"y":2}}`, `{"arguments":{"deep":{"stage":true}}}`,
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
