package handler

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// TestIntegersAreExactAndInRange: JSON Schema's "integer" admits 1e400 and
// 2^63; both the generated decoder's check (IsInteger) and the AIR-driven
// handler (after its schema check) refuse them, at any depth, and keep
// integers by value (1.0, 1e2, -0).
func TestIntegersAreExactAndInRange(t *testing.T) {
	for _, c := range []struct {
		n  string
		ok bool
	}{
		{"2", true}, {"1.0", true}, {"1e2", true}, {"-0", true}, {"9223372036854775807", true}, {"-9223372036854775808", true},
		{"1.5", false}, {"1e400", false}, {"9223372036854775808", false}, {"-9223372036854775809", false}, {"1e-400", false},
	} {
		if got := IsInteger(json.Number(c.n)); got != c.ok {
			t.Errorf("IsInteger(%s) = %v, want %v", c.n, got, c.ok)
		}
	}

	integer := &air.Schema{Type: air.Types{"integer"}}
	obj := &air.Schema{Type: air.Types{"object"}, Properties: map[string]*air.Schema{
		"n":    integer,
		"ids":  {Type: air.Types{"array"}, Items: integer},
		"body": {Type: air.Types{"object"}, Properties: map[string]*air.Schema{"size": integer}},
		"f":    {Type: air.Types{"number"}},
	}}
	op := &air.Operation{ID: "svc.things.get", Input: air.Input{Schema: obj}}
	sch, err := CompileSchema("svc__things_get", obj)
	if err != nil {
		t.Fatal(err)
	}
	h := ForAIR(op, CompiledValidator(sch), nil)
	for _, c := range []struct{ args, want string }{
		{`{"n": 1e400}`, "at '/n': must be an integer"},
		{`{"n": 9223372036854775808}`, "at '/n': must be an integer"},
		{`{"ids": [1, 2e30]}`, "at '/ids/1': must be an integer"},
		{`{"body": {"size": 1e19}}`, "at '/body/size': must be an integer"},
		{`{"n": 1.5}`, "want integer"},
		{`{"n": 1e2, "ids": [1.0], "body": {"size": -0}, "f": 1e400}`, ""},
	} {
		in, ok := h.Decode(json.RawMessage(c.args))
		if !ok {
			t.Fatalf("Decode(%s) failed", c.args)
		}
		_, problem, ok := h.Check(in)
		if c.want == "" {
			if !ok {
				t.Errorf("Check(%s) refused: %s", c.args, problem)
			}
			continue
		}
		if ok || !strings.Contains(problem, c.want) {
			t.Errorf("Check(%s) = %q, %v; want a refusal containing %q", c.args, problem, ok, c.want)
		}
	}
}
