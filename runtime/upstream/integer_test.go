package upstream

import (
	"context"
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

func TestExactInteger(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "-0": "0", "42": "42", "-42": "-42", "1.5e3": "1500", "2.0": "2", "1E2": "100", "1e+2": "100",
		"150e-1": "15", "0e999999999999": "0", "0.0e-5": "0", "9223372036854775807": "9223372036854775807",
		"-9223372036854775808": "-9223372036854775808", "9.223372036854775807e18": "9223372036854775807",
		"100000000000000000000e-2": "1000000000000000000",
	} {
		if got, ok := ExactInteger(in); !ok || got != want {
			t.Errorf("ExactInteger(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"1e400", "1.5", "9223372036854775808", "-9223372036854775809", "1e19", "1e-1", "1e99999999999999999999",
		"", "-", "+1", "01", "1.", ".5", "1e", "1e+", "NaN", "Infinity", "0x10", " 1", "1 ", strings.Repeat("1", 500),
	} {
		if got, ok := ExactInteger(in); ok {
			t.Errorf("ExactInteger(%q) = %q, accepted", in, got)
		}
	}
}

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// FuzzExactInteger compares ExactInteger with exact rational arithmetic on
// every JSON number text of a bounded exponent.
func FuzzExactInteger(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.5e3", "1e400", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e-0", "12.340e1", "0.1e1"} {
		f.Add(s)
	}
	lo, hi := big.NewRat(-1<<63, 1), new(big.Rat).SetInt(new(big.Int).SetUint64(1<<63-1))
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ExactInteger(s)
		if !jsonNumber.MatchString(s) {
			if ok {
				t.Fatalf("%q is no JSON number but gave %q", s, got)
			}
			return
		}
		if len(s) > maxNumberText { // the bound on what is read: refused whatever its value
			if ok {
				t.Fatalf("ExactInteger accepted %d bytes, more than maxNumberText", len(s))
			}
			return
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(strings.TrimLeft(s[i+1:], "+-"), "0")) > 4 {
			return // big.Rat would expand a huge exponent
		}
		r, _ := new(big.Rat).SetString(s)
		want := r.IsInt() && r.Cmp(lo) >= 0 && r.Cmp(hi) <= 0
		if ok != want {
			t.Fatalf("ExactInteger(%q) ok=%v, want %v", s, ok, want)
		}
		if ok && got != r.Num().String() {
			t.Fatalf("ExactInteger(%q) = %q, want %s", s, got, r.Num())
		}
	})
}

// TestIntegerArgument is the test of the check for finding 10 (the integer
// half) of issue 15: issue_number 1e400 passed the JSON Schema "integer"
// check and went upstream verbatim. IntegerArgument refuses it (the gateway's
// validation is to call it), and NumberString writes an in-range integer as
// exact digits in both gateways.
func TestIntegerArgument(t *testing.T) {
	integer := &air.Schema{Type: air.Types{"integer", "null"}}
	ints := &air.Schema{Type: air.Types{"array"}, Items: &air.Schema{Type: air.Types{"integer"}}}
	number := &air.Schema{Type: air.Types{"number"}}
	for _, tc := range []struct {
		s    *air.Schema
		v    any
		want string // a part of the message; "" accepts
	}{
		{integer, json.Number("1e400"), "must be an integer from -9223372036854775808 to 9223372036854775807, not 1e400"},
		{integer, json.Number("1.5"), "not 1.5"},
		{integer, json.Number("9223372036854775808"), "must be an integer"},
		{integer, 1e300, "must be an integer"},
		{integer, json.Number("1.5e3"), ""},
		{integer, 12.0, ""},
		{integer, nil, ""},
		{integer, "text", ""}, // not a number: the schema validator's business
		{ints, []any{json.Number("1"), json.Number("2e400")}, "item 1 must be an integer"},
		{ints, []any{json.Number("1"), 2.0}, ""},
		{number, json.Number("1e400"), ""},
		{nil, json.Number("1e400"), ""},
	} {
		if got := IntegerArgument(tc.s, tc.v); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("IntegerArgument(%+v, %#v) = %q, want %q", tc.s, tc.v, got, tc.want)
		}
	}
	op := &air.Operation{ID: "github.issues.get", SourceRef: air.SourceRef{Path: "/repos/{owner}/{repo}/issues/{issue_number}", Method: "GET"},
		Input: air.Input{Params: []air.Param{pathParam("owner"), pathParam("repo"),
			{Name: "issue_number", Key: "issue_number", In: "path", Required: true, Schema: integer}}}}
	req, err := BuildRequest(context.Background(), "https://api.example", op, map[string]any{"owner": "o", "repo": "r", "issue_number": json.Number("1.5e3")})
	if err != nil || req.URL.String() != "https://api.example/repos/o/r/issues/1500" {
		t.Errorf("1.5e3: %v, %v", req, err)
	}
	if got := NumberString("9007199254740993.0"); got != "9007199254740993" {
		t.Errorf("NumberString = %s, want the exact digits", got)
	}
}
