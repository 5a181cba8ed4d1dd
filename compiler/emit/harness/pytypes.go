package harness

import (
	"strings"

	"github.com/anvil-dev/anvil/compiler/naming"
	"github.com/anvil-dev/anvil/runtime/air"
)

// pyTypes writes Python type expressions for response schemas and the
// TypedDicts they need, for the package's results.pyi: a stub only type
// checkers read (the client imports it under TYPE_CHECKING), so a large
// API's result types cost nothing at import.
type pyTypes struct {
	c     schemas
	names map[string]string // named schema → class
	taken map[string]bool
	want  []pyWant
}

// pyWant is a TypedDict or alias still to declare.
type pyWant struct {
	name         string
	root, schema *air.Schema
}

func newPyTypes(c schemas) *pyTypes {
	taken := map[string]bool{"DryRunPlan": true, "Any": true, "Dict": true, "List": true, "Optional": true, "TypedDict": true,
		"Union": true, "NotRequired": true, "None": true, "True": true, "False": true}
	return &pyTypes{c: c, names: map[string]string{}, taken: taken}
}

// className is a Python class name from a schema or operation name.
func (g *pyTypes) className(base string) string {
	n := naming.Pascal(base)
	if n == "" || (n[0] >= '0' && n[0] <= '9') {
		n = "T" + n
	}
	return naming.Unique(n, g.taken, "")
}

// expr is the Python type of s; ctx names an inline object's TypedDict.
func (g *pyTypes) expr(root, s *air.Schema, ctx string, depth int) string {
	if s == nil || s.Bool != nil || depth > 12 {
		return "Any"
	}
	if s.Ref != "" {
		t, n := g.c.named(root, s.Ref)
		if t == nil {
			return "Any"
		}
		name, ok := g.names[n]
		if !ok {
			name = g.className(n)
			g.names[n] = name
			r := root
			if root == nil || root.Defs == nil || root.Defs[n] != t {
				r = t
			}
			g.want = append(g.want, pyWant{name: name, root: r, schema: t})
		}
		return name
	}
	var parts []string
	for _, alts := range [][]*air.Schema{s.OneOf, s.AnyOf} {
		for _, a := range alts {
			parts = appendUnique(parts, g.expr(root, a, ctx, depth+1))
		}
	}
	if len(parts) > 0 {
		return union(parts)
	}
	if len(s.AllOf) > 0 {
		return "Any"
	}
	types := []string(s.Type)
	if len(types) == 0 {
		if t := g.c.jsonType(root, s); t != "" {
			types = []string{t}
		}
	}
	for _, t := range types {
		switch t {
		case "string":
			parts = appendUnique(parts, "str")
		case "integer":
			parts = appendUnique(parts, "int")
		case "number":
			parts = appendUnique(parts, "float")
		case "boolean":
			parts = appendUnique(parts, "bool")
		case "null":
			parts = appendUnique(parts, "None")
		case "array":
			parts = appendUnique(parts, "List["+g.expr(root, s.Items, ctx+"Item", depth+1)+"]")
		case "object":
			switch {
			case len(s.Properties) > 0:
				name := g.className(ctx)
				g.want = append(g.want, pyWant{name: name, root: root, schema: s})
				parts = appendUnique(parts, name)
			case s.AdditionalProperties != nil && s.AdditionalProperties.Bool == nil:
				parts = appendUnique(parts, "Dict[str, "+g.expr(root, s.AdditionalProperties, ctx+"Value", depth+1)+"]")
			default:
				parts = appendUnique(parts, "Dict[str, Any]")
			}
		default:
			parts = appendUnique(parts, "Any")
		}
	}
	if len(parts) == 0 {
		return "Any"
	}
	return union(parts)
}

// union joins alternatives: Optional[X] for X or None, Any when one is Any.
func union(parts []string) string {
	var rest []string
	null := false
	for _, p := range parts {
		switch p {
		case "Any":
			return "Any"
		case "None":
			null = true
		default:
			rest = append(rest, p)
		}
	}
	var t string
	switch len(rest) {
	case 0:
		return "None"
	case 1:
		t = rest[0]
	default:
		t = "Union[" + strings.Join(rest, ", ") + "]"
	}
	if null {
		return "Optional[" + t + "]"
	}
	return t
}

// decls writes every wanted TypedDict (and the ones those need), in the
// order they were first wanted: class syntax when every key is an
// identifier, else the functional form.
func (g *pyTypes) decls() string {
	var b strings.Builder
	for i := 0; i < len(g.want); i++ {
		w := g.want[i]
		s := w.schema
		if s.Bool != nil || s.Ref != "" || len(s.Properties) == 0 || (len(s.Type) > 0 && !s.Type.Has("object")) {
			b.WriteString("\n" + w.name + " = " + g.expr(w.root, s, w.name, 1) + "\n")
			continue
		}
		req := map[string]bool{}
		for _, r := range s.Required {
			req[r] = true
		}
		type field struct{ key, typ string }
		var fields []field
		identifiers := true
		for _, k := range sortedKeys(s.Properties) {
			t := g.expr(w.root, s.Properties[k], w.name+naming.Pascal(k), 1)
			if !req[k] {
				t = "NotRequired[" + t + "]"
			}
			if naming.PyIdent(k) != k {
				identifiers = false
			}
			fields = append(fields, field{k, t})
		}
		if identifiers {
			b.WriteString("\n\nclass " + w.name + "(TypedDict):\n")
			if d := oneLine(description(s)); d != "" {
				b.WriteString("    \"\"\"" + pyDoc(d) + "\"\"\"\n\n")
			}
			for _, f := range fields {
				b.WriteString("    " + f.key + ": " + f.typ + "\n")
			}
			continue
		}
		b.WriteString("\n" + w.name + " = TypedDict(\n    " + pyString(w.name) + ",\n    {\n")
		for _, f := range fields {
			b.WriteString("        " + pyString(f.key) + ": " + f.typ + ",\n")
		}
		b.WriteString("    },\n)\n")
	}
	return b.String()
}
