package lock

import (
	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/runtime/air"
)

// canonical is the contract a lock entry stores and fingerprints: the
// self-contained closure of the operation's contract without the schema
// keywords that only document (title, description, examples), so a reworded
// description does not send an approved operation back to review.
func canonical(doc *air.Document, op *air.Operation) *diff.Contract {
	c := diff.ContractOf(doc, op).Closure()
	memo := map[*air.Schema]*air.Schema{}
	c.Input, c.Output = withoutDocs(c.Input, memo), withoutDocs(c.Output, memo)
	if c.Defs != nil {
		defs := make(map[string]*air.Schema, len(c.Defs))
		for name, s := range c.Defs {
			defs[name] = withoutDocs(s, memo)
		}
		c.Defs = defs
	}
	return c
}

// withoutDocs copies s with its documentation keywords cleared, everywhere
// below it; memo keeps shared subschemas shared (and the copy finite).
func withoutDocs(s *air.Schema, memo map[*air.Schema]*air.Schema) *air.Schema {
	if s == nil {
		return nil
	}
	if c, ok := memo[s]; ok {
		return c
	}
	c := *s
	memo[s] = &c
	c.Title, c.Description, c.Examples = "", "", nil
	list := func(l []*air.Schema) []*air.Schema {
		if l == nil {
			return nil
		}
		out := make([]*air.Schema, len(l))
		for i, x := range l {
			out[i] = withoutDocs(x, memo)
		}
		return out
	}
	mapOf := func(m map[string]*air.Schema) map[string]*air.Schema {
		if m == nil {
			return nil
		}
		out := make(map[string]*air.Schema, len(m))
		for k, x := range m {
			out[k] = withoutDocs(x, memo)
		}
		return out
	}
	c.Defs, c.Properties = mapOf(s.Defs), mapOf(s.Properties)
	c.AdditionalProperties, c.Items, c.Not = withoutDocs(s.AdditionalProperties, memo), withoutDocs(s.Items, memo), withoutDocs(s.Not, memo)
	c.PrefixItems, c.OneOf, c.AnyOf, c.AllOf = list(s.PrefixItems), list(s.OneOf), list(s.AnyOf), list(s.AllOf)
	return &c
}
