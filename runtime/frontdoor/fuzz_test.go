package frontdoor

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/anvil-dev/anvil/runtime/envelope"
)

// FuzzParseCallBody checks the REST body parser against a reference built on
// encoding/json: it never panics, accepts exactly the bodies that are empty
// or a JSON object with no key but arguments and stage, whose arguments (if
// any) is an object or null and whose stage (if any) is a boolean, and
// refuses everything else with validation_error (issue 17: an unknown
// top-level key is a 400).
func FuzzParseCallBody(f *testing.F) {
	for _, s := range []string{
		``, ` `, `{}`, `[1]`, `null`, `"x"`, `1`, `{"arguments":{}}`, `{"arguments":{"owner":"o"},"stage":true}`,
		`{"arguments":null}`, `{"arguments":[1]}`, `{"arguments":"x"}`, `{"stage":"yes"}`, `{"stage":null}`,
		`{"stage":false,"other":1}`, `{"arguments":{}} {}`, `{"arguments":{"a":1},"arguments":{"b":2}}`,
		`{"arguments":{`, "\ufeff{}", `{"arguments":{"s":"\ud800"}}`, `{"arguments": { "x" : [ ] } }`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := parseCallBody(body)
		ok := referenceCallBody(body)
		if (err == nil) != ok {
			t.Fatalf("parseCallBody(%q): err %v, reference accepts %v", body, err, ok)
		}
		if err != nil {
			if err.Code != envelope.ValidationError || err.Message == "" {
				t.Fatalf("refusal %+v", err)
			}
			return
		}
		if got.Arguments != nil {
			var m map[string]any
			if json.Unmarshal(got.Arguments, &m) != nil || m == nil {
				t.Fatalf("arguments %q are not a JSON object", got.Arguments)
			}
		}
	})
}

// referenceCallBody is the contract's rule, written independently.
func referenceCallBody(body []byte) bool {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return true
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return false
	}
	for k := range obj {
		if k != "arguments" && k != "stage" {
			return false
		}
	}
	if a, has := obj["arguments"]; has && a != nil {
		if _, isMap := a.(map[string]any); !isMap {
			return false
		}
	}
	if s, has := obj["stage"]; has {
		if _, isBool := s.(bool); !isBool {
			return false
		}
	}
	return true
}

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
		var v any
		valid := json.Unmarshal(trimmed, &v) == nil
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
