package air

import (
	"maps"
	"slices"
)

// EachChild calls f, in a fixed order, with every non-nil schema s nests
// directly under a value keyword: properties (by sorted name),
// additionalProperties, items, not, prefixItems, oneOf, anyOf, allOf. It
// does not descend into $defs: those are named definitions, reached through
// $ref, and a walk that wants them (a closure over references) visits them
// itself. Every reference walk of the compiler goes through here, so a
// keyword added to Schema is followed everywhere once it is added here
// (TestEachChildCoversEveryNestedKeyword fails until it is).
func (s *Schema) EachChild(f func(*Schema)) {
	if s == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if p := s.Properties[name]; p != nil {
			f(p)
		}
	}
	for _, x := range []*Schema{s.AdditionalProperties, s.Items, s.Not} {
		if x != nil {
			f(x)
		}
	}
	for _, list := range [][]*Schema{s.PrefixItems, s.OneOf, s.AnyOf, s.AllOf} {
		for _, x := range list {
			if x != nil {
				f(x)
			}
		}
	}
}
