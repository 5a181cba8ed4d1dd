package handler

import (
	"errors"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

func TestInvalidNamesThePathAndRule(t *testing.T) {
	for _, c := range []struct{ prop, rule, want string }{
		{"owner", "required", "at '/owner': required"},
		{"", "additionalProperties", "at '': additionalProperties"},
		{"a/b~c", "enum", "at '/a~1b~0c': enum"},
	} {
		err := Invalid(c.prop, c.rule)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Rule != c.rule || err.Error() != c.want {
			t.Errorf("Invalid(%q, %q) = %v, want %s", c.prop, c.rule, err, c.want)
		}
	}
}

// typedInput is a generated input whose generated check refuses it.
type typedInput struct {
	*MapInput
	err error
}

func (in typedInput) Validate() error { return in.err }

// TestGeneratedCheckWordsItsOwnRefusal: where the shared validator finds
// nothing wrong but the generated one refuses, the refusal says which
// argument and rule (instead of a bare "not valid").
func TestGeneratedCheckWordsItsOwnRefusal(t *testing.T) {
	op := &air.Operation{ID: "svc.things.get"}
	sch, err := CompileSchema("svc__things_get", &air.Schema{})
	if err != nil {
		t.Fatal(err)
	}
	h := Generated(&Operation{ID: op.ID}, op, CompiledValidator(sch))
	in := typedInput{MapInput: NewMapInput(map[string]any{"state": "x"}, op), err: Invalid("state", "enum")}
	if _, problem, ok := h.Check(in); ok || problem != "at '/state': enum" {
		t.Errorf("Check = %q, %v; want the generated refusal", problem, ok)
	}
	in.err = nil
	if _, problem, ok := h.Check(in); !ok {
		t.Errorf("Check refused a valid input: %s", problem)
	}
}
