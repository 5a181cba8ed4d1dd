package restdoor

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
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

func TestEffectInBody(t *testing.T) {
	for _, c := range []struct {
		prefer []string
		want   bool
	}{
		{nil, false},
		{[]string{"anvil-effect=body"}, true},
		{[]string{`return=minimal`, `ANVIL-EFFECT = "BODY"`}, true},
		{[]string{"anvil-effect=header"}, false},
		{[]string{"anvil-effect"}, false},
		{[]string{strings.Repeat("x,", 40) + "anvil-effect=body"}, false},
	} {
		if got := effectInBody(http.Header{"Prefer": c.prefer}); got != c.want {
			t.Errorf("effectInBody(%q) = %v, want %v", c.prefer, got, c.want)
		}
	}
}

// TestValidToolName: the hand-written check accepts exactly what
// ^[A-Za-z0-9_.-]{1,128}$ accepts.
func TestValidToolName(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	cases := []string{"", "a", "github__github_list_pull", "a.b-c_D9", strings.Repeat("x", 128), strings.Repeat("x", 129),
		"a b", "a/b", "é", "a\x00", "a\n", "%41", "..", "-", "\xff"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	for _, name := range cases {
		if got, want := validToolName(name), re.MatchString(name); got != want {
			t.Errorf("validToolName(%q) = %v, the pattern says %v", name, got, want)
		}
	}
}
