package diff

import (
	"maps"
	"slices"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Contract is what a caller of one operation depends on: where it goes, what
// it takes, what it answers, how it authenticates and what it does to the
// world. It is the unit both `anvil diff` and the approval lock compare; the
// lock stores it (with the $defs its schemas reference) to name what changed.
type Contract struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Input is the tool input schema without the safety controls (confirm,
	// idempotency key, dry run): those are reported as confirmation changes.
	Input        *air.Schema     `json:"input,omitempty"`
	Status       int             `json:"status,omitempty"`
	Output       *air.Schema     `json:"output,omitempty"`
	Auth         *air.Auth       `json:"auth,omitempty"`
	EffectClass  air.EffectClass `json:"effectClass"`
	Undo         bool            `json:"undo"`
	Confirmation bool            `json:"confirmation"`
	// Defs resolves "#/$defs/<name>" references of Input and Output.
	Defs map[string]*air.Schema `json:"defs,omitempty"`
}

// ContractOf projects an operation of doc onto its contract. Defs is the
// document's whole schema table (shared, not copied); Closure trims it.
func ContractOf(doc *air.Document, op *air.Operation) *Contract {
	c := &Contract{
		Method: op.SourceRef.Method, Path: op.SourceRef.Path,
		Input: withoutSafety(op.Input.Schema, op.Input.Safety), Status: op.Output.Status, Output: op.Output.Schema,
		Auth: op.Auth, EffectClass: air.EffectClassOf(op), Undo: hasUndo(op), Confirmation: op.Confirmation.Required,
		Defs: doc.Schemas,
	}
	if c.Auth == nil {
		a := doc.Service.Auth
		c.Auth = &a
	}
	return c
}

// Closure returns a copy of c whose Defs hold only the definitions its
// schemas reach, so the contract is self-contained and its bytes depend on
// nothing else in the document.
func (c *Contract) Closure() *Contract {
	out := *c
	out.Defs = map[string]*air.Schema{}
	var visit func(s *air.Schema)
	visit = func(s *air.Schema) {
		if s == nil {
			return
		}
		if name, ok := refName(s.Ref); ok {
			if _, done := out.Defs[name]; !done {
				if d := c.Defs[name]; d != nil {
					out.Defs[name] = d
					visit(d)
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(s.Defs)) {
			visit(s.Defs[name])
		}
		s.EachChild(visit)
	}
	visit(c.Input)
	visit(c.Output)
	if len(out.Defs) == 0 {
		out.Defs = nil
	}
	return &out
}

func hasUndo(op *air.Operation) bool {
	return op.Effect.Inverse != nil || op.Effect.Compensate != nil
}

// withoutSafety returns s without the safety control properties at its top level.
func withoutSafety(s *air.Schema, safety air.Safety) *air.Schema {
	if s == nil {
		return nil
	}
	drop := func(k string) bool {
		return k != "" && (k == safety.ConfirmKey || k == safety.IdempotencyKey || k == safety.DryRun)
	}
	cp := *s
	cp.Properties = make(map[string]*air.Schema, len(s.Properties))
	for k, v := range s.Properties {
		if !drop(k) {
			cp.Properties[k] = v
		}
	}
	cp.Required = slices.DeleteFunc(slices.Clone(s.Required), drop)
	return &cp
}

// refName returns <name> of "#/$defs/<name>".
func refName(ref string) (string, bool) {
	return strings.CutPrefix(ref, "#/$defs/")
}
