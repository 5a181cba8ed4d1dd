package mcpdoor

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzInspectMessage checks the MCP message inspector: it never panics, only
// accepts a JSON object (whose method, if any, is a string) or a non-empty
// JSON array, and reports initialize only for an object whose "method" key
// (exactly) is "initialize".
func FuzzInspectMessage(f *testing.F) {
	for _, s := range []string{
		initializeBody, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`,
		`{"method":1}`, `{"method":"initialize"`, `null`, `"initialize"`, ``, `  {"method":"initialize"}  `, `{"METHOD":"initialize"}`,
		`{"method":"initialize","method":"tools/list"}`, `{} {}`, `[1,2]`, "\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		init, ok := inspectMessage(body)
		trimmed := bytes.TrimSpace(body)
		// Validity is JSON's grammar: numbers are kept as text, so one
		// beyond float64's range (valid JSON) does not count as invalid.
		var v any
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		valid := json.Valid(trimmed) && dec.Decode(&v) == nil
		obj, isObj := v.(map[string]any)
		arr, isArr := v.([]any)
		_, hasMethod := obj["method"]
		_, methodString := obj["method"].(string)
		wantOK := valid && ((isObj && (!hasMethod || methodString)) || (isArr && len(arr) > 0))
		if ok != wantOK {
			t.Fatalf("inspectMessage(%q) ok=%v, want %v", body, ok, wantOK)
		}
		wantInit := ok && isObj && obj["method"] == "initialize"
		if init != wantInit {
			t.Fatalf("inspectMessage(%q) initialize=%v, want %v", body, init, wantInit)
		}
	})
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

// initializeBody is an initialize request as MCP clients send it.
const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gateway-test","version":"1"}}}`
