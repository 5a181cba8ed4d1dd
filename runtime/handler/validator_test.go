package handler

import (
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
)

// TestValidatorCompilesOnceOnFirstUse: building a validator compiles
// nothing; concurrent first calls compile once and all get that schema.
func TestValidatorCompilesOnceOnFirstUse(t *testing.T) {
	s := &air.Schema{Type: air.Types{"object"}, Required: []string{"n"},
		Properties: map[string]*air.Schema{"n": {Type: air.Types{"integer"}}}}
	v := NewValidator("svc__things_get", s)
	if !v.Pending() {
		t.Fatal("NewValidator compiled the schema")
	}
	got := make([]*jsonschema.Schema, 32)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sch, err := v.Compiled()
			if err != nil {
				t.Error(err)
			}
			got[i] = sch
		}()
	}
	wg.Wait()
	if v.Pending() {
		t.Error("Pending after the compile")
	}
	for i, sch := range got {
		if sch == nil || sch != got[0] {
			t.Fatalf("call %d got schema %p, want the one compiled schema %p", i, sch, got[0])
		}
	}
	op := &air.Operation{ID: "svc.things.get", Input: air.Input{Schema: s}}
	h := ForAIR(op, v, nil)
	if e := Prepare(h); e != nil {
		t.Fatalf("Prepare = %v", e)
	}
	if _, problem, ok := h.Check(NewMapInput(map[string]any{}, op)); ok || !strings.Contains(problem, "missing property 'n'") {
		t.Errorf("Check({}) = %q, %v; want the validator's refusal", problem, ok)
	}
}

// TestValidatorCompileFailureIsCoded: a schema that does not compile
// (a reference to nothing) refuses every call with internal_error, each
// time, and Check refuses without panicking.
func TestValidatorCompileFailureIsCoded(t *testing.T) {
	s := &air.Schema{Type: air.Types{"object"}, Properties: map[string]*air.Schema{"x": {Ref: "#/$defs/Missing"}}}
	op := &air.Operation{ID: "svc.things.get", Input: air.Input{Schema: s}}
	for _, h := range []Handler{
		ForAIR(op, NewValidator("svc__things_get", s), nil),
		Generated(&Operation{ID: op.ID, SchemaCheck: true}, op, NewValidator("svc__things_get", s)),
	} {
		for range 2 {
			e := Prepare(h)
			if e == nil || e.Code != envelope.InternalError || e.Operation != op.ID || !strings.Contains(e.Message, "does not compile") {
				t.Fatalf("Prepare = %+v; want internal_error naming the operation", e)
			}
		}
		if _, problem, ok := h.Check(NewMapInput(map[string]any{"x": 1}, op)); ok || !strings.Contains(problem, "does not compile") {
			t.Errorf("Check = %q, %v; want a refusal", problem, ok)
		}
	}
	// A generated operation that needs no shared check has nothing to prepare.
	if e := Prepare(Generated(&Operation{ID: op.ID}, op, NewValidator("svc__things_get", s))); e != nil {
		t.Errorf("Prepare without SchemaCheck = %v", e)
	}
}
