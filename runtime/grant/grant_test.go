package grant

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want List
	}{
		{"empty", `[]`, List{}},
		{"spaces", " \n[ ]\t", List{}},
		{"read", `[{"connector":"github","operations":["*"],"mode":"read"}]`,
			List{{Connector: "github", Operations: []string{"*"}, Mode: "read"}}},
		{"full", `[{"connector":"git-hub_2","operations":["issues.*","pulls.list"],"mode":"write","account":"a.b@c_d-e","confirm":"allow"}]`,
			List{{Connector: "git-hub_2", Operations: []string{"issues.*", "pulls.list"}, Mode: "write", Account: "a.b@c_d-e", Confirm: "allow"}}},
		{"unknown keys ignored", `[{"connector":"c","operations":["x"],"mode":"read","extra":{"deep":[1,2]},"Connector":5}]`,
			List{{Connector: "c", Operations: []string{"x"}, Mode: "read"}}},
		{"escaped strings", `[{"connector":"\u0067ithub","operations":["issues.\u002a"],"mode":"read"}]`,
			List{{Connector: "github", Operations: []string{"issues.*"}, Mode: "read"}}},
		{"duplicate key last wins", `[{"connector":"x!","connector":"ok","operations":["a"],"mode":"read"}]`,
			List{{Connector: "ok", Operations: []string{"a"}, Mode: "read"}}},
		{"limits", `[{"connector":"` + strings.Repeat("c", 64) + `","operations":["` + strings.Repeat("g", 256) + `"],"mode":"read","account":"` + strings.Repeat("a", 128) + `"}]`,
			List{{Connector: strings.Repeat("c", 64), Operations: []string{strings.Repeat("g", 256)}, Mode: "read", Account: strings.Repeat("a", 128)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	entry := `{"connector":"c","operations":["*"],"mode":"read"}`
	many := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(entry+",", n), ",") + "]" }
	if l, err := Parse([]byte(many(64))); err != nil || len(l) != 64 {
		t.Fatalf("64 entries: %v %d", err, len(l))
	}
	if _, err := Parse([]byte(many(65))); !errors.Is(err, ErrInvalidGrant) {
		t.Fatalf("65 entries accepted: %v", err)
	}
	globs := func(n int) string {
		return `[{"connector":"c","mode":"read","operations":[` + strings.TrimSuffix(strings.Repeat(`"a",`, n), ",") + `]}]`
	}
	if _, err := Parse([]byte(globs(256))); err != nil {
		t.Fatalf("256 globs: %v", err)
	}
	if _, err := Parse([]byte(globs(257))); !errors.Is(err, ErrInvalidGrant) {
		t.Fatal("257 globs accepted")
	}
	// Glob length counts UTF-16 code units, as JavaScript does.
	astral := strings.Repeat("𝔸", 128) // 256 units
	if _, err := Parse([]byte(`[{"connector":"c","mode":"read","operations":["` + astral + `"]}]`)); err != nil {
		t.Fatalf("256 units: %v", err)
	}
	if _, err := Parse([]byte(`[{"connector":"c","mode":"read","operations":["` + astral + `a"]}]`)); err == nil {
		t.Fatal("257 units accepted")
	}
}

func TestParseInvalid(t *testing.T) {
	ok := `"connector":"c","operations":["*"],"mode":"read"`
	tests := []struct {
		name, in, want string
	}{
		{"null", `null`, "array"},
		{"empty input", ``, "array"},
		{"object", `{"grants":[]}`, "array"},
		{"string", `"[]"`, "array"},
		{"truncated", `[{"connector":"c"`, "JSON"},
		{"trailing garbage", `[] []`, "JSON"},
		{"entry null", `[null]`, "entry 0 is not an object"},
		{"entry array", `[[]]`, "entry 0 is not an object"},
		{"entry string", `["github"]`, "entry 0"},
		{"no connector", `[{"operations":["*"],"mode":"read"}]`, "connector"},
		{"connector number", `[{"connector":1,"operations":["*"],"mode":"read"}]`, "connector"},
		{"connector null", `[{"connector":null,"operations":["*"],"mode":"read"}]`, "connector"},
		{"connector empty", `[{"connector":"","operations":["*"],"mode":"read"}]`, "connector"},
		{"connector slash", `[{"connector":"team/github","operations":["*"],"mode":"read"}]`, "connector"},
		{"connector dot", `[{"connector":"git.hub","operations":["*"],"mode":"read"}]`, "connector"},
		{"connector too long", `[{"connector":"` + strings.Repeat("c", 65) + `","operations":["*"],"mode":"read"}]`, "connector"},
		{"no operations", `[{"connector":"c","mode":"read"}]`, "operations"},
		{"operations string", `[{"connector":"c","operations":"*","mode":"read"}]`, "operations"},
		{"operations empty", `[{"connector":"c","operations":[],"mode":"read"}]`, "operations"},
		{"operations null", `[{"connector":"c","operations":null,"mode":"read"}]`, "operations"},
		{"glob number", `[{"connector":"c","operations":[1],"mode":"read"}]`, "operations"},
		{"glob empty", `[{"connector":"c","operations":[""],"mode":"read"}]`, "operations"},
		{"glob too long", `[{"connector":"c","operations":["` + strings.Repeat("g", 257) + `"],"mode":"read"}]`, "operations"},
		{"no mode", `[{"connector":"c","operations":["*"]}]`, "mode"},
		{"mode admin", `[{"connector":"c","operations":["*"],"mode":"admin"}]`, "mode"},
		{"mode upper", `[{"connector":"c","operations":["*"],"mode":"READ"}]`, "mode"},
		{"mode bool", `[{"connector":"c","operations":["*"],"mode":true}]`, "mode"},
		{"account null", `[{` + ok + `,"account":null}]`, "account"},
		{"account empty", `[{` + ok + `,"account":""}]`, "account"},
		{"account space", `[{` + ok + `,"account":"my work"}]`, "account"},
		{"account too long", `[{` + ok + `,"account":"` + strings.Repeat("a", 129) + `"}]`, "account"},
		{"confirm deny", `[{` + ok + `,"confirm":"deny"}]`, "confirm"},
		{"confirm true", `[{` + ok + `,"confirm":true}]`, "confirm"},
		{"confirm empty", `[{` + ok + `,"confirm":""}]`, "confirm"},
		{"second entry bad", `[{` + ok + `},{` + ok + `,"mode":"x"}]`, "entry 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("accepted: %#v", l)
			}
			if !errors.Is(err, ErrInvalidGrant) {
				t.Errorf("error %v does not wrap ErrInvalidGrant", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
			if l != nil {
				t.Errorf("partial list returned: %#v", l)
			}
		})
	}
}

func TestParseFile(t *testing.T) {
	want := List{{Connector: "github", Operations: []string{"*"}, Mode: "read"}}
	arr := `[{"connector":"github","operations":["*"],"mode":"read"}]`
	for _, in := range []string{arr, `{"grants":` + arr + `}`, `{"by_grants":` + arr + `}`, `{"grants":null,"by_grants":` + arr + `}`} {
		got, err := ParseFile([]byte(in))
		if err != nil {
			t.Fatalf("ParseFile(%s): %v", in, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ParseFile(%s) (-want +got):\n%s", in, diff)
		}
	}
	if l, err := ParseFile([]byte(`[]`)); err != nil || len(l) != 0 {
		t.Errorf("empty list: %v %v", l, err)
	}
	for _, in := range []string{``, `null`, `{}`, `{"grants":"x"}`, `{"other":[]}`, `[{"connector":"github"}]`, `{`, `42`} {
		_, err := ParseFile([]byte(in))
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Fatalf("ParseFile(%q): %v, want *FileError", in, err)
		}
		if got := err.Error(); got != "is not a grant: expected a JSON array of {connector, operations, mode} entries." {
			t.Errorf("message %q", got)
		}
		if !errors.Is(err, ErrInvalidGrant) {
			t.Errorf("ParseFile(%q) does not wrap ErrInvalidGrant", in)
		}
	}
}

func TestJSONForms(t *testing.T) {
	e := Entry{Connector: "github", Operations: []string{"*"}, Mode: "read"}
	if got := string(e.AuditJSON(0)); got != `{"index":0,"connector":"github","operations":["*"],"mode":"read"}` {
		t.Errorf("AuditJSON = %s", got)
	}
	full := Entry{Connector: "c", Operations: []string{"a<b>&\"\\\n", "é"}, Mode: "write", Account: "work", Confirm: "allow"}
	if got := string(full.AuditJSON(12)); got != `{"index":12,"connector":"c","operations":["a<b>&\"\\\n","é"],"mode":"write","account":"work","confirm":"allow"}` {
		t.Errorf("AuditJSON = %s", got)
	}
	if !json.Valid(full.AuditJSON(1)) {
		t.Error("AuditJSON not valid JSON")
	}
	onlyConfirm := Entry{Connector: "c", Operations: []string{"x"}, Mode: "write", Confirm: "allow"}
	if got := string(onlyConfirm.AuditJSON(3)); got != `{"index":3,"connector":"c","operations":["x"],"mode":"write","confirm":"allow"}` {
		t.Errorf("AuditJSON = %s", got)
	}
	b, err := json.Marshal(List{e, full})
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatalf("re-parse %s: %v", b, err)
	}
	if diff := cmp.Diff(List{e, full}, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if b, _ := json.Marshal(List(nil)); string(b) != "[]" {
		t.Errorf("nil list marshals %s", b)
	}
	if b, _ := json.Marshal(e); string(b) != `{"connector":"github","operations":["*"],"mode":"read"}` {
		t.Errorf("entry marshals %s", b)
	}
	bad := Entry{Connector: "c\xff", Operations: []string{"\x01"}, Mode: "read"}
	if got := string(bad.AuditJSON(0)); got != "{\"index\":0,\"connector\":\"c\ufffd\",\"operations\":[\"\\u0001\"],\"mode\":\"read\"}" || !json.Valid([]byte(got)) {
		t.Errorf("AuditJSON = %s", got)
	}
}
