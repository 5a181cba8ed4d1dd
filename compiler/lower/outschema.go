package lower

import (
	"maps"
	"slices"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// The structured output schema (air.Output.StructuredSchema) is the MCP
// outputSchema of a tool whose success response is JSON. A gateway sends a
// successful call's answer as structuredContent: an object as it is, any
// other value as {"result": <value>} (docs/mcp.md). The schema describes
// exactly that shape, and is derived so that a real answer is seldom
// refused by it and never made to look like something it is not:
//
//   - it is self-contained: the named schemas it reaches are inlined, a
//     schema reached again inside itself (recursion) becomes the stand-in
//     below, and it holds no $ref at all, so no client resolves anything;
//   - it is looser than the description: it keeps the structure (type,
//     properties, additionalProperties, items, prefixItems, anyOf, allOf)
//     and drops what upstreams routinely break and what only documents
//     (required, enum, const, format, pattern, lengths and bounds,
//     additionalProperties false, not, titles, descriptions, examples,
//     defaults); oneOf becomes anyOf, since loosened branches overlap;
//   - it is bounded: nesting (of properties, items and compositions)
//     stops at maxStructuredDepth, and the depth is lowered until the
//     schema's compact JSON fits MaxStructuredSchemaBytes; what is cut
//     becomes a stand-in that keeps only the declared JSON types
//     ({"type": "object"}), or {} when there are none.
//
// Only that vocabulary is used, with no "required" anywhere, so a gateway
// can make any answer conform by leaving out the object members that do
// not (runtime/fleet: Tool.Structured): a schema of this vocabulary never
// rejects an object for a member it lacks.

// Structured schema bounds.
const (
	// MaxStructuredSchemaBytes bounds a structured output schema's compact
	// JSON: a tools/list of a thousand tools stays a few megabytes.
	MaxStructuredSchemaBytes = 8 << 10
	// maxStructuredDepth bounds how deeply a structured output schema
	// nests (properties, items and compositions each count one level).
	maxStructuredDepth = 6
)

// structuredSchema derives the structured output schema of out, or nil
// when the success response is not JSON or declares no schema. Operations
// answering the same named schema (most of a large API's) share one
// derivation, and the schema object (structuredCache).
func (l *lowerer) structuredSchema(out air.Output) *air.Schema {
	if out.Schema == nil || !jsonMediaType(out.ContentType) {
		return nil
	}
	key := ""
	if b, err := out.Schema.MarshalJSON(); err == nil && len(b) <= 512 {
		key = string(b)
		if s, ok := l.structuredCache[key]; ok {
			return s
		}
	}
	s := l.deriveStructured(out.Schema)
	if key != "" {
		if l.structuredCache == nil {
			l.structuredCache = map[string]*air.Schema{}
		}
		l.structuredCache[key] = s
	}
	return s
}

// deriveStructured is structuredSchema's derivation of one response
// schema: the deepest loosened form (at most maxStructuredDepth) whose
// compact JSON fits MaxStructuredSchemaBytes. Most fit whole, so the
// deepest is tried first; otherwise depths are tried from 1 up, stopping
// at the first that is too large or that cut nothing (deeper ones would be
// the same). Every attempt stops once it passes twice the budget, so a
// large schema costs a few bounded attempts.
func (l *lowerer) deriveStructured(schema *air.Schema) *air.Schema {
	attempt := func(depth int) (*air.Schema, bool, bool) {
		w := &looser{l: l, named: l.spec.Schemas, onPath: map[string]bool{}}
		s := w.root(schema, depth)
		if w.over {
			return nil, false, false
		}
		b, err := s.MarshalJSON()
		return s, err == nil && len(b) <= MaxStructuredSchemaBytes, w.cut
	}
	if s, fits, _ := attempt(maxStructuredDepth); fits {
		return s
	}
	fit := &air.Schema{Type: air.Types{"object"}}
	for depth := 1; depth < maxStructuredDepth; depth++ {
		s, fits, cut := attempt(depth)
		if !fits {
			return fit
		}
		if fit = s; !cut {
			return fit
		}
	}
	return fit
}

// jsonMediaType reports whether a response media type is JSON.
func jsonMediaType(ct string) bool {
	mt := strings.ToLower(strings.TrimSpace(ct))
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// root is the schema of structuredContent: the loosened response schema
// when the response is an object (an object schema, or an allOf of them,
// merged), else an object holding it under "result".
func (w *looser) root(s *air.Schema, depth int) *air.Schema {
	if props, ok := w.objectMembers(s, nil); ok {
		root := &air.Schema{Type: air.Types{"object"}}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if root.Properties == nil {
				root.Properties = map[string]*air.Schema{}
			}
			root.Properties[name] = w.loosen(props[name], depth-1)
		}
		if ap := w.resolve(s).AdditionalProperties; ap != nil && ap.Bool == nil && len(w.resolve(s).AllOf) == 0 {
			if x := w.loosen(ap, depth-1); !isAny(x) {
				root.AdditionalProperties = x
			}
		}
		return root
	}
	clear(w.onPath)
	return &air.Schema{Type: air.Types{"object"}, Properties: map[string]*air.Schema{"result": w.loosen(s, depth-1)}}
}

// looser derives loosened schemas through a description's named schemas.
type looser struct {
	l     *lowerer // its memo of loosened named schemas (structuredMemo)
	named map[string]*air.Schema
	// onPath holds the named schemas being inlined above the current one.
	onPath map[string]bool
	// size estimates the bytes derived so far; over is set once it passes
	// twice MaxStructuredSchemaBytes, and the derivation then stops (a
	// deep schema of a large description would otherwise grow
	// exponentially before it is measured).
	size int
	over bool
	// cut is set when the depth bound replaced a schema by its stand-in.
	cut bool
}

// grow adds n bytes to the estimate and reports whether to go on.
func (w *looser) grow(n int) bool {
	if w.size += n; w.size > 2*MaxStructuredSchemaBytes {
		w.over = true
	}
	return !w.over
}

// resolve follows s's $ref chain (and allOf wrappers of one member that
// add nothing but documentation) to the schema it stands for; a reference
// that names nothing, or a cycle, resolves to s itself.
func (w *looser) resolve(s *air.Schema) *air.Schema {
	return w.follow(s, nil)
}

// follow is resolve, calling through (when set) with each named schema it
// passes.
func (w *looser) follow(s *air.Schema, through func(name string)) *air.Schema {
	seen := map[string]bool{}
	for s != nil {
		if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok && s.Ref != "" {
			d := w.named[name]
			if d == nil || seen[name] {
				return s
			}
			seen[name] = true
			if through != nil {
				through(name)
			}
			s = d
			continue
		}
		if len(s.AllOf) == 1 && s.AllOf[0] != nil && len(s.Properties) == 0 && len(s.Type) == 0 && s.Items == nil && len(s.AnyOf) == 0 && len(s.OneOf) == 0 {
			s = s.AllOf[0]
			continue
		}
		return s
	}
	return s
}

// objectMembers returns the properties of s when every value s accepts
// is an object: an object schema (type object, or no type with
// properties), or an allOf of them, whose properties are merged (a name
// declared twice gets an allOf of both). props is filled in place. The
// named schemas it passes are marked as being inlined (onPath); root
// clears them when s is not an object.
func (w *looser) objectMembers(s *air.Schema, props map[string]*air.Schema) (map[string]*air.Schema, bool) {
	// The named schemas the root stands for are being inlined: reached
	// again inside it, they become stand-ins.
	s = w.follow(s, func(name string) { w.onPath[name] = true })
	if s == nil || s.Bool != nil || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || s.Items != nil {
		return nil, false
	}
	if props == nil {
		props = map[string]*air.Schema{}
	}
	// A nullable object is an object here: a null answer is sent as
	// {"result": null}, which an object schema without "result" accepts.
	for _, t := range s.Type {
		if t != "object" && t != "null" {
			return nil, false
		}
	}
	if len(s.Type) > 0 && !s.Type.Has("object") {
		return nil, false
	}
	if len(s.Type) == 0 && len(s.Properties) == 0 && len(s.AllOf) == 0 {
		return nil, false
	}
	for name, p := range s.Properties {
		if p == nil {
			continue
		}
		if prev, ok := props[name]; ok {
			props[name] = &air.Schema{AllOf: []*air.Schema{prev, p}}
		} else {
			props[name] = p
		}
	}
	for _, m := range s.AllOf {
		if _, ok := w.objectMembers(m, props); !ok {
			return nil, false
		}
	}
	return props, true
}

// loosen returns the loosened form of s with depth levels left; at depth
// 0, or at a named schema already being inlined, the stand-in.
func (w *looser) loosen(s *air.Schema, depth int) *air.Schema {
	if s == nil || s.Bool != nil || !w.grow(8) {
		return anySchema
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok && s.Ref != "" {
		d := w.named[name]
		if d == nil {
			return anySchema
		}
		if w.onPath[name] || depth <= 0 {
			return w.standIn(d)
		}
		return w.loosenNamed(name, d, depth)
	}
	if depth <= 0 {
		return w.standIn(s)
	}
	out := &air.Schema{Type: s.Type} // shared: nothing changes a type list
	for name, p := range s.Properties {
		if out.Properties == nil {
			out.Properties = map[string]*air.Schema{}
		}
		w.grow(len(name) + 4)
		out.Properties[name] = w.loosen(p, depth-1)
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Bool == nil {
		if x := w.loosen(ap, depth-1); !isAny(x) {
			out.AdditionalProperties = x
		}
	}
	if s.Items != nil {
		if x := w.loosen(s.Items, depth-1); !isAny(x) {
			out.Items = x
		}
	}
	for _, p := range s.PrefixItems {
		out.PrefixItems = append(out.PrefixItems, w.loosen(p, depth-1))
	}
	if alts := append(slices.Clone(s.AnyOf), s.OneOf...); len(alts) > 0 {
		var branches []*air.Schema
		seen := map[string]bool{}
		for _, b := range alts {
			x := w.loosen(b, depth-1)
			if isAny(x) {
				// One branch takes anything: so does the choice.
				branches = nil
				break
			}
			branches = appendUnique(branches, seen, x)
		}
		if len(branches) == 1 && len(out.Type) == 0 && len(out.Properties) == 0 {
			return branches[0]
		}
		out.AnyOf = branches
	}
	seen := map[string]bool{}
	for _, m := range s.AllOf {
		if x := w.loosen(m, depth-1); !isAny(x) {
			out.AllOf = appendUnique(out.AllOf, seen, x)
		}
	}
	if len(out.AllOf) == 1 && len(out.Type) == 0 && len(out.Properties) == 0 && len(out.AnyOf) == 0 && out.Items == nil && out.AdditionalProperties == nil {
		return out.AllOf[0]
	}
	return out
}

// loosenNamed is loosen of the named schema d, memoised per name and depth
// when d is not recursive: its loosened form then cannot meet a schema
// being inlined above it (that would make a cycle through it), so it is the
// same wherever it is reached, in every operation.
func (w *looser) loosenNamed(name string, d *air.Schema, depth int) *air.Schema {
	memo := !w.l.recursiveSchemas()[name]
	key := structuredKey{name, depth}
	if m, ok := w.l.structuredMemo[key]; ok && memo {
		w.grow(m.size)
		w.cut = w.cut || m.cut
		return m.schema
	}
	size, cut := w.size, w.cut
	w.cut = false
	w.onPath[name] = true
	out := w.loosen(d, depth)
	delete(w.onPath, name)
	if memo && !w.over {
		if w.l.structuredMemo == nil {
			w.l.structuredMemo = map[structuredKey]structuredMemo{}
		}
		w.l.structuredMemo[key] = structuredMemo{schema: out, size: w.size - size, cut: w.cut}
	}
	w.cut = w.cut || cut
	return out
}

// structuredKey and structuredMemo memoise loosenNamed.
type structuredKey struct {
	name  string
	depth int
}

type structuredMemo struct {
	schema *air.Schema
	size   int  // its share of looser.size
	cut    bool // whether the depth bound cut it
}

// recursiveSchemas is the set of named schemas that reach themselves
// through their references (Tarjan's strongly connected components over
// defRefs), computed once per Lower.
func (l *lowerer) recursiveSchemas() map[string]bool {
	if l.recursive != nil {
		return l.recursive
	}
	l.recursive = map[string]bool{}
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var visit func(n string)
	visit = func(n string) {
		index[n], low[n] = len(index), len(index)
		stack = append(stack, n)
		onStack[n] = true
		for _, m := range l.defRefs(n) {
			if _, ok := l.spec.Schemas[m]; !ok {
				continue
			}
			if m == n {
				l.recursive[n] = true
			}
			if _, seen := index[m]; !seen {
				visit(m)
				low[n] = min(low[n], low[m])
			} else if onStack[m] {
				low[n] = min(low[n], index[m])
			}
		}
		if low[n] != index[n] {
			return
		}
		var scc []string
		for {
			m := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[m] = false
			scc = append(scc, m)
			if m == n {
				break
			}
		}
		if len(scc) > 1 {
			for _, m := range scc {
				l.recursive[m] = true
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(l.spec.Schemas)) {
		if _, seen := index[n]; !seen {
			visit(n)
		}
	}
	return l.recursive
}

// anySchema is the loosened schema that accepts anything; like every
// loosened schema it is never changed once made, so it is shared.
var anySchema = &air.Schema{}

// standIn keeps of s only its declared JSON types (following references):
// what the cut part of a bounded schema still says. It notes a cut (w.cut)
// when s said more than that.
func (w *looser) standIn(s *air.Schema) *air.Schema {
	r := w.resolve(s)
	if r == nil || r.Bool != nil {
		return anySchema
	}
	if len(r.Properties) > 0 || r.AdditionalProperties != nil || r.Items != nil || len(r.PrefixItems) > 0 ||
		len(r.AnyOf) > 0 || len(r.OneOf) > 0 || len(r.AllOf) > 0 || r.Ref != "" {
		w.cut = true
	}
	if len(r.Type) == 0 {
		return anySchema
	}
	return &air.Schema{Type: r.Type}
}

// isAny reports whether s accepts every value (an empty schema).
func isAny(s *air.Schema) bool {
	return s == nil || (len(s.Type) == 0 && len(s.Properties) == 0 && s.AdditionalProperties == nil && s.Items == nil &&
		len(s.PrefixItems) == 0 && len(s.AnyOf) == 0 && len(s.AllOf) == 0)
}

// appendUnique appends x to list unless an equal schema is there; seen
// holds the JSON of list's schemas (updated).
func appendUnique(list []*air.Schema, seen map[string]bool, x *air.Schema) []*air.Schema {
	b, _ := x.MarshalJSON()
	if seen[string(b)] {
		return list
	}
	seen[string(b)] = true
	return append(list, x)
}
