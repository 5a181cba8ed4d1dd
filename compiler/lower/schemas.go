package lower

import (
	"bytes"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

const defsPrefix = "#/$defs/"

// refName returns the named schema a "#/$defs/<name>" reference points at.
func (l *lowerer) refName(ref string) (string, bool) {
	name, ok := strings.CutPrefix(ref, defsPrefix)
	if !ok || name == "" {
		return "", false
	}
	if _, ok := l.spec.Schemas[name]; ok {
		return name, true
	}
	un := air.UnescapePointer(name)
	if _, ok := l.spec.Schemas[un]; ok {
		return un, true
	}
	return name, false
}

// deref follows $ref chains through the spec's named schemas. A reference to
// an unknown name, or a cycle of bare references, yields the last schema
// reached.
func (l *lowerer) deref(s *air.Schema) *air.Schema {
	for i := 0; s != nil && s.Ref != "" && i < 32; i++ {
		name, ok := l.refName(s.Ref)
		if !ok {
			return s
		}
		s = l.spec.Schemas[name]
	}
	return s
}

// collectRefs adds every named schema reachable from s to seen: the names
// s refers to, then breadth-first the names each of those refers to
// (defRefs, memoised per named schema, so a description whose operations
// reach hundreds of entities each walks every entity's schema once).
func (l *lowerer) collectRefs(s *air.Schema, seen map[string]bool) {
	queue := l.namedRefs(s)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		queue = append(queue, l.defRefs(name)...)
	}
}

// reachable lists, sorted, the named schemas reachable from s.
func (l *lowerer) reachable(s *air.Schema) []string {
	seen := map[string]bool{}
	l.collectRefs(s, seen)
	return slices.Sorted(maps.Keys(seen))
}

// Path resolution outcomes.
type resolution int

const (
	resolved   resolution = iota
	unresolved            // the schema rules the path out
	unverified            // the schema is too open to tell
)

// resolveResult is where a path lands in a schema.
type resolveResult struct {
	kind   resolution
	schema *air.Schema // set when resolved
	reason string      // why not resolved
}

// resolvePath follows segments through s: a name through declared
// properties (or a schema-valued additionalProperties), an index through
// prefixItems or items; $refs are followed through the spec's named schemas
// and allOf/anyOf/oneOf branches are tried in turn.
func (l *lowerer) resolvePath(s *air.Schema, segs []air.Segment, at string) resolveResult {
	return l.resolveFrom(s, segs, at, 0)
}

func (l *lowerer) resolveFrom(s *air.Schema, segs []air.Segment, at string, depth int) resolveResult {
	s = l.deref(s)
	if len(segs) == 0 {
		return resolveResult{kind: resolved, schema: s}
	}
	if depth > 64 {
		return resolveResult{kind: unverified, reason: at + " nests too deeply to check"}
	}
	if s == nil {
		return resolveResult{kind: unverified, reason: at + " has no schema"}
	}
	if s.Ref != "" {
		return resolveResult{kind: unverified, reason: at + " refers to an unknown schema " + s.Ref}
	}
	if s.Bool != nil {
		if *s.Bool {
			return resolveResult{kind: unverified, reason: at + " accepts any value"}
		}
		return resolveResult{kind: unresolved, reason: at + " accepts no value"}
	}
	if len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 {
		var branches []*air.Schema
		own := *s
		own.AllOf, own.AnyOf, own.OneOf = nil, nil, nil
		if len(own.Type) > 0 || len(own.Properties) > 0 || own.Items != nil || own.AdditionalProperties != nil || len(own.PrefixItems) > 0 {
			branches = append(branches, &own)
		}
		branches = append(branches, s.AllOf...)
		branches = append(branches, s.AnyOf...)
		branches = append(branches, s.OneOf...)
		var first *resolveResult
		sawUnverified := false
		for _, b := range branches {
			r := l.resolveFrom(b, segs, at, depth+1)
			switch r.kind {
			case resolved:
				return r
			case unverified:
				sawUnverified = true
			}
			if first == nil {
				first = &r
			}
		}
		if sawUnverified {
			return resolveResult{kind: unverified, reason: at + " is a combination of schemas that cannot all be checked"}
		}
		return *first
	}
	seg := segs[0]
	if seg.IsIndex {
		if len(s.Type) > 0 && !s.Type.Has("array") {
			return resolveResult{kind: unresolved, reason: at + " has type " + typeList(s.Type) + ", which cannot hold [" + itoa(seg.Index) + "]"}
		}
		next := at + "[" + itoa(seg.Index) + "]"
		if seg.Index < len(s.PrefixItems) {
			return l.resolveFrom(s.PrefixItems[seg.Index], segs[1:], next, depth+1)
		}
		if s.Items != nil {
			return l.resolveFrom(s.Items, segs[1:], next, depth+1)
		}
		return resolveResult{kind: unverified, reason: at + " declares no items"}
	}
	if len(s.Type) > 0 && !s.Type.Has("object") {
		return resolveResult{kind: unresolved, reason: at + " has type " + typeList(s.Type) + ", which cannot hold ." + seg.Name}
	}
	next := at + "." + seg.Name
	if p, ok := s.Properties[seg.Name]; ok {
		return l.resolveFrom(p, segs[1:], next, depth+1)
	}
	ap := s.AdditionalProperties
	if ap != nil && ap.Bool == nil {
		return l.resolveFrom(ap, segs[1:], next, depth+1)
	}
	if len(s.Properties) > 0 {
		if ap != nil && *ap.Bool {
			return resolveResult{kind: unverified, reason: at + " allows properties besides " + strings.Join(slices.Sorted(maps.Keys(s.Properties)), ", ")}
		}
		return resolveResult{kind: unresolved, reason: at + " declares properties " + strings.Join(slices.Sorted(maps.Keys(s.Properties)), ", ") + " and not " + seg.Name}
	}
	if ap != nil && !*ap.Bool {
		return resolveResult{kind: unresolved, reason: at + " allows no properties"}
	}
	return resolveResult{kind: unverified, reason: at + " declares no properties"}
}

