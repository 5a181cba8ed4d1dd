package grant

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/anvil-dev/anvil/runtime/jsonscan"
	"github.com/google/go-cmp/cmp"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`[]`, `null`, `{}`, `[null]`, `"x"`,
		`[{"connector":"github","operations":["*"],"mode":"read"}]`,
		`[{"connector":"github","operations":["issues.*","pulls.list"],"mode":"write","account":"work","confirm":"allow","x":1}]`,
		`[{"connector":"c","operations":["\u00e9\n\"<>"],"mode":"read"}]`,
		`[{"connector":"c","operations":[""],"mode":"read"}]`,
		`[{"connector":"c","operations":["a"],"mode":"read","confirm":"deny"}]`,
		`[{"connector":"c","operations":["a"],"mode":"read"},{"connector":"d"}]`,
		"[{\"connector\":\"c\",\"operations\":[\"\xff\"],\"mode\":\"read\"}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		l, err := Parse(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidGrant) || l != nil {
				t.Fatalf("error %v (list %v)", err, l)
			}
			if _, ferr := ParseFile(raw); ferr == nil && jsonscan.Kind(raw) != '{' {
				t.Fatalf("ParseFile accepted what Parse refused: %v", err)
			}
			return
		}
		if len(l) > MaxEntries {
			t.Fatalf("%d entries", len(l))
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := Parse(b)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		if diff := cmp.Diff(l, back); diff != "" {
			t.Fatalf("round trip (-parsed +reparsed):\n%s", diff)
		}
		for i, e := range l {
			if !json.Valid(e.AuditJSON(i)) {
				t.Fatalf("AuditJSON invalid: %s", e.AuditJSON(i))
			}
		}
		if fl, err := ParseFile(raw); err != nil || !cmp.Equal(l, fl) {
			t.Fatalf("ParseFile disagrees: %v %v", fl, err)
		}
	})
}