func itoa(n int) string { return strconv.Itoa(n) }

func typeList(t air.Types) string {
	if len(t) == 1 {
		return t[0]
	}
	return "[" + strings.Join(t, ", ") + "]"
}

// schemaTypes returns the JSON types a schema declares, or nil when it
// declares none. A const or enum gives the types of its values; oneOf/anyOf
// give the union of their branches when every branch declares types; allOf
// gives the first branch that declares types.
func (l *lowerer) schemaTypes(s *air.Schema) []string {
	return l.schemaTypesDepth(s, 0)
}

func (l *lowerer) schemaTypesDepth(s *air.Schema, depth int) []string {
	s = l.deref(s)
	if s == nil || s.Bool != nil || s.Ref != "" || depth > 32 {
		return nil
	}
	if len(s.Type) > 0 {
		return s.Type
	}
	if s.Const != nil {
		return []string{jsonType(s.Const)}
	}
	if len(s.Enum) > 0 {
		seen := map[string]bool{}
		for _, v := range s.Enum {
			seen[jsonType(v)] = true
		}
		return slices.Sorted(maps.Keys(seen))
	}
	if alts := append(append([]*air.Schema(nil), s.OneOf...), s.AnyOf...); len(alts) > 0 {
		seen := map[string]bool{}
		for _, a := range alts {
			ts := l.schemaTypesDepth(a, depth+1)
			if len(ts) == 0 {
				return nil
			}
			for _, t := range ts {
				seen[t] = true
			}
		}
		return slices.Sorted(maps.Keys(seen))
	}
	for _, a := range s.AllOf {
		if ts := l.schemaTypesDepth(a, depth+1); len(ts) > 0 {
			return ts
		}
	}
	return nil
}

// jsonType is the JSON Schema type of a literal: integer for a number
// written without a fraction or exponent.
func jsonType(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "null"
	}
	switch raw[0] {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	if bytes.ContainsAny(raw, ".eE") {
		return "number"
	}
	return "integer"
}

// typesFit reports whether a value of the source types fits the target
// types: every source type (null aside, for paths) must be a target type, an
// integer fits a number, and undeclared types on either side are not judged.
func typesFit(src, tgt []string, dropNull bool) (bool, []string) {
	if len(tgt) == 0 {
		return true, nil
	}
	var s []string
	for _, t := range src {
		if dropNull && t == "null" {
			continue
		}
		s = append(s, t)
	}
	if len(s) == 0 {
		return true, nil
	}
	has := set(tgt...)
	for _, t := range s {
		if !has[t] && !(t == "integer" && has["number"]) {
			return false, s
		}
	}
	return true, s
}

func joinTypes(t []string) string {
	t = append([]string(nil), t...)
	sort.Strings(t)
	if len(t) == 1 {
		return t[0]
	}
	return strings.Join(t, " or ")
}
